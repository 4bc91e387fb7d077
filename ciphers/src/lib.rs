//! SSH cipher and MAC knowledge in one place, and their implementations.
//!
//! The catalog is the single source the probe, the bench, the config emitter and the native
//! transport consult for names, sizes and grades, so that no second list can drift out of sync.
//! The packet layer (`packet`) is what a transport uses: one sealing and one opening key per
//! direction, built from catalog names, with the arithmetic done by either backend.
#![deny(unsafe_code)] // one audited exception: imp::evp_poly1305 (EVP_MAC FFI, OpenSSL 3)

pub mod backend;
pub mod catalog;
pub mod cpu;
pub mod error;
pub mod grade;
mod imp;
pub mod packet;
mod padding;
pub mod raw;
pub mod version;

pub use backend::{Backend, Preference};
pub use catalog::{
    cipher, grade_of, mac, pair_grade, CipherKind, CipherSpec, MacSpec, Primitive, CIPHERS, MACS,
};
pub use cpu::AesHardware;
pub use error::Error;
pub use grade::Grade;
pub use packet::{DirectionKeys, Framing, OpeningKey, SealingKey, HEADER_LEN, MAX_PACKET_LEN};
pub use version::OpenSshVersion;
