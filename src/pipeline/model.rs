//! The pipeline result as data: schema `sshtune.pipeline/1` (documented in docs/pipeline.md).
//! Presentation lives in `render.rs`; nothing here is computed twice.

use super::rsync::Variant;
use crate::sysinfo::MachineInfo;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "sshtune.pipeline/1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PipelineReport {
    pub schema: String,
    pub tool_version: String,
    pub started: String,
    /// `HOST:DIR` as given, or the embedded server's label.
    pub destination: String,
    pub embedded: bool,
    /// Both ends run on this machine (loopback): their CPU figures overlap.
    pub same_machine: bool,
    /// This machine's CPU, cores, kernel and crypto features (`sshtune.bench/1`'s `client`
    /// fields). All null in older reports.
    #[serde(default)]
    pub client: MachineInfo,
    /// The destination's, as its check read them; null fields where they could not be read.
    #[serde(default)]
    pub server: MachineInfo,
    /// The directory this run wrote into on the remote side (removed unless `keep`).
    pub remote_dir: String,
    pub keep: bool,
    pub dataset: DatasetInfo,
    pub storage: StorageInfo,
    pub settings: Settings,
    pub ceilings: Vec<StageCeiling>,
    pub rows: Vec<Row>,
    pub verdict: Verdict,
    /// Sampled CPU and I/O, both sides, every `settings.interval_ms`.
    pub series: Vec<Tick>,
    pub warnings: Vec<String>,
    /// `--luks`: SSH cipher × scratch LUKS setting. Optional, so reports without it (and
    /// older readers) stay `sshtune.pipeline/1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub luks: Option<LuksSection>,
    /// `--jobs N`: N rsyncs at once beside one. Optional, as `luks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobsSection>,
    /// How the control traffic (destination check, samplers, `--luks` helper, emptying and
    /// flushing between copies, clean-up) reached the destination. Absent in files written
    /// before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlInfo>,
}

/// The control traffic's connection. Each measured session (a copy, a stage alone) logs in
/// on its own besides and is not counted here.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ControlInfo {
    /// One ssh master connection carried the control traffic as sessions.
    pub multiplexed: bool,
    /// Logins the control traffic made: 1 through a master; one per command without.
    pub logins: u32,
    /// Logins of the measured sessions (one per rsync copy and per SSH alone), never through
    /// the master; the ceilings' bench runs and `--jobs` runs are not counted.
    #[serde(default)]
    pub measured_logins: u32,
    /// Why no master carried it, when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_multiplexed_because: Option<String>,
}

/// The `--luks` matrix: scratch LUKS2 volumes on a loop file beside the destination, one per
/// setting, each measured alone (the dm-crypt pass) and end to end under every cipher.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LuksSection {
    /// Size of the loop file the volumes were made on, in the destination's filesystem.
    pub loop_file_bytes: u64,
    /// Bytes written through each mapping in its dm-crypt pass.
    pub pass_bytes: u64,
    /// Leftovers of killed earlier runs removed before this one started.
    pub stale_removed: Vec<String>,
    pub settings: Vec<LuksSetting>,
    /// Stages measured alone for the model: `ssh` per cipher, `rsync-local`.
    pub alone: Vec<AloneStage>,
    pub cells: Vec<LuksCell>,
    /// Largest |predicted − measured| / measured over the measured cells, %.
    pub model_max_error_pct: Option<f64>,
    /// Median |predicted − measured| / measured over the measured cells, %. Absent in files
    /// written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_median_error_pct: Option<f64>,
    /// The destination's CPU load with nothing of the run's moving but its samplers, in
    /// cores: taken off every stage's cost and off the cores the model shares out. Absent
    /// in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_cores: Option<f64>,
    pub recommendation: Option<LuksAdvice>,
    /// Set when the run was interrupted during the matrix: the report holds the cells
    /// measured so far, and this says which were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    /// What `--max-time` left out of the matrix, one line each, the first saying why. Absent
    /// when nothing was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// The matrix's time: estimated before it, taken, and its fixed costs. Absent in files
    /// written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<LuksTiming>,
}

/// The `--luks` matrix's time, in seconds (docs/pipeline.md).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LuksTiming {
    /// `--max-time`, when given.
    pub max_time_s: Option<f64>,
    /// Estimated before the matrix started, for what it then ran.
    pub estimate_s: Option<f64>,
    /// The matrix as it ran (from its first volume to its last check).
    pub matrix_s: Option<f64>,
    /// One volume made ready and removed (luksFormat, open, mkfs, mount, unmount, close),
    /// median over the settings.
    pub volume_s: Option<f64>,
    /// One login (ssh's start to the remote shell's first line), median over SSH alone's.
    pub login_s: Option<f64>,
    /// One copy's time beyond its data (logins, rsync's start, the check), median over the
    /// cells.
    pub copy_fixed_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LuksSetting {
    /// Short id (`xts256`, `xts256-4k`, `current`, ...), as `--luks-settings` takes it.
    pub name: String,
    pub cipher: String,
    pub key_bits: u32,
    pub sector_size: u32,
    /// dm-crypt flags (`no_read_workqueue`, `no_write_workqueue`, `same_cpu_crypt`).
    pub flags: Vec<String>,
    /// The destination's own mapping has this setting.
    pub current: bool,
    /// Sequential write into ext4 on the mapping, through the page cache and synced at the
    /// end (`dd`, then `sync -f`), MiB/s.
    pub dm_crypt_mib_s: Option<f64>,
    /// CPU (all cores, core-seconds) per MiB during that pass, beyond the baseline and
    /// beyond the writer's own copy into the page cache (`writer_cpu_s`).
    pub dm_cpu_s_per_mib: Option<f64>,
    /// CPU seconds the pass's writer (`dd`) spent, the sync excluded: the copy into the page
    /// cache, which in a cell rsync's receiver does and rsync-local counts.
    /// Absent in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_cpu_s: Option<f64>,
    /// Why it was not run end to end, when it was not.
    pub trimmed: Option<String>,
    /// For trimmed settings: the model's best cell with this setting, MiB/s.
    pub predicted_best_mib_s: Option<f64>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AloneStage {
    pub stage: Stage,
    pub cipher: Option<String>,
    /// The setting whose cells this stage was measured beside: SSH alone is measured again
    /// right before each setting's cells, and their prediction takes that figure, of the same
    /// minutes (a loaded or emulated machine drifts within a run). Absent for the stages
    /// measured before the matrix, and in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    /// What the stage moved, when it is not the dataset once (ssh alone repeats the dataset
    /// until its window is long enough to time). Absent in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    pub mib_s: Option<f64>,
    pub cpu_s_per_mib: Option<f64>,
    pub method: String,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LuksCell {
    /// A `LuksSetting` name.
    pub setting: String,
    /// The measured rsync runs (cipher, variant, MiB/s, CPU split).
    pub row: Row,
    /// From the verdict code, with this setting's dm-crypt pass as the disk ceiling.
    pub bound_by: String,
    pub reason: String,
    pub predicted_mib_s: Option<f64>,
    /// (predicted − measured) / measured, %.
    pub error_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LuksAdvice {
    pub cipher: String,
    pub setting: String,
    pub mib_s: f64,
    /// Today's combination: the default cipher on the destination's setting (or the
    /// reference setting when the destination has no mapping), measured in this run.
    pub today_cipher: Option<String>,
    pub today_setting: Option<String>,
    pub today_mib_s: Option<f64>,
    pub gain_pct: Option<f64>,
    /// Client side: `Ciphers ^...` for ssh_config, and the sshd_config drop-in.
    pub client_line: String,
    pub sshd_dropin: String,
    /// The command that changes the user's mapping in place, when flags are all that differ.
    pub luks_command: Option<String>,
    pub luks_note: String,
    /// Whether the advice changes the LUKS setting: only when the best other setting's
    /// samples lie above the best cipher-only cell's. Absent in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub luks_change: Option<bool>,
    /// The gain's parts: the best cipher on today's setting, today's cipher on the fastest
    /// other setting, the best cell on the fastest other setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher_only: Option<LuksOption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub luks_only: Option<LuksOption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub both: Option<LuksOption>,
}

/// One measured way to a faster copy: a cipher onto a setting, with its samples' spread.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LuksOption {
    pub cipher: String,
    pub setting: String,
    pub median_mib_s: f64,
    pub min_mib_s: f64,
    pub max_mib_s: f64,
    pub samples: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DatasetInfo {
    /// `big`, `small`, `mixed` or `source`.
    pub kind: String,
    pub files: u64,
    pub bytes: u64,
    /// Set for `--source`; generated datasets live in a temp dir removed after the run.
    pub source: Option<String>,
}

/// What backs the destination directory on the remote side.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StorageInfo {
    pub device: Option<String>,
    pub fstype: Option<String>,
    /// `dm-N` of the dm-crypt mapping under the filesystem, if any.
    pub dm_device: Option<String>,
    pub dm_name: Option<String>,
    /// `aes-xts-plain64` etc., from `dmsetup table` (needs root on the remote).
    pub crypt_cipher: Option<String>,
    pub sector_size: Option<u32>,
    /// dm-crypt optional flags in force (`no_read_workqueue`, `same_cpu_crypt`, ...).
    pub crypt_flags: Vec<String>,
    pub free_bytes: Option<u64>,
    /// Key size of the mapping in bits (from the table's key field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crypt_key_bits: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settings {
    pub ciphers: Vec<String>,
    pub variants: Vec<Variant>,
    pub repeat: u32,
    pub interval_ms: u64,
    pub rsync_version: Option<String>,
    pub remote_rsync: String,
}

/// A stage measured alone: the words `StageCeiling::stage` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// SSH alone, per cipher (`sshtune bench`'s upload).
    Ssh,
    /// A sequential write on the destination filesystem.
    Disk,
    /// rsync into a local directory, no ssh.
    RsyncLocal,
}

impl Stage {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ssh => "ssh",
            Self::Disk => "disk",
            Self::RsyncLocal => "rsync-local",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StageCeiling {
    /// `ssh`, `disk` or `rsync-local`.
    pub stage: Stage,
    /// For `ssh`: the cipher.
    pub cipher: Option<String>,
    pub samples: Vec<f64>,
    pub median_mib_s: Option<f64>,
    pub min_mib_s: Option<f64>,
    pub max_mib_s: Option<f64>,
    /// How it was measured, in words.
    pub method: String,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub cipher: String,
    /// `whole-file`, `delta`, `delta-md5`, `compress`.
    pub variant: Variant,
    /// The exact rsync options that differ between variants.
    pub rsync_flags: Vec<String>,
    /// Dataset bytes per run (the sync's payload, not the wire bytes).
    pub bytes: u64,
    /// MiB/s of each timed run: dataset bytes over the time from rsync's first progress line
    /// to its exit plus the flush of the destination filesystem that follows (`flush_s`).
    pub samples: Vec<f64>,
    /// Seconds each timed run's flush took (`sync -f` of the destination after rsync exits):
    /// the part of the copy that was still in the page cache. Absent in files written before.
    #[serde(default)]
    pub flush_s: Vec<f64>,
    pub median_mib_s: Option<f64>,
    pub min_mib_s: Option<f64>,
    pub max_mib_s: Option<f64>,
    /// Bytes on the wire per run (`--stats` sent + received), median.
    pub wire_bytes: Option<u64>,
    /// Literal (not matched) data per run, median.
    pub literal_bytes: Option<u64>,
    /// Average CPU of each process group during this row's runs, % of one core.
    pub cpu: Vec<CpuShare>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuShare {
    /// `client` or `server`.
    pub side: String,
    /// `rsync-sender`, `ssh`, `sshd`, `rsync-receiver`, `kcryptd`, `dmcrypt_write`, `irq`,
    /// `kworker`, `other`, `sampler` (the measurement's own load), the whole-machine
    /// `total-user` / `total-system` / `total-softirq` / `total-iowait`, or `cpu-quota` (not a
    /// use: the side's CPU quota, present only when it has one).
    pub group: String,
    pub pct: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    /// The row the verdict is about (the fastest measured one).
    pub cipher: Option<String>,
    pub variant: Option<Variant>,
    pub end_to_end_mib_s: Option<f64>,
    /// `ssh`, `disk`, `rsync`, `dm-crypt`, `client-cpu`, `server-cpu` or `unclear`.
    pub bound_by: String,
    pub reason: String,
    pub suggestions: Vec<Suggestion>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Suggestion {
    pub change: String,
    /// Expected end-to-end MiB/s after the change.
    pub expected_mib_s: Option<f64>,
    /// Expected gain over the verdict's figure, %.
    pub gain_pct: Option<f64>,
    /// `measured` (a figure from this run) or `upper-bound` (the next stage's ceiling).
    pub basis: String,
    pub why: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tick {
    /// Seconds since the run started (arrival time on the client).
    pub t: f64,
    pub side: String,
    /// The rsync run in progress (`cipher/variant#n`) or the stage being measured.
    pub phase: Option<String>,
    /// CPU per group since the previous tick, % of one core.
    pub cpu: Vec<(String, f64)>,
    /// Bytes/s written to dm-* devices since the previous tick.
    pub dm_write_bytes_s: Option<f64>,
}

/// `--jobs N` (docs/pipeline.md, "Parallel rsync"): N rsyncs at once beside one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobsSection {
    /// As asked: a count or `auto`.
    pub asked: String,
    /// rsync processes run at once.
    pub count: u32,
    /// Why `count` is not what was typed (`auto`, fewer files than jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The dataset's parts, one per job: largest file first into the lightest part.
    pub parts: Vec<JobPart>,
    /// One row per cipher, beside that cipher's one-rsync `whole-file` row in `rows`.
    pub rows: Vec<JobsRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobPart {
    pub files: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobsRow {
    pub cipher: String,
    pub variant: Variant,
    /// MiB/s of each timed run: all the dataset's bytes over the time from the first job's
    /// first progress line to the last job's exit, plus the destination's flush after it.
    pub samples: Vec<f64>,
    /// Seconds each timed run took (the same window).
    pub sample_seconds: Vec<f64>,
    pub flush_s: Vec<f64>,
    pub median_mib_s: Option<f64>,
    pub min_mib_s: Option<f64>,
    pub max_mib_s: Option<f64>,
    /// Each job's rate (its part's bytes over its own first progress line to its exit),
    /// median over the runs, in job order.
    pub per_job_mib_s: Vec<f64>,
    /// CPU of every job's processes together, as `rows[].cpu` counts one rsync's.
    pub cpu: Vec<CpuShare>,
    /// The N jobs over the one rsync of the same cipher and variant.
    pub gain: Option<crate::bench::model::Gain>,
    /// Whether N jobs pay, in words (`2 jobs: ×1.6 (1.3–1.9)` or `no gain from 2 jobs ...`).
    pub note: Option<String>,
    /// A shell line that copies the same way (`xargs -P`), with `SRC` and `HOST:DIR` where the
    /// run's own source or destination is of no use to the reader.
    pub command: String,
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed stage and variant are written as the words the report has always held.
    #[test]
    fn stage_and_variant_serialize_as_their_names() {
        for s in [Stage::Ssh, Stage::Disk, Stage::RsyncLocal] {
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
            assert_eq!(
                serde_json::from_str::<Stage>(&format!("\"{s}\"")).unwrap(),
                s
            );
        }
        use Variant::*;
        for v in [WholeFile, Delta, DeltaMd5, Compress] {
            let json = format!("\"{}\"", v.as_str());
            assert_eq!(serde_json::to_string(&v).unwrap(), json);
            assert_eq!(serde_json::from_str::<Variant>(&json).unwrap(), v);
        }
    }
}
