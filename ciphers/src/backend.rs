//! Which library does the arithmetic.
//!
//! Two backends exist because neither is fastest everywhere (ring's AES-GCM beats libcrypto,
//! libcrypto's ChaCha20 and 3DES beat the pure-Rust crates) and because a static build for a
//! board without a usable libcrypto needs the pure-Rust one. The per-cipher default lives in
//! the catalog; callers may override it.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// libcrypto through the `openssl` crate: the same code OpenSSH runs on this machine.
    Openssl,
    /// ring and RustCrypto: no C library needed at run time.
    Rust,
}

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::Openssl, Backend::Rust];

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Openssl => "openssl",
            Backend::Rust => "rust",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "openssl" => Ok(Backend::Openssl),
            "rust" => Ok(Backend::Rust),
            _ => Err(format!(
                "unknown crypto backend {s:?} (use openssl or rust)"
            )),
        }
    }
}
