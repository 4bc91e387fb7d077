//! The `openssh` engine: every transfer is a real `ssh` client process, so the user's config,
//! agent, keys and known_hosts apply exactly as they would by hand. It reaches the target (or a
//! private loopback sshd), probes what the server offers, logs in once for its facts, measures
//! with the pairs the local `ssh` would use, and takes the raw-TCP ceiling over loopback or with
//! a receiver on the server. Each running `ssh` is a `ssh_session::Session`.

use super::ceiling::{self, step, Outcome};
use super::executor::{pairs, Engine, Executor, Facts, Job, Pairs, Sample};
use super::login_kex;
use super::model::{Direction, EngineKind, ServerInfo};
use super::options::Options;
use super::placement::{self, Pin, Placement};
use super::reach::{is_loopback, Reach, FORWARDED, SHARED_CPUS};
use super::ssh_session::{Session, Watchdog, READY_TIMEOUT};
use super::transfer::{self, DataPipe};
use crate::embedded::EmbeddedSshd;
use crate::probe::probe_target;
use crate::process::{self, drain_stderr, last_line, ChildGuard};
use crate::proxy::Proxy;
use crate::remote;
use crate::target::error::classify;
use crate::target::{ssh_query, ssh_version, Resolved, SshError, SshLog, SshTarget};
use crate::{cgroup, sysinfo};
use anyhow::{anyhow, bail, Result};
use std::process::{Command, Stdio};
use std::time::Duration;

pub struct OpenSshEngine {
    /// The destination as the user named it (probed, resolved with `ssh -G`).
    target: SshTarget,
    resolved: Resolved,
    /// The measuring sessions' target: `target` with a faster key exchange where the user
    /// chose none.
    measuring: SshTarget,
    proxied: bool,
    /// Kept alive for the whole run; dropping it stops the private sshd.
    _embedded: Option<EmbeddedSshd>,
    /// Random data written on upload; incompressible so no layer can cheat.
    payload: Vec<u8>,
    /// Set when a CPU quota below one core holds both `ssh` and this process: they then draw
    /// from one budget, and the client CPU figure must count our own feeding/draining too.
    shared_quota: bool,
    /// Whether transfers share one `ssh` per cipher (the server's `head -c` stops at its
    /// count; set from the preflight's `exact_head`).
    pub reuse: bool,
    sessions: Vec<Session>,
    /// The (cipher, MAC) pairs a session has been opened for, so one opened again is warmed.
    opened: Pairs,
    /// The server runs on this machine (same kernel boot id): its session process can be
    /// watched and pinned.
    local_server: bool,
    /// The two CPUs the ends are held to, when the server is this machine.
    pin: Option<Pin>,
    /// What `pin` says in the report, once the preflight knows.
    placement: Option<Placement>,
}

impl OpenSshEngine {
    /// The destination, or a private sshd on loopback when there is none.
    pub fn open(opts: &Options) -> Result<Self> {
        let (embedded, target) = match &opts.target {
            None => {
                if !opts.ssh_args.is_empty() {
                    bail!("ssh options (-p, -l, -i, -F, -o) need a HOST");
                }
                let server = EmbeddedSshd::start("")?;
                let target = server.target.clone();
                (Some(server), target)
            }
            Some(t) => (None, t.clone()),
        };
        let resolved = target.resolve()?;
        // Behind a jump host, 127.0.0.1 is the far side's loopback, not ours.
        let proxied = Proxy::of(&resolved, &target.options, &target.destination).is_some();
        // The measuring sessions' login: a faster key exchange where the user chose none.
        let mut measuring = target.clone();
        let defaults = target.resolve_defaults().ok();
        if let Some(o) = defaults
            .and_then(|d| login_kex::measuring_option(&resolved.kex_algorithms, &d.kex_algorithms))
        {
            measuring.options.extend(["-o".to_string(), o]);
        }
        use rand::{RngCore, SeedableRng};
        let mut payload = vec![0u8; 1 << 20];
        rand::rngs::SmallRng::from_entropy().fill_bytes(&mut payload);
        Ok(Self {
            target,
            resolved,
            measuring,
            proxied,
            _embedded: embedded,
            payload,
            shared_quota: cgroup::quota_cores("self").is_some_and(|q| q < 1.0),
            reuse: false,
            sessions: Vec::new(),
            opened: Vec::new(),
            local_server: false,
            pin: None,
            placement: None,
        })
    }

    /// Another client of the same target with sessions of its own, for one of `--streams`
    /// concurrent transfers: not pinned (the streams' processes go where the scheduler puts
    /// them), not watched, and counting only its own `ssh` (the streams count this process
    /// once for all of them).
    pub fn another(&self) -> Self {
        Self {
            target: self.target.clone(),
            resolved: self.resolved.clone(),
            measuring: self.measuring.clone(),
            proxied: self.proxied,
            _embedded: None,
            payload: self.payload.clone(),
            shared_quota: false,
            reuse: self.reuse,
            sessions: Vec::new(),
            opened: Vec::new(),
            local_server: false,
            pin: None,
            placement: None,
        }
    }

    pub fn command(&self, cipher: Option<&str>, mac: Option<&str>, remote_cmd: &str) -> Command {
        self.measuring
            .ssh_command(cipher, mac, SshLog::Default, remote_cmd)
    }

    /// Logs in once with default algorithms: any failure here is fatal for the whole run and
    /// is reported in one line. Returns the `SSHTUNE-INFO` facts about the server.
    fn log_in(&mut self) -> Result<remote::Info> {
        let info = self.log_in_once()?;
        let same_boot = remote::same_boot(&info);
        self.local_server = same_boot == Some(true);
        let (pin, placement) = placement::plan(self.engine(), same_boot);
        self.pin = pin;
        self.placement = Some(placement);
        Ok(info)
    }

    fn log_in_once(&self) -> Result<remote::Info> {
        let mut cmd = self.command(None, None, &remote::preflight_script());
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = ChildGuard::spawn(&mut cmd, "ssh")
            .map_err(|e| anyhow!("cannot run ssh (apt-get install openssh-client): {e}"))?;
        let drain = drain_stderr(child.child_mut());
        let watchdog = Watchdog::arm(child.id(), READY_TIMEOUT);
        let mut stdout = String::new();
        if let Some(mut out) = child.child_mut().stdout.take() {
            let _ = std::io::Read::read_to_string(&mut out, &mut stdout);
        }
        let status = child.wait_timeout(Duration::from_secs(5))?;
        let stalled = watchdog.fired();
        watchdog.disarm();
        process::check_interrupted()?;
        let stderr = drain.text(Duration::from_secs(5));
        if !remote::said_ok(&stdout) {
            if stalled {
                anyhow::bail!(
                    "{}: no answer within {} s of starting ssh (a slow login, or a shell \
                     startup file on the server that waits?)",
                    self.measuring.destination,
                    READY_TIMEOUT.as_secs()
                );
            }
            return Err(
                match classify(&stderr, status.code(), &self.measuring.destination) {
                    SshError::Fatal(e) => e,
                    other => anyhow!(
                        "cannot run commands on {}: {other}",
                        self.measuring.destination
                    ),
                },
            );
        }
        let missing = remote::missing(&stdout);
        if !missing.is_empty() {
            anyhow::bail!(
                "the remote side lacks {} (needed for the sink/source commands)",
                missing.join(", ")
            );
        }
        Ok(remote::Info::parse(&stdout))
    }

    /// Starts `ssh` with `job`'s cipher and MAC running `script`; its login watchdog armed.
    fn spawn(&self, job: &Job, script: &str, framed: bool) -> Result<Session, SshError> {
        Session::start(
            self.command(Some(job.cipher), job.mac, script),
            job,
            framed,
            self.shared_quota,
            self.local_server,
            self.pin.as_ref(),
        )
    }

    /// One `ssh` per (cipher, MAC) carries its warm-up and every sample of both directions:
    /// the handshake and login happen before the first READY, so they stay outside every
    /// figure, and are paid once instead of once per transfer. The few most recently used
    /// sessions stay open for the racing rounds; a failed one is closed and the next transfer
    /// of its cipher starts afresh.
    fn transfer_in_session(&mut self, job: &Job) -> Result<Sample, SshError> {
        let found = self
            .sessions
            .iter()
            .position(|s| s.cipher == job.cipher && s.mac.as_deref() == job.mac);
        let mut session = match found {
            // One opened ahead and not waited for (`settle`): its transfer reads past HELLO.
            Some(i) => {
                let mut s = self.sessions.remove(i);
                s.logging_in = false;
                s
            }
            None => {
                while self.sessions.len() >= MAX_SESSIONS {
                    self.sessions.remove(0).close();
                }
                let mut fresh = self.spawn(job, &remote::session_script(), true)?;
                // The sampling loop warmed the first session of a pair up; one opened again
                // after it was closed starts cold, and a cold session reads low (under a CPU
                // quota for seconds): it gets an untimed transfer of its own first.
                let key = (job.cipher.to_string(), job.mac.map(String::from));
                if self.opened.contains(&key) {
                    if let Err(e) = transfer::drive(&mut fresh.pipe, job, &self.payload) {
                        return Err(fresh.fail(e, &self.measuring.destination));
                    }
                } else {
                    self.opened.push(key);
                }
                fresh
            }
        };
        match transfer::drive(&mut session.pipe, job, &self.payload) {
            Ok(s) => {
                self.sessions.push(session);
                Ok(s)
            }
            Err(e) => Err(session.fail(e, &self.measuring.destination)),
        }
    }

    /// Ends every open session (also done on drop).
    pub fn close_sessions(&mut self) {
        for s in self.sessions.drain(..) {
            s.close();
        }
    }
}

impl Drop for OpenSshEngine {
    fn drop(&mut self) {
        self.close_sessions();
    }
}

/// Sessions kept open at once: one per cipher of OpenSSH's default list (10) and a few more,
/// so the racing rounds, which visit every contender in turn, do not close the session the
/// next round needs (each reopened one costs an untimed warm-up). An idle session is an `ssh`
/// and a remote shell waiting on a line; a server's MaxStartups counts only logins, not these.
const MAX_SESSIONS: usize = 12;

impl Executor for OpenSshEngine {
    fn engine(&self) -> &'static str {
        EngineKind::Openssh.as_str()
    }

    /// One `ssh` per pair when the server's `head -c` allows it, else one per transfer.
    fn warms_per_pair(&self) -> bool {
        self.reuse
    }

    /// Starts the next pair's session, so that its login runs during this pair's warm-up. A
    /// session that cannot start is left to the next pair's own first transfer, which reports
    /// why in its row.
    fn prepare(&mut self, next: &Job) {
        let key = (next.cipher.to_string(), next.mac.map(String::from));
        if !self.reuse || self.opened.contains(&key) {
            return;
        }
        while self.sessions.len() >= MAX_SESSIONS {
            self.sessions.remove(0).close();
        }
        if let Ok(mut session) = self.spawn(next, &remote::session_script(), true) {
            session.logging_in = true;
            self.opened.push(key);
            self.sessions.push(session);
        }
    }

    /// Reads each session opened ahead up to its HELLO: its login is then over, and its login
    /// watchdog is disarmed (it waits idle for its turn, which may be longer than a login may
    /// take). A session that ended instead is left as it is: its first transfer reads the end
    /// and reports why, as any failed login does.
    fn placement(&self) -> Option<Placement> {
        self.placement.clone()
    }

    fn settle(&mut self) {
        for s in self.sessions.iter_mut().filter(|s| s.logging_in) {
            s.logging_in = false;
            loop {
                match s.pipe.read_line() {
                    Ok(Some(line)) if line == remote::HELLO => {
                        s.pipe.on_ready();
                        break;
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => break,
                }
            }
        }
    }

    fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
        process::check_interrupted()?;
        // This thread feeds and drains ssh: it runs beside ssh, on the client's CPU.
        let _feeder = self.pin.as_ref().map(Pin::feeder);
        if self.reuse {
            return self.transfer_in_session(job);
        }
        let script = match job.direction {
            Direction::Upload => remote::upload_script(),
            Direction::Download => remote::download_script(job.bytes),
        };
        let mut session = self.spawn(job, &script, false)?;
        let result = transfer::drive(&mut session.pipe, job, &self.payload);
        let sample = match result {
            Ok(s) => s,
            Err(e) => return Err(session.fail(e, &self.measuring.destination)),
        };
        let Session {
            mut child,
            stderr,
            pipe,
            ..
        } = session;
        drop(pipe);
        let status = child
            .wait_timeout(Duration::from_secs(30))
            .map_err(|e| SshError::Failed(format!("waiting for ssh: {e}")))?;
        if !status.success() {
            let text = stderr.text(Duration::from_secs(5));
            return Err(SshError::Failed(format!(
                "ssh exited with {status} after the transfer: {}",
                last_line(&text)
            )));
        }
        Ok(sample)
    }
}

impl Engine for OpenSshEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Openssh
    }

    fn preflight(&mut self, opts: &Options) -> Result<Facts> {
        let offer = probe_target(&self.target, &self.resolved, Duration::from_secs(10))?;
        let info = self.log_in()?;
        self.reuse = info.get("exact_head").as_deref() == Some("yes");
        process::check_interrupted()?;
        let reach = Reach::of(
            !self.proxied && is_loopback(&self.resolved.hostname),
            remote::same_boot(&info),
        );
        let loopback = reach == Reach::Loopback;
        // The path's RTT and our address on it, from connects to the ssh port (not over
        // loopback, and not through a forward, where a connect reaches the forwarder only).
        let rtt = (reach == Reach::Direct && !self.proxied)
            .then(|| ceiling::rtt::connect_rtt(&self.resolved.hostname, self.resolved.port, 3))
            .flatten();
        let same_machine = reach.same_machine(remote::same_boot(&info));
        let mut warnings = Vec::new();
        if loopback {
            warnings.push(SHARED_CPUS.into());
        }
        if info.get("proc").as_deref() != Some("yes") {
            warnings.push(
                "the server has no readable /proc: server CPU cannot be measured there".into(),
            );
        }
        let server = ServerInfo {
            banner: Some(offer.banner.clone()),
            openssh_version: offer.openssh_version.clone(),
            strict_kex: Some(offer.strict_kex),
            offered_ciphers: offer.ciphers(),
            offered_macs: offer.macs(),
            machine: remote::machine(&info),
            cpu_quota_cores: info.get("quota").and_then(|q| remote::parse_quota(&q)),
            same_machine,
        };
        Ok(Facts {
            host_label: match &opts.target {
                Some(t) => t.destination.clone(),
                None => "embedded loopback sshd".into(),
            },
            server,
            client_version: ssh_version().ok(),
            info,
            loopback,
            forwarded: reach == Reach::Forwarded,
            infers_path: !loopback,
            rtt,
            tick_cpu: true,
            shared_cores: (same_machine == Some(true))
                .then(|| sysinfo::local().cores.map(f64::from))
                .flatten(),
            warnings,
        })
    }

    /// The server's offer that the local ssh supports; non-AEAD ciphers with the MAC ssh would
    /// negotiate (or each `--macs` name).
    fn default_pairs(&self, facts: &Facts, opts: &Options) -> Result<Pairs> {
        let offered = &facts.server.offered_ciphers;
        let ciphers: Vec<String> = if opts.ciphers.is_empty() {
            ssh_query("cipher")?
                .into_iter()
                .filter(|c| offered.contains(c))
                .collect()
        } else {
            opts.ciphers.clone()
        };
        if ciphers.is_empty() {
            bail!(
                "the server offers no cipher the local ssh supports (server: {})",
                offered.join(",")
            );
        }
        let default_mac = self
            .resolved
            .macs
            .iter()
            .find(|m| facts.server.offered_macs.contains(m))
            .cloned();
        Ok(pairs(&ciphers, &opts.macs, default_mac))
    }

    fn ceiling(&mut self, facts: &Facts, opts: &Options) -> Result<Outcome> {
        if facts.loopback && !opts.ceiling.skipped() {
            return Ok(Outcome::found(step::loopback()?));
        }
        if facts.loopback {
            return Ok(Outcome::none(step::SKIPPED));
        }
        if self.proxied {
            return Ok(Outcome::none(
                "no raw-TCP ceiling behind a jump host (the target is not reachable directly); \
                 --ceiling gives one",
            ));
        }
        if facts.forwarded {
            return Ok(Outcome::none(FORWARDED));
        }
        let cap = |q: Option<f64>| q.map_or(100.0, |q| (q * 100.0).min(100.0));
        step::remote(
            opts.ceiling.skipped(),
            &step::Remote {
                target: &self.measuring,
                sshtune: opts
                    .remote_sshtune
                    .clone()
                    .or_else(|| facts.info.get("sshtune")),
                receivers: facts.info.get("receivers").unwrap_or_default(),
                local_ip: facts.rtt.map(|(_, ip)| ip),
                client_cap_pct: cap(cgroup::quota_cores("self")),
                server_cap_pct: cap(facts.server.cpu_quota_cores),
            },
            opts.directions.contains(&Direction::Download),
        )
    }

    fn window(&self) -> Option<u64> {
        Some(super::window::OPENSSH_CHANNEL_WINDOW)
    }

    fn stream_executors(&self, n: u32) -> Vec<Box<dyn Executor + Send>> {
        (0..n)
            .map(|_| Box::new(self.another()) as Box<dyn Executor + Send>)
            .collect()
    }
}
