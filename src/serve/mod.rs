//! `sshtune serve`: the native SSH server with built-in benchmark commands only.

pub mod authorized;
pub mod builtins;
pub mod fold;
#[doc(hidden)]
pub mod fuzzing;
pub mod gate;
pub mod hostkey_store;
pub mod in_process;
pub mod limits;
pub mod memory;
pub mod server;

pub use server::{Server, ServerConfig};
