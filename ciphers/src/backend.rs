//! Which library does the arithmetic.
//!
//! Two backends exist because neither is fastest everywhere (ring's AES-GCM beats libcrypto,
//! libcrypto's ChaCha20 and 3DES beat the pure-Rust crates) and because a static build for a
//! board without a usable libcrypto needs the pure-Rust one, and which is fastest depends on
//! whether the CPU has AES instructions ([`AesHardware`](crate::AesHardware)). The per-cipher
//! default for each case lives in the catalog ([`Preference`]); callers may override it.
//!
//! Both variants exist in every build so that reports and command lines mean the same thing
//! everywhere; without the `openssl` feature the catalog's defaults fall back to `Rust`
//! ([`Backend::or_available`]) and asking for `Openssl` explicitly is an
//! [`Error::BackendUnavailable`](crate::Error::BackendUnavailable).

use crate::cpu::AesHardware;
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
    /// Every backend, compiled in or not.
    pub const ALL: [Backend; 2] = [Backend::Openssl, Backend::Rust];

    /// The backends this build can run: both with the `openssl` feature, `Rust` without.
    #[cfg(feature = "openssl")]
    pub const AVAILABLE: &'static [Backend] = &Backend::ALL;
    /// The backends this build can run: both with the `openssl` feature, `Rust` without.
    #[cfg(not(feature = "openssl"))]
    pub const AVAILABLE: &'static [Backend] = &[Backend::Rust];

    /// Whether this build can run the backend.
    pub const fn is_available(self) -> bool {
        match self {
            Backend::Openssl => cfg!(feature = "openssl"),
            Backend::Rust => true,
        }
    }

    /// `self` if this build has it, otherwise `Rust`: how a catalog preference becomes the
    /// default actually used.
    pub const fn or_available(self) -> Backend {
        if self.is_available() {
            self
        } else {
            Backend::Rust
        }
    }

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

/// The backend an algorithm uses unless the caller overrides it, for a CPU with and without
/// AES instructions: catalog data, chosen by measurement (docs/speed-json.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Preference {
    pub aes_hardware: Backend,
    pub aes_software: Backend,
}

impl Preference {
    /// The backend on a CPU with or without AES instructions, as this build can run it.
    pub const fn on(self, cpu: AesHardware) -> Backend {
        match cpu {
            AesHardware::Present => self.aes_hardware.or_available(),
            AesHardware::Absent => self.aes_software.or_available(),
        }
    }

    /// Whether the choice depends on the CPU at all.
    pub const fn depends_on_cpu(self) -> bool {
        !matches!(
            (self.aes_hardware, self.aes_software),
            (Backend::Openssl, Backend::Openssl) | (Backend::Rust, Backend::Rust)
        )
    }
}
