//! The storage report: what was measured, how, and every raw figure. Renderers only read it.

use super::caps::Capabilities;
use super::dmcrypt::VolumeFormat;
use super::fio::FioFigures;
use super::kspeed::SpeedSection;
use super::plan::{Layer, Perf, Preset, Test};
use crate::sysinfo::MachineInfo;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "sshtune.storage/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StorageReport {
    pub schema: String,
    pub tool_version: String,
    pub started: String,
    pub machine: MachineInfo,
    pub capabilities: Capabilities,
    /// One line per layer that cannot run here, and why.
    pub ruled_out: Vec<String>,
    pub kernel_speed: Option<SpeedSection>,
    pub kernel_speed_error: Option<String>,
    pub matrix: Option<MatrixResult>,
    pub stale_cleanup: Vec<String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestInfo {
    pub test: Test,
    pub label: String,
    pub how: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixResult {
    pub preset: Preset,
    /// `loop device on a file in DIR` or the device path.
    pub target: String,
    pub target_bytes: u64,
    /// Bytes each sequential test moves and fio's region.
    pub io_bytes: u64,
    pub fio_runtime_s: u64,
    pub repeat: u32,
    pub load_threads: u32,
    pub format: VolumeFormat,
    pub tests: Vec<TestInfo>,
    pub cells: Vec<CellResult>,
    /// Whether the run was complete (false after an interrupt).
    pub complete: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellResult {
    /// None: the unencrypted baseline.
    pub cipher: Option<String>,
    pub key_bits: Option<u32>,
    pub sector_size: Option<u32>,
    pub perf: Option<Perf>,
    pub layer: Layer,
    /// Driver class dm-crypt used (the seed's `acc`), read from /proc/crypto after mapping.
    pub acc: Option<super::crypto::DriverClass>,
    pub driver: Option<String>,
    pub results: Vec<TestResult>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestResult {
    pub test: Test,
    pub samples_mib_s: Vec<f64>,
    pub median_mib_s: Option<f64>,
    pub min_mib_s: Option<f64>,
    pub max_mib_s: Option<f64>,
    /// Median as % of the baseline's median for the same test and layer.
    pub pct_of_baseline: Option<f64>,
    /// fio's figures of the last sample (all samples' raw JSON in `fio_samples`).
    pub fio: Option<FioFigures>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fio_samples: Vec<FioFigures>,
    pub error: Option<String>,
}

impl CellResult {
    pub fn label(&self) -> String {
        match &self.cipher {
            None => "without encryption".into(),
            Some(c) => c.clone(),
        }
    }

    pub fn result(&self, t: Test) -> Option<&TestResult> {
        self.results.iter().find(|r| r.test == t)
    }
}

impl MatrixResult {
    /// Fills `pct_of_baseline` from the baseline cells.
    pub fn compute_ratios(&mut self) {
        let base: Vec<(Layer, Test, f64)> = self
            .cells
            .iter()
            .filter(|c| c.cipher.is_none())
            .flat_map(|c| {
                c.results
                    .iter()
                    .filter_map(move |r| Some((c.layer, r.test, r.median_mib_s?)))
            })
            .collect();
        for c in self.cells.iter_mut().filter(|c| c.cipher.is_some()) {
            for r in &mut c.results {
                r.pct_of_baseline = base
                    .iter()
                    .find(|(l, t, _)| *l == c.layer && *t == r.test)
                    .and_then(|(_, _, b)| {
                        let m = r.median_mib_s?;
                        (*b > 0.0).then(|| m / b * 100.0)
                    });
            }
        }
    }
}
