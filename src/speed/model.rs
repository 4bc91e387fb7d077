//! The speed result as data: schema `sshtune.speed/1` (documented in docs/speed-json.md).

use crate::sysinfo::MachineInfo;
use serde::{Deserialize, Serialize};
use std::fmt;

pub const SCHEMA: &str = "sshtune.speed/1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    /// The cipher alone over a 32 KiB buffer; AEADs and `none` seal a whole SSH packet.
    Cipher,
    /// The MAC alone over a 32 KiB buffer.
    Mac,
    /// Cipher and MAC sealing whole SSH packets as a transport does.
    Pair,
}

impl fmt::Display for RowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            RowKind::Cipher => "cipher",
            RowKind::Mac => "mac",
            RowKind::Pair => "pair",
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SpeedReport {
    pub schema: String,
    pub tool_version: String,
    /// RFC 3339 time the run started.
    pub started: String,
    pub machine: MachineInfo,
    pub settings: Settings,
    pub openssl: OpensslInfo,
    pub rows: Vec<SpeedRow>,
    /// Things the user should know about the whole run.
    pub warnings: Vec<String>,
    /// Which backend the native pair uses on this CPU (the `default_backend` rows) and why;
    /// null in reports written before it existed.
    #[serde(default)]
    pub backend_choice: Option<BackendChoice>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BackendChoice {
    /// The CPU has AES and carry-less multiply instructions (x86 `aes` + `pclmulqdq`, ARMv8
    /// `aes` + `pmull`).
    pub aes_hardware: bool,
    /// The choice in words, for the footer.
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settings {
    /// Payload bytes per sealed packet or per MAC/cipher call.
    pub packet_bytes: usize,
    /// Each sample runs until the measuring thread has used this much CPU time.
    pub min_time_s: f64,
    pub samples: u32,
    /// Backends measured (`openssl`, `rust`).
    pub crypto: Vec<String>,
    /// What a second means: CPU time of the measuring thread, as `openssl speed` counts it.
    pub clock: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpensslInfo {
    /// Whether the `openssl` command could be run for the reference column.
    pub available: bool,
    /// `openssl version` output.
    pub version: Option<String>,
    /// Why there is no reference, when there is none.
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Stats {
    /// Throughput of each sample, MiB/s.
    pub samples_mib_s: Vec<f64>,
    pub median_mib_s: f64,
    pub min_mib_s: f64,
    pub max_mib_s: f64,
}

impl Stats {
    pub fn from_samples(samples: Vec<f64>) -> Option<Self> {
        use crate::stats;
        Some(Stats {
            median_mib_s: stats::median(&samples)?,
            min_mib_s: stats::min(&samples)?,
            max_mib_s: stats::max(&samples)?,
            samples_mib_s: samples,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reference {
    /// The command run, e.g. `openssl speed -mr -evp aes-128-ctr -bytes 32768 -seconds 1`.
    pub command: String,
    #[serde(flatten)]
    pub stats: Stats,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SpeedRow {
    pub kind: RowKind,
    pub cipher: Option<String>,
    pub mac: Option<String>,
    /// The weaker grade of the cipher and MAC.
    pub grade: String,
    pub backend: String,
    /// This backend is the one the catalog picks by default for the cipher (or MAC) on this
    /// CPU: the one the native client and `sshtune serve` use here.
    pub default_backend: bool,
    /// Measured throughput; absent when the row failed.
    #[serde(flatten)]
    pub stats: Option<Stats>,
    /// CPU seconds each sample lasted, in the order of `samples_mib_s`: samples lengthen only
    /// while they disagree, so this says how hard the row was to pin down.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_cpu_s: Vec<f64>,
    /// Median share of one core the measuring thread got (CPU time / wall time).
    pub cpu_share: Option<f64>,
    /// `openssl speed` of the same primitive, measured in this run.
    pub reference: Option<Reference>,
    /// Why there is no reference (no such primitive in openssl, openssl missing, ...).
    pub reference_note: Option<String>,
    /// Our median over the reference median.
    pub ratio: Option<f64>,
    pub error: Option<String>,
}
