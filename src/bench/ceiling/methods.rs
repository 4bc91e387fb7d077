//! Which receiver to use and how each one's runs go: the server's list (from the preflight)
//! in order of preference, the first that works gives the ceiling, and each one that fails
//! leaves a note saying why.

use super::drive::{accept_token, connect, finish_run, pull, push};
use super::job::{listen_addr, Done, Job, Run, DONE, LISTEN};
use super::scripts::{self, NcFlavour};
use crate::process;
use anyhow::{Context, Result};
use std::net::{IpAddr, TcpListener};
use std::process::Command;
use std::time::{Duration, Instant};

/// A raw-TCP receiver on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receiver {
    /// `sshtune tcp-sink` at this path.
    Sshtune(String),
    Iperf3,
    Socat,
    Nc(NcFlavour),
    Python3,
    /// bash's `/dev/tcp`, connecting back to us.
    Bash,
}

impl Receiver {
    /// The id recorded in the JSON (`ceiling.receiver`).
    pub fn id(&self) -> &'static str {
        match self {
            Receiver::Sshtune(_) => "sshtune",
            Receiver::Iperf3 => "iperf3",
            Receiver::Socat => "socat",
            Receiver::Nc(f) => f.id(),
            Receiver::Python3 => "python3",
            Receiver::Bash => "bash-dev-tcp",
        }
    }

    /// Whether it can measure server → client too.
    pub fn downloads(&self) -> bool {
        !matches!(self, Receiver::Sshtune(_) | Receiver::Nc(_))
    }

    pub fn describe(&self) -> String {
        match self {
            Receiver::Sshtune(p) => format!("{p} tcp-sink on the server"),
            Receiver::Iperf3 => "iperf3 -s -1 on the server, local iperf3 client".into(),
            Receiver::Socat => "socat on the server".into(),
            Receiver::Nc(f) => format!("{} on the server", f.id()),
            Receiver::Python3 => "python3 on the server".into(),
            Receiver::Bash => "bash /dev/tcp on the server, connecting back".into(),
        }
    }
}

/// The receivers to try, best first: `sshtune` (path given or found), then what the server's
/// `receivers=` list names. iperf3 also needs the local iperf3 client; bash needs a local
/// address the server can connect back to. Returns the list and why others were left out.
pub fn candidates(
    sshtune: Option<String>,
    receivers: &str,
    local_iperf3: bool,
    local_ip: Option<IpAddr>,
) -> (Vec<Receiver>, Vec<String>) {
    let has: Vec<&str> = receivers.split(',').filter(|s| !s.is_empty()).collect();
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    if let Some(p) = sshtune {
        out.push(Receiver::Sshtune(p));
    }
    if has.contains(&"iperf3") {
        if local_iperf3 {
            out.push(Receiver::Iperf3);
        } else {
            skipped.push("iperf3 is on the server but not here".to_string());
        }
    }
    if has.contains(&"socat") {
        out.push(Receiver::Socat);
    }
    if let Some(f) = has.iter().find_map(|id| NcFlavour::from_id(id)) {
        out.push(Receiver::Nc(f));
    }
    if has.contains(&"python3") {
        out.push(Receiver::Python3);
    }
    if has.contains(&"bash") {
        if local_ip.is_some() {
            out.push(Receiver::Bash);
        } else {
            skipped.push("bash /dev/tcp needs a local address the server can reach".into());
        }
    }
    (out, skipped)
}

/// What every method needs from the caller.
pub struct RemoteSetup<'a> {
    /// Builds `ssh … -- REMOTE_COMMAND`.
    pub ssh: &'a dyn Fn(&str) -> Command,
    pub per_run: Duration,
    pub runs: u32,
    /// Our address on the path to the server (for connect-back), if known.
    pub local_ip: Option<IpAddr>,
    pub download: bool,
}

/// A measured remote ceiling: the receiver and each direction's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteCeiling {
    pub receiver: Receiver,
    pub upload: Vec<Run>,
    /// Empty when the receiver cannot send or the download was not asked for.
    pub download: Vec<Run>,
    /// Fastest TCP connect to a receiver, seconds.
    pub rtt_s: Option<f64>,
}

/// Tries `cands` in order; returns the first that measured the upload, and notes on the ones
/// that failed (and on a download that failed after a good upload).
pub fn measure_remote(
    cands: &[Receiver],
    setup: &RemoteSetup,
) -> Result<(Option<RemoteCeiling>, Vec<String>)> {
    let mut notes = Vec::new();
    for r in cands {
        let mut rtt = None;
        match one(r, setup, true, &mut rtt) {
            Ok(upload) => {
                let mut download = Vec::new();
                if setup.download && r.downloads() {
                    match one(r, setup, false, &mut rtt) {
                        Ok(d) => download = d,
                        Err(e) => {
                            process::check_interrupted()?;
                            notes.push(format!("{} download: {e:#}", r.id()));
                        }
                    }
                }
                return Ok((
                    Some(RemoteCeiling {
                        receiver: r.clone(),
                        upload,
                        download,
                        rtt_s: rtt,
                    }),
                    notes,
                ));
            }
            Err(e) => {
                process::check_interrupted()?;
                notes.push(format!("{}: {e:#}", r.id()));
            }
        }
    }
    Ok((None, notes))
}

fn token() -> String {
    use rand::{distributions::Alphanumeric, Rng};
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(32)
        .map(char::from)
        .collect()
}

/// Ports for the one-shot listeners that cannot pick their own: random, a few spare in case
/// one is taken.
fn ports(runs: u32) -> Vec<u16> {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    (0..runs + 3).map(|_| rng.gen_range(20000..60000)).collect()
}

fn one(r: &Receiver, s: &RemoteSetup, upload: bool, rtt: &mut Option<f64>) -> Result<Vec<Run>> {
    let token = token();
    let deadline_s = u64::from(s.runs) * (s.per_run.as_secs() + 15) + 30;
    match r {
        Receiver::Sshtune(path) => sink_runs(path, &token, s, deadline_s, rtt),
        Receiver::Iperf3 => iperf_runs(&token, s, upload, deadline_s),
        Receiver::Socat => {
            let cmd = scripts::socat(&token, upload, s.runs, &ports(s.runs), deadline_s);
            listen_runs(&cmd, "socat", &token, s, upload, true, rtt)
        }
        Receiver::Nc(f) => {
            let cmd = scripts::nc(*f, &token, s.runs, &ports(s.runs), deadline_s);
            listen_runs(&cmd, f.id(), &token, s, true, true, rtt)
        }
        Receiver::Python3 => {
            let cmd = scripts::python(&token, upload, s.runs, deadline_s);
            listen_runs(&cmd, "python3", &token, s, upload, false, rtt)
        }
        Receiver::Bash => bash_runs(&token, s, upload, deadline_s),
    }
}

fn keep_min(rtt: &mut Option<f64>, v: f64) {
    *rtt = Some(rtt.map_or(v, |r| r.min(v)));
}

/// A receiver that listens on the server: `LISTEN` once (`listen_each` false) or before each
/// run, then we connect and present the token.
fn listen_runs(
    cmd: &str,
    what: &str,
    token: &str,
    s: &RemoteSetup,
    upload: bool,
    listen_each: bool,
    rtt: &mut Option<f64>,
) -> Result<Vec<Run>> {
    let job = Job::start((s.ssh)(cmd), what)?;
    let mut addr = None;
    let mut runs = Vec::new();
    for _ in 0..s.runs {
        process::check_interrupted()?;
        if listen_each || addr.is_none() {
            addr = Some(listen_addr(
                &job.wait_line(LISTEN, Duration::from_secs(30))?,
            )?);
        }
        let (mut sock, c) = connect(addr.expect("set above"))?;
        keep_min(rtt, c);
        let run = if upload {
            let cpu = push(&mut sock, Some(token), s.per_run)?;
            drop(sock);
            finish_run(&job, s.per_run, None, cpu)?
        } else {
            let (rate, cpu) = pull(sock, Some(token), s.per_run)?;
            finish_run(&job, s.per_run, Some(rate), cpu)?
        };
        runs.push(run);
    }
    job.finish();
    Ok(runs)
}

/// bash connects back to a listener of ours, bound to our address on the path.
fn bash_runs(token: &str, s: &RemoteSetup, upload: bool, deadline_s: u64) -> Result<Vec<Run>> {
    let ip = s
        .local_ip
        .context("no local address for the server to connect back to")?;
    let l = TcpListener::bind((ip, 0)).with_context(|| format!("binding a port on {ip}"))?;
    let port = l.local_addr()?.port();
    let job = Job::start(
        (s.ssh)(&scripts::bash(token, upload, s.runs, ip, port, deadline_s)),
        "bash /dev/tcp",
    )?;
    let mut runs = Vec::new();
    for _ in 0..s.runs {
        process::check_interrupted()?;
        let mut sock = accept_token(&l, token, Instant::now() + Duration::from_secs(30), &job)?;
        let run = if upload {
            let cpu = push(&mut sock, None, s.per_run)?;
            drop(sock);
            finish_run(&job, s.per_run, None, cpu)?
        } else {
            let (rate, cpu) = pull(sock, None, s.per_run)?;
            finish_run(&job, s.per_run, Some(rate), cpu)?
        };
        runs.push(run);
    }
    job.finish();
    Ok(runs)
}

/// `sshtune tcp-sink`: one listener for all runs, the receiver's count and clock per run.
fn sink_runs(
    path: &str,
    token: &str,
    s: &RemoteSetup,
    deadline_s: u64,
    rtt: &mut Option<f64>,
) -> Result<Vec<Run>> {
    use crate::remote::{SINK_DONE, SINK_LISTENING as LISTENING};
    anyhow::ensure!(
        !path.contains('\''),
        "the remote sshtune path contains a single quote"
    );
    let cmd = format!(
        "'{path}' tcp-sink --token {token} --count {} --timeout {deadline_s}",
        s.runs
    );
    let job = Job::start((s.ssh)(&cmd), "tcp-sink")?;
    let addr = listen_addr(&job.wait_line(LISTENING, Duration::from_secs(30))?)?;
    let mut runs = Vec::new();
    for _ in 0..s.runs {
        process::check_interrupted()?;
        let (mut sock, c) = connect(addr)?;
        keep_min(rtt, c);
        let cpu = push(&mut sock, Some(token), s.per_run)?;
        drop(sock);
        let done = Done::parse(&job.wait_line(SINK_DONE, s.per_run + Duration::from_secs(30))?);
        let bytes = done.bytes.context("tcp-sink sent no byte count")?;
        let secs = done.seconds.context("tcp-sink sent no duration")?;
        runs.push(Run {
            mib_s: bytes as f64 / (1024.0 * 1024.0) / secs,
            client_cpu_pct: cpu.map(|c| c / secs * 100.0),
            server_cpu_pct: done.cpu_s.map(|c| c / secs * 100.0),
            server_busy: None,
        });
    }
    job.finish();
    Ok(runs)
}

/// iperf3 on both ends: the server one-off per run, our local iperf3 as the client (`-R` for
/// the download); its JSON gives the receiver's count and both ends' CPU.
fn iperf_runs(token: &str, s: &RemoteSetup, upload: bool, deadline_s: u64) -> Result<Vec<Run>> {
    let job = Job::start(
        (s.ssh)(&scripts::iperf3(token, s.runs, &ports(s.runs), deadline_s)),
        "iperf3",
    )?;
    let mut runs = Vec::new();
    for _ in 0..s.runs {
        process::check_interrupted()?;
        let addr = listen_addr(&job.wait_line(LISTEN, Duration::from_secs(30))?)?;
        let secs = s.per_run.as_secs().max(1).to_string();
        let mut cmd = Command::new("iperf3");
        cmd.args(["-c", &addr.ip().to_string(), "-p", &addr.port().to_string()])
            .args(["-t", &secs, "-J", "--connect-timeout", "5000"]);
        if !upload {
            cmd.arg("-R");
        }
        let out = cmd.output().context("running the local iperf3 client")?;
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .context("the local iperf3 printed no JSON report")?;
        if let Some(e) = json.get("error").and_then(|e| e.as_str()) {
            anyhow::bail!("iperf3 client: {e}");
        }
        let done = job.wait_line(DONE, Duration::from_secs(30))?;
        let cookie = json["start"]["cookie"].as_str().unwrap_or("");
        let theirs = done
            .get("cookie")
            .map(|c| c.to_string())
            .unwrap_or_default();
        anyhow::ensure!(
            !cookie.is_empty() && cookie == theirs,
            "the one-off iperf3 server served another client (cookie mismatch)"
        );
        let recv = &json["end"]["sum_received"];
        let bytes = recv["bytes"]
            .as_f64()
            .context("iperf3: no received bytes")?;
        let secs = recv["seconds"]
            .as_f64()
            .filter(|s| *s > 0.0)
            .context("iperf3: no duration")?;
        let cpu = &json["end"]["cpu_utilization_percent"];
        runs.push(Run {
            mib_s: bytes / (1024.0 * 1024.0) / secs,
            client_cpu_pct: cpu["host_total"].as_f64(),
            server_cpu_pct: cpu["remote_total"].as_f64(),
            server_busy: Done::parse(&done).server_busy,
        });
    }
    job.finish();
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preference_order_and_what_needs_a_local_part() {
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let (c, skipped) = candidates(
            None,
            "iperf3,socat,python3,bash,nc-openbsd,",
            false,
            Some(ip),
        );
        let ids: Vec<&str> = c.iter().map(Receiver::id).collect();
        assert_eq!(ids, ["socat", "nc-openbsd", "python3", "bash-dev-tcp"]);
        assert!(skipped[0].contains("iperf3"), "{skipped:?}");
        let (c, _) = candidates(Some("/usr/bin/sshtune".into()), "iperf3,bash,", true, None);
        let ids: Vec<&str> = c.iter().map(Receiver::id).collect();
        assert_eq!(ids, ["sshtune", "iperf3"]);
        assert!(candidates(None, "", true, Some(ip)).0.is_empty());
    }
}
