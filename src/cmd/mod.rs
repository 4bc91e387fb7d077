//! One module per subcommand: turn validated arguments into working objects, run, present.

pub mod bench;
pub mod bench_names;
pub mod config;
pub mod generate;
pub mod pipeline;
pub mod probe;
pub mod report;
pub mod serve;
pub mod speed;
pub mod storage;
pub mod tcp_sink;

use crate::cli::ColorChoice;
use crate::report::terminal::{set_colours, Colours};

/// Applies the options every command shares (`--color`, `--units`, ssh's `-v`) before the
/// command runs.
pub fn apply_global(
    color: ColorChoice,
    units: crate::report::rate_unit::RateUnit,
    ssh_verbose: u8,
) {
    crate::process::relay_ssh_debug(ssh_verbose > 0);
    crate::report::rate_unit::set(units);
    set_colours(match color {
        ColorChoice::Auto => Colours::Auto,
        ColorChoice::Always => Colours::Always,
        ColorChoice::Never => Colours::Never,
    });
}
