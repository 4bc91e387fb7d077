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
    /// rsync over SSH into a remote directory, measured as one system: throughput, CPU per
    /// stage on both ends, stage ceilings and what to change.
    Pipeline(PipelineArgs),
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
    #[arg(long, value_enum, default_value_t = crate::pipeline::dataset::DatasetKind::Big)]
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
        value_enum,
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
    /// Sampling interval of the CPU and I/O readers, milliseconds.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(50..=5000))]
    pub interval_ms: u64,
    /// Do not measure stage ceilings (SSH-only, disk-only, rsync-local); no verdict then.
    #[arg(long)]
    pub no_ceilings: bool,
    /// Leave the files this run wrote on the remote side.
    #[arg(long)]
    pub keep: bool,
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
