//! libcrypto's Poly1305 through `EVP_MAC`, one context rekeyed for every packet.
//!
//! Why FFI, and the one place this crate allows `unsafe`: chacha20-poly1305@openssh.com keys
//! Poly1305 afresh for every packet, and the `openssl` crate (0.10) reaches libcrypto's
//! Poly1305 only through a new `EVP_PKEY` and signer per key. Measured on the project's 2-core
//! EPYC (Zen 4, AVX-512) with `cargo bench -p ciphers --bench chacha -- parts`, 32 KiB per
//! call, CPU time, ranges over three runs (MiB/s):
//!
//! | Poly1305 | MiB/s |
//! |---|---|
//! | libcrypto `EVP_MAC`, one context rekeyed per packet | 11750–11830 |
//! | libcrypto, fresh `EVP_PKEY` + signer per packet | 3590–3950 |
//! | `poly1305` crate (AVX2, detected at run time) | 2920–3000 |
//!
//! libcrypto's ChaCha20 ran at 4940–5020 and its fused ChaCha20-Poly1305 at 3410–3430 in the
//! same runs: with either of the other two the MAC alone would take longer than libcrypto's
//! whole construction. With this one the sealing key reaches 0.96–0.97× of the fused cipher
//! (`-- whole`: 3290–3330 vs 3417–3444).
//!
//! The unsafe surface is four libcrypto calls on a context this type owns alone; every
//! pointer passed is a live Rust slice with its exact length.
#![allow(unsafe_code)]

use crate::error::{Error, Result};
use openssl::error::ErrorStack;
use openssl_sys as ffi;
use std::ptr::{self, NonNull};

pub(crate) const KEY_LEN: usize = 32;
pub(crate) const TAG_LEN: usize = 16;

/// An `EVP_MAC_CTX` for Poly1305, owned exclusively.
pub(crate) struct EvpPoly1305(NonNull<ffi::EVP_MAC_CTX>);

// SAFETY: the context is only ever used through `&mut self`, and libcrypto contexts carry no
// thread affinity: moving one to another thread between calls is allowed.
unsafe impl Send for EvpPoly1305 {}

fn check(ok: bool, context: &'static str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::openssl(context, ErrorStack::get()))
    }
}

impl EvpPoly1305 {
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: fetch takes a NUL-terminated name and NULLs for the default library context
        // and properties; the context keeps its own reference to the algorithm, so ours is
        // released at once; a NULL result is checked before use.
        unsafe {
            let mac = ffi::EVP_MAC_fetch(ptr::null_mut(), c"POLY1305".as_ptr(), ptr::null());
            check(!mac.is_null(), "fetching EVP_MAC POLY1305")?;
            let ctx = ffi::EVP_MAC_CTX_new(mac);
            ffi::EVP_MAC_free(mac);
            NonNull::new(ctx)
                .map(EvpPoly1305)
                .ok_or_else(|| Error::openssl("EVP_MAC_CTX_new", ErrorStack::get()))
        }
    }

    /// The Poly1305 tag of `data` under the one-time `key`.
    pub(crate) fn tag(&mut self, key: &[u8; KEY_LEN], data: &[u8]) -> Result<[u8; TAG_LEN]> {
        let mut out = [0u8; TAG_LEN];
        let mut written = 0usize;
        let ctx = self.0.as_ptr();
        // SAFETY: `ctx` is live and ours; each pointer/length pair comes from one borrowed
        // slice or array, and `out` has room for the `TAG_LEN` bytes `final` may write.
        unsafe {
            check(
                ffi::EVP_MAC_init(ctx, key.as_ptr(), KEY_LEN, ptr::null()) == 1,
                "poly1305 init",
            )?;
            check(
                ffi::EVP_MAC_update(ctx, data.as_ptr(), data.len()) == 1,
                "poly1305 update",
            )?;
            check(
                ffi::EVP_MAC_final(ctx, out.as_mut_ptr(), &mut written, TAG_LEN) == 1,
                "poly1305 final",
            )?;
        }
        if written != TAG_LEN {
            return Err(Error::Backend {
                backend: "openssl",
                context: "poly1305 final",
                detail: format!("{written}-byte tag"),
            });
        }
        Ok(out)
    }
}

impl Drop for EvpPoly1305 {
    fn drop(&mut self) {
        // SAFETY: the context was allocated by `EVP_MAC_CTX_new` and is freed exactly once.
        unsafe { ffi::EVP_MAC_CTX_free(self.0.as_ptr()) }
    }
}
