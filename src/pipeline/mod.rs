//! `sshtune pipeline`: rsync over SSH into a remote directory measured as one system — the
//! end-to-end rate, where the CPU goes on both ends, what each stage does alone, and which
//! change would help. See docs/pipeline.md.
//!
//! `run.rs` calls the steps in order; each step is a file: `destination.rs` (where the data
//! goes), `control.rs` (the one connection the unmeasured commands share), `preflight.rs`
//! (the remote check), `choice.rs` (ciphers and variants),
//! `ceilings.rs` (stages alone), `cells.rs` (cipher × variant), `recording.rs` (both ends'
//! samplers recording CPU around the run), `assemble.rs` (the report), `resources.rs` (what
//! is undone, in which order); `jobs*.rs` are `--jobs N` (the split, the runs, the gain).

pub mod assemble;
pub mod ceilings;
pub mod cells;
pub mod choice;
pub mod control;
pub mod dataset;
pub mod destination;
pub mod jobs;
pub mod jobs_gain;
pub mod jobs_run;
pub mod luks;
pub mod model;
pub mod options;
pub mod preflight;
pub mod recording;
pub mod resources;
pub mod rsync;
pub mod run;
pub mod sampler;
pub mod scripts;
pub mod setup;
pub mod ssh;
pub mod stages;
pub mod verdict;

pub use options::Options;

/// Bytes in a MiB, for the rates and sizes the run reports.
const MIB: f64 = 1024.0 * 1024.0;
