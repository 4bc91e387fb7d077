//! `sshtune speed`: which ciphers, MACs and backends to time, and for how long.

use super::output::OutputArgs;
use super::values::{parser, CryptoArg, RowsArg};
use crate::speed::model::RowKind;
use crate::speed::options::{BackendChoice, Options};
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct SpeedArgs {
    /// Ciphers to time (comma-separated SSH names). Default: every cipher in the catalog.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// MACs to time alone and to pair with each non-AEAD cipher. Default: every MAC alone,
    /// pairs with umac-64-etm@openssh.com (OpenSSH's first choice).
    #[arg(long, value_delimiter = ',')]
    pub macs: Vec<String>,
    /// Which kinds of rows to measure (comma-separated). Default: all.
    #[arg(long, value_parser = parser::<RowsArg, RowKind>(), value_delimiter = ',')]
    pub rows: Vec<RowKind>,
    /// Crypto backend(s) to time.
    #[arg(long, value_parser = parser::<CryptoArg, BackendChoice>(), default_value = "both")]
    pub crypto: BackendChoice,
    /// CPU time a sample may last (e.g. 1s, 500ms): samples start at 0.1 s and double while they disagree
    /// by more than 5% (one outlier among two extra samples is set aside), up to this. The
    /// `openssl speed` reference runs once for 1 s.
    #[arg(long, default_value_t = crate::units::Seconds(Options::DEFAULT.min_time_s), value_name = "DURATION", value_parser = parse_min_time)]
    pub min_time: crate::units::Seconds,
    /// Timed samples per row; the report shows their median and range.
    #[arg(long, alias = "samples", default_value_t = Options::DEFAULT.repeat, value_parser = clap::value_parser!(u32).range(3..=100))]
    pub repeat: u32,
    /// Skip the `openssl speed` reference column.
    #[arg(long)]
    pub no_reference: bool,
    #[command(flatten)]
    pub out: OutputArgs,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

fn parse_min_time(s: &str) -> Result<crate::units::Seconds, String> {
    let v = crate::units::parse_duration(s)?;
    if !(0.001..=600.0).contains(&v) {
        return Err("--min-time must be between 1ms and 10m".into());
    }
    Ok(crate::units::Seconds(v))
}
