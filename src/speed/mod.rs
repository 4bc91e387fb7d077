//! `sshtune speed`: what each SSH cipher and MAC costs on this CPU, without any network.
//!
//! `suite::run` measures what `options::Options` asks for (`measure`, `subject`, `reference`), kept apart from presenting (`export`):
//! every format renders the same `SpeedReport`.

pub mod backends;
pub mod measure;
pub mod model;
pub mod options;
pub mod overhead;
pub mod reference;
pub mod subject;
pub mod suite;
