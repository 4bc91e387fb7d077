//! `sshtune pipeline`: rsync over SSH measured as one system, optionally over LUKS.

use super::output::OutputArgs;
use super::parse::parse_interval;
use super::ssh::SshArgs;
use super::values::{parser, DatasetArg, VariantArg};
use crate::units::parse_size;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct PipelineArgs {
    /// `HOST:/dest/dir` (host as ssh takes it). A bare `/dir` or nothing: a private sshd on
    /// 127.0.0.1 writing into DIR (default: a temp directory), removed afterwards.
    pub destination: Option<String>,
    #[command(flatten)]
    pub ssh: SshArgs,
    /// SSH ciphers to run rsync with (comma-separated). Default: the fastest `ok`-graded
    /// ciphers by an SSH-only bench in this run, plus the one ssh picks by default.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// How many ciphers the default choice keeps.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub max_ciphers: u32,
    /// Generated dataset shape (incompressible random data).
    #[arg(long, value_parser = parser::<DatasetArg, crate::pipeline::dataset::DatasetKind>(), default_value = "big")]
    pub dataset: crate::pipeline::dataset::DatasetKind,
    /// Generated dataset size.
    #[arg(long, value_parser = parse_size, default_value = "256M")]
    pub size: u64,
    /// Transfer this directory (or file) instead of generated data.
    #[arg(long, conflicts_with_all = ["dataset", "size"])]
    pub source: Option<PathBuf>,
    /// rsync variants (comma-separated).
    #[arg(
        long,
        value_parser = parser::<VariantArg, crate::pipeline::rsync::Variant>(),
        value_delimiter = ',',
        default_value = "whole-file,delta,delta-md5,compress"
    )]
    pub variants: Vec<crate::pipeline::rsync::Variant>,
    /// Timed runs per cipher and variant (and per stage ceiling).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// rsync program on the remote side (rsync --rsync-path).
    #[arg(long, default_value = "rsync")]
    pub rsync_path: String,
    /// Sampling interval of the CPU and I/O readers (e.g. 200ms, 1s; 50ms–5s).
    #[arg(long, default_value = "200ms", value_name = "DURATION", value_parser = parse_interval)]
    pub interval: Duration,
    /// The interval in milliseconds, as a bare number (kept for scripts; see --interval).
    #[arg(long, hide = true, conflicts_with = "interval", value_parser = clap::value_parser!(u64).range(50..=5000))]
    pub interval_ms: Option<u64>,
    /// Also copy the data as N rsyncs at once, over parts split evenly by size, beside one
    /// rsync of the same cipher (whole-file), with the gain; `auto`: the destination's online
    /// cores, at most 8.
    #[arg(long, default_value = "1", value_name = "N|auto")]
    pub jobs: crate::pipeline::jobs::JobsAsked,
    /// Do not measure stage ceilings (SSH-only, disk-only, rsync-local); no verdict then.
    #[arg(long, alias = "no-ceilings")]
    pub no_ceiling: bool,
    /// Leave the files this run wrote on the remote side.
    #[arg(long)]
    pub keep: bool,
    /// Also measure SSH cipher × LUKS setting: scratch LUKS2 volumes on a loop file beside
    /// the destination directory (root; a directory on this machine), removed afterwards.
    #[arg(long)]
    pub luks: bool,
    /// LUKS settings to compare (comma-separated names: current, xts256, xts512, second,
    /// xts256-4k, xts256-nowq, xts256-samecpu). Default: all the machine has.
    #[arg(long, value_delimiter = ',', requires = "luks")]
    pub luks_settings: Vec<String>,
    /// Run every LUKS setting end to end, also those the model says cannot change the result.
    #[arg(long, requires = "luks")]
    pub no_trim: bool,
    /// With --luks: end the run within this time (e.g. 10m); the LUKS matrix is cut to what
    /// fits (fewer settings first, then fewer copies) and the report names what it left out.
    #[arg(long, requires = "luks", value_name = "DURATION", value_parser = crate::units::parse_duration)]
    pub max_time: Option<f64>,
    #[command(flatten)]
    pub out: OutputArgs,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}
