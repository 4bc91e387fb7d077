//! `sshtune bench`: what to measure, how to sample, the engines, the ceiling.

use super::output::OutputArgs;
use super::parse::{parse_packet_size, parse_window};
use super::serve::THREADS_HELP;
use super::ssh::SshArgs;
use super::values::{parser, DirectionsArg};
use crate::bench::model::Directions;
use crate::bench::options::{NativeOptions, SamplingOptions};
use crate::units::{parse_ceiling, parse_size, Rate};
use clap::{Args, ValueEnum, ValueHint};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    /// The system `ssh` client against the server's sshd.
    Openssh,
    /// sshtune's own SSH client (against `sshtune serve`, or any sshd with a shell).
    Native,
    /// Both engines, rows side by side.
    Both,
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Destination as ssh takes it (host, user@host or a ~/.ssh/config alias). Omitted: a
    /// private sshd on 127.0.0.1 with temporary keys, removed afterwards.
    #[arg(value_hint = ValueHint::Hostname)]
    pub host: Option<String>,
    #[command(flatten)]
    pub ssh: SshArgs,
    /// Ciphers to measure (comma-separated). Default: the server's offer that the local ssh supports.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// MACs to pair with non-AEAD ciphers (comma-separated). Default: the one the client would negotiate.
    #[arg(long, value_delimiter = ',')]
    pub macs: Vec<String>,
    /// Timed samples per cipher and direction with --thorough; by default rows below the leader
    /// stop after two and contenders get up to two more than this.
    #[arg(long, default_value_t = SamplingOptions::DEFAULT.repeat, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Untimed warm-up transfers before the samples (adaptive sizing always does at least one).
    #[arg(long, default_value_t = SamplingOptions::DEFAULT.warmup)]
    pub warmup: u32,
    /// Fixed bytes per transfer (e.g. 64M, 1G). Default: grow until a transfer lasts --min-duration.
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// Shortest transfer --thorough sizing aims for (e.g. 2s, 500ms); by default samples
    /// start at 0.25 s (or four channel windows) and lengthen up to this only while they disagree.
    #[arg(long, default_value_t = crate::units::Seconds(SamplingOptions::DEFAULT.min_duration_s), value_name = "DURATION", value_parser = crate::units::parse_seconds)]
    pub min_duration: crate::units::Seconds,
    /// The reference run: --repeat samples of at least --min-duration each for every row and a
    /// fixed warm-up, no racing (slower; what the default mode is checked against). Default:
    /// samples sized by stability (starting at 0.25 s) and rows whose whole range lies below
    /// the leader's stopped after two samples.
    #[arg(long)]
    pub thorough: bool,
    /// The default mode; accepted so scripts written for it keep working (no effect).
    #[arg(long, hide = true, conflicts_with = "thorough")]
    pub adaptive: bool,
    /// Stop sampling contenders once the run has lasted this long (e.g. 30s, 2m); every row
    /// still gets its first samples. Default: 57s, an answer within a minute (a longer
    /// value lifts it). Not with --thorough.
    #[arg(long, value_parser = crate::units::parse_duration, conflicts_with = "thorough", value_name = "DURATION")]
    pub max_time: Option<f64>,
    /// Which way the data goes: upload (client to server), download, or both (each row
    /// measured both ways).
    #[arg(long, value_parser = parser::<DirectionsArg, Directions>(), default_value = "both")]
    pub direction: Directions,
    /// Which SSH implementation carries the transfers. Default: `openssh` for a HOST; with no
    /// HOST, `both` when an OpenSSH sshd is installed, else `native` alone.
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,
    /// Also measure each row as N transfers at once over N connections (OpenSSH engine), with
    /// the gain over one; `auto`: the server's online cores, at most 8.
    #[arg(long, default_value = "1", value_name = "N|auto")]
    pub streams: crate::bench::model::StreamsAsked,
    /// Native engine: largest SSH data packet payload we send and accept (e.g. 32K; 1K–128K).
    #[arg(long, value_parser = parse_packet_size)]
    pub packet_size: Option<u32>,
    /// Native engine: channel receive window we grant (e.g. 8M; 64K–1G). OpenSSH uses 2 MiB.
    #[arg(long, value_parser = parse_window)]
    pub window: Option<u32>,
    #[arg(long, help = THREADS_HELP, default_value_t = NativeOptions::DEFAULT.threads,
          value_parser = clap::value_parser!(u8).range(1..=2))]
    pub threads: u8,
    /// known_hosts file the native engine checks the server's key against, instead of
    /// `UserKnownHostsFile` from `ssh -G` (global files and StrictHostKeyChecking still apply).
    #[arg(long)]
    pub known_hosts: Option<PathBuf>,
    /// Raw-TCP ceiling of the path, measured elsewhere, for the network verdict: a rate per
    /// second (`940Mbit`, `1Gbit` = bits, SI; `117MB` = bytes, SI; `110MiB` = bytes, binary; a
    /// bare number is MiB/s), or `@FILE`, an `iperf3 -J` report (its
    /// end.sum_received.bits_per_second is used).
    #[arg(long, conflicts_with = "no_ceiling", value_parser = parse_ceiling, value_name = "RATE|@FILE")]
    pub ceiling: Option<Rate>,
    /// Do not measure the raw-TCP ceiling (no receiver is started on the server); verdicts
    /// then rest on CPU figures and the path inference.
    #[arg(long, alias = "no-ceilings")]
    pub no_ceiling: bool,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Print the evidence behind each verdict (CPU %, quota, ceiling, ratio).
    #[arg(long)]
    pub explain: bool,
    /// One JSON object per line on stdout as the run goes, as iperf3's --json-stream: each
    /// sample (`"event": "sample"`), each engine's rows (`"row"`), and the whole report last
    /// (`"end"`). Files asked with --output are written as usual.
    #[arg(long, conflicts_with_all = ["format", "explain"])]
    pub json_stream: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Path of sshtune on the server, for measuring the raw-TCP ceiling (default: found in the
    /// remote PATH, if there).
    #[arg(long, value_name = "PATH")]
    pub remote_sshtune: Option<String>,
}

impl BenchArgs {
    /// The engine to run, after the defaults described on `--engine`.
    pub fn engine(&self) -> EngineChoice {
        match (self.engine, &self.host) {
            (Some(e), _) => e,
            (None, Some(_)) => EngineChoice::Openssh,
            (None, None) if crate::process::find_program("sshd").is_some() => EngineChoice::Both,
            (None, None) => EngineChoice::Native,
        }
    }
}
