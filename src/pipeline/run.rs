//! One pipeline run: check the destination, generate the data, measure the stage ceilings,
//! run rsync for every cipher × variant while both samplers record, then decide.

use super::dataset::Dataset;
use super::model::*;
use super::remote;
use super::rsync::{self, RunError, Variant};
use super::sampler::{self, Samplers, Shared};
use super::stages;
use super::verdict;
use crate::bench::executor::TransferError;
use crate::bench::stats;
use crate::cli::PipelineArgs;
use crate::embedded::EmbeddedSshd;
use crate::process;
use crate::target::{ssh_query, SshLog, SshTarget};
use anyhow::{anyhow, bail, Context, Result};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const MIB: f64 = 1024.0 * 1024.0;

/// Where the data goes, as parsed from `[HOST:]DIR`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dest {
    pub host: Option<String>,
    pub dir: Option<String>,
}

pub fn parse_dest(s: Option<&str>) -> Result<Dest> {
    let Some(s) = s else {
        return Ok(Dest {
            host: None,
            dir: None,
        });
    };
    // `[::1]:/dir` keeps its brackets for ssh to strip; `host:dir`; a bare path is local.
    let split = if s.starts_with('[') {
        s.find("]:").map(|i| i + 1)
    } else if s.starts_with('/') || s.starts_with('.') {
        None
    } else {
        s.find(':')
    };
    match split {
        Some(i) => {
            let (h, d) = (&s[..i], &s[i + 1..]);
            if h.is_empty() {
                return Ok(Dest {
                    host: None,
                    dir: Some(d.to_string()).filter(|d| !d.is_empty()),
                });
            }
            if d.is_empty() {
                bail!("give the destination directory too: {h}:/path/to/dir");
            }
            Ok(Dest {
                host: Some(h.trim_matches(['[', ']']).to_string()),
                dir: Some(d.to_string()),
            })
        }
        None => Ok(Dest {
            host: None,
            dir: Some(s.to_string()),
        }),
    }
}

pub fn ssh_command(target: &SshTarget, cipher: Option<&str>, remote_cmd: &str) -> Command {
    target.ssh_command(cipher, None, SshLog::ErrorsOnly, remote_cmd)
}

/// Runs one helper script; its stdout, or one line saying why not. `what` names the step
/// for that line.
fn remote_call(target: &SshTarget, script: &str, label: &str, what: &str) -> Result<String> {
    process::check_interrupted()?;
    let out = ssh_command(target, None, script)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot run ssh (apt-get install openssh-client): {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() || stdout.contains("SSHTUNE-") {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(
        match crate::bench::openssh::classify(&stderr, out.status.code(), label) {
            TransferError::Fatal(e) => e.context(format!("while {what}")),
            other => anyhow!("{label}: {other} (while {what})"),
        },
    )
}

/// The run directory on the remote side; removed when dropped unless the user keeps it.
struct RemoteDir {
    target: SshTarget,
    path: String,
    label: String,
    keep: bool,
}

impl RemoteDir {
    /// Removes the directory unless the user keeps it. Runs also after Ctrl-C, so it does not
    /// check for interruption.
    fn remove(&self) -> Result<()> {
        if self.keep {
            return Ok(());
        }
        let out = ssh_command(&self.target, None, &remote::remove(&self.path))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| anyhow!("cannot run ssh: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if stdout.contains("SSHTUNE-OK") {
            return Ok(());
        }
        bail!(
            "{} on {} could not be removed ({})",
            self.path,
            self.label,
            crate::process::last_line(&String::from_utf8_lossy(&out.stderr))
        )
    }
}

/// Everything a run creates that must go away in order: the remote run directory (needs the
/// server), then the embedded server, then its temp destination.
#[derive(Default)]
struct Resources {
    remote_dir: Option<RemoteDir>,
    embedded: Option<EmbeddedSshd>,
    auto_dir: Option<tempfile::TempDir>,
}

fn info<'a>(out: &'a str, key: &str) -> Option<&'a str> {
    out.lines()
        .filter_map(|l| l.strip_prefix("SSHTUNE-INFO "))
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

fn median_u64(v: &[u64]) -> Option<u64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

pub fn measure(args: &PipelineArgs, say: &dyn Fn(&str)) -> Result<PipelineReport> {
    process::install_signal_handlers()?;
    let mut res = Resources::default();
    let result = measure_in(args, say, &mut res);
    let cleaned = res.remote_dir.take().map(|d| d.remove()).transpose();
    drop(res.embedded.take());
    if args.keep {
        // The user asked to keep the files: an auto-created destination stays too.
        let _ = res.auto_dir.take().map(tempfile::TempDir::keep);
    }
    match (result, cleaned) {
        (Ok(r), Ok(_)) => Ok(r),
        (Ok(mut r), Err(e)) => {
            r.warnings.push(format!("{e:#}"));
            Ok(r)
        }
        (Err(e), Ok(_)) => Err(e),
        (Err(e), Err(c)) => Err(anyhow!("{e:#}; {c:#}")),
    }
}

fn measure_in(
    args: &PipelineArgs,
    say: &dyn Fn(&str),
    res: &mut Resources,
) -> Result<PipelineReport> {
    let t0 = Instant::now();
    let started = chrono::Local::now().to_rfc3339();
    let mut warnings = Vec::new();
    let dest = parse_dest(args.destination.as_deref())?;

    // Kept alive for the whole run; dropping them stops the server and removes the temp dir.
    let (target, dir, label) = match &dest.host {
        None => {
            if !args.ssh.to_ssh_options().is_empty() {
                bail!("ssh options (-p, -l, -i, -F, -o) need a HOST:DIR destination");
            }
            let dir = match &dest.dir {
                Some(d) => std::path::absolute(d)
                    .with_context(|| format!("resolving {d}"))?
                    .display()
                    .to_string(),
                None => {
                    let t = tempfile::Builder::new().prefix("sshtune-dest-").tempdir()?;
                    let p = t.path().display().to_string();
                    res.auto_dir = Some(t);
                    p
                }
            };
            say("starting the embedded loopback sshd");
            let server = EmbeddedSshd::start("")?;
            let target = server.target.clone();
            res.embedded = Some(server);
            (target, dir, "the embedded loopback sshd".to_string())
        }
        Some(h) => (
            SshTarget {
                destination: h.clone(),
                options: args.ssh.to_ssh_options(),
                embedded: false,
            },
            dest.dir
                .clone()
                .expect("parse_dest gives a dir with a host"),
            h.clone(),
        ),
    };
    let dir = dir.trim_end_matches('/').to_string();
    let dir = if dir.is_empty() { "/".to_string() } else { dir };
    let local_rsync = crate::process::run_capture(Command::new("rsync").arg("--version"))
        .map_err(|_| anyhow!("rsync is not installed on this machine (apt-get install rsync)"))?;
    let resolved = target.resolve()?;

    let dataset = match &args.source {
        Some(p) => Dataset::existing(p)?,
        None => {
            say(&format!(
                "generating a {} dataset of {:.0} MiB",
                args.dataset.as_str(),
                args.size as f64 / MIB
            ));
            Dataset::generate(args.dataset, args.size)?
        }
    };

    let suffix: u32 = rand::random();
    let run_dir = format!(
        "{}/sshtune-pipeline-{suffix:08x}",
        if dir == "/" { "" } else { &dir }
    );
    say(&format!("checking {dir} on {label}"));
    let pre = remote_call(
        &target,
        &remote::preflight(&dir, &run_dir, &args.rsync_path),
        &label,
        "checking the destination",
    )?;
    if let Some(err) = pre.lines().find_map(|l| l.strip_prefix("SSHTUNE-ERR ")) {
        let (what, why) = err.split_once(' ').unwrap_or((err, ""));
        match what {
            "missing" => bail!("destination directory {dir} does not exist on {label}"),
            "notwritable" => bail!(
                "destination directory {dir} on {label} is not writable: {}",
                // The shell's `sh: 1: cannot create PATH: Read-only file system` → the cause.
                why.rsplit_once(": ").map_or(why, |(_, c)| c).trim()
            ),
            "norsync" => bail!(
                "rsync ({}) is missing on {label}: install it there or pass --rsync-path",
                args.rsync_path
            ),
            _ => bail!("cannot create a run directory in {dir} on {label}"),
        }
    }
    if !pre.contains("SSHTUNE-OK") {
        bail!(
            "the destination check on {label} printed nothing usable: {}",
            crate::process::last_line(&pre)
        );
    }
    res.remote_dir = Some(RemoteDir {
        target: target.clone(),
        path: run_dir.clone(),
        label: label.clone(),
        keep: args.keep,
    });

    let mut storage = StorageInfo {
        device: info(&pre, "device").map(String::from),
        fstype: info(&pre, "fstype").map(String::from),
        dm_device: info(&pre, "dm").map(String::from),
        dm_name: info(&pre, "dmname").map(String::from),
        sector_size: info(&pre, "sector").and_then(|s| s.parse().ok()),
        free_bytes: info(&pre, "avail_k")
            .and_then(|s| s.parse::<u64>().ok())
            .map(|k| k * 1024),
        ..Default::default()
    };
    if let Some((cipher, sector, flags)) = info(&pre, "dmtable").and_then(remote::parse_crypt_table)
    {
        storage.crypt_cipher = Some(cipher);
        storage.sector_size = sector.or(storage.sector_size);
        storage.crypt_flags = flags;
    } else if storage.dm_name.is_some() {
        warnings.push("the dm-crypt table could not be read on the remote side (dmsetup needs root): cipher and flags unknown".into());
    }
    if let Some(free) = storage.free_bytes {
        // rsync writes a temp copy of each file before renaming it into place.
        let need = dataset.bytes + dataset.bytes / 50 + (1 << 20);
        if free < need {
            bail!(
                "the destination filesystem on {label} is full for this run: {:.1} MiB free, the dataset needs {:.1} MiB (use a smaller --size)",
                free as f64 / MIB,
                need as f64 / MIB
            );
        }
    }

    let shared = Shared::default();
    if let Ok(mut g) = shared.dm.lock() {
        *g = storage.dm_device.clone();
    }
    let interval = Duration::from_millis(args.interval_ms);
    let samplers = Samplers::start(
        shared.clone(),
        ssh_command(
            &target,
            None,
            &remote::sampler(
                interval.as_secs_f64(),
                &format!("sshtune-pipeline-{suffix:08x}"),
            ),
        ),
        interval,
    )?;

    // Ciphers: the user's, or the fast ok-graded ones the server offers.
    let client_ciphers = ssh_query("cipher")?;
    for c in &args.ciphers {
        if !client_ciphers.contains(c) {
            bail!(
                "unknown cipher {c}: the local ssh supports {}",
                client_ciphers.join(",")
            );
        }
    }
    let offer = crate::probe::probe_target(&target, &resolved, Duration::from_secs(10))?;
    let offered = offer.ciphers();
    let default_cipher = resolved
        .ciphers
        .iter()
        .find(|c| offered.contains(c))
        .cloned();
    let candidates: Vec<String> = if args.ciphers.is_empty() {
        client_ciphers
            .iter()
            .filter(|c| offered.contains(c))
            .filter(|c| ciphers::cipher(c).is_some_and(|s| s.grade == ciphers::Grade::Ok))
            .cloned()
            .collect()
    } else {
        args.ciphers.clone()
    };
    if candidates.is_empty() {
        bail!("{label} offers no ok-graded cipher the local ssh supports; pass --ciphers");
    }
    let mut ceilings = Vec::new();
    let mut machine_cores = info(&pre, "cores").and_then(|c| c.parse().ok());
    // With the ciphers chosen by the user, each one's SSH-only ceiling is measured right before
    // its rsync runs instead: on a machine whose load changes, figures taken minutes apart
    // do not compare.
    if !args.no_ceilings && args.ciphers.is_empty() {
        say(&format!(
            "stage ceiling: SSH only, {} cipher(s)",
            candidates.len()
        ));
        shared.set_phase(Some("ceiling:ssh".into()));
        let (rows, report) = stages::ssh_only(
            &target.destination,
            &target.options,
            &candidates,
            args.repeat,
            args.quiet,
        )?;
        machine_cores = machine_cores.or(report.server.machine.cores);
        ceilings.extend(rows);
    }
    let chosen: Vec<String> = if args.ciphers.is_empty() {
        let mut ranked: Vec<(&String, f64)> = candidates
            .iter()
            .map(|c| {
                (
                    c,
                    ceilings
                        .iter()
                        .find(|s| s.cipher.as_ref() == Some(c))
                        .and_then(|s| s.median_mib_s)
                        .unwrap_or(0.0),
                )
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut v: Vec<String> = ranked
            .iter()
            .take(args.max_ciphers as usize)
            .map(|(c, _)| (*c).clone())
            .collect();
        if let Some(d) = &default_cipher {
            if !v.contains(d) {
                v.push(d.clone());
            }
        }
        v
    } else {
        args.ciphers.clone()
    };

    if !args.no_ceilings {
        let free_mib = storage.free_bytes.map_or(u64::MAX, |f| (f >> 20) / 2);
        let mib = 128.min((dataset.bytes >> 20).max(1)).min(free_mib);
        say(&format!(
            "stage ceiling: disk only, {mib} MiB write on the destination filesystem"
        ));
        shared.set_phase(Some("ceiling:disk".into()));
        ceilings.push(if mib == 0 {
            stages::failed(
                "disk",
                None,
                "too little free space for a write test".into(),
            )
        } else {
            stages::disk_only(
                |s| remote_call(&target, s, &label, "measuring the disk-only ceiling"),
                &run_dir,
                mib,
                args.repeat,
            )
        });
        say("stage ceiling: rsync without ssh, into a local temp directory");
        shared.set_phase(Some("ceiling:rsync-local".into()));
        let scratch = dataset.scratch()?;
        ceilings.push(stages::rsync_local(
            &dataset.rsync_source(),
            scratch.path(),
            dataset.bytes,
            args.repeat,
        ));
    }

    // Fresh-destination variants first, so the delta ones find the data in place.
    let mut variants = args.variants.clone();
    variants.dedup();
    variants.sort_by_key(|v| v.needs_existing());
    let data_dir = format!("{run_dir}/data");
    let rsync_dest = if target.destination.contains(':') {
        format!("[{}]:{data_dir}/", target.destination)
    } else {
        format!("{}:{data_dir}/", target.destination)
    };
    let source = dataset.rsync_source();
    let mut populated = false;
    let mut rows = Vec::new();
    for cipher in &chosen {
        if !args.no_ceilings && !args.ciphers.is_empty() {
            say(&format!("stage ceiling: SSH only, {cipher}"));
            shared.set_phase(Some("ceiling:ssh".into()));
            let (rows, report) = stages::ssh_only(
                &target.destination,
                &target.options,
                std::slice::from_ref(cipher),
                args.repeat,
                args.quiet,
            )?;
            machine_cores = machine_cores.or(report.server.machine.cores);
            ceilings.extend(rows);
        }
        let e = rsync::ssh_command(&target.ssh_options(Some(cipher), None, SshLog::ErrorsOnly));
        let mut refused: Option<String> = None;
        for &variant in &variants {
            let mut row = Row {
                cipher: cipher.clone(),
                variant: variant.as_str().into(),
                rsync_flags: variant.flags().iter().map(|s| s.to_string()).collect(),
                bytes: dataset.bytes,
                samples: Vec::new(),
                median_mib_s: None,
                min_mib_s: None,
                max_mib_s: None,
                wire_bytes: None,
                literal_bytes: None,
                cpu: Vec::new(),
                error: refused.clone(),
            };
            let mut wire = Vec::new();
            let mut literal = Vec::new();
            for rep in 0..args.repeat {
                if refused.is_some() {
                    break;
                }
                let build = |v: Variant| {
                    let mut cmd = Command::new("rsync");
                    cmd.args(["-a", "--info=progress2", "--no-h", "--stats"])
                        .args(v.flags())
                        .arg("-e")
                        .arg(&e)
                        .arg(format!("--rsync-path={}", args.rsync_path))
                        .arg(&source)
                        .arg(&rsync_dest);
                    cmd
                };
                if variant.needs_existing() {
                    if !populated {
                        shared.set_phase(Some("prepare".into()));
                        rsync::run(&mut build(Variant::WholeFile), &label, |_| {})
                            .map_err(fatal)?;
                        populated = true;
                    }
                } else {
                    let out = remote_call(
                        &target,
                        &remote::reset(&data_dir),
                        &label,
                        "emptying the destination between runs",
                    )?;
                    if !out.contains("SSHTUNE-OK") {
                        bail!(
                            "cannot empty {data_dir} on {label}: {}",
                            crate::process::last_line(&out)
                        );
                    }
                    populated = false;
                }
                let phase = format!("{cipher}/{}#{}", variant.as_str(), rep + 1);
                shared.set_phase(Some(phase.clone()));
                let sender = &shared.sender;
                match rsync::run(&mut build(variant), &label, |pid| {
                    sender.store(pid, Ordering::SeqCst)
                }) {
                    Ok(o) => {
                        populated = true;
                        let rate = dataset.bytes as f64 / MIB / o.transfer_s.max(1e-6);
                        say(&format!("{phase}: {rate:.1} MiB/s ({:.2} s)", o.transfer_s));
                        row.samples.push(rate);
                        wire.extend(o.stats.wire_bytes());
                        literal.extend(o.stats.literal_data);
                    }
                    Err(RunError::Failed(msg)) => {
                        say(&format!("{phase}: {msg}"));
                        refused = Some(msg.clone());
                        row.error = Some(msg);
                    }
                    Err(RunError::Fatal(err)) => {
                        shared.set_phase(None);
                        return Err(err);
                    }
                }
                shared.sender.store(0, Ordering::SeqCst);
                shared.set_phase(Some("between".into()));
            }
            row.median_mib_s = stats::median(&row.samples);
            row.min_mib_s = stats::min(&row.samples);
            row.max_mib_s = stats::max(&row.samples);
            row.wire_bytes = median_u64(&wire);
            row.literal_bytes = median_u64(&literal);
            rows.push(row);
        }
    }
    shared.set_phase(None);
    let remote_error = samplers.remote_error.lock().ok().and_then(|g| g.clone());
    let intervals = samplers.finish();
    if let Some(e) = remote_error {
        warnings.push(format!(
            "{e}: server-side CPU is missing from the breakdown"
        ));
    }
    for row in &mut rows {
        let prefix = format!("{}/{}#", row.cipher, row.variant);
        row.cpu = sampler::shares(&intervals, &prefix)
            .into_iter()
            .map(|(side, group, pct)| CpuShare {
                side: side.as_str().into(),
                group,
                pct: (pct * 10.0).round() / 10.0,
            })
            .collect();
    }
    for row in &rows {
        let ssh = ceilings
            .iter()
            .find(|c| c.stage == "ssh" && c.cipher.as_ref() == Some(&row.cipher))
            .and_then(|c| c.median_mib_s);
        if let (Some(m), Some(c), "whole-file") = (row.median_mib_s, ssh, row.variant.as_str()) {
            if m > c * 1.2 {
                warnings.push(format!(
                    "{}: rsync ran at {m:.1} MiB/s, above its SSH-only ceiling of {c:.1}: the machine's load changed between the measurements, so compare ratios with care",
                    row.cipher
                ));
            }
        }
    }
    // Behind a jump host, 127.0.0.1 is the far side's loopback, not ours.
    let proxied =
        crate::proxy::Proxy::of(&resolved, &target.options, &target.destination).is_some();
    let same_machine = res.embedded.is_some() || (!proxied && is_loopback(&resolved.hostname));
    if same_machine {
        warnings.push("client and server share this machine's CPUs and disk: good for ranking, not for absolute figures of a remote link".into());
    }
    if storage
        .fstype
        .as_deref()
        .is_some_and(|f| matches!(f, "btrfs" | "zfs"))
    {
        warnings.push("the destination filesystem may compress: the disk-only ceiling writes zeros and can overstate it".into());
    }
    let verdict = verdict::decide(&verdict::Input {
        rows: &rows,
        ceilings: &ceilings,
        storage: &storage,
        default_cipher: default_cipher.as_deref(),
        cores: machine_cores,
        same_machine,
    });
    let report = PipelineReport {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started,
        destination: match &dest.host {
            Some(h) => format!("{h}:{dir}"),
            None => format!("embedded loopback sshd:{dir}"),
        },
        embedded: res.embedded.is_some(),
        same_machine,
        remote_dir: run_dir.clone(),
        keep: args.keep,
        dataset: DatasetInfo {
            kind: dataset.kind.clone(),
            files: dataset.files,
            bytes: dataset.bytes,
            source: args.source.as_ref().map(|p| p.display().to_string()),
        },
        storage,
        settings: Settings {
            ciphers: chosen,
            variants: variants.iter().map(|v| v.as_str().to_string()).collect(),
            repeat: args.repeat,
            interval_ms: args.interval_ms,
            rsync_version: local_rsync.lines().next().map(|l| l.trim().to_string()),
            remote_rsync: info(&pre, "rsync").unwrap_or("?").to_string(),
        },
        ceilings,
        rows,
        verdict,
        series: sampler::series(&intervals, t0),
        warnings,
    };
    Ok(report)
}

fn fatal(e: RunError) -> anyhow::Error {
    match e {
        RunError::Fatal(e) => e,
        RunError::Failed(m) => anyhow!(m),
    }
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations() {
        let d = |s: &str| parse_dest(Some(s)).unwrap();
        assert_eq!(
            d("host:/srv/x"),
            Dest {
                host: Some("host".into()),
                dir: Some("/srv/x".into())
            }
        );
        assert_eq!(
            d("u@h:rel"),
            Dest {
                host: Some("u@h".into()),
                dir: Some("rel".into())
            }
        );
        assert_eq!(
            d("/tmp/a:b"),
            Dest {
                host: None,
                dir: Some("/tmp/a:b".into())
            }
        );
        assert_eq!(
            d(":/tmp/a"),
            Dest {
                host: None,
                dir: Some("/tmp/a".into())
            }
        );
        assert_eq!(
            d("[::1]:/x"),
            Dest {
                host: Some("::1".into()),
                dir: Some("/x".into())
            }
        );
        assert!(parse_dest(Some("host:")).is_err());
        assert_eq!(
            parse_dest(None).unwrap(),
            Dest {
                host: None,
                dir: None
            }
        );
    }
}
