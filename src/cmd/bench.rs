use crate::bench::ceiling;
use crate::bench::model::{self, BenchReport, ClientInfo, Direction, ResultRow, ServerInfo};
use crate::bench::openssh::OpenSsh;
use crate::bench::remote;
use crate::bench::run::{self, Plan, Progress};
use crate::cli::{BenchArgs, Engine};
use crate::embedded::EmbeddedSshd;
use crate::probe::probe_target;
use crate::proxy::Proxy;
use crate::report::{self, Format};
use crate::target::{ssh_query, ssh_version, SshTarget};
use crate::{cgroup, process, sysinfo};
use anyhow::{bail, Context, Result};
use std::io::IsTerminal;
use std::time::Duration;

/// First transfer size when sizing adaptively; small enough for a slow board to finish fast.
const INITIAL_SIZE: u64 = 16 << 20;

/// Runs the bench and presents the report as the arguments ask.
pub fn run(args: BenchArgs) -> Result<()> {
    if let Some(path) = &args.output {
        crate::outfile::check_writable(path)?;
    }
    let report = measure(&args)?;
    let mut text = report::exporter(args.format).render(&report)?;
    // Evidence is prose: it joins human formats, and goes to stderr beside machine formats
    // so their stdout stays parseable.
    let human = matches!(args.format, Format::Table | Format::Markdown);
    if args.explain && human && args.output.is_none() {
        text.push('\n');
        text.push_str(&report::explain(&report));
    }
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
            if args.explain {
                print!("{}", report::explain(&report));
            }
        }
        None => {
            print!("{text}");
            if args.explain && !human {
                eprint!("{}", report::explain(&report));
            }
        }
    }
    if report.results.iter().all(|r| r.error.is_some()) {
        bail!("no cipher could be measured (see the errors in the report)");
    }
    Ok(())
}

/// Runs the bench and returns the report without presenting it (`sshtune config --host` uses
/// this too).
pub fn measure(args: &BenchArgs) -> Result<BenchReport> {
    process::install_signal_handlers()?;
    super::bench_names::check(args)?;
    if args.engine() == Engine::Native {
        return measure_native_only(args);
    }
    let started = chrono::Local::now().to_rfc3339();
    let mut warnings = Vec::new();
    // Keep the embedded server alive for the whole run; dropping it cleans up.
    let (embedded, target) = match &args.host {
        None => {
            if !args.ssh.to_ssh_options().is_empty() {
                bail!("ssh options (-p, -l, -i, -F, -o) need a HOST");
            }
            let server = EmbeddedSshd::start("")?;
            let target = server.target.clone();
            (Some(server), target)
        }
        Some(h) => (
            None,
            SshTarget {
                destination: h.clone(),
                options: args.ssh.to_ssh_options(),
                embedded: false,
            },
        ),
    };
    let host_label = args
        .host
        .clone()
        .unwrap_or_else(|| "embedded loopback sshd".into());
    let resolved = target.resolve()?;
    let offer = probe_target(&target, &resolved, Duration::from_secs(10))?;
    let mut exec = OpenSsh::new(target.clone());
    let info = exec.preflight()?;
    process::check_interrupted()?;

    let client_ciphers = ssh_query("cipher")?;
    let offered = offer.ciphers();
    let ciphers: Vec<String> = if args.ciphers.is_empty() {
        client_ciphers
            .iter()
            .filter(|c| offered.contains(c))
            .cloned()
            .collect()
    } else {
        args.ciphers.clone()
    };
    if ciphers.is_empty() {
        bail!(
            "the server offers no cipher the local ssh supports (server: {})",
            offered.join(",")
        );
    }
    let offered_macs = offer.macs();
    let default_mac = resolved
        .macs
        .iter()
        .find(|m| offered_macs.contains(m))
        .cloned();
    let mut pairs = Vec::new();
    for c in &ciphers {
        let aead = ciphers::cipher(c).is_some_and(|s| s.is_aead());
        if aead {
            pairs.push((c.clone(), None));
        } else if !args.macs.is_empty() {
            pairs.extend(args.macs.iter().map(|m| (c.clone(), Some(m.clone()))));
        } else {
            pairs.push((c.clone(), default_mac.clone()));
        }
    }
    let directions = directions(args);

    let get_info = |k: &str| info.get(k);
    let client_quota = cgroup::quota_cores("self");
    let server_quota = get_info("quota").and_then(|q| remote::parse_quota(&q));
    let cap = |q: Option<f64>| q.map_or(100.0, |q| (q * 100.0).min(100.0));
    // Behind a jump host, 127.0.0.1 is the far side's loopback, not ours.
    let proxied = Proxy::of(&resolved, &target.options, &target.destination).is_some();
    let loopback = !proxied && is_loopback(&resolved.hostname);
    // The path's RTT and our address on it, from connects to the ssh port (not over loopback).
    let rtt = (!loopback && !proxied)
        .then(|| ceiling::rtt::connect_rtt(&resolved.hostname, resolved.port, 3))
        .flatten();
    let ceiling = match &args.ceiling {
        Some(c) => Some(user_ceiling(c)),
        None if loopback && !args.no_ceiling => Some(loopback_ceiling()?),
        None if loopback => {
            warnings.push(super::bench_ceiling::SKIPPED.into());
            None
        }
        None if proxied => {
            warnings.push(
                "no raw-TCP ceiling behind a jump host (the target is not reachable directly); \
                 --ceiling gives one"
                    .into(),
            );
            None
        }
        None => super::bench_ceiling::remote(
            args,
            &super::bench_ceiling::Remote {
                exec: &exec,
                sshtune: args.remote_sshtune.clone().or_else(|| get_info("sshtune")),
                receivers: get_info("receivers").unwrap_or_default(),
                local_ip: rtt.map(|(_, ip)| ip),
                client_cap_pct: cap(client_quota),
                server_cap_pct: cap(server_quota),
            },
            directions.contains(&Direction::Download),
            &mut warnings,
        )?,
    };
    process::check_interrupted()?;
    let path_rtt_s = match (rtt.map(|(r, _)| r), ceiling.as_ref().and_then(|c| c.rtt_ms)) {
        (Some(a), Some(b)) => Some(a.min(b / 1000.0)),
        (a, b) => a.or(b.map(|b| b / 1000.0)),
    };
    // One machine when the kernel's boot id matches ours (network namespaces and containers
    // included), or over loopback.
    let local_boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string());
    let same_machine = match (get_info("boot_id"), local_boot) {
        _ if loopback => Some(true),
        (Some(a), Some(b)) => Some(a == b),
        _ => None,
    };
    if loopback {
        warnings.push(
            "client and server share this machine's CPUs: good for ranking ciphers, not for \
             absolute figures of a remote link"
                .into(),
        );
    }
    let plan = Plan {
        pairs,
        directions,
        repeat: args.repeat,
        warmup: args.warmup,
        fixed_size: args.size,
        initial_size: args.size.unwrap_or(INITIAL_SIZE),
        min_duration_s: args.min_duration,
    };
    let mut ctx = run::Context {
        client_quota_cores: client_quota,
        shared_cores: (same_machine == Some(true))
            .then(|| sysinfo::local().cores.map(f64::from))
            .flatten(),
        ..run::Context::default()
    };
    super::bench_ceiling::apply(&mut ctx, ceiling.as_ref());
    let progress = StderrProgress::new(args.quiet);
    let mut results = run::run(&mut exec, &plan, ctx, &progress)?;
    drop(embedded);
    if args.engine() == Engine::Both {
        progress.finish();
        // The in-process native server's CPU is not a separate process's: no shared rule.
        let native_ctx = run::Context {
            shared_cores: None,
            ..ctx
        };
        results.extend(super::bench_native::rows(args, &plan, native_ctx)?);
    }
    let native_window = u64::from(super::bench_native::window(args));
    // Over loopback there is no path between the ends to infer.
    if !loopback {
        super::bench_path::infer(
            &mut results,
            ceiling.as_ref(),
            path_rtt_s,
            |engine| match engine {
                "openssh" => Some(crate::bench::window::OPENSSH_CHANNEL_WINDOW),
                "native" => Some(native_window),
                _ => None,
            },
            client_quota,
            server_quota,
        );
    }

    let short = results
        .iter()
        .filter_map(|r| Some(r.bytes as f64 / 1048576.0 / r.median_mib_s?))
        .any(|secs| secs < 0.5);
    if short {
        warnings.push(
            "some transfers lasted under 0.5 s: CPU figures count 10 ms scheduler ticks and are \
             coarse there; use a larger --size or the adaptive default"
                .into(),
        );
    }
    let get = get_info;
    if get("proc").as_deref() != Some("yes") {
        warnings
            .push("the server has no readable /proc: server CPU cannot be measured there".into());
    }
    let report = BenchReport {
        schema: model::SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started,
        host: host_label,
        embedded: args.host.is_none(),
        client: ClientInfo {
            ssh_version: ssh_version().ok(),
            machine: sysinfo::local(),
            cpu_quota_cores: client_quota,
        },
        server: ServerInfo {
            banner: Some(offer.banner.clone()),
            openssh_version: offer.openssh_version.clone(),
            strict_kex: Some(offer.strict_kex),
            offered_ciphers: offered,
            offered_macs,
            machine: sysinfo::MachineInfo {
                cpu_model: get("cpu"),
                cores: get("cores").and_then(|c| c.parse().ok()),
                kernel: get("kernel"),
            },
            cpu_quota_cores: server_quota,
            same_machine,
        },
        settings: super::bench_native::settings(
            args,
            match args.engine() {
                Engine::Both => Engine::Both,
                _ => Engine::Openssh,
            },
        ),
        ceiling,
        ranking: report::ranking::rank(&results),
        results,
        warnings,
        path_rtt_ms: path_rtt_s.map(|r| r * 1000.0),
        ssh_args: args.ssh.used(),
    };
    Ok(report)
}

/// The native engine alone needs no ssh, sshd or probe of an OpenSSH server.
fn measure_native_only(args: &BenchArgs) -> Result<BenchReport> {
    let directions = directions(args);
    let ceiling = match &args.ceiling {
        Some(c) => Some(user_ceiling(c)),
        None if args.host.is_none() && !args.no_ceiling => Some(loopback_ceiling()?),
        None => None,
    };
    let plan = Plan {
        pairs: Vec::new(),
        directions,
        repeat: args.repeat,
        warmup: args.warmup,
        fixed_size: args.size,
        initial_size: args.size.unwrap_or(INITIAL_SIZE),
        min_duration_s: args.min_duration,
    };
    let mut ctx = run::Context {
        client_quota_cores: cgroup::quota_cores("self"),
        ..run::Context::default()
    };
    super::bench_ceiling::apply(&mut ctx, ceiling.as_ref());
    let mut report = super::bench_native::measure(args, plan, ctx)?;
    if ceiling.is_some() {
        report.ceiling = ceiling;
    }
    if report.ceiling.is_none() {
        report.warnings.push(
            "raw-TCP ceiling unknown: pass --ceiling MIB/s (e.g. measured with iperf3) so a \
             network-bound row can be recognised"
                .into(),
        );
    }
    if args.host.is_none() {
        report.warnings.push(
            "client and server share this machine's CPUs: good for ranking ciphers, not for \
             absolute figures of a remote link"
                .into(),
        );
        if args.engine.is_none() {
            report.warnings.push(
                "no OpenSSH server (sshd) found, so only the native engine was measured: install \
                 openssh-server to compare with OpenSSH in the same run"
                    .into(),
            );
        }
    }
    Ok(report)
}

fn directions(args: &BenchArgs) -> Vec<Direction> {
    args.direction.list()
}

fn user_ceiling(rate: &crate::units::Rate) -> model::Ceiling {
    model::Ceiling {
        mib_s: rate.mib_s,
        method: format!("user-supplied (--ceiling {})", rate.read_as),
        rtt_ms: None,
        receiver: None,
        directions: Vec::new(),
    }
}

/// Loopback TCP, for context only (see `Ceiling::judges_network`).
fn loopback_ceiling() -> Result<model::Ceiling> {
    let (m, lo, hi) = ceiling::loopback_tcp(Duration::from_millis(700))
        .context("measuring the loopback TCP ceiling")?;
    Ok(model::Ceiling {
        mib_s: m,
        method: format!("{}, median of 3 ({lo:.0}–{hi:.0})", model::LOOPBACK_CEILING),
        rtt_ms: None,
        receiver: None,
        directions: Vec::new(),
    })
}

pub(crate) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A bar on a terminal; one plain line per finished row otherwise (CI logs, pipes).
pub(crate) struct StderrProgress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
}

impl StderrProgress {
    pub(crate) fn new(quiet: bool) -> Self {
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
