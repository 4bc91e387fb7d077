//! `--streams N`: each measured row again as N concurrent transfers over N connections.
//!
//! One OpenSSH connection encrypts on one core at each end, so on a machine of several slow
//! cores one stream can leave most of the CPU idle. For every row that has figures, N clients
//! of the same target (each its own `ssh` and server session, logged in one after the other
//! so no server's MaxStartups refuses them) warm up together and then move the row's transfer
//! size at once, released by one barrier, in several rounds. A round's rate is all its bytes
//! over the time from the first stream's start to the last one's end; CPU is every session's,
//! read as the single stream reads it. The judgement is `streams_gain`'s.

use super::executor::{Engine, Executor, Facts, Job};
use super::model::{EngineKind, ResultRow, Streams, StreamsAsked, StreamsSetting};
use super::options::Options;
use super::streams_gain::{self, Round};
use crate::process;
use crate::progress::Progress;
use crate::sysinfo::{self, MachineInfo};
use crate::target::SshError;
use anyhow::Result;
use std::sync::Barrier;
use std::time::Instant;

/// `--streams auto` never opens more connections than this.
pub const AUTO_MAX: u32 = 8;
/// Rounds per row, at least: enough for a median and a spread.
const MIN_ROUNDS: u32 = 3;

/// The one-line refusal when an engine asked for by name cannot run streams.
pub fn refusal(opts: &Options) -> Option<&'static str> {
    let parallel = opts.streams != StreamsAsked::Count(1);
    (parallel && !opts.engines_defaulted && opts.runs(EngineKind::Native))
        .then_some("--streams needs --engine openssh")
}

/// The count `asked` comes to on this server, and how `auto` got there.
pub fn resolve(asked: StreamsAsked, server: &MachineInfo) -> StreamsSetting {
    let (count, reason) = match (asked, server.cores) {
        (StreamsAsked::Count(n), _) => (n, None),
        (StreamsAsked::Auto, Some(c)) if c > AUTO_MAX => (
            AUTO_MAX,
            Some(format!("the server's {c} cores, at most {AUTO_MAX}")),
        ),
        (StreamsAsked::Auto, Some(c)) => (c.max(1), Some(format!("the server's {c} cores"))),
        (StreamsAsked::Auto, None) => (
            1,
            Some("the server's cores cannot be read: one stream".to_string()),
        ),
    };
    StreamsSetting {
        asked: asked.to_string(),
        count,
        reason,
    }
}

/// Measures this engine's rows with as many streams as `--streams` comes to on its server.
pub fn run(
    engine: &dyn Engine,
    facts: &Facts,
    rows: &mut [ResultRow],
    opts: &Options,
    progress: &dyn Progress,
) -> Result<()> {
    match setting(opts, &facts.server.machine) {
        Some(s) => measure(engine, rows, s.count, opts, progress),
        None => Ok(()),
    }
}

/// The setting the report records: None for one stream asked.
pub fn setting(opts: &Options, server: &MachineInfo) -> Option<StreamsSetting> {
    (opts.streams != StreamsAsked::Count(1)).then(|| resolve(opts.streams, server))
}

/// What the report says of `--streams` beyond the rows: `auto` that came to one stream, and an
/// engine that ran with one stream because it cannot run more.
pub fn warnings(opts: &Options, setting: Option<&StreamsSetting>) -> Vec<String> {
    let Some(s) = setting else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if s.count < 2 {
        out.push(format!(
            "--streams {}: {}",
            s.asked,
            s.reason.as_deref().unwrap_or("one stream")
        ));
    }
    if s.count >= 2 && opts.runs(EngineKind::Native) {
        out.push(
            "--streams: the native engine's rows are one stream each (parallel streams are \
             measured with the OpenSSH engine)"
                .into(),
        );
    }
    out
}

/// Measures every row of `engine` that has figures with `count` streams, in place.
pub fn measure(
    engine: &dyn Engine,
    rows: &mut [ResultRow],
    count: u32,
    opts: &Options,
    progress: &dyn Progress,
) -> Result<()> {
    if count < 2 {
        return Ok(());
    }
    let rounds = opts.sampling.repeat.max(MIN_ROUNDS);
    for row in rows.iter_mut().filter(|r| r.median_mib_s.is_some()) {
        let mut execs = engine.stream_executors(count);
        if execs.is_empty() {
            return Ok(());
        }
        process::check_interrupted()?;
        progress.status(&format!(
            "{} {}, {count} streams",
            row.cipher, row.direction
        ));
        let job = Job {
            cipher: &row.cipher,
            mac: row.mac.as_deref(),
            direction: row.direction,
            bytes: row.bytes,
        };
        let result = take_rounds(&mut execs, &job, opts.sampling.warmup, rounds);
        drop(execs);
        let streams = match result {
            Ok(r) => streams_gain::summarise(row, count, row.bytes, &r),
            Err(SshError::Fatal(e)) => return Err(e),
            Err(SshError::Refused(why) | SshError::Failed(why)) => Streams {
                count,
                bytes_per_stream: row.bytes,
                error: Some(why),
                ..Default::default()
            },
        };
        progress.note(&line(row, &streams));
        row.streams = Some(streams);
    }
    Ok(())
}

/// `aes128-ctr upload, 2 streams: 410.2 MiB/s (3 rounds)`, or the error.
fn line(row: &ResultRow, s: &Streams) -> String {
    let head = format!("{} {}, {} streams", row.cipher, row.direction, s.count);
    match (&s.error, s.median_mib_s) {
        (Some(e), _) => format!("{head}: {e}"),
        (None, Some(m)) => format!("{head}: {m:.1} MiB/s ({} rounds)", s.samples.len()),
        _ => format!("{head}: no result"),
    }
}

/// Logs each client in, one at a time, warms all up together, then takes `rounds` rounds.
fn take_rounds(
    execs: &mut [Box<dyn Executor + Send>],
    job: &Job,
    warmup: u32,
    rounds: u32,
) -> Result<Vec<Round>, SshError> {
    for e in execs.iter_mut() {
        e.prepare(job);
        e.settle();
    }
    for _ in 0..warmup.max(1) {
        round(execs, job)?;
    }
    (0..rounds).map(|_| round(execs, job)).collect()
}

/// One round: every client's transfer started by one barrier, each on its own thread.
fn round(execs: &mut [Box<dyn Executor + Send>], job: &Job) -> Result<Round, SshError> {
    process::check_interrupted()?;
    let barrier = Barrier::new(execs.len());
    // Under a CPU quota below a core, this process's feeding shares the client's budget; the
    // single stream counts it too (`OpenSshEngine`'s shared quota), here once for all streams.
    let own = crate::cgroup::quota_cores("self")
        .is_some_and(|q| q < 1.0)
        .then(|| sysinfo::process_cpu_seconds(std::process::id()))
        .flatten();
    let done: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = execs
            .iter_mut()
            .map(|e| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let r = e.transfer(job);
                    (r, Instant::now())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a stream's thread does not panic"))
            .collect()
    });
    let own = own.and_then(|before| {
        sysinfo::process_cpu_seconds(std::process::id()).map(|after| after - before)
    });
    let mut samples = Vec::new();
    for (r, end) in done {
        samples.push((r?, end));
    }
    // Each stream's timed window ends at `end` and lasted its sample's seconds.
    let first = samples
        .iter()
        .map(|(s, end)| *end - std::time::Duration::from_secs_f64(s.seconds))
        .min()
        .expect("at least one stream");
    let last = samples.iter().map(|(_, end)| *end).max().expect("one");
    let sum = |f: fn(&super::executor::Sample) -> Option<f64>| -> Option<f64> {
        samples.iter().map(|(s, _)| f(s)).sum()
    };
    let totals: Vec<f64> = samples
        .iter()
        .filter_map(|(s, _)| Some(s.server_busy_s? / s.seconds.max(1e-9) * 100.0))
        .collect();
    Ok(Round {
        bytes: samples.iter().map(|(s, _)| s.bytes).sum(),
        wall_s: (last - first).as_secs_f64(),
        streams_mib_s: samples.iter().map(|(s, _)| s.mib_s()).collect(),
        client_cpu_s: sum(|s| s.client_cpu_s).map(|c| c + own.unwrap_or(0.0)),
        server_cpu_s: sum(|s| s.server_cpu_s),
        server_total_pct: crate::stats::median(&totals),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_the_servers_cores_up_to_eight_and_one_when_unknown() {
        assert_eq!("auto".parse::<StreamsAsked>(), Ok(StreamsAsked::Auto));
        assert_eq!("2".parse::<StreamsAsked>(), Ok(StreamsAsked::Count(2)));
        assert!("0".parse::<StreamsAsked>().is_err());
        assert!("17".parse::<StreamsAsked>().is_err());
        let m = |cores| MachineInfo {
            cores,
            ..MachineInfo::default()
        };
        assert_eq!(resolve(StreamsAsked::Auto, &m(Some(4))).count, 4);
        assert_eq!(resolve(StreamsAsked::Auto, &m(Some(64))).count, AUTO_MAX);
        let unknown = resolve(StreamsAsked::Auto, &m(None));
        assert_eq!(unknown.count, 1);
        assert!(unknown.reason.unwrap().contains("cannot be read"));
        assert_eq!(resolve(StreamsAsked::Count(3), &m(Some(2))).count, 3);
        let mut o = Options::new(None, vec![EngineKind::Native]);
        o.streams = StreamsAsked::Count(2);
        assert!(refusal(&o).is_some());
        o.engines_defaulted = true;
        assert!(refusal(&o).is_none());
    }
}
