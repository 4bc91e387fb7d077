//! Presentation of speed results. Every format renders the same `SpeedReport`; none of them
//! computes anything new.

pub mod cells;
pub(super) mod csv;
pub(super) mod markdown;
pub(super) mod table;
