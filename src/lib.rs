//! sshtune: measure SSH cipher throughput and CPU cost, find the bottleneck, emit a config.
//!
//! The binary is a thin shell over this library so integration tests can reuse its pieces
//! (the embedded sshd, the probe, the report model). See docs/ARCHITECTURE.md.
#![deny(unsafe_code)]
// No function of the library over 100 lines (`clippy.toml`): one that grows past it is split.
#![warn(clippy::too_many_lines)]

pub mod bench;
pub mod cgroup;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod embedded;
pub mod exit;
pub mod outfile;
pub mod pipeline;
pub mod probe;
pub mod process;
pub mod progress;
pub mod proxy;
pub mod remote;
pub mod report;
pub mod serve;
pub mod speed;
pub mod stats;
pub mod storage;
pub mod sysinfo;
pub mod target;
pub mod transport;
pub mod units;
pub mod wire;
