//! What one pipeline run is asked to do, in the domain's terms. The front door
//! (`cmd/pipeline.rs`) builds it from the command line, so nothing under `pipeline/` needs
//! clap's structs and a test or another command can start a run without them.

use super::dataset::DatasetKind;
use super::rsync::Variant;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Options {
    /// `[HOST:]DIR` as the user wrote it; `None` or a bare directory: the embedded loopback
    /// server writing into that directory (a temp one when `None`).
    pub destination: Option<String>,
    /// ssh's own options for the destination (`-p 2222`, `-o K=V`, ...), in the order ssh
    /// takes them. Only meaningful with a `HOST:DIR` destination.
    pub ssh_options: Vec<String>,
    /// The user's ciphers; empty: the run picks the fastest ok-graded ones.
    pub ciphers: Vec<String>,
    /// How many ciphers the run's own choice keeps.
    pub max_ciphers: u32,
    /// Shape and size of generated data, unless `source` is given.
    pub dataset: DatasetKind,
    pub size: u64,
    /// Existing data to transfer instead of generated data.
    pub source: Option<PathBuf>,
    pub variants: Vec<Variant>,
    /// Timed runs per cipher and variant, and per stage ceiling.
    pub repeat: u32,
    /// rsync program on the remote side.
    pub rsync_path: String,
    /// Sampling interval of both ends' CPU and I/O readers, milliseconds.
    pub interval_ms: u64,
    /// Measure each stage alone (SSH-only, disk-only, rsync-local); without them no verdict.
    pub ceilings: bool,
    /// Leave what the run wrote on both sides.
    pub keep: bool,
    /// `--luks`: SSH cipher × scratch LUKS setting on the destination (root, local only).
    pub luks: bool,
    /// The LUKS settings to compare by name; empty: every candidate.
    pub luks_settings: Vec<String>,
    /// Skip the settings the model says cannot change the result.
    pub luks_trim: bool,
    /// `--max-time`: when the run must have ended (the LUKS matrix is cut to fit).
    pub deadline: Option<std::time::Instant>,
    /// `--max-time` in seconds, as given (for the report).
    pub max_time_s: Option<f64>,
    /// `--jobs`: each cipher's whole-file copy also as N rsyncs at once over parts of the data.
    pub jobs: super::jobs::JobsAsked,
    /// Keeps the SSH-only bench silent too (the run's own progress goes through `say`).
    pub quiet: bool,
}
