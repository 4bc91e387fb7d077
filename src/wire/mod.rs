//! SSH wire format (RFC 4251 §5, RFC 4253 §4–6): the lowest layer, shared by the probe and the
//! native transport. Nothing here does I/O except `ident` and `plain`, which read from a stream.

pub mod codec;
pub mod ident;
pub mod kexinit;
pub mod plain;
pub mod sanitize;

pub use codec::{DecodeError, Reader, Writer};
pub mod numbers;
