//! One module per subcommand: turn validated arguments into working objects, run, present.

pub mod bench;
pub mod probe;
pub mod storage;
