//! The primitives behind the packet layer, one trait per shape of algorithm.
//!
//! The packet layer (`crate::packet`) only knows these traits; each backend module provides
//! the implementations, and `build_*` picks one from the catalog entry. Keeping SSH framing
//! out of here lets both backends share one framing code path, so they cannot disagree on it.
//!
//! The `ossl` module (and what only it uses) exists only with the `openssl` feature; without it
//! a request for that backend gets [`Error::BackendUnavailable`] here, in one place.

mod ahead;
mod ahead_chacha;
mod ahead_ctr;
#[cfg(all(feature = "openssl", ossl300))]
mod evp_poly1305;
#[cfg(feature = "openssl")]
mod ossl;
pub(crate) mod poly;
mod rust;
pub(crate) mod umac;

use crate::backend::Backend;
use crate::catalog::{CipherKind, CipherSpec, MacSpec, Primitive};
use crate::error::{Error, Result};

/// A non-AEAD cipher in one direction. It keeps its chaining state (CBC's last block, CTR's
/// counter, RC4's state) between calls because SSH continues it from packet to packet.
pub(crate) trait Crypt: Send {
    /// Encrypts or decrypts `buf` in place; `buf.len()` is a multiple of the block size.
    fn apply(&mut self, buf: &mut [u8]) -> Result<()>;
    /// Like `apply`, with `buf[at..at + data.len()]` still to be taken from `data`: a stream
    /// cipher encrypts `data` from the caller's buffer straight into place, which spares the
    /// copy of a packet's payload. The default copies, then applies in place.
    fn apply_from(&mut self, buf: &mut [u8], at: usize, data: &[u8]) -> Result<()> {
        buf[at..at + data.len()].copy_from_slice(data);
        self.apply(buf)
    }
    /// CPU seconds spent on other threads for this cipher (a keystream helper); 0 without.
    fn helper_cpu_seconds(&self) -> f64 {
        0.0
    }
}

/// A MAC keyed once per direction; the sequence number is its only per-packet input
/// besides the data (HMAC prefixes it, UMAC uses it as nonce).
pub(crate) trait Mac: Send {
    /// Writes `out.len()` tag bytes (the catalog's, possibly truncated) for packet `seq`.
    fn sign(&mut self, seq: u32, data: &[u8], out: &mut [u8]) -> Result<()>;
}

/// An SSH AEAD construction in one direction: it owns the whole packet framing decision
/// (which bytes are AAD, what happens to the length).
pub(crate) trait Aead: Send {
    /// `packet` is `length(4) || body`; encrypts in place and writes the tag.
    fn seal(&mut self, seq: u32, packet: &mut [u8], tag: &mut [u8]) -> Result<()>;
    /// The `packet_length` field from the first four wire bytes, without changing them.
    fn packet_length(&mut self, seq: u32, first4: &[u8; 4]) -> Result<u32>;
    /// Verifies the tag, then decrypts `packet[4..]` in place and leaves the plaintext length
    /// in `packet[..4]`.
    fn open(&mut self, seq: u32, packet: &mut [u8], tag: &[u8]) -> Result<()>;
    /// Like `seal`, with `packet[at..at + data.len()]` still to be taken from `data` (see
    /// [`Crypt::apply_from`]). The default copies, then seals in place.
    fn seal_from(
        &mut self,
        seq: u32,
        packet: &mut [u8],
        at: usize,
        data: &[u8],
        tag: &mut [u8],
    ) -> Result<()> {
        packet[at..at + data.len()].copy_from_slice(data);
        self.seal(seq, packet, tag)
    }
    /// CPU seconds spent on other threads for this key (a keystream helper); 0 without.
    fn helper_cpu_seconds(&self) -> f64 {
        0.0
    }
}

/// What one direction's cipher is built from: its catalog entry, its key and IV (of the
/// catalog's sizes), and whether it encrypts or decrypts.
#[derive(Clone, Copy)]
pub(crate) struct CipherKey<'k> {
    pub spec: &'static CipherSpec,
    pub key: &'k [u8],
    pub iv: &'k [u8],
    pub encrypt: bool,
}

pub(crate) fn crypt(k: CipherKey, backend: Backend) -> Result<Box<dyn Crypt>> {
    match backend {
        #[cfg(feature = "openssl")]
        Backend::Openssl => ossl::crypt(k),
        #[cfg(not(feature = "openssl"))]
        Backend::Openssl => Err(unavailable(Backend::Openssl)),
        Backend::Rust => rust::crypt(k),
    }
}

pub(crate) fn aead(k: CipherKey, backend: Backend) -> Result<Box<dyn Aead>> {
    match backend {
        #[cfg(feature = "openssl")]
        Backend::Openssl => ossl::aead(k),
        #[cfg(not(feature = "openssl"))]
        Backend::Openssl => Err(unavailable(Backend::Openssl)),
        Backend::Rust => rust::aead(k),
    }
}

/// The error for a backend this build does not have.
#[cfg(not(feature = "openssl"))]
pub(crate) fn unavailable(backend: Backend) -> Error {
    Error::BackendUnavailable(backend.as_str())
}

/// The `none` cipher; shared by both backends.
pub(crate) struct Identity;

impl Crypt for Identity {
    fn apply(&mut self, _buf: &mut [u8]) -> Result<()> {
        Ok(())
    }
}

fn no_ahead(spec: &CipherSpec, backend: Backend) -> Error {
    Error::Backend {
        backend: backend.as_str(),
        context: "keystream ahead",
        detail: format!(
            "{}: only counter-mode ciphers and chacha20-poly1305 have a keystream to compute \
             ahead",
            spec.name
        ),
    }
}

/// [`crypt`] with the keystream computed by a helper thread ([`ahead_ctr`]); CTR only.
pub(crate) fn crypt_ahead(k: CipherKey, backend: Backend) -> Result<Box<dyn Crypt>> {
    if k.spec.kind != CipherKind::Ctr {
        return Err(no_ahead(k.spec, backend));
    }
    let inner = crypt(k, backend)?;
    Ok(Box::new(ahead_ctr::AheadCtr::new(inner)))
}

/// [`aead`] with the keystream computed by a helper thread ([`ahead_chacha`]);
/// chacha20-poly1305 only.
pub(crate) fn aead_ahead(k: CipherKey, backend: Backend) -> Result<Box<dyn Aead>> {
    if k.spec.primitive != Primitive::ChaChaPoly {
        return Err(no_ahead(k.spec, backend));
    }
    let inline = aead(k, backend)?;
    Ok(Box::new(ahead_chacha::AheadChaChaPoly::new(
        k.key, backend, inline,
    )?))
}

pub(crate) fn mac(spec: &'static MacSpec, backend: Backend, key: &[u8]) -> Result<Box<dyn Mac>> {
    match backend {
        #[cfg(feature = "openssl")]
        Backend::Openssl => ossl::mac(spec, key),
        #[cfg(not(feature = "openssl"))]
        Backend::Openssl => Err(unavailable(Backend::Openssl)),
        Backend::Rust => rust::mac(spec, key),
    }
}

/// The GCM nonce of RFC 5647 §7.1: a 4-byte fixed field and an 8-byte invocation counter that
/// goes up by one per packet (wrapping), both taken from the derived IV.
pub(crate) struct GcmNonce([u8; 12]);

impl GcmNonce {
    pub(crate) fn new(iv: &[u8]) -> Self {
        let mut n = [0u8; 12];
        n.copy_from_slice(&iv[..12]);
        GcmNonce(n)
    }

    pub(crate) fn current(&self) -> [u8; 12] {
        self.0
    }

    pub(crate) fn advance(&mut self) {
        let mut c = [0u8; 8];
        c.copy_from_slice(&self.0[4..]);
        let next = u64::from_be_bytes(c).wrapping_add(1);
        self.0[4..].copy_from_slice(&next.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::umac::{Umac, UmacAes};

    /// RFC 4418 Appendix test vectors (key "abcdefghijklmnop", nonce "bcdefghi"), UMAC-64 and
    /// UMAC-128, the two lengths SSH uses. The same values come out of Nettle's independent
    /// implementation.
    const VECTORS: &[(&[u8], usize, &str, &str)] = &[
        (
            b"",
            1,
            "6e155fad26900be1",
            "32fedb100c79ad58f07ff7643cc60465",
        ),
        (
            b"a",
            3,
            "44b5cb542f220104",
            "185e4fe905cba7bd85e4c2dc3d117d8d",
        ),
        (
            b"a",
            1 << 10,
            "26bf2f5d60118bd9",
            "7a54abe04af82d60fb298c3cbd195bcb",
        ),
        (
            b"a",
            1 << 15,
            "27f8ef643b0d118d",
            "7b136bd911e4b734286ef2be501f2c3c",
        ),
        (
            b"abc",
            1,
            "d4d7b9f6bd4fbfcf",
            "883c3d4b97a61976ffcf232308cba5a5",
        ),
        (
            b"abc",
            500,
            "d4cf26ddefd5c01a",
            "8824a260c53c66a36c9260a62cb83aa1",
        ),
    ];

    fn check<A: UmacAes>() {
        for (unit, times, want64, want128) in VECTORS {
            let msg = unit.repeat(*times);
            for (tag_len, want) in [(8, want64), (16, want128)] {
                let mut u = Umac::<A>::new(b"abcdefghijklmnop", tag_len).unwrap();
                let mut out = vec![0u8; tag_len];
                u.tag(b"bcdefghi", &msg, &mut out).unwrap();
                let got: String = out.iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(&got, want, "{tag_len}-byte tag of {} bytes", msg.len());
            }
        }
    }

    #[test]
    fn umac_rfc4418_vectors_rust_aes() {
        check::<super::rust::RcAes>();
    }

    #[cfg(feature = "openssl")]
    #[test]
    fn umac_rfc4418_vectors_openssl_aes() {
        check::<super::ossl::EvpAes>();
    }
}
