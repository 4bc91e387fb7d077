//! `sshtune config`: bench results turned into sshd, ssh and rsync lines.

use super::parse::parse_openssh_version;
use super::ssh::SshArgs;
use super::values::{parser, DirectionsArg, FormatArg, PolicyArg};
use crate::bench::model::Directions;
use crate::report::Format;
use crate::units::parse_size;
use clap::{Args, ValueEnum, ValueHint};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    /// A bench report (`sshtune bench --format json --output FILE`); `-` reads standard input.
    /// From a report of both engines, the OpenSSH engine's rows are used. Several reports of
    /// one host are pooled: each row's samples are those of every run.
    #[arg(long, num_args = 1.., conflicts_with = "host", required_unless_present = "host")]
    pub from: Vec<PathBuf>,
    /// Measure this destination first (as `sshtune bench HOST` does).
    #[arg(long, value_hint = ValueHint::Hostname)]
    pub host: Option<String>,
    #[command(flatten)]
    pub ssh: SshArgs,
    /// Ciphers to measure with --host (comma-separated). Default: all the server offers.
    #[arg(long, value_delimiter = ',', requires = "host")]
    pub ciphers: Vec<String>,
    /// Fixed bytes per transfer with --host (e.g. 64M). Default: adaptive.
    #[arg(long, value_parser = parse_size, requires = "host")]
    pub size: Option<u64>,
    /// Which ciphers may be recommended.
    #[arg(long, value_parser = parser::<PolicyArg, crate::config::policy::Policy>(), default_value = "secure")]
    pub policy: crate::config::policy::Policy,
    /// Order by throughput in this direction (both: the slower of the two).
    #[arg(long, value_parser = parser::<DirectionsArg, Directions>(), default_value = "both")]
    pub direction: Directions,
    /// The target sshd's OpenSSH release (e.g. 7.4). Default: from the bench's server banner.
    #[arg(long, value_parser = parse_openssh_version)]
    pub openssh_version: Option<ciphers::OpenSshVersion>,
    /// Host pattern for the client block and rsync line. Default: the bench's host.
    #[arg(long)]
    pub client_host: Option<String>,
    /// Print the sshd_config drop-in (default: all three outputs).
    #[arg(long)]
    pub server: bool,
    /// Print the ssh_config Host block.
    #[arg(long)]
    pub client: bool,
    /// Print the rsync command line.
    #[arg(long)]
    pub rsync: bool,
    /// Validate the drop-in with the real `sshd -t` on a temporary config. Rejected: nothing
    /// on stdout, sshd's message on stderr, exit status 3.
    #[arg(long)]
    pub check: bool,
    /// Install the drop-in at PATH (e.g. /etc/ssh/sshd_config.d/50-sshtune.conf): backup,
    /// atomic write, `sshd -t` on the full config, roll back if it fails.
    #[arg(long, value_name = "PATH")]
    pub apply: Option<PathBuf>,
    /// The main sshd config --apply validates.
    #[arg(long, default_value = "/etc/ssh/sshd_config")]
    pub sshd_config: PathBuf,
    /// The sshd binary for --check and --apply. Default: found in PATH and sbin.
    #[arg(long)]
    pub sshd: Option<PathBuf>,
    /// No bench progress on stderr.
    /// `table`: the summary on stderr and the lines on stdout; `json`: one object on stdout
    /// with the line, why its first cipher is first, what was dropped and the three outputs.
    #[arg(long, value_enum, default_value = "table", value_parser = config_format)]
    pub format: Format,
    /// Nothing on stderr but errors: no bench progress with --host, no summary, no note on
    /// pooled runs.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `config` prints lines, not a table of rows: table (its text) and json only.
fn config_format(s: &str) -> Result<Format, String> {
    match Format::from(<FormatArg as ValueEnum>::from_str(s, true)?) {
        f @ (Format::Table | Format::Json) => Ok(f),
        f => Err(format!("config prints table or json, not {}", f.as_str())),
    }
}
