//! The summary statistics every kind of measurement shares live in `crate::stats`, below all
//! of them; bench's files name them here, as their neighbour.

pub use crate::stats::*;
