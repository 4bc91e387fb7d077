//! Progress for humans, one kind for every command: a bar with an ETA on a terminal, one plain
//! line per finished step otherwise (CI logs, pipes), nothing when quiet.
//!
//! The domain loops (bench, speed, storage, pipeline) report through [`Progress`] and never
//! decide how it looks; the figures themselves only ever go into the report. This module sits
//! low in the layers (it imports nothing of the crate) so that every loop may use it while the
//! output layer (`report`) stays above them.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a measuring loop tells the person waiting for it.
pub trait Progress {
    /// The run has `total` steps. Called again when the count changes (a step skipped after an
    /// error, a round added by racing), so the ETA stays honest.
    fn begin(&self, total: u64);
    /// What runs now; replaced by the next status (a terminal shows it beside the bar, a log
    /// does not repeat it, unless the progress was made with [`Stderr::log_status`]).
    fn status(&self, msg: &str);
    /// A line worth keeping (a phase starts, a reference is measured); it never counts as a step.
    fn note(&self, line: &str);
    /// One step finished; `line` says its outcome.
    fn step(&self, line: &str);
    /// The run is over: the bar goes away, the lines stay.
    fn finish(&self);
    /// One machine-readable event (a sample taken, a row finished) for `--json-stream`; the
    /// displays for people ignore it.
    fn record(&self, _event: &serde_json::Value) {}
}

/// Shows nothing: for tests of the loops and for runs inside another run that reports itself.
pub struct Silent;

impl Progress for Silent {
    fn begin(&self, _: u64) {}
    fn status(&self, _: &str) {}
    fn note(&self, _: &str) {}
    fn step(&self, _: &str) {}
    fn finish(&self) {}
}

/// `--json-stream`: every event as one line of JSON on stdout as it happens (as iperf3's
/// `--json-stream`), beside the display for people it wraps.
pub struct JsonStream(pub Box<dyn Progress>);

impl Progress for JsonStream {
    fn begin(&self, total: u64) {
        self.0.begin(total);
    }
    fn status(&self, msg: &str) {
        self.0.status(msg);
    }
    fn note(&self, line: &str) {
        self.0.note(line);
    }
    fn step(&self, line: &str) {
        self.0.step(line);
    }
    fn finish(&self) {
        self.0.finish();
    }
    fn record(&self, event: &serde_json::Value) {
        emit(event);
    }
}

/// Writes one event line on stdout and flushes it, so a reader sees it at once.
pub fn emit(event: &serde_json::Value) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    // A reader that went away ends the run as `print!` would (see main's closed-pipe rule).
    if let Err(e) = writeln!(out, "{event}").and_then(|()| out.flush()) {
        panic!("failed printing to stdout: {e}");
    }
}

/// Progress on stderr: an indicatif bar on a terminal, plain lines otherwise.
pub struct Stderr {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
    /// Prefix of plain lines (`storage: …`), and whether statuses are logged too.
    label: Option<&'static str>,
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    total: u64,
    done: u64,
    started: Option<Instant>,
}

impl Stderr {
    /// A bar when stderr is a terminal (and not `quiet`); plain lines of finished steps otherwise.
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(style("{spinner} [{elapsed_precise}] {wide_msg}"));
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Self {
            bar,
            quiet,
            label: None,
            counts: Mutex::new(Counts::default()),
        }
    }

    /// Plain lines start with `label: ` and statuses are logged too: for commands whose steps
    /// are long (a mapping, a format), where a log that says nothing for minutes looks hung.
    pub fn log_status(mut self, label: &'static str) -> Self {
        self.label = Some(label);
        self
    }

    fn line(&self, text: &str) {
        match (&self.bar, self.label) {
            (Some(b), _) => b.println(text),
            (None, _) if self.quiet => {}
            (None, Some(l)) => eprintln!("{l}: {text}"),
            (None, None) => eprintln!("{text}"),
        }
    }
}

impl Progress for Stderr {
    fn begin(&self, total: u64) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.total = total;
        c.started.get_or_insert_with(Instant::now);
        if let Some(b) = &self.bar {
            // Until the number of steps is known the bar is only a spinner and the status.
            b.set_style(style(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {wide_msg}",
            ));
            b.set_length(total);
        }
    }

    fn status(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.set_message(msg.to_string()),
            None if self.label.is_some() => self.line(msg),
            None => {}
        }
    }

    fn note(&self, line: &str) {
        self.line(line);
    }

    fn step(&self, line: &str) {
        let position = {
            let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
            c.done += 1;
            let started = *c.started.get_or_insert_with(Instant::now);
            position(c.done, c.total, started.elapsed())
        };
        match &self.bar {
            Some(b) => {
                b.println(line);
                b.inc(1);
            }
            None => self.line(&format!("{position} {line}")),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn style(template: &str) -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(template).expect("valid template")
}

/// `[3/20, ETA 1:05]` for a log line: where the run is and, from the mean step so far, how long
/// it has left (no ETA before the first step, nor when the total is unknown).
fn position(done: u64, total: u64, elapsed: Duration) -> String {
    if total == 0 {
        return format!("[{done}]");
    }
    let left = total.saturating_sub(done);
    if left == 0 {
        return format!("[{done}/{total}]");
    }
    let eta = elapsed.mul_f64(left as f64 / done.max(1) as f64).as_secs();
    format!("[{done}/{total}, ETA {}:{:02}]", eta / 60, eta % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_positions_carry_an_eta_from_the_mean_step() {
        assert_eq!(position(1, 4, Duration::from_secs(10)), "[1/4, ETA 0:30]");
        assert_eq!(position(2, 4, Duration::from_secs(130)), "[2/4, ETA 2:10]");
        assert_eq!(position(4, 4, Duration::from_secs(10)), "[4/4]");
        assert_eq!(position(3, 0, Duration::from_secs(10)), "[3]");
        // A total revised down below the steps done (skipped after an error) never underflows.
        assert_eq!(position(5, 4, Duration::from_secs(10)), "[5/4]");
    }
}
