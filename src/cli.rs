//! Command-line interface (clap derive). Validation of what the user typed happens here;
//! building working objects happens in `cmd`.

use crate::report::Format;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "sshtune", version, about = "Which SSH cipher is fastest on this hardware, and what limits it", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure per-cipher throughput up and down, with CPU on both ends and a bottleneck verdict.
    Bench(BenchArgs),
    /// Read a server's banner and offered algorithms without logging in.
    Probe(ProbeArgs),
    /// Measure dm-crypt: capabilities, kernel cipher speed, and the cipher × layer × test matrix.
    Storage(StorageArgs),
}

/// Destination options, passed to `ssh` exactly as given.
#[derive(Debug, Args, Clone, Default)]
pub struct SshArgs {
    /// Port to connect to on the remote host (ssh -p).
    #[arg(short = 'p', long = "port")]
    pub port: Option<u16>,
    /// User to log in as (ssh -l).
    #[arg(short = 'l', long = "login")]
    pub login: Option<String>,
    /// Identity file (ssh -i).
    #[arg(short = 'i', long = "identity")]
    pub identity: Option<PathBuf>,
    /// Alternative ssh config file (ssh -F).
    #[arg(short = 'F', long = "ssh-config")]
    pub config: Option<PathBuf>,
    /// Extra ssh option, repeatable (ssh -o), e.g. -o ProxyJump=gw.
    #[arg(short = 'o', long = "ssh-option")]
    pub option: Vec<String>,
}

impl SshArgs {
    pub fn to_ssh_options(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(c) = &self.config {
            v.extend(["-F".to_string(), c.display().to_string()]);
        }
        if let Some(p) = self.port {
            v.extend(["-p".to_string(), p.to_string()]);
        }
        if let Some(l) = &self.login {
            v.extend(["-l".to_string(), l.clone()]);
        }
        if let Some(i) = &self.identity {
            v.extend(["-i".to_string(), i.display().to_string()]);
        }
        for o in &self.option {
            v.extend(["-o".to_string(), o.clone()]);
        }
        v
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Directions {
    Upload,
    Download,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// The system `ssh` client against the server's sshd.
    Openssh,
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Destination as ssh takes it (host, user@host or a ~/.ssh/config alias). Omitted: a
    /// private sshd on 127.0.0.1 with temporary keys, removed afterwards.
    pub host: Option<String>,
    #[command(flatten)]
    pub ssh: SshArgs,
    /// Ciphers to measure (comma-separated). Default: the server's offer that the local ssh supports.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// MACs to pair with non-AEAD ciphers (comma-separated). Default: the one the client would negotiate.
    #[arg(long, value_delimiter = ',')]
    pub macs: Vec<String>,
    /// Timed samples per cipher and direction.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Untimed warm-up transfers before the samples (adaptive sizing always does at least one).
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Fixed bytes per transfer (e.g. 64M, 1G). Default: grow until a transfer lasts --min-duration.
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// Shortest transfer adaptive sizing aims for, seconds.
    #[arg(long, default_value_t = 2.0)]
    pub min_duration: f64,
    #[arg(long, value_enum, default_value_t = Directions::Both)]
    pub direction: Directions,
    #[arg(long, value_enum, default_value_t = Engine::Openssh)]
    pub engine: Engine,
    /// Raw-TCP ceiling of the path in MiB/s, measured elsewhere (e.g. iperf3), for the network verdict.
    #[arg(long)]
    pub ceiling: Option<f64>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Print the evidence behind each verdict (CPU %, quota, ceiling, ratio).
    #[arg(long)]
    pub explain: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Host (or user@host, or an ssh config alias).
    pub host: String,
    #[command(flatten)]
    pub ssh: SshArgs,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for the server at each step.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
}

#[derive(Debug, Clone, Args)]
pub struct StorageArgs {
    /// Which matrix: the seed's tables, a default that finishes in minutes, or a quick look.
    #[arg(long, value_enum, default_value_t = crate::storage::plan::Preset::Default)]
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
    #[arg(long, value_enum, value_delimiter = ',')]
    pub perf: Vec<crate::storage::plan::Perf>,
    /// Layers instead of the preset's.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub layers: Vec<crate::storage::plan::Layer>,
    /// Tests instead of the preset's (e.g. wr-s,rd for the seed's file-copy table).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub tests: Vec<crate::storage::plan::Test>,
    /// Format LUKS2 headers instead of header-less plain mappings (same data path).
    #[arg(long)]
    pub luks2: bool,
    /// Samples per test.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: Option<u32>,
    /// Upper bound of each fio run, seconds (default 20; 5 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub fio_runtime: Option<u64>,
    /// Only capabilities and cipher speed; no mapping is made.
    #[arg(long)]
    pub no_matrix: bool,
    /// Skip the cipher speed layer.
    #[arg(long)]
    pub no_speed: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `64M`, `1G`, `512k`, `1048576` (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => {
            let unit = s[i..].to_ascii_lowercase();
            let mult = match unit.trim_end_matches("ib").trim_end_matches('b') {
                "" => 1,
                "k" => 1 << 10,
                "m" => 1 << 20,
                "g" => 1 << 30,
                "t" => 1u64 << 40,
                _ => return Err(format!("unknown size unit {:?} (use K, M, G)", &s[i..])),
            };
            (&s[..i], mult)
        }
        None => (s, 1),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {s:?}"))?;
    if n.is_nan() || n <= 0.0 {
        return Err("size must be positive".into());
    }
    Ok((n * mult as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("0").is_err());
        assert!(parse_size("5Q").is_err());
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
