//! The run loop's progress on stderr: a bar on a terminal, one plain line per finished row
//! otherwise (CI logs, pipes), nothing when quiet. Every caller of the suite shows the same.

use super::model::ResultRow;
use super::run::Progress;
use std::io::IsTerminal;
use std::time::Duration;

/// A bar on a terminal; one plain line per finished row otherwise (CI logs, pipes).
pub struct StderrProgress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
}

impl StderrProgress {
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
                )
                .expect("valid template"),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Self { bar, quiet }
    }
}

impl Progress for StderrProgress {
    fn begin(&self, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
    }

    fn status(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
        }
    }

    fn row_done(&self, row: &ResultRow) {
        let line = match (&row.error, row.median_mib_s) {
            (Some(e), _) => format!("{} {}: {e}", row.cipher, row.direction),
            (None, Some(m)) => format!(
                "{} {}: {m:.1} MiB/s ({} samples)",
                row.cipher,
                row.direction,
                row.samples.len()
            ),
            _ => format!("{} {}: no result", row.cipher, row.direction),
        };
        match &self.bar {
            Some(b) => {
                b.println(line);
                b.inc(1);
            }
            None if !self.quiet => eprintln!("{line}"),
            None => {}
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
