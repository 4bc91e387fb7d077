//! SSH wire format (RFC 4251 §5, RFC 4253 §4–6): the lowest layer, shared by the probe and the
//! native transport, with every message the transport sends or reads as a struct
//! (`kexinit`, `transport`, `userauth`, `connection`). Nothing here does I/O except `ident` and `plain`, which read from a stream.

pub mod codec;
pub mod connection;
pub mod ident;
pub mod kexinit;
pub mod numbers;
pub mod plain;
pub mod sanitize;
pub mod transport;
pub mod userauth;

pub use codec::{DecodeError, Message, Reader, Writer};
