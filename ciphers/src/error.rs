//! One error type for building keys and for sealing/opening packets.
//!
//! The transport must tell a peer's tampering (`Integrity`) apart from a malformed packet
//! (`BadLength`, `BadPadding`) and from our own misconfiguration (the rest): the first two end
//! the connection with a protocol error, the rest are bugs or unsupported choices.

use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("unknown cipher {0:?}")]
    UnknownCipher(String),
    #[error("unknown MAC {0:?}")]
    UnknownMac(String),
    #[error("cipher {0} needs a MAC, none was given")]
    MacRequired(&'static str),
    #[error("{what} key is {got} bytes, {name} needs {want}")]
    KeyLength {
        what: &'static str,
        name: &'static str,
        got: usize,
        want: usize,
    },
    #[error("message authentication failed (MAC or tag mismatch)")]
    Integrity,
    #[error("bad packet length {0}")]
    BadLength(usize),
    #[error("bad padding: {0}")]
    BadPadding(&'static str),
    #[error(
        "the {0} backend is not in this build (built without the `{0}` feature); use the rust backend"
    )]
    BackendUnavailable(&'static str),
    #[error("{backend} backend: {context}: {detail}")]
    Backend {
        backend: &'static str,
        context: &'static str,
        detail: String,
    },
}

impl Error {
    #[cfg(feature = "openssl")]
    pub(crate) fn openssl(context: &'static str, e: openssl::error::ErrorStack) -> Self {
        Error::Backend {
            backend: "openssl",
            context,
            detail: e.to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
