//! The primitives without SSH framing.
//!
//! A transport never uses these (it needs [`crate::packet`]); they exist so that a cipher or a
//! MAC can be timed on its own next to `openssl speed`, and cross-checked byte for byte against
//! `openssl enc` and published test vectors.

use crate::backend::Backend;
use crate::catalog::{CipherSpec, MacSpec};
use crate::error::{Error, Result};
use crate::imp::{self, Crypt, Mac};

/// A non-AEAD cipher in one direction, keeping its chaining state between calls as SSH does.
pub struct RawCipher(Box<dyn Crypt>);

impl RawCipher {
    pub fn new(
        spec: &'static CipherSpec,
        backend: Backend,
        key: &[u8],
        iv: &[u8],
        encrypt: bool,
    ) -> Result<Self> {
        if spec.is_aead() {
            return Err(Error::UnknownCipher(format!(
                "{} is AEAD: use the packet layer",
                spec.name
            )));
        }
        let k = imp::CipherKey {
            spec,
            key,
            iv,
            encrypt,
        };
        Ok(RawCipher(imp::crypt(k, backend)?))
    }

    /// `buf.len()` must be a multiple of the cipher's block size.
    pub fn apply(&mut self, buf: &mut [u8]) -> Result<()> {
        self.0.apply(buf)
    }
}

/// A MAC keyed once; `seq` is what SSH feeds it per packet.
pub struct RawMac {
    inner: Box<dyn Mac>,
    tag_len: usize,
}

impl RawMac {
    pub fn new(spec: &'static MacSpec, backend: Backend, key: &[u8]) -> Result<Self> {
        Ok(RawMac {
            inner: imp::mac(spec, backend, key)?,
            tag_len: spec.tag_len,
        })
    }

    pub fn tag_len(&self) -> usize {
        self.tag_len
    }

    /// Writes the tag for `seq || data` (HMAC) or `data` under nonce `seq` (UMAC) into
    /// `out[..tag_len]`.
    pub fn sign(&mut self, seq: u32, data: &[u8], out: &mut [u8]) -> Result<()> {
        self.inner.sign(seq, data, &mut out[..self.tag_len])
    }
}

/// Poly1305 alone (RFC 8439 §2.5), keyed per call as chacha20-poly1305@openssh.com keys it per
/// packet: the openssl backend's (libcrypto's through `EVP_MAC` on OpenSSL 3), or the
/// `poly1305` crate.
pub struct RawPoly1305(Poly);

enum Poly {
    #[cfg(feature = "openssl")]
    Openssl(imp::poly::OsslPoly1305),
    Rust,
}

impl RawPoly1305 {
    pub fn new(backend: Backend) -> Result<Self> {
        Ok(RawPoly1305(match backend {
            #[cfg(feature = "openssl")]
            Backend::Openssl => Poly::Openssl(imp::poly::OsslPoly1305::new()?),
            #[cfg(not(feature = "openssl"))]
            Backend::Openssl => return Err(imp::unavailable(backend)),
            Backend::Rust => Poly::Rust,
        }))
    }

    /// The tag of `data` under the one-time `key`.
    pub fn tag(&mut self, key: &[u8; 32], data: &[u8]) -> Result<[u8; 16]> {
        match &mut self.0 {
            #[cfg(feature = "openssl")]
            Poly::Openssl(p) => p.tag(key, data),
            Poly::Rust => Ok(imp::poly::crate_tag(key, data)),
        }
    }
}
