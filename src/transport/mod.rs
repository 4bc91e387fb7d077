//! The native SSH-2 transport, layered like rustls: `wire` (codec) → `packet` (framing) →
//! `kex` (+ `hostkey`) → `conn` (transport driver) → `auth` → `channel`, with `client` on top
//! (the server end lives in `crate::serve`). Each layer is testable alone; nothing here knows about benchmarks.

pub mod auth;
pub mod channel;
pub mod client;
pub mod conn;
pub mod dh;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod hostkey;
pub mod kex;
pub mod known_hosts;
pub mod packet;
pub mod sig;
pub mod stream;
pub mod userkey;

pub use error::{Error, Result};
