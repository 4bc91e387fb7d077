//! `sshtune config`: bench report in, validated sshd drop-in / client block / rsync line out.
//! Ranked by the OpenSSH engine's rows (see `config::figures`); `--check` prints the drop-in
//! only when the real `sshd -t` accepts it.

use crate::bench::model::{BenchReport, SCHEMA};
use crate::bench::{suite, EngineKind, Options, SamplingOptions};
use crate::cli::ConfigArgs;
use crate::config::apply::{self, one_line, reload_hint};
use crate::config::emit::{self, Emitted, Meta};
use crate::config::figures;
use crate::config::policy;
use crate::config::sshd::Sshd;
use crate::exit::{PolicyFailure, UsageError};
use crate::progress;
use crate::report::config::ConfigSummary;
use crate::report::Format;
use anyhow::{bail, Context, Result};
use ciphers::OpenSshVersion;
use std::io::Read as _;

pub fn run(args: ConfigArgs) -> Result<()> {
    // Ctrl-C must not cut --apply between writing and checking; steps poll the flag instead.
    crate::process::install_signal_handlers()?;
    let report = load(&args)?;
    let figures = figures::choose(&report)?;
    let report = figures::restrict(&report, &figures);
    let target = target(&args, &report)?;
    let sel = policy::select(&report, args.policy, target, args.direction);
    let meta = Meta {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        client_host: args
            .client_host
            .clone()
            .unwrap_or_else(|| client_host(&report)),
        client_version: report
            .client
            .ssh_version
            .as_deref()
            .and_then(OpenSshVersion::parse),
        figures: figures.describe(),
    };
    let out = emit::emit(&sel, &report, &meta)?;
    let summary = ConfigSummary::new(&sel, &out, &meta, crate::config::why::first(&sel, &report));
    if !args.quiet && args.format == Format::Table {
        eprint!("{}", summary.text());
    }
    // A drop-in sshd rejects is never printed as if it were usable: the outputs come last.
    if args.check {
        check(&args, target, &out)?;
    }
    if let Some(path) = &args.apply {
        crate::process::check_interrupted()?;
        let sshd = Sshd::find(args.sshd.as_deref())?;
        if let Some(v) = sshd.version().filter(|v| *v != target) {
            eprintln!(
                "apply: note — the lines were chosen for OpenSSH {target} but this machine's sshd is {v}; \
                 sshd -t below is the judge"
            );
        }
        let applied = apply::apply(&sshd, &args.sshd_config, path, &out.server)?;
        eprintln!(
            "applied: {} written; `sshd -t -f {}` passes",
            path.display(),
            args.sshd_config.display()
        );
        if let Some(b) = &applied.backup {
            eprintln!("applied: the previous file is kept at {}", b.display());
        }
        if let Some(o) = &applied.shadowed_by {
            eprintln!(
                "warning: Ciphers is decided earlier, at {o} (sshd uses the first value it reads); \
                 sshd's effective Ciphers is {} — move or remove that line for the drop-in to count",
                applied.effective.join(",")
            );
        }
        eprintln!("{}", reload_hint());
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&summary)?),
        _ => print_outputs(&args, &out),
    }
    Ok(())
}

/// `sshd -t` on the drop-in; a rejection is a policy failure (exit status 3) in sshd's words.
fn check(args: &ConfigArgs, target: OpenSshVersion, out: &Emitted) -> Result<()> {
    crate::process::check_interrupted()?;
    let sshd = Sshd::find(args.sshd.as_deref())?;
    let check = sshd.check_dropin(&out.server)?;
    // A pass or fail is only as good as the match between this sshd and the target.
    let mismatch = match sshd.version() {
        Some(v) if v != target => {
            format!(" (this sshd is OpenSSH {v}, the target is {target})")
        }
        Some(_) => String::new(),
        None => format!(" (this sshd's release is unknown, the target is {target})"),
    };
    if !check.verdict.passed {
        return Err(PolicyFailure(format!(
            "sshd -t ({}) REJECTS the drop-in{mismatch}: {}",
            sshd.path.display(),
            one_line(&check.verdict.message)
        ))
        .into());
    }
    eprintln!(
        "check: PASS — `{} -t` accepts the drop-in{}",
        sshd.path.display(),
        if check.verdict.message.is_empty() {
            String::new()
        } else {
            format!(" (it said: {})", one_line(&check.verdict.message))
        }
    );
    if !mismatch.is_empty() {
        eprintln!("check: note — validated by a different sshd than the target{mismatch}");
    }
    if let Some(eff) = &check.effective {
        if *eff != out.server_list {
            eprintln!(
                "check: note — sshd -T reports Ciphers {} (the drop-in says {})",
                eff.join(","),
                out.server_list.join(",")
            );
        }
    }
    Ok(())
}

/// The bench report named by `--from` (`-`: standard input; several are pooled), or a fresh
/// measurement.
fn load(args: &ConfigArgs) -> Result<BenchReport> {
    if !args.from.is_empty() {
        let mut reports = Vec::new();
        let mut names = Vec::new();
        for path in &args.from {
            let (name, report) = read_report(path)?;
            reports.push(report);
            names.push(name);
        }
        if names.len() > 1 && !args.quiet {
            eprintln!(
                "pooled {} runs of one host: each cipher's samples are those of every run",
                names.len()
            );
        }
        return crate::config::pool::pool(reports, &names);
    }
    let opts = Options {
        ssh_args: args.ssh.used(),
        ciphers: args.ciphers.clone(),
        sampling: SamplingOptions {
            size: args.size,
            ..SamplingOptions::DEFAULT
        },
        directions: args.direction.list(),
        ..Options::new(
            super::bench::target(args.host.as_deref(), &args.ssh),
            vec![EngineKind::Openssh],
        )
    };
    super::bench_names::check(&opts)?;
    let quiet = args.quiet;
    suite::run(&opts, &|| Box::new(progress::Stderr::new(quiet)))
}

/// One bench report from a file or, for `-`, standard input, with the name errors use.
fn read_report(path: &std::path::Path) -> Result<(String, BenchReport)> {
    let (name, text) = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the bench report from standard input")?;
        ("standard input".to_string(), text)
    } else {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        (path.display().to_string(), text)
    };
    // Not a report is a mistake on the command line, as for `sshtune report`.
    let report: BenchReport = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "{name} is not a sshtune bench report ({SCHEMA}): {e}"
        ))
    })?;
    if report.schema != SCHEMA {
        bail!(
            "{name}: schema {:?}, this sshtune reads {SCHEMA:?}",
            report.schema
        );
    }
    Ok((name, report))
}

fn target(args: &ConfigArgs, report: &BenchReport) -> Result<OpenSshVersion> {
    if let Some(v) = args.openssh_version {
        return Ok(v);
    }
    if let Some(v) = policy::target_version(report) {
        return Ok(v);
    }
    let banner = report.server.banner.as_deref().unwrap_or("none recorded");
    if banner.to_ascii_lowercase().contains("dropbear") {
        bail!("the server is Dropbear ({banner}): its ciphers are fixed at compile time, there is no config line to emit");
    }
    bail!("the target's OpenSSH release is unknown (server banner: {banner}); pass --openssh-version X.Y")
}

/// The destination without a `user@`, as a `Host` pattern; the private loopback server has
/// no name, so its address stands in.
fn client_host(report: &BenchReport) -> String {
    if report.embedded {
        return "127.0.0.1".into();
    }
    let h = report.host.rsplit('@').next().unwrap_or(&report.host);
    h.to_string()
}

fn print_outputs(args: &ConfigArgs, out: &Emitted) {
    let all = !(args.server || args.client || args.rsync);
    let mut parts: Vec<(&str, &str)> = Vec::new();
    if all || args.server {
        parts.push((
            "sshd drop-in, e.g. /etc/ssh/sshd_config.d/50-sshtune.conf",
            &out.server,
        ));
    }
    if all || args.client {
        parts.push(("client, in ~/.ssh/config", &out.client));
    }
    if all || args.rsync {
        parts.push(("rsync", &out.rsync));
    }
    let single = parts.len() == 1;
    for (i, (title, text)) in parts.iter().enumerate() {
        if !single {
            if i > 0 {
                println!();
            }
            println!("# ===== {title} =====");
        }
        print!("{text}");
    }
}
