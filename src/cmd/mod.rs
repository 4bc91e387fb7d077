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
