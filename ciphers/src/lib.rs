//! SSH cipher and MAC knowledge in one place.
//!
//! The catalog is the single source the probe, the bench, the config emitter and the native
//! transport consult for names, sizes and grades, so that no second list can drift out of sync.
#![forbid(unsafe_code)]

pub mod catalog;
pub mod grade;
pub mod version;

pub use catalog::{cipher, mac, CipherKind, CipherSpec, MacSpec, CIPHERS, MACS};
pub use grade::Grade;
pub use version::OpenSshVersion;
