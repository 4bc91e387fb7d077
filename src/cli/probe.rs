//! `sshtune probe`: a server's banner and offered algorithms, without logging in.

use super::output::OutputArgs;
use super::parse::parse_step_timeout;
use super::ssh::SshArgs;
use clap::{Args, ValueEnum, ValueHint};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Host (or user@host, or an ssh config alias).
    #[arg(value_hint = ValueHint::Hostname)]
    pub host: String,
    #[command(flatten)]
    pub ssh: SshArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Exit with status 3 when the server offers a cipher or MAC of this grade or worse
    /// (after printing the report).
    #[arg(long, value_enum, value_name = "GRADE")]
    pub fail_on: Option<FailOn>,
    /// How long to wait for the server at each step (e.g. 10s, 500ms; 1s–1h).
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_step_timeout)]
    pub timeout: Duration,
}

/// The lowest grade `probe --fail-on` tolerates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Fail when anything offered is graded broken.
    Broken,
    /// Fail when anything offered is graded weak or broken.
    Weak,
}

impl FailOn {
    /// The best grade that still fails.
    pub fn threshold(self) -> ciphers::Grade {
        match self {
            FailOn::Broken => ciphers::Grade::Broken,
            FailOn::Weak => ciphers::Grade::Weak,
        }
    }
}
