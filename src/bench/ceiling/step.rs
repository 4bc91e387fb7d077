//! The ceiling step of a bench run: measured with the first receiver the server has (openssh
//! engine), turned into the report's `ceiling` and the verdict context, with a warning for
//! whatever could not be measured.

use super::{Outcome, RemoteCeiling, RemoteSetup, Run};
use crate::bench::model::{self, CeilingDirection, Direction};
use crate::bench::{run, verdict};
use crate::stats;
use crate::target::{SshLog, SshTarget};
use anyhow::Result;
use std::net::IpAddr;
use std::time::Duration;

/// Length of each raw-TCP run against a remote receiver.
const RUN: Duration = Duration::from_secs(2);
/// Runs per direction.
const RUNS: u32 = 3;

/// The warning for `--no-ceiling`.
pub const SKIPPED: &str = "raw-TCP ceiling not measured (--no-ceiling): no row can be called \
    network-bound; agreeing ciphers may still be called path-bound";

/// What the server side said about itself that the ceiling needs.
pub struct Remote<'a> {
    /// Where the receivers run: the engine's measuring target.
    pub target: &'a SshTarget,
    /// `sshtune` path (given or found in the remote PATH).
    pub sshtune: Option<String>,
    /// The preflight's `receivers=` list.
    pub receivers: String,
    /// Our address on the path, from the RTT connect.
    pub local_ip: Option<IpAddr>,
    pub client_cap_pct: f64,
    pub server_cap_pct: f64,
}

/// A ceiling the user measured elsewhere (`--ceiling`).
pub fn user(rate: &crate::units::Rate) -> model::Ceiling {
    model::Ceiling {
        mib_s: rate.mib_s,
        method: format!("user-supplied (--ceiling {})", rate.read_as),
        rtt_ms: None,
        receiver: None,
        directions: Vec::new(),
    }
}

/// Length of each loopback TCP run. Loopback has no window or congestion ramp worth a sample
/// (0.15 s moves a third of a GiB here), and the figure is context only; at 0.7 s the three
/// runs took 2.1 s, the time of two cipher rows in a default bench. Between runs of 0.3 s the
/// figure moved from 2.3 to 3.3 GiB/s, more than within one (at most 15%).
const LOOPBACK_RUN: Duration = Duration::from_millis(150);

/// Loopback TCP, for context only (see `Ceiling::judges_network`).
pub fn loopback() -> Result<model::Ceiling> {
    use anyhow::Context as _;
    let (m, lo, hi) =
        super::loopback_tcp(LOOPBACK_RUN).context("measuring the loopback TCP ceiling")?;
    Ok(model::Ceiling {
        mib_s: m,
        method: format!("{}, median of 3 ({lo:.0}–{hi:.0})", model::LOOPBACK_CEILING),
        rtt_ms: None,
        receiver: None,
        directions: Vec::new(),
    })
}

/// A remote ceiling, or none with a warning saying why.
pub fn remote(no_ceiling: bool, r: &Remote, download: bool) -> Result<Outcome> {
    if no_ceiling {
        return Ok(Outcome::none(SKIPPED));
    }
    let local_iperf3 = crate::process::find_program("iperf3").is_some();
    let (cands, skipped) =
        super::candidates(r.sshtune.clone(), &r.receivers, local_iperf3, r.local_ip);
    let ssh = |cmd: &str| r.target.ssh_command(None, None, SshLog::Default, cmd);
    let setup = RemoteSetup {
        ssh: &ssh,
        per_run: RUN,
        runs: RUNS,
        local_ip: r.local_ip,
        download,
    };
    let (found, notes) = super::measure_remote(&cands, &setup)?;
    let mut why: Vec<String> = skipped;
    why.extend(notes);
    let Some(found) = found else {
        let tried = if cands.is_empty() {
            "the server has none of sshtune, iperf3, socat, nc, python3, bash".to_string()
        } else {
            format!("no receiver on the server worked ({})", why.join("; "))
        };
        return Ok(Outcome::none(format!(
            "raw-TCP ceiling unknown: {tried}; install one there, or pass --ceiling MIB/s, so \
             a network-bound row can be recognised (verdicts fall back to CPU figures and the \
             path inference)"
        )));
    };
    let mut out = Outcome::found(to_model(&found, r.client_cap_pct, r.server_cap_pct));
    if !why.is_empty() {
        out.warnings.push(format!(
            "raw-TCP ceiling via {}; other receivers: {}",
            found.receiver.id(),
            why.join("; ")
        ));
    }
    if download && found.download.is_empty() {
        out.warnings.push(format!(
            "download rows are judged against the upload ceiling: {} measured client → server \
             only",
            found.receiver.id()
        ));
    }
    Ok(out)
}

fn direction(d: Direction, runs: &[Run], client_cap: f64, server_cap: f64) -> CeilingDirection {
    let med = |f: &dyn Fn(&Run) -> Option<f64>| {
        let v: Vec<f64> = runs.iter().filter_map(f).collect();
        stats::median(&v)
    };
    let rates: Vec<f64> = runs.iter().map(|r| r.mib_s).collect();
    let client = med(&|r| r.client_cpu_pct);
    let server = med(&|r| r.server_cpu_pct);
    let busy = med(&|r| r.server_busy);
    CeilingDirection {
        direction: d,
        mib_s: stats::median(&rates).unwrap_or(0.0),
        min_mib_s: stats::min(&rates).unwrap_or(0.0),
        max_mib_s: stats::max(&rates).unwrap_or(0.0),
        runs: runs.len() as u32,
        client_cpu_pct: client,
        server_cpu_pct: server,
        server_busy_pct: busy.map(|b| b * 100.0),
        cpu_bound: verdict::ceiling_cpu_bound(client, client_cap, server, server_cap)
            .map(|s| s.as_str().to_string()),
    }
}

fn to_model(c: &RemoteCeiling, client_cap: f64, server_cap: f64) -> model::Ceiling {
    let mut dirs = vec![direction(
        Direction::Upload,
        &c.upload,
        client_cap,
        server_cap,
    )];
    if !c.download.is_empty() {
        dirs.push(direction(
            Direction::Download,
            &c.download,
            client_cap,
            server_cap,
        ));
    }
    let parts: Vec<String> = dirs
        .iter()
        .map(|d| {
            format!(
                "{} {:.1} ({:.1}–{:.1}, {} runs{})",
                d.direction,
                d.mib_s,
                d.min_mib_s,
                d.max_mib_s,
                d.runs,
                d.cpu_bound
                    .as_deref()
                    .map_or(String::new(), |s| format!(", bound by the {s} CPU"))
            )
        })
        .collect();
    model::Ceiling {
        mib_s: dirs[0].mib_s,
        method: format!(
            "raw TCP via {}: {}",
            c.receiver.describe(),
            parts.join(", ")
        ),
        rtt_ms: c.rtt_s.map(|r| r * 1000.0),
        receiver: Some(c.receiver.id().to_string()),
        directions: dirs,
    }
}

/// The verdict context's ceiling fields from a report ceiling.
pub fn apply(ctx: &mut run::Context, ceiling: Option<&model::Ceiling>) {
    let Some(c) = ceiling else { return };
    ctx.ceiling_mib_s = c.judges_network();
    let bound = |d: Direction| {
        c.direction(d)
            .and_then(|d| d.cpu_bound.as_deref())
            .map(|s| match s {
                "client" => verdict::Side::Client,
                _ => verdict::Side::Server,
            })
    };
    // Upload rows are judged against `c.mib_s`: the upload run's, or where only the download
    // was measured (`sshtune serve` sends), the download run's, whose CPU bound goes with it.
    ctx.ceiling_cpu_bound[0] = match c.direction(Direction::Upload) {
        Some(_) => bound(Direction::Upload),
        None => bound(Direction::Download),
    };
    if let Some(d) = c.direction(Direction::Download) {
        ctx.ceiling_download_mib_s = ctx.ceiling_mib_s.map(|_| d.mib_s);
        ctx.ceiling_cpu_bound[1] = bound(Direction::Download);
    }
}
