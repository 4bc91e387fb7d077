//! `sshtune pipeline`: rsync over SSH into a remote directory measured as one system — the
//! end-to-end rate, where the CPU goes on both ends, what each stage does alone, and which
//! change would help. See docs/pipeline.md.

pub mod dataset;
pub mod model;
pub mod remote;
pub mod render;
pub mod rsync;
pub mod run;
pub mod sampler;
pub mod stages;
pub mod verdict;
