//! `sshtune bench`: per-cipher throughput in both directions with CPU on both ends.
//!
//! Measurement (`executor`, the engines, `transfer`, `run`, driven by `suite` from `Options`)
//! is kept apart from judgement (`verdict`, `path`, `cpu_note`, on `crate::stats`) and from presentation
//! (`crate::report`).

pub mod adaptive;
pub mod ceiling;
pub mod cpu_note;
pub mod executor;
pub mod legacy;
pub mod login_kex;
pub mod model;
pub mod names;
pub mod native;
pub mod openssh;
pub mod options;
pub mod path;
pub mod placement;
pub mod progress;
pub mod ranking;
pub mod reach;
pub mod run;
pub mod ssh_args;
pub mod ssh_session;
pub mod streams;
pub mod streams_gain;
pub mod suite;
pub mod thorough;
pub mod transfer;
pub mod verdict;
pub mod window;

pub use executor::Engine;
pub use model::{BenchReport, Direction, EngineKind, ResultRow};
pub use options::{CeilingSource, NativeOptions, Options, SamplingOptions};
