//! Presentation of bench results. Every format renders the same `BenchReport`; none of them
//! computes anything new. `load` reads saved reports of every kind back, `compare` puts runs
//! side by side, `html` draws every kind as a self-contained page. This file only declares the
//! modules and re-exports what the rest of the crate uses; the files import each other, never
//! this one.

pub mod cells;
pub mod compare;
pub mod config;
mod csv;
pub mod explain;
pub mod export;
pub mod fleet;
pub mod footer;
pub mod html;
mod json;
pub mod load;
pub mod machine;
mod markdown;
pub mod md_table;
pub mod outputs;
pub mod pipeline;
pub mod pipeline_jobs;
pub mod pipeline_jobs_csv;
pub mod placement;
pub mod probe;
pub mod ranking;
pub mod rate_unit;
pub mod render;
pub mod speed;
pub mod storage;
pub mod streams;
mod table;
pub mod terminal;

pub use cells::{GRADE_LEGEND, VERDICT_LEGEND};
pub use explain::explain;
pub use export::{Exporter, Format};
pub use terminal::TABLE_WIDTH;
