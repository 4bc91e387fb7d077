//! The seam between "run a transfer" and everything else: engines implement `Executor`, and
//! the run loop, statistics and verdicts never know which engine produced a sample. `Engine`
//! widens it with what differs between engines before the loop (logging in once, what the
//! server offers, the default pairs, the raw-TCP ceiling), so one suite drives any of them.

use super::ceiling::Outcome;
use super::model::{Direction, EngineKind, ServerInfo};
use super::options::Options;
use crate::remote::Info;

#[derive(Debug, Clone)]
pub struct Job<'a> {
    pub cipher: &'a str,
    /// None for AEAD ciphers, or to let the client pick.
    pub mac: Option<&'a str>,
    pub direction: Direction,
    pub bytes: u64,
}

/// One timed transfer. CPU figures are seconds used during the timed window only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub bytes: u64,
    pub seconds: f64,
    pub client_cpu_s: Option<f64>,
    /// The part of `client_cpu_s` spent in user space, where the engine can tell.
    pub client_user_cpu_s: Option<f64>,
    pub server_cpu_s: Option<f64>,
    /// Whole-server busy CPU seconds (all cores, all processes).
    pub server_busy_s: Option<f64>,
    pub server_quota_cores: Option<f64>,
    /// Where the sample's processes ran and the machine's other load (OpenSSH engine).
    pub placement: Option<super::placement::SamplePlacement>,
}

impl Sample {
    pub fn mib_s(&self) -> f64 {
        self.bytes as f64 / (1024.0 * 1024.0) / self.seconds.max(1e-9)
    }

    pub fn pct(cpu_s: Option<f64>, seconds: f64) -> Option<f64> {
        cpu_s.map(|c| c / seconds.max(1e-9) * 100.0)
    }
}

use crate::target::SshError;

pub trait Executor {
    /// The engine's name as written in result rows (`EngineKind::as_str` for real engines).
    fn engine(&self) -> &'static str;
    fn transfer(&mut self, job: &Job) -> Result<Sample, SshError>;
    /// Whether each (cipher, MAC) pair has something of its own that its first transfer warms
    /// up for the next ones: an `ssh` process and the session it carries. When all there is to
    /// warm is this process (the native engine), a warm-up once is enough for the whole run.
    fn warms_per_pair(&self) -> bool {
        true
    }
    /// `next` is the pair measured after the one warming up now, called once this pair's own
    /// login is over (one login at a time): an engine may log in for it while the rest of the
    /// warm-up runs (the OpenSSH engine's login cost 0.14 s per cipher on
    /// loopback, paid in turn). Whatever it starts must be over before a timed sample, so the
    /// run calls `settle` first.
    fn prepare(&mut self, _next: &Job) {}
    /// Waits until whatever `prepare` started is done, so that no login shares the CPU with
    /// the timed sample that follows.
    fn settle(&mut self) {}
    /// How the run placed the two ends on the CPUs (`placement::plan`), once it knows.
    fn placement(&self) -> Option<super::placement::Placement> {
        None
    }
}

/// What an engine learned when it logged in once, before any timed transfer.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The destination as the report names it.
    pub host_label: String,
    pub server: ServerInfo,
    /// The client software, as the report's `client.ssh_version` records it.
    pub client_version: Option<String>,
    /// The raw `SSHTUNE-INFO` lines.
    pub info: Info,
    /// Both ends on this machine's loopback: no path between them to infer.
    pub loopback: bool,
    /// A loopback address that leads to another machine (a port forward or tunnel): not
    /// `loopback`, but no ceiling or RTT can be measured through it.
    pub forwarded: bool,
    /// The path inference applies to this engine's rows (it knows the path's RTT, or that
    /// there is none to know).
    pub infers_path: bool,
    /// The path's RTT (seconds) and our address on it, from connects to the ssh port.
    pub rtt: Option<(f64, std::net::IpAddr)>,
    /// CPU figures come from 10 ms scheduler ticks (`/proc`), coarse for short transfers.
    pub tick_cpu: bool,
    /// Both ends on one machine, with this many cores: the verdict's shared-CPU rule applies.
    pub shared_cores: Option<f64>,
    pub warnings: Vec<String>,
}

/// (cipher, MAC) pairs to measure; no MAC for an AEAD cipher, or to let the client pick.
pub type Pairs = Vec<(String, Option<String>)>;

/// An SSH implementation the suite can drive from login to the last sample.
pub trait Engine: Executor {
    fn kind(&self) -> EngineKind;
    /// Logs in once with default algorithms; any failure here is fatal for the whole run.
    fn preflight(&mut self, opts: &Options) -> anyhow::Result<Facts>;
    /// (cipher, MAC) pairs measured when the user names no cipher.
    fn default_pairs(&self, facts: &Facts, opts: &Options) -> anyhow::Result<Pairs>;
    /// The raw-TCP ceiling this engine can measure on its path (the user gave none), or none
    /// with a warning saying why.
    fn ceiling(&mut self, facts: &Facts, opts: &Options) -> anyhow::Result<Outcome>;
    /// The channel window the path inference divides by.
    fn window(&self) -> Option<u64>;
    /// `n` more clients of the same server, each with its own connections, for `--streams`;
    /// none where the engine cannot run streams.
    fn stream_executors(&self, _n: u32) -> Vec<Box<dyn Executor + Send>> {
        Vec::new()
    }
}

/// Each cipher once if AEAD, else with each asked MAC, or with `default_mac`.
pub fn pairs(ciphers: &[String], macs: &[String], default_mac: Option<String>) -> Pairs {
    let mut out = Vec::new();
    for c in ciphers {
        if ::ciphers::cipher(c).is_some_and(|s| s.is_aead()) {
            out.push((c.clone(), None));
        } else if macs.is_empty() {
            out.push((c.clone(), default_mac.clone()));
        } else {
            out.extend(macs.iter().map(|m| (c.clone(), Some(m.clone()))));
        }
    }
    out
}
