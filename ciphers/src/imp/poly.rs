//! Poly1305 keyed afresh per packet, as chacha20-poly1305@openssh.com needs it.
//!
//! The openssl backend uses libcrypto's through `EVP_MAC` ([`super::evp_poly1305`], the reason
//! is measured there), but `EVP_MAC` exists only from OpenSSL 3 on. Against OpenSSL 1.1 (still
//! the libcrypto of many board images) that backend takes the `poly1305` crate instead, the
//! same code the rust backend's raw Poly1305 uses, so the crate builds against either.

/// The tag of `data` under the one-time `key`, from the `poly1305` crate.
pub(crate) fn crate_tag(key: &[u8; 32], data: &[u8]) -> [u8; 16] {
    use poly1305::universal_hash::KeyInit;
    poly1305::Poly1305::new(poly1305::Key::from_slice(key))
        .compute_unpadded(data)
        .into()
}

/// The openssl backend's Poly1305: libcrypto's `EVP_MAC` (OpenSSL 3).
#[cfg(all(feature = "openssl", ossl300))]
pub(crate) use super::evp_poly1305::EvpPoly1305 as OsslPoly1305;

/// The openssl backend's Poly1305 without `EVP_MAC` (OpenSSL 1.1): the `poly1305` crate.
#[cfg(all(feature = "openssl", not(ossl300)))]
pub(crate) struct OsslPoly1305;

#[cfg(all(feature = "openssl", not(ossl300)))]
impl OsslPoly1305 {
    pub(crate) fn new() -> crate::error::Result<Self> {
        Ok(OsslPoly1305)
    }

    pub(crate) fn tag(&mut self, key: &[u8; 32], data: &[u8]) -> crate::error::Result<[u8; 16]> {
        Ok(crate_tag(key, data))
    }
}
