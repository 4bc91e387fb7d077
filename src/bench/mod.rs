//! `sshtune bench`: per-cipher throughput in both directions with CPU on both ends.
//!
//! Measurement (`executor`, `openssh`, `run`) is kept apart from judgement (`stats`, `verdict`)
//! and from presentation (`crate::report`).

pub mod ceiling;
pub mod executor;
pub mod model;
pub mod names;
pub mod native;
pub mod openssh;
pub mod remote;
pub mod run;
pub mod ssh_args;
pub mod stats;
pub mod transfer;
pub mod verdict;
pub mod window;

pub use model::{BenchReport, Direction, ResultRow};
