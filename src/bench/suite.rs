//! One bench run: every engine asked for, one after the other, through the same steps (open,
//! log in once, default pairs, ceiling, the sampling loop), assembled into one report. The
//! first engine's server facts and ceiling lead the report; a later engine fills in what the
//! first could not learn (the schema has one `server` and one `ceiling`, not one per engine).

use super::adaptive::Adaptive;
use super::ceiling::{step, Outcome};
use super::executor::{Engine, Facts, Pairs};
use super::model::EngineKind;
use super::model::{self, BenchReport, ClientInfo, ResultRow, Settings};
use super::native::NativeEngine;
use super::openssh::OpenSshEngine;
use super::options::Options;
use super::run::{self, Sampling};
use super::thorough;
use crate::progress::Progress;
use crate::{cgroup, process, sysinfo};
use anyhow::Result;

/// First transfer size when sizing towards the thorough length; small enough for a slow board
/// to finish fast.
const INITIAL_SIZE: u64 = 16 << 20;
/// First transfer size in the default mode, whose samples start at a tenth of a second or
/// more: 16 MiB took 3des-cbc over a second on the development machine, where 4 MiB costs the
/// fastest cipher one sizing transfer of a few milliseconds more.
const ADAPTIVE_INITIAL_SIZE: u64 = 4 << 20;
/// The default mode's shortest sample, seconds, where CPU is read from exact clocks (the
/// native engine's thread CPU, in nanoseconds): nothing but the rates asks for more, and
/// over loopback its 64 MiB transfers (0.1 s) ran no slower than its 400 MiB ones.
/// Over a network the least size in windows (`Adaptive::min_bytes`) makes them longer.
const START_S: f64 = 0.1;
/// The sample time a row needs when CPU figures count scheduler ticks (the warning's
/// threshold), for a side that may use a whole core: 50 ticks. A row's CPU share pools its
/// samples, and every row has at least two, so each sample needs half of it. A side under a
/// CPU quota counts fewer ticks in the same time, so its samples start longer in proportion
/// (`tick_seconds`). Half, not the third that a first sample and one twice as long would
/// need: OpenSSH samples of a sixth of a second on loopback read 0.80 of `--thorough` (median
/// over 20 rows) where a quarter second read 1.05 the same day (docs/measurements.md).
const TICK_CPU_ROW_S: f64 = 0.5;

/// Starts the engine of `kind` against the options' target (or its private server).
pub fn open(kind: EngineKind, opts: &Options) -> Result<Box<dyn Engine>> {
    Ok(match kind {
        EngineKind::Openssh => Box::new(OpenSshEngine::open(opts)?),
        EngineKind::Native => Box::new(NativeEngine::open(opts)?),
    })
}

/// `--json-stream`'s event for each of an engine's rows.
fn stream_rows(shown: &dyn Progress, rows: &[ResultRow]) {
    for r in rows {
        shown.record(&serde_json::json!({ "event": "row", "row": r }));
    }
}

/// Runs every engine in `opts` and returns the report. `progress` gives a fresh progress
/// display for each engine's loop.
pub fn run(opts: &Options, progress: &dyn Fn() -> Box<dyn Progress>) -> Result<BenchReport> {
    process::install_signal_handlers()?;
    let started = chrono::Local::now().to_rfc3339();
    let run_started = std::time::Instant::now();
    let client_quota = cgroup::quota_cores("self");
    let mut warnings: Vec<String> = Vec::new();
    let mut lead: Option<Facts> = None;
    let mut ceiling: Option<model::Ceiling> = opts.ceiling.given().map(step::user);
    let mut results: Vec<ResultRow> = Vec::new();
    let mut windows: Vec<(EngineKind, Option<u64>)> = Vec::new();
    let mut placement = Vec::new();
    for &kind in &opts.engines {
        // Each engine's server (embedded or not) lives only for its own loop.
        let mut engine = open(kind, opts)?;
        let facts = engine.preflight(opts)?;
        let pairs = engine.default_pairs(&facts, opts)?;
        if ceiling.is_none() {
            let found = measure_ceiling(engine.as_mut(), &facts, opts, lead.is_none())?;
            ceiling = found.ceiling;
            warnings.extend(found.warnings);
        }
        process::check_interrupted()?;
        // Under a CPU quota too: one long-lived session per cipher reads the steady rate there,
        // where fresh sessions take seconds to reach it (docs/time-to-answer.md).
        let tick_quota = facts
            .tick_cpu
            .then(|| smallest_quota(client_quota, facts.server.cpu_quota_cores));
        // Over loopback a window is acknowledged in microseconds: no least size in windows.
        let window = (!facts.loopback).then(|| engine.window()).flatten();
        // Over loopback the native engine runs every row once before any is sampled
        // (`Race::survey`): its process reads a cipher faster once it has run the others. Over
        // a network, where a row's first size can take a second, it does not.
        let survey = kind == EngineKind::Native && facts.loopback;
        let adaptive = adaptive(opts, window, tick_quota, survey);
        let mut ctx = run::Context {
            client_quota_cores: client_quota,
            shared_cores: facts.shared_cores,
            ..run::Context::default()
        };
        step::apply(&mut ctx, ceiling.as_ref());
        let sampling = sampling(opts, pairs, adaptive.is_some(), run_started);
        let shown = progress();
        let mut rows = match adaptive {
            Some(a) => super::adaptive::run(engine.as_mut(), &sampling, &a, ctx, shown.as_ref())?,
            None => thorough::run(engine.as_mut(), &sampling, ctx, shown.as_ref())?,
        };
        super::streams::run(engine.as_ref(), &facts, &mut rows, opts, shown.as_ref())?;
        stream_rows(shown.as_ref(), &rows);
        results.extend(rows);
        windows.push((kind, engine.window()));
        placement.extend(engine.placement());
        for w in &facts.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
        lead = Some(match lead {
            None => facts,
            Some(first) => fill_in(first, &facts),
        });
    }
    let facts = lead.unwrap_or_default();
    let path_rtt_s = path_rtt_s(&facts, ceiling.as_ref());
    if facts.infers_path {
        super::path::infer(
            &mut results,
            ceiling.as_ref(),
            path_rtt_s,
            |engine| {
                let kind = EngineKind::parse(engine)?;
                windows.iter().find(|(k, _)| *k == kind)?.1
            },
            client_quota,
            facts.server.cpu_quota_cores,
        );
    }
    let client_machine = sysinfo::local();
    annotate(&mut results, &client_machine, client_quota, &facts.server);
    warnings.extend(closing(opts, &results, &facts, client_quota));
    Ok(BenchReport {
        schema: model::SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started,
        host: facts.host_label,
        embedded: opts.target.is_none(),
        client: ClientInfo {
            ssh_version: facts.client_version,
            machine: client_machine,
            cpu_quota_cores: client_quota,
        },
        settings: Settings {
            placement,
            streams: super::streams::setting(opts, &facts.server.machine),
            ..settings(opts)
        },
        server: facts.server,
        ceiling,
        ranking: super::ranking::rank(&results),
        results,
        warnings,
        path_rtt_ms: path_rtt_s.map(|r| r * 1000.0),
        ssh_args: opts.ssh_args.clone(),
    })
}

/// The raw-TCP ceiling `engine` measures, if the run has none yet. The first engine says why
/// it has none; a later one only adds a measurement, without warnings.
fn measure_ceiling(
    engine: &mut dyn Engine,
    facts: &Facts,
    opts: &Options,
    first: bool,
) -> Result<Outcome> {
    if first {
        return engine.ceiling(facts, opts);
    }
    if opts.ceiling.skipped() {
        return Ok(Outcome::default());
    }
    Ok(Outcome {
        warnings: Vec::new(),
        ..engine.ceiling(facts, opts)?
    })
}

/// The notes rows get once every engine ran: what each end's CPU lacks for the row's cipher,
/// and what binds the row's parallel streams.
fn annotate(
    results: &mut [ResultRow],
    client: &sysinfo::MachineInfo,
    client_quota: Option<f64>,
    server: &model::ServerInfo,
) {
    super::cpu_note::annotate(results, client, &server.machine);
    let ends = super::streams_gain::Ends::of(client, client_quota, server);
    super::streams_gain::annotate(results, ends);
}

/// The warnings about the run as a whole, once every row is in.
fn closing(
    opts: &Options,
    results: &[ResultRow],
    facts: &Facts,
    client_quota: Option<f64>,
) -> Vec<String> {
    let quota = smallest_quota(client_quota, facts.server.cpu_quota_cores);
    let mut out: Vec<String> = coarse_ticks(results, facts.tick_cpu, quota)
        .into_iter()
        .collect();
    out.extend(native_only(opts));
    out.extend(super::legacy::gains(results));
    let streams = super::streams::setting(opts, &facts.server.machine);
    out.extend(super::streams::warnings(opts, streams.as_ref()));
    out
}

/// One engine's sampling plan: its pairs, the run's options, and what is left of `--max-time`.
fn sampling(
    opts: &Options,
    pairs: Pairs,
    adaptive: bool,
    run_started: std::time::Instant,
) -> Sampling {
    Sampling {
        pairs,
        directions: opts.directions.clone(),
        repeat: opts.sampling.repeat,
        warmup: opts.sampling.warmup,
        fixed_size: opts.sampling.size,
        initial_size: opts.sampling.size.unwrap_or(if adaptive {
            ADAPTIVE_INITIAL_SIZE
        } else {
            INITIAL_SIZE
        }),
        min_duration_s: opts.sampling.min_duration_s,
        // One cap for the whole run, whatever the number of engines.
        max_time_s: opts
            .sampling
            .max_time_s
            .map(|m| (m - run_started.elapsed().as_secs_f64()).max(0.0)),
    }
}

/// The path's round trip, seconds: the smaller of the engine's and the ceiling's.
fn path_rtt_s(facts: &Facts, ceiling: Option<&model::Ceiling>) -> Option<f64> {
    match (facts.rtt.map(|(r, _)| r), ceiling.and_then(|c| c.rtt_ms)) {
        (Some(a), Some(b)) => Some(a.min(b / 1000.0)),
        (a, b) => a.or(b.map(|b| b / 1000.0)),
    }
}

/// The warning for CPU figures counted in scheduler ticks over too short a time.
fn coarse_ticks(results: &[ResultRow], tick_cpu: bool, quota: f64) -> Option<String> {
    // A row's CPU share pools its samples (run::summarise), so the ticks it counted are those
    // of all its samples together.
    let short = results
        .iter()
        .filter(|r| r.median_mib_s.is_some())
        .any(|r| r.sample_seconds.iter().sum::<f64>() < tick_seconds(quota));
    (tick_cpu && short).then(|| {
        format!(
            "some transfers lasted under {:.1} s: CPU figures count 10 ms scheduler ticks{} and \
             are coarse there; use a larger --size or the adaptive default",
            tick_seconds(quota),
            if quota < 1.0 {
                format!(", of which a {:.0}% quota gets few", quota * 100.0)
            } else {
                String::new()
            }
        )
    })
}

/// The warning for a run that found no sshd and measured the native engine alone.
fn native_only(opts: &Options) -> Option<String> {
    (opts.engines_defaulted && opts.target.is_none() && opts.engines == [EngineKind::Native]).then(
        || {
            "no OpenSSH server (sshd) found, so only the native engine was measured: install \
             openssh-server to compare with OpenSSH in the same run"
                .into()
        },
    )
}

/// The default mode's rules for one engine, or None for the thorough loop (asked for, or a
/// fixed `--size`, which leaves nothing to size by stability). Samples start at a tenth of a
/// second or four channel windows (`window`: None over loopback, where a window's round
/// trip costs microseconds), whichever is more, and lengthen at most to the thorough length;
/// contenders get up to two samples more than the thorough count. The native engine's 8 MiB
/// window made every 3des-cbc sample over loopback last 2.5 s.
///
/// The start is longer where short samples cannot be trusted whatever the rates say: CPU
/// figures counted in 10 ms scheduler ticks (`tick_quota`: Some, with the smallest CPU quota
/// of either end) need 50 ticks per row to be within a few percent, half a second of a whole
/// core and longer under a quota (`tick_seconds`), shared by the row's first two samples. A
/// board at 20% counted 10 ticks in half a second, and one tick either way moved its share
/// across the verdict's threshold. The quota's ramp-up needs no rule of its own: the
/// session's warm-up covers it, and a longer sample that reads faster is lengthened like any
/// other.
fn adaptive(
    opts: &Options,
    window: Option<u64>,
    tick_quota: Option<f64>,
    survey: bool,
) -> Option<Adaptive> {
    let start = START_S.max(tick_quota.map_or(0.0, |q| tick_seconds(q) / 2.0));
    opts.sampling.adaptive().then(|| Adaptive {
        start_s: start.min(opts.sampling.min_duration_s),
        longest_s: opts.sampling.min_duration_s,
        min_bytes: window.map_or(0, |w| 4 * w),
        max_samples: opts.sampling.repeat.max(2) + 2,
        race: true,
        revisit: true,
        survey,
    })
}

/// The smaller CPU quota of the two ends, in cores, 1 where neither has one below a core.
fn smallest_quota(client: Option<f64>, server: Option<f64>) -> f64 {
    [client, server].into_iter().flatten().fold(1.0, f64::min)
}

/// How long a row's samples must last together for a side limited to `quota_cores` to count
/// 50 scheduler ticks: `TICK_CPU_ROW_S` for a whole core. The quota is floored at 5% so that
/// a tiny quota asks for seconds, not minutes (the adaptive start is capped at the thorough
/// length).
fn tick_seconds(quota_cores: f64) -> f64 {
    TICK_CPU_ROW_S / quota_cores.clamp(0.05, 1.0)
}

/// The lead engine's facts with the gaps a later engine could fill: the server's machine and
/// CPU quota as that engine's login saw them.
fn fill_in(mut lead: Facts, later: &Facts) -> Facts {
    let (m, l) = (&mut lead.server.machine, &later.server.machine);
    m.cpu_model = m.cpu_model.take().or_else(|| l.cpu_model.clone());
    m.cores = m.cores.or(l.cores);
    m.kernel = m.kernel.take().or_else(|| l.kernel.clone());
    m.arch = m.arch.take().or_else(|| l.arch.clone());
    m.cpu_features = m.cpu_features.take().or_else(|| l.cpu_features.clone());
    lead.server.cpu_quota_cores = lead.server.cpu_quota_cores.or(later.server.cpu_quota_cores);
    lead
}

/// What the report records of how it was measured; the native packet size and window only
/// when the native engine ran.
pub fn settings(opts: &Options) -> Settings {
    let native = opts.runs(EngineKind::Native);
    Settings {
        engines: opts.engines.iter().map(|k| k.to_string()).collect(),
        repeat: opts.sampling.repeat,
        warmup: opts.sampling.warmup,
        fixed_size_bytes: opts.sampling.size,
        min_duration_s: opts.sampling.min_duration_s,
        native_packet_bytes: native.then(|| opts.native.packet_size()),
        native_window_bytes: native.then(|| opts.native.window()),
        native_threads: native.then_some(opts.native.threads),
        mode: Some(
            if opts.sampling.adaptive() {
                "adaptive"
            } else {
                "thorough"
            }
            .into(),
        ),
        max_time_s: opts.sampling.max_time_s,
        placement: Vec::new(),
        streams: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_engine_fills_only_the_gaps() {
        let mut lead = Facts::default();
        lead.server.machine.cores = Some(4);
        let mut later = Facts::default();
        later.server.machine.cores = Some(8);
        later.server.machine.kernel = Some("6.1".into());
        later.server.cpu_quota_cores = Some(0.5);
        let f = fill_in(lead, &later);
        assert_eq!(f.server.machine.cores, Some(4));
        assert_eq!(f.server.machine.kernel.as_deref(), Some("6.1"));
        assert_eq!(f.server.cpu_quota_cores, Some(0.5));
    }

    #[test]
    fn the_adaptive_mode_starts_longer_where_short_samples_mislead() {
        let o = Options::new(None, vec![EngineKind::Openssh]);
        assert!(!o.sampling.thorough, "the adaptive mode is the default");
        let a = |tick| adaptive(&o, Some(1 << 20), tick, false).unwrap();
        assert_eq!(a(None).start_s, START_S);
        assert_eq!(a(None).min_bytes, 4 << 20);
        assert_eq!(adaptive(&o, None, None, false).unwrap().min_bytes, 0);
        // Two samples of a quarter second count 50 ticks of a whole core.
        assert_eq!(a(Some(1.0)).start_s, TICK_CPU_ROW_S / 2.0);
        // A 20% quota counts a fifth of the ticks: 2.5 s for 50 of them, in two samples.
        assert!((tick_seconds(0.2) - 2.5).abs() < 1e-9);
        assert_eq!(a(Some(0.2)).start_s, 1.25);
        assert_eq!(a(Some(0.1)).start_s, o.sampling.min_duration_s);
        assert_eq!(a(Some(0.5)).start_s, 0.5);
        assert_eq!(smallest_quota(Some(0.5), Some(0.2)), 0.2);
        assert_eq!(smallest_quota(None, Some(2.0)), 1.0);
        let mut thorough = o.clone();
        thorough.sampling.thorough = true;
        assert!(adaptive(&thorough, None, None, false).is_none());
        let mut fixed = o.clone();
        fixed.sampling.size = Some(1 << 20);
        assert!(adaptive(&fixed, None, None, false).is_none());
        assert_eq!(settings(&fixed).mode.as_deref(), Some("thorough"));
        assert_eq!(settings(&o).mode.as_deref(), Some("adaptive"));
    }

    #[test]
    fn settings_name_the_engines_and_native_knobs_only_when_native_ran() {
        let o = Options::new(None, vec![EngineKind::Openssh]);
        let s = settings(&o);
        assert_eq!(s.engines, vec!["openssh"]);
        assert_eq!(s.native_window_bytes, None);
        let o = Options::new(None, EngineKind::ALL.to_vec());
        let s = settings(&o);
        assert_eq!(s.engines, vec!["openssh", "native"]);
        assert!(s.native_window_bytes.is_some());
        assert_eq!(s.native_threads, Some(1));
        assert_eq!(EngineKind::parse("native"), Some(EngineKind::Native));
        assert_eq!(EngineKind::parse("scripted"), None);
    }
}
