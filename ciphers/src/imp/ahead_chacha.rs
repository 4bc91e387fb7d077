//! chacha20-poly1305@openssh.com with its ChaCha20 keystream computed ahead, one packet's
//! worth per sequence number, by a helper thread ([`super::ahead`]); the sealing thread XORs
//! and runs Poly1305 (the backend's, [`RawPoly1305`]). The openssl backend's helper runs
//! libcrypto's ChaCha20; the rust backend's runs the `chacha20` crate, because ring's
//! construction does not hand out its keystream.
//!
//! A chunk for sequence number `seq` holds K_1's block 0 (the length cipher) followed by K_2's
//! stream from block 0 (the Poly1305 key, then the body from block 1), as PROTOCOL.chacha20poly1305
//! lays them out. Packets longer than a chunk, and any sequence number other than the one the
//! helper expected, go through the ordinary single-thread construction, which also does all
//! opening: only sealing is sped up.

use super::ahead::{xor, Ahead};
use super::Aead;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::raw::RawPoly1305;

/// Fills a chunk with the keystream for the sequence number it is tagged with.
type Producer = Box<dyn FnMut(u64, &mut [u8]) + Send>;

/// Keystream bytes per chunk: the length block, K_2's block 0 and a 32 KiB channel-data
/// packet with its header and the largest padding.
const BODY: usize = 32 * 1024 + 512;
const CHUNK: usize = 64 + 64 + BODY;

pub(crate) struct AheadChaChaPoly {
    key: [u8; 64],
    backend: Backend,
    ahead: Option<Ahead>,
    next_seq: u32,
    /// CPU seconds of helpers already stopped (a restart after a sequence-number jump).
    retired_cpu_s: f64,
    poly: RawPoly1305,
    inline: Box<dyn Aead>,
}

impl AheadChaChaPoly {
    pub(crate) fn new(key: &[u8], backend: Backend, inline: Box<dyn Aead>) -> Result<Self> {
        Ok(AheadChaChaPoly {
            key: key.try_into().map_err(|_| Error::BadLength(key.len()))?,
            backend,
            ahead: None,
            next_seq: 0,
            retired_cpu_s: 0.0,
            poly: RawPoly1305::new(backend)?,
            inline,
        })
    }

    /// Stops the helper (joining it) and keeps its CPU time.
    fn retire(&mut self) {
        if let Some(a) = self.ahead.take() {
            self.retired_cpu_s += a.helper_cpu_seconds();
        }
    }

    fn start(&mut self, first: u32) -> Result<()> {
        let produce = match self.backend {
            #[cfg(feature = "openssl")]
            Backend::Openssl => evp_producer(&self.key)?,
            #[cfg(not(feature = "openssl"))]
            Backend::Openssl => return Err(super::unavailable(Backend::Openssl)),
            Backend::Rust => crate_producer(&self.key),
        };
        self.retire();
        self.ahead = Some(Ahead::spawn(CHUNK, u64::from(first), produce));
        self.next_seq = first;
        Ok(())
    }
}

/// libcrypto's ChaCha20: two contexts keyed once, repositioned per sequence number.
#[cfg(feature = "openssl")]
fn evp_producer(key: &[u8; 64]) -> Result<Producer> {
    use openssl::cipher::Cipher;
    use openssl::cipher_ctx::CipherCtx;
    let err = |e| Error::openssl("chacha20 init", e);
    let ctx = |k: &[u8]| -> Result<CipherCtx> {
        let mut c = CipherCtx::new().map_err(err)?;
        c.encrypt_init(Some(Cipher::chacha20()), Some(k), Some(&[0u8; 16]))
            .map_err(err)?;
        Ok(c)
    };
    let (mut main, mut header) = (ctx(&key[..32])?, ctx(&key[32..])?);
    let zeros = vec![0u8; CHUNK];
    Ok(Box::new(move |tag, buf| {
        // EVP's ChaCha20 IV: 64-bit block counter, then the sequence number as nonce.
        // Encrypting zeros from a buffer of its own spares a pass that zeroes `buf`.
        let mut iv = [0u8; 16];
        iv[8..].copy_from_slice(&(tag as u32 as u64).to_be_bytes());
        let (len_ks, main_ks) = buf.split_at_mut(64);
        let ok = header.encrypt_init(None, None, Some(&iv)).is_ok()
            && header.cipher_update(&zeros[..64], Some(len_ks)).is_ok()
            && main.encrypt_init(None, None, Some(&iv)).is_ok()
            && main
                .cipher_update(&zeros[..CHUNK - 64], Some(main_ks))
                .is_ok();
        if !ok {
            // Cannot happen once keyed; a wrong stream fails the peer's tag check.
            buf.fill(0xff);
        }
    }))
}

/// The `chacha20` crate's original (64-bit nonce, 64-bit counter) ChaCha20, which is the
/// variant OpenSSH uses: the sequence number is the nonce, the counter starts at block 0.
fn crate_producer(key: &[u8; 64]) -> Producer {
    use chacha20::cipher::{KeyIvInit, StreamCipher};
    use chacha20::ChaCha20Legacy;
    let (main, header) = (
        chacha20::Key::clone_from_slice(&key[..32]),
        chacha20::Key::clone_from_slice(&key[32..]),
    );
    Box::new(move |tag, buf| {
        let nonce = chacha20::LegacyNonce::from((tag as u32 as u64).to_be_bytes());
        buf.fill(0);
        let (len_ks, main_ks) = buf.split_at_mut(64);
        ChaCha20Legacy::new(&header, &nonce).apply_keystream(len_ks);
        ChaCha20Legacy::new(&main, &nonce).apply_keystream(main_ks);
    })
}

impl Aead for AheadChaChaPoly {
    fn seal(&mut self, seq: u32, packet: &mut [u8], tag: &mut [u8]) -> Result<()> {
        if self.ahead.is_none() || seq != self.next_seq {
            self.start(seq)?;
        }
        let chunk = self.ahead.as_mut().and_then(Ahead::next);
        self.next_seq = seq.wrapping_add(1);
        let Some(c) = chunk.filter(|c| c.tag as u32 == seq) else {
            self.retire();
            return self.inline.seal(seq, packet, tag);
        };
        if packet.len() - 4 > BODY {
            if let Some(a) = self.ahead.as_mut() {
                a.recycle(c);
            }
            return self.inline.seal(seq, packet, tag);
        }
        let (len4, body) = packet.split_at_mut(4);
        xor(len4, &c.bytes[..4]);
        xor(body, &c.bytes[128..]);
        let mut poly_key = [0u8; 32];
        poly_key.copy_from_slice(&c.bytes[64..96]);
        if let Some(a) = self.ahead.as_mut() {
            a.recycle(c);
        }
        tag.copy_from_slice(&self.poly.tag(&poly_key, packet)?);
        Ok(())
    }

    fn packet_length(&mut self, seq: u32, first4: &[u8; 4]) -> Result<u32> {
        self.inline.packet_length(seq, first4)
    }

    fn open(&mut self, seq: u32, packet: &mut [u8], tag: &[u8]) -> Result<()> {
        self.inline.open(seq, packet, tag)
    }

    fn helper_cpu_seconds(&self) -> f64 {
        self.retired_cpu_s + self.ahead.as_ref().map_or(0.0, Ahead::helper_cpu_seconds)
    }
}
