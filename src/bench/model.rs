//! The bench result as data: schema `sshtune.bench/1` (documented in docs/bench-json.md).

pub use super::ssh_args::SshArgsUsed;
use crate::sysinfo::MachineInfo;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub const SCHEMA: &str = "sshtune.bench/1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client to server: we write into the remote sink.
    Upload,
    /// Server to client: the remote source writes, we drain.
    Download,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Direction::Upload => "upload",
            Direction::Download => "download",
        })
    }
}

/// The SSH implementations a bench can drive; `as_str` is how reports and `--engine` name
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// The system `ssh` client against the server's sshd.
    Openssh,
    /// sshtune's own client, in this process.
    Native,
}

impl EngineKind {
    pub const ALL: [EngineKind; 2] = [EngineKind::Openssh, EngineKind::Native];

    pub const fn as_str(self) -> &'static str {
        match self {
            EngineKind::Openssh => "openssh",
            EngineKind::Native => "native",
        }
    }

    /// The engine a report row names.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which directions a run measures, or a policy weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directions {
    Upload,
    Download,
    Both,
}

impl Directions {
    /// The directions measured, upload first.
    pub fn list(self) -> Vec<Direction> {
        match self {
            Directions::Upload => vec![Direction::Upload],
            Directions::Download => vec![Direction::Download],
            Directions::Both => vec![Direction::Upload, Direction::Download],
        }
    }
}

/// `--streams N` accepts up to this many connections at once.
pub const STREAMS_MAX: u32 = 16;

/// `--streams`: a count, or `auto` (the server's online cores, at most `AUTO_MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamsAsked {
    Count(u32),
    Auto,
}

impl Default for StreamsAsked {
    fn default() -> Self {
        StreamsAsked::Count(1)
    }
}

impl FromStr for StreamsAsked {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "auto" {
            return Ok(StreamsAsked::Auto);
        }
        match s.parse::<u32>() {
            Ok(n) if (1..=STREAMS_MAX).contains(&n) => Ok(StreamsAsked::Count(n)),
            _ => Err(format!("expected a count from 1 to {STREAMS_MAX}, or auto")),
        }
    }
}

impl fmt::Display for StreamsAsked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamsAsked::Count(n) => write!(f, "{n}"),
            StreamsAsked::Auto => f.write_str("auto"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    ClientCpu,
    ServerCpu,
    Network,
    Unclear,
    /// No ceiling, but ciphers agree while no CPU is busy: the link or the SSH window.
    Path,
    /// Both ends on one machine whose cores their CPU adds up to.
    CpuShared,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::ClientCpu => "client-cpu",
            Verdict::ServerCpu => "server-cpu",
            Verdict::Network => "network",
            Verdict::Unclear => "unclear",
            Verdict::Path => "path",
            Verdict::CpuShared => "cpu-shared",
        }
    }
}

/// Tables say `cpu (shared)`; the JSON keeps the kebab-case id `cpu-shared`.
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Verdict::CpuShared => "cpu (shared)",
            v => v.as_str(),
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchReport {
    pub schema: String,
    pub tool_version: String,
    /// RFC 3339 time the run started.
    pub started: String,
    /// The destination as given (`embedded` for the private loopback server).
    pub host: String,
    pub embedded: bool,
    pub client: ClientInfo,
    pub server: ServerInfo,
    pub settings: Settings,
    /// Raw-TCP throughput of the same path, when it could be measured.
    pub ceiling: Option<Ceiling>,
    pub results: Vec<ResultRow>,
    /// Things the user should know about the whole run (each says how to fix it).
    pub warnings: Vec<String>,
    /// Per direction, the measured rows fastest first, with whether each lead is significant.
    #[serde(default)]
    pub ranking: Vec<Ranking>,
    /// Round trip of the path in ms: the fastest of a few TCP connects to the ssh port (or the
    /// ceiling's receiver); null when not measured (loopback, or the port was unreachable).
    #[serde(default)]
    pub path_rtt_ms: Option<f64>,
    /// The ssh arguments (`-p`, `-l`, `-i`, `-F`, `-o`) the run used; empty in older reports.
    #[serde(default)]
    pub ssh_args: SshArgsUsed,
}

/// Order of the measured rows in one direction. Two neighbours are told apart only when their
/// sample ranges (min–max) do not overlap: a spread wider than the difference means the run
/// cannot say which is faster, and the report says so instead of ranking them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ranking {
    /// Rows of different engines are ranked apart.
    #[serde(default)]
    pub engine: String,
    pub direction: Direction,
    /// Fastest first, by median.
    pub entries: Vec<RankEntry>,
    /// True when every neighbour is significantly apart.
    pub significant: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankEntry {
    /// The position of this row's tier leader: 1 for the fastest tier (see `tier`).
    pub rank: u32,
    /// 1 = the fastest tier. A tier is led by the fastest row not in a faster tier and holds
    /// every slower row whose samples overlap the leader's (0 in reports written before tiers).
    #[serde(default)]
    pub tier: u32,
    pub engine: String,
    pub cipher: String,
    pub mac: Option<String>,
    pub median_mib_s: f64,
    pub min_mib_s: f64,
    pub max_mib_s: f64,
    /// Whether this row is significantly faster than the next one (null for the last).
    pub ahead_of_next: Option<bool>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientInfo {
    pub ssh_version: Option<String>,
    #[serde(flatten)]
    pub machine: MachineInfo,
    /// CPU available to the client in cores (1.0 = one core), from its cgroup quota if any.
    pub cpu_quota_cores: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerInfo {
    pub banner: Option<String>,
    pub openssh_version: Option<String>,
    pub strict_kex: Option<bool>,
    pub offered_ciphers: Vec<String>,
    pub offered_macs: Vec<String>,
    #[serde(flatten)]
    pub machine: MachineInfo,
    /// CPU available to the session process in cores, from its cgroup quota if any.
    pub cpu_quota_cores: Option<f64>,
    /// True when server and client run on one machine (same kernel boot id, or loopback):
    /// their CPUs are shared. Null when unknown.
    #[serde(default)]
    pub same_machine: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settings {
    pub engines: Vec<String>,
    pub repeat: u32,
    pub warmup: u32,
    /// Fixed transfer size, or null when sized adaptively.
    pub fixed_size_bytes: Option<u64>,
    /// Adaptive sizing grows a transfer until it lasts at least this long.
    pub min_duration_s: f64,
    /// Native engine only: largest data packet payload and the channel window it granted
    /// (null when the native engine did not run).
    #[serde(default)]
    pub native_packet_bytes: Option<u32>,
    #[serde(default)]
    pub native_window_bytes: Option<u32>,
    /// Native engine only: threads sealing what the client sends (`--threads`; 2 computes the
    /// keystream ahead). Null when the native engine did not run and in older reports (1).
    #[serde(default)]
    pub native_threads: Option<u8>,
    /// `adaptive` (samples sized by stability, racing) or `thorough` (`repeat` samples of at
    /// least `min_duration_s` each); null in older reports, which were all thorough.
    #[serde(default)]
    pub mode: Option<String>,
    /// The cap `--max-time` put on the run, seconds; null without one.
    #[serde(default)]
    pub max_time_s: Option<f64>,
    /// Per engine, how the run placed the two ends on the CPUs (absent in older reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<super::placement::Placement>,
    /// `--streams`, when more than one stream was asked for (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<StreamsSetting>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ceiling {
    pub mib_s: f64,
    /// How it was obtained (`loopback tcp`, `user-supplied`, ...).
    pub method: String,
    /// Round trip of the path in ms (fastest TCP connect), when the ceiling was measured remotely.
    #[serde(default)]
    pub rtt_ms: Option<f64>,
    /// Which receiver on the server measured it (`sshtune`, `iperf3`, `socat`, `nc-openbsd`,
    /// `nc-traditional`, `busybox-nc`, `ncat`, `python3`, `bash-dev-tcp`), null otherwise.
    #[serde(default)]
    pub receiver: Option<String>,
    /// Per direction measured: runs, spread and both ends' CPU during the ceiling runs.
    #[serde(default)]
    pub directions: Vec<CeilingDirection>,
}

/// One direction of a measured ceiling.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CeilingDirection {
    pub direction: Direction,
    pub mib_s: f64,
    pub min_mib_s: f64,
    pub max_mib_s: f64,
    pub runs: u32,
    /// The sending/receiving process here, % of one core (median of the runs).
    pub client_cpu_pct: Option<f64>,
    /// The receiver's (or sender's) processes on the server, % of one core.
    pub server_cpu_pct: Option<f64>,
    /// The whole server busy, % of all its cores.
    pub server_busy_pct: Option<f64>,
    /// `client` or `server` when that end's CPU bounded the ceiling run, else null.
    pub cpu_bound: Option<String>,
}

/// How the loopback ceiling is labelled; see `Ceiling::judges_network`.
pub const LOOPBACK_CEILING: &str = "loopback TCP";

impl Ceiling {
    /// The ceiling a verdict may compare against. Over loopback there is no network between
    /// the ends: the "ceiling" is a memory copy that competes for the same CPUs and is noisy,
    /// so it is reported for context but never turns a row into `network`.
    pub fn judges_network(&self) -> Option<f64> {
        (!self.method.starts_with(LOOPBACK_CEILING)).then_some(self.mib_s)
    }

    /// The measured ceiling of one direction, when that direction was measured.
    pub fn direction(&self, d: Direction) -> Option<&CeilingDirection> {
        self.directions.iter().find(|c| c.direction == d)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResultRow {
    pub engine: String,
    pub cipher: String,
    /// The MAC used, or null for AEAD ciphers (which carry their own).
    pub mac: Option<String>,
    pub grade: Option<String>,
    pub direction: Direction,
    /// Bytes moved per sample.
    pub bytes: u64,
    /// Throughput of each timed sample, MiB/s (warm-ups excluded).
    pub samples: Vec<f64>,
    pub median_mib_s: Option<f64>,
    pub min_mib_s: Option<f64>,
    pub max_mib_s: Option<f64>,
    /// Client `ssh` process CPU during the transfer, % of one core (median over samples).
    pub client_cpu_pct: Option<f64>,
    /// The user-space part of `client_cpu_pct` (native engine only: its clock is split).
    /// Absent elsewhere and in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_user_cpu_pct: Option<f64>,
    /// Server session process CPU during the transfer, % of one core (median over samples).
    pub server_cpu_pct: Option<f64>,
    /// Whole-server CPU busy time during the transfer, % of one core (all processes).
    pub server_total_cpu_pct: Option<f64>,
    pub verdict: Option<Verdict>,
    /// The evidence behind the verdict, in words.
    pub verdict_reason: Option<String>,
    /// Which rule of docs/verdicts.md decided (`ceiling`, `shared-cpu`, ...), null without a
    /// verdict.
    #[serde(default)]
    pub verdict_rule: Option<String>,
    /// Native uploads only: the sender's CPU per byte against sealing alone (`speed::overhead`).
    /// Absent, not null, elsewhere, so reports without it read and print as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_overhead: Option<TransportOverhead>,
    pub error: Option<String>,
    /// Seconds each timed sample lasted, in the order of `samples` (empty in older reports).
    /// Adaptive runs lengthen samples while they disagree, so lengths differ between rows.
    #[serde(default)]
    pub sample_seconds: Vec<f64>,
    /// The visit each timed sample was taken in, in the order of `samples`: samples of one
    /// visit were taken back to back, samples of different visits seconds or more apart. The
    /// row's median is the median over visits of each visit's median
    /// (`stats::median_of_visits`). Absent in older reports; a count that differs from
    /// `samples` (runs pooled by `config --from`) names no visits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_visits: Vec<u32>,
    /// Why sampling of this row ended before its full count: `decided` (its place in the
    /// ranking was already clear), `max-time` (the run's `--max-time` was spent); null when it
    /// got every sample it was due.
    #[serde(default)]
    pub stopped: Option<String>,
    /// Where each timed sample's processes ran, in the order of `samples` (OpenSSH engine;
    /// absent elsewhere and in older reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_placement: Vec<super::placement::SamplePlacement>,
    /// The same transfer over `--streams N` connections at once (absent for one stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Streams>,
}

/// How much CPU the sending process spent per byte beyond the cipher and MAC themselves.
/// Both figures are MiB per CPU-second, so the ratio holds on a busy machine.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct TransportOverhead {
    /// The sender: row median MiB/s ÷ its CPU share (`client_cpu_pct` / 100).
    pub sender_mib_per_cpu_s: f64,
    /// Sealing 32 KiB packets of the same cipher and MAC in-process, same run.
    pub seal_mib_per_cpu_s: f64,
    /// `seal_mib_per_cpu_s / sender_mib_per_cpu_s`: 1.0 means the transport costs nothing
    /// beyond the crypto.
    pub ratio: f64,
    /// The sender counting its user-space CPU only (`client_user_cpu_pct`): what our own code
    /// costs, without the kernel's socket writes and TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_user_mib_per_cpu_s: Option<f64>,
    /// `seal_mib_per_cpu_s / sender_user_mib_per_cpu_s`: the transport's overhead in user
    /// space alone; `ratio` minus this is what the kernel adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ratio: Option<f64>,
    /// A plain TCP sender over loopback, writing the transport's batch size from one thread,
    /// same run: MiB per CPU-second of that thread. Only when the server is on this machine,
    /// where the bench's sender pays the same loopback path (send and the receive it triggers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_mib_per_cpu_s: Option<f64>,
    /// The sender's CPU per byte ÷ (sealing's + the plain socket's): what the transport costs
    /// beyond the crypto and the kernel's unavoidable send of the same bytes; 1.0 = nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beyond_socket_ratio: Option<f64>,
}

impl ResultRow {
    pub fn failed(
        engine: &str,
        cipher: &str,
        mac: Option<&str>,
        direction: Direction,
        error: String,
    ) -> Self {
        Self {
            engine: engine.to_string(),
            cipher: cipher.to_string(),
            mac: mac.map(String::from),
            grade: ciphers::grade_of(cipher, mac).map(|g| g.to_string()),
            direction,
            bytes: 0,
            samples: Vec::new(),
            median_mib_s: None,
            min_mib_s: None,
            max_mib_s: None,
            client_cpu_pct: None,
            client_user_cpu_pct: None,
            server_cpu_pct: None,
            server_total_cpu_pct: None,
            verdict: None,
            verdict_reason: None,
            verdict_rule: None,
            transport_overhead: None,
            error: Some(error),
            sample_seconds: Vec::new(),
            sample_visits: Vec::new(),
            stopped: None,
            sample_placement: Vec::new(),
            streams: None,
        }
    }
}

/// A bench report of `tests/fixtures/config/`, for unit tests.
#[cfg(test)]
pub fn fixture(name: &str) -> BenchReport {
    let path = format!(
        "{}/tests/fixtures/config/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// One row's parallel streams (JSON `results[].streams`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Streams {
    /// Connections carrying the row's transfer at once, each its own `ssh` and server session.
    pub count: u32,
    /// Bytes each stream moved per round (the single-stream row's transfer size).
    pub bytes_per_stream: u64,
    /// Per round: all streams' bytes over the wall time from the first stream's start to the
    /// last one's end, MiB/s.
    pub samples: Vec<f64>,
    /// That wall time of each round, seconds.
    pub sample_seconds: Vec<f64>,
    pub median_mib_s: Option<f64>,
    pub min_mib_s: Option<f64>,
    pub max_mib_s: Option<f64>,
    /// Each stream's own rate, MiB/s: the median over the rounds, stream by stream.
    pub per_stream_mib_s: Vec<f64>,
    /// All the `ssh` processes together, % of one core (pooled over the rounds).
    pub client_cpu_pct: Option<f64>,
    /// All the server's session processes together, % of one core.
    pub server_cpu_pct: Option<f64>,
    /// The whole server busy (all processes), % of one core.
    pub server_total_cpu_pct: Option<f64>,
    /// Aggregate ÷ the single-stream row's rate.
    pub gain: Option<Gain>,
    /// What binds, in words: one core per stream, the whole CPU, or neither.
    pub note: Option<String>,
    pub error: Option<String>,
}

/// The gain of N streams over one: the medians' ratio, and the range the samples allow (the
/// slowest aggregate over the fastest single stream, the fastest over the slowest).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Gain {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The ranges do not overlap: N streams are faster beyond the samples' spread.
    pub significant: bool,
}

/// What the run did with `--streams` (JSON `settings.streams`; absent for one stream).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StreamsSetting {
    /// As asked: a count or `auto`.
    pub asked: String,
    /// Connections used per row.
    pub count: u32,
    /// How `auto` arrived at `count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
