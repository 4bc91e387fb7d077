//! HTML reports: one self-contained page per report — inline CSS, charts as inline SVG
//! (`svg`), no script and nothing fetched, so the file can be mailed, archived or opened
//! offline and shows the same thing forever. Each kind has its own file; they only read the
//! report, as the other formats do.

mod bench;
pub mod compare;
mod pipeline;
pub mod shell;
mod speed;
mod storage;
pub mod svg;

pub use bench::bench;
pub use compare::comparison;
pub use pipeline::pipeline;
pub use shell::esc;
pub use speed::speed;
pub use storage::storage;
