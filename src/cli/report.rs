//! `sshtune report`: saved reports re-rendered or compared.

use super::output::OutputArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Saved reports (`--format json` of bench, speed, storage or pipeline); `-` reads
    /// standard input. Two or more of one kind: a comparison against the first.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Name of each run in a comparison, in the order of the files (default: what differs
    /// between them among host, kernel, CPU quota and date).
    #[arg(long)]
    pub label: Vec<String>,
    /// Bench reports of different hosts compared row by row, instead of the fleet table (one
    /// line per host: best cipher, MiB/s, verdict, the config line it gets).
    #[arg(long)]
    pub compare: bool,
    /// In a comparison, exit with status 3 when a row of a later run is slower than in the
    /// first by more than PCT and the change is significant (sample ranges apart), listing
    /// those rows on stderr: a nightly regression check.
    #[arg(long, value_name = "PCT", value_parser = crate::report::compare::drops::parse_threshold)]
    pub fail_on_drop: Option<f64>,
}
