//! `sshtune speed`: what each SSH cipher and MAC costs on this CPU, without any network.
//!
//! Measuring (`measure`, `subject`, `reference`) is kept apart from presenting (`export`):
//! every format renders the same `SpeedReport`.

pub mod backends;
pub mod measure;
pub mod model;
pub mod overhead;
pub mod reference;
pub mod subject;
