//! Two or more saved runs of one kind side by side, the way the seed compares kernel 3.18 with
//! 5.8 or LUKS before and after a patch. Rows are matched by what they measured (their
//! identity), never by position; each shows every run's median and spread and the change
//! against the first run. A change is called significant only when the two runs' sample
//! ranges do not overlap — the rule bench's ranking uses (`stats::ranges_overlap`) —
//! so a difference inside the noise reads "≈" instead of a percentage that invites a wrong
//! conclusion.

pub mod build;
pub mod cells;
pub mod drops;
mod extract;
pub mod model;
pub mod render;

pub use build::compare;
pub use model::{
    change_cell, figure_cell, presence_note, Change, Comparison, Figure, Row, Run, SCHEMA,
};
