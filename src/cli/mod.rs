//! Command-line interface (clap derive), one file per subcommand's arguments. Validation of
//! what the user typed happens here; building working objects happens in `cmd`.

mod bench;
mod config;
pub mod examples;
mod generate;
mod output;
mod parse;
mod pipeline;
mod probe;
mod report;
mod serve;
mod speed;
mod ssh;
mod storage;
mod tcp_sink;
mod values;

pub use crate::units::parse_size;
pub use bench::{BenchArgs, EngineChoice};
pub use config::ConfigArgs;
pub use generate::{GenerateArgs, Generated};
pub use output::OutputArgs;
pub use parse::{parse_openssh_version, parse_user_name};
pub use pipeline::PipelineArgs;
pub use probe::{FailOn, ProbeArgs};
pub use report::ReportArgs;
pub use serve::ServeArgs;
pub use speed::SpeedArgs;
pub use ssh::SshArgs;
pub use storage::StorageArgs;
pub use tcp_sink::TcpSinkArgs;

use crate::report::Format;
use clap::{Parser, Subcommand, ValueEnum};
use values::{parser, RateUnitArg};

#[derive(Debug, Parser)]
#[command(name = "sshtune", version, about = "Which SSH cipher is fastest on this hardware, and what limits it", long_about = None, after_help = examples::top_help())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Colour grades in terminal tables: `auto` on a terminal unless NO_COLOR is set, `always`
    /// (also into a pipe, e.g. for `less -R`), `never`. Files written with --output never
    /// carry colours.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Unit of rates in terminal and Markdown tables; JSON, CSV and HTML keep MiB/s.
    #[arg(long, global = true, value_parser = parser::<RateUnitArg, crate::report::rate_unit::RateUnit>(), default_value = "MiB/s")]
    pub units: crate::report::rate_unit::RateUnit,
    /// The same as --format json, for every command that prints a report.
    #[arg(long, global = true)]
    pub json: bool,
}

/// `--color`, as ls and grep spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure per-cipher throughput up and down, with CPU on both ends and a bottleneck verdict.
    #[command(after_help = examples::help("bench"))]
    Bench(BenchArgs),
    /// Read a server's banner and offered algorithms without logging in.
    #[command(after_help = examples::help("probe"))]
    Probe(ProbeArgs),
    /// Run the native SSH server (built-in benchmark commands only, never a shell).
    #[command(after_help = examples::help("serve"))]
    Serve(ServeArgs),
    /// Turn bench results into an sshd_config drop-in, a client Host block and an rsync line
    /// that the target sshd accepts, fastest cipher first.
    #[command(after_help = examples::help("config"))]
    Config(ConfigArgs),
    /// Raw cost of each SSH cipher and MAC on this CPU, next to `openssl speed` of the same primitive.
    #[command(after_help = examples::help("speed"))]
    Speed(SpeedArgs),
    /// Raw-TCP receiver that bench starts on the server to measure the path's ceiling.
    #[command(hide = true)]
    TcpSink(TcpSinkArgs),
    /// rsync over SSH into a remote directory, measured as one system: throughput, CPU per
    /// stage on both ends, stage ceilings and what to change.
    #[command(after_help = examples::help("pipeline"))]
    Pipeline(PipelineArgs),
    /// Measure dm-crypt: capabilities, kernel cipher speed, and the cipher × layer × test matrix.
    #[command(after_help = examples::help("storage"))]
    Storage(StorageArgs),
    /// Re-render saved JSON reports in any format without measuring; two or more of one kind
    /// are compared row by row.
    #[command(after_help = examples::help("report"))]
    Report(ReportArgs),
    /// Write the man pages or the shell completions into a directory (for packages).
    #[command(hide = true)]
    Generate(GenerateArgs),
}

impl Command {
    /// The command's `--format`, for those that print a report.
    fn format_mut(&mut self) -> Option<&mut Format> {
        match self {
            Command::Bench(a) => Some(&mut a.out.format),
            Command::Probe(a) => Some(&mut a.out.format),
            Command::Config(a) => Some(&mut a.format),
            Command::Speed(a) => Some(&mut a.out.format),
            Command::Pipeline(a) => Some(&mut a.out.format),
            Command::Storage(a) => Some(&mut a.out.format),
            Command::Report(a) => Some(&mut a.out.format),
            Command::Serve(_) | Command::TcpSink(_) | Command::Generate(_) => None,
        }
    }

    /// `--json`: `--format json` for a command that prints a report; a usage error for one
    /// that prints none, or with a `--format` other than json.
    pub fn use_json(&mut self) -> Result<(), String> {
        match self.format_mut() {
            Some(f) if *f == Format::Table || *f == Format::Json => {
                *f = Format::Json;
                Ok(())
            }
            Some(f) => Err(format!("--json conflicts with --format {}", f.as_str())),
            None => Err("--json: this command prints no report".into()),
        }
    }

    /// Whether stdout carries JSON: a failure is then printed there as a JSON object too.
    pub fn prints_json(&mut self) -> bool {
        matches!(self, Command::Bench(a) if a.json_stream)
            || self.format_mut().is_some_and(|f| *f == Format::Json)
    }

    /// `-v` of the ssh options, for commands that start ssh.
    pub fn ssh_verbose(&self) -> u8 {
        match self {
            Command::Bench(a) => a.ssh.verbose,
            Command::Probe(a) => a.ssh.verbose,
            Command::Config(a) => a.ssh.verbose,
            Command::Pipeline(a) => a.ssh.verbose,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
