//! `sshtune generate` (hidden): man pages or shell completions for packages.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    pub what: Generated,
    /// Directory to write into (created if missing).
    pub dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Generated {
    /// sshtune.1 and one page per subcommand (sshtune-bench.1, ...).
    Man,
    /// bash (sshtune.bash), zsh (_sshtune) and fish (sshtune.fish).
    Completions,
}
