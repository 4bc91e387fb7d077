//! `sshtune storage`: the dm-crypt matrix, its device and its overrides.

use super::output::OutputArgs;
use super::parse::parse_step_timeout;
use super::values::{parser, LayerArg, PerfArg, PresetArg, TestArg};
use crate::units::parse_size;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct StorageArgs {
    /// Which matrix: the seed's tables, a default that finishes in minutes, or a quick look.
    #[arg(long, value_parser = parser::<PresetArg, crate::storage::plan::Preset>(), default_value = "default")]
    pub preset: crate::storage::plan::Preset,
    /// Shorthand for --preset quick.
    #[arg(long)]
    pub quick: bool,
    /// Size of the loop file (default 1G; 256M with --quick).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// Directory for the loop file and mount point (default: the system temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Use this block device instead of a loop file. Everything on it is destroyed.
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Confirms that --device may be overwritten.
    #[arg(long, requires = "device")]
    pub destroy_data: bool,
    /// Overwrite --device even if it carries a filesystem or partition table (never when mounted or in use).
    #[arg(long, requires = "destroy_data")]
    pub force: bool,
    /// CPU-spinning threads running during the matrix (the seed's loaded-CPU table).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1024))]
    pub load: u32,
    /// Cipher specs instead of the preset's, e.g. aes-xts-plain64:512,aes-cbc-essiv:sha256:256.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// Sector sizes instead of the preset's (512, 4096...).
    #[arg(long, value_delimiter = ',')]
    pub sector_sizes: Vec<u32>,
    /// dm-crypt queueing settings instead of the preset's.
    #[arg(long, value_parser = parser::<PerfArg, crate::storage::plan::Perf>(), value_delimiter = ',')]
    pub perf: Vec<crate::storage::plan::Perf>,
    /// Layers instead of the preset's.
    #[arg(long, value_parser = parser::<LayerArg, crate::storage::plan::Layer>(), value_delimiter = ',')]
    pub layers: Vec<crate::storage::plan::Layer>,
    /// Tests instead of the preset's (e.g. wr-s,rd for the seed's file-copy table).
    #[arg(long, value_parser = parser::<TestArg, crate::storage::plan::Test>(), value_delimiter = ',')]
    pub tests: Vec<crate::storage::plan::Test>,
    /// Format LUKS2 headers instead of header-less plain mappings (same data path).
    #[arg(long, alias = "luks")]
    pub luks2: bool,
    /// Samples per test.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: Option<u32>,
    /// Upper bound of each fio run (e.g. 20s; 1s–1h; default 20s, 5s with --quick).
    #[arg(long, value_name = "DURATION", value_parser = parse_step_timeout)]
    pub fio_runtime: Option<Duration>,
    /// Only capabilities and cipher speed; no mapping is made.
    #[arg(long)]
    pub no_matrix: bool,
    /// Skip the cipher speed layer.
    #[arg(long)]
    pub no_speed: bool,
    #[command(flatten)]
    pub out: OutputArgs,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}
