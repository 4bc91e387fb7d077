//! The `openssl` backend: libcrypto's EVP interface, the code OpenSSH itself runs.

use super::poly::OsslPoly1305;
use super::{Aead, CipherKey, Crypt, GcmNonce, Identity, Mac};
use crate::catalog::{CipherKind, CipherSpec, MacSpec, Primitive};
use crate::error::{Error, Result};
use crate::imp::umac::{Umac, UmacAes};
use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;
use openssl::hash::{Hasher, MessageDigest};
#[cfg(ossl300)]
use openssl::provider::Provider;
use openssl::symm::{Crypter, Mode};

/// OpenSSL 3 moved Blowfish, CAST5 and RC4 into the `legacy` provider. Loading it with the
/// fallbacks retained keeps the default provider (AES, 3DES, ChaCha) available as before.
/// Held for the life of the process: unloading would invalidate every live context.
#[cfg(ossl300)]
fn legacy_provider() -> Result<()> {
    use std::sync::OnceLock;
    static LEGACY: OnceLock<std::result::Result<Provider, String>> = OnceLock::new();
    match LEGACY.get_or_init(|| Provider::try_load(None, "legacy", true).map_err(|e| e.to_string()))
    {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Backend {
            backend: "openssl",
            context: "loading the legacy provider (Blowfish, CAST5, RC4)",
            detail: e.clone(),
        }),
    }
}

/// OpenSSL 1.1 has no providers: its default library still has Blowfish, CAST5 and RC4.
#[cfg(not(ossl300))]
fn legacy_provider() -> Result<()> {
    Ok(())
}

fn evp_cipher(spec: &CipherSpec) -> Option<&'static CipherRef> {
    Some(match (spec.primitive, spec.kind, spec.key_len) {
        (Primitive::Aes, CipherKind::Ctr, 16) => Cipher::aes_128_ctr(),
        (Primitive::Aes, CipherKind::Ctr, 24) => Cipher::aes_192_ctr(),
        (Primitive::Aes, CipherKind::Ctr, 32) => Cipher::aes_256_ctr(),
        (Primitive::Aes, CipherKind::Cbc, 16) => Cipher::aes_128_cbc(),
        (Primitive::Aes, CipherKind::Cbc, 24) => Cipher::aes_192_cbc(),
        (Primitive::Aes, CipherKind::Cbc, 32) => Cipher::aes_256_cbc(),
        (Primitive::AesGcm, _, 16) => Cipher::aes_128_gcm(),
        (Primitive::AesGcm, _, 32) => Cipher::aes_256_gcm(),
        (Primitive::TripleDes, _, _) => Cipher::des_ede3_cbc(),
        (Primitive::Blowfish, _, _) => Cipher::bf_cbc(),
        (Primitive::Cast128, _, _) => Cipher::cast5_cbc(),
        (Primitive::Rc4 { .. }, _, _) => Cipher::rc4(),
        _ => return None,
    })
}

fn unsupported(spec: &CipherSpec) -> Error {
    Error::UnknownCipher(format!("{} (no openssl mapping)", spec.name))
}

/// An EVP context used in place. `cipher_update_inplace` wants one spare block after the
/// input, so the last block goes through a small scratch buffer instead of copying the packet.
struct EvpCrypt {
    ctx: CipherCtx,
    block: usize,
}

impl Crypt for EvpCrypt {
    fn apply(&mut self, buf: &mut [u8]) -> Result<()> {
        let err = |e| Error::openssl("cipher update", e);
        if self.block <= 1 {
            let n = buf.len();
            self.ctx.cipher_update_inplace(buf, n).map_err(err)?;
            return Ok(());
        }
        let n = buf.len();
        if n == 0 {
            return Ok(());
        }
        let head = n - self.block;
        let done = self.ctx.cipher_update_inplace(buf, head).map_err(err)?;
        let mut tmp = [0u8; 32];
        tmp[..self.block].copy_from_slice(&buf[head..]);
        let last = self
            .ctx
            .cipher_update_inplace(&mut tmp[..2 * self.block], self.block)
            .map_err(err)?;
        if done != head || last != self.block {
            return Err(Error::Backend {
                backend: "openssl",
                context: "cipher update",
                detail: format!("short output ({done}+{last} of {n} bytes)"),
            });
        }
        buf[head..].copy_from_slice(&tmp[..self.block]);
        Ok(())
    }

    /// Stream modes (CTR, RC4: EVP block size 1) encrypt `data` straight into place; block
    /// modes copy first.
    fn apply_from(&mut self, buf: &mut [u8], at: usize, data: &[u8]) -> Result<()> {
        if self.block > 1 {
            buf[at..at + data.len()].copy_from_slice(data);
            return self.apply(buf);
        }
        let err = |e| Error::openssl("cipher update", e);
        let (head, rest) = buf.split_at_mut(at);
        let (middle, tail) = rest.split_at_mut(data.len());
        let n = head.len();
        self.ctx.cipher_update_inplace(head, n).map_err(err)?;
        self.ctx.cipher_update(data, Some(middle)).map_err(err)?;
        let n = tail.len();
        self.ctx.cipher_update_inplace(tail, n).map_err(err)?;
        Ok(())
    }
}

/// `encrypt_init` or `decrypt_init`, as the key's direction asks.
fn init(
    ctx: &mut CipherCtx,
    encrypt: bool,
    cipher: Option<&CipherRef>,
    key: Option<&[u8]>,
    iv: Option<&[u8]>,
) -> std::result::Result<(), openssl::error::ErrorStack> {
    if encrypt {
        ctx.encrypt_init(cipher, key, iv)
    } else {
        ctx.decrypt_init(cipher, key, iv)
    }
}

pub(super) fn crypt(k: CipherKey) -> Result<Box<dyn Crypt>> {
    if k.spec.primitive == Primitive::Null {
        return Ok(Box::new(Identity));
    }
    if k.spec.primitive.needs_legacy_provider() {
        legacy_provider()?;
    }
    let cipher = evp_cipher(k.spec).ok_or_else(|| unsupported(k.spec))?;
    let err = |e| Error::openssl("cipher init", e);
    let mut ctx = CipherCtx::new().map_err(err)?;
    let iv = (!k.iv.is_empty()).then_some(k.iv);
    init(&mut ctx, k.encrypt, Some(cipher), None, None).map_err(err)?;
    // Blowfish and RC4 take variable keys; SSH's sizes are in the catalog.
    ctx.set_key_length(k.key.len()).map_err(err)?;
    ctx.set_padding(false);
    init(&mut ctx, k.encrypt, None, Some(k.key), iv).map_err(err)?;
    let block = ctx.block_size();
    let mut c = EvpCrypt { ctx, block };
    if let Primitive::Rc4 { discard } = k.spec.primitive {
        c.apply(&mut vec![0u8; discard])?;
    }
    Ok(Box::new(c))
}

pub(super) fn aead(k: CipherKey) -> Result<Box<dyn Aead>> {
    match k.spec.primitive {
        Primitive::AesGcm => {
            let cipher = evp_cipher(k.spec).ok_or_else(|| unsupported(k.spec))?;
            let err = |e| Error::openssl("gcm init", e);
            let mut ctx = CipherCtx::new().map_err(err)?;
            init(&mut ctx, k.encrypt, Some(cipher), Some(k.key), None).map_err(err)?;
            Ok(Box::new(EvpGcm {
                ctx,
                nonce: GcmNonce::new(k.iv),
                encrypt: k.encrypt,
            }))
        }
        Primitive::ChaChaPoly => Ok(Box::new(EvpChaChaPoly::new(k.key)?)),
        _ => Err(unsupported(k.spec)),
    }
}

/// AES-GCM per RFC 5647: the clear length is the AAD, the nonce counter advances per packet.
struct EvpGcm {
    ctx: CipherCtx,
    nonce: GcmNonce,
    encrypt: bool,
}

impl EvpGcm {
    fn start(&mut self, len4: &[u8]) -> std::result::Result<(), openssl::error::ErrorStack> {
        let n = self.nonce.current();
        init(&mut self.ctx, self.encrypt, None, None, Some(&n))?;
        self.ctx.cipher_update(len4, None)?;
        Ok(())
    }
}

impl Aead for EvpGcm {
    fn seal(&mut self, _seq: u32, packet: &mut [u8], tag: &mut [u8]) -> Result<()> {
        let err = |e| Error::openssl("gcm seal", e);
        let (len4, body) = packet.split_at_mut(4);
        self.start(len4).map_err(err)?;
        let n = body.len();
        self.ctx.cipher_update_inplace(body, n).map_err(err)?;
        self.ctx.cipher_final(&mut []).map_err(err)?;
        self.ctx.tag(tag).map_err(err)?;
        self.nonce.advance();
        Ok(())
    }

    fn packet_length(&mut self, _seq: u32, first4: &[u8; 4]) -> Result<u32> {
        Ok(u32::from_be_bytes(*first4))
    }

    fn open(&mut self, _seq: u32, packet: &mut [u8], tag: &[u8]) -> Result<()> {
        let err = |e| Error::openssl("gcm open", e);
        let (len4, body) = packet.split_at_mut(4);
        self.start(len4).map_err(err)?;
        self.ctx.set_tag(tag).map_err(err)?;
        let n = body.len();
        self.ctx.cipher_update_inplace(body, n).map_err(err)?;
        let ok = self.ctx.cipher_final(&mut []).is_ok();
        // The counter advances whatever the outcome: a failed packet ends the connection anyway.
        self.nonce.advance();
        if ok {
            Ok(())
        } else {
            Err(Error::Integrity)
        }
    }
}

/// chacha20-poly1305@openssh.com from libcrypto's ChaCha20 (OpenSSH's own construction,
/// PROTOCOL.chacha20poly1305): K_2 (first half) gives the Poly1305 key from block 0 and
/// encrypts the body from block 1; K_1 (second half) encrypts the length. Both use the sequence
/// number as the 64-bit nonce. EVP's 16-byte ChaCha20 IV is counter || nonce, little endian
/// words, so OpenSSH's 64-bit counter and big-endian sequence number fit it directly.
///
/// Poly1305 is libcrypto's too, through one `EVP_MAC` context rekeyed per packet
/// ([`OsslPoly1305`]; the `poly1305` crate on OpenSSL 1.1, which lacks `EVP_MAC`): the
/// measurements that chose it are in `evp_poly1305`'s doc. With the
/// `poly1305` crate here instead this cipher sealed at 0.45× of `openssl speed -evp
/// chacha20-poly1305` (`sshtune speed`, same run); with libcrypto's it reaches 0.90–0.93×.
struct EvpChaChaPoly {
    main: CipherCtx,
    header: CipherCtx,
    poly: OsslPoly1305,
}

impl EvpChaChaPoly {
    fn new(key: &[u8]) -> Result<Self> {
        let err = |e| Error::openssl("chacha20 init", e);
        let mk = |k: &[u8]| -> std::result::Result<CipherCtx, openssl::error::ErrorStack> {
            let mut c = CipherCtx::new()?;
            c.encrypt_init(Some(Cipher::chacha20()), Some(k), Some(&[0u8; 16]))?;
            Ok(c)
        };
        Ok(EvpChaChaPoly {
            main: mk(&key[..32]).map_err(err)?,
            header: mk(&key[32..64]).map_err(err)?,
            poly: OsslPoly1305::new()?,
        })
    }

    fn iv(seq: u32) -> [u8; 16] {
        let mut iv = [0u8; 16];
        iv[8..].copy_from_slice(&u64::from(seq).to_be_bytes());
        iv
    }

    fn xor_len(&mut self, seq: u32, len4: &mut [u8]) -> Result<()> {
        let err = |e| Error::openssl("chacha20 length", e);
        self.header
            .encrypt_init(None, None, Some(&Self::iv(seq)))
            .map_err(err)?;
        self.header.cipher_update_inplace(len4, 4).map_err(err)?;
        Ok(())
    }

    /// Positions K_2's stream at block 0 of this packet and returns the Poly1305 key from it;
    /// the stream then stands at block 1, where the body starts.
    fn start(&mut self, seq: u32) -> Result<[u8; 32]> {
        let err = |e| Error::openssl("chacha20 poly key", e);
        self.main
            .encrypt_init(None, None, Some(&Self::iv(seq)))
            .map_err(err)?;
        let mut block0 = [0u8; 64];
        self.main
            .cipher_update_inplace(&mut block0, 64)
            .map_err(err)?;
        let mut key = [0u8; 32];
        key.copy_from_slice(&block0[..32]);
        Ok(key)
    }

    fn body(&mut self, body: &mut [u8]) -> Result<()> {
        let n = body.len();
        self.main
            .cipher_update_inplace(body, n)
            .map_err(|e| Error::openssl("chacha20 body", e))?;
        Ok(())
    }
}

impl Aead for EvpChaChaPoly {
    fn seal(&mut self, seq: u32, packet: &mut [u8], tag: &mut [u8]) -> Result<()> {
        let poly_key = self.start(seq)?;
        let (len4, body) = packet.split_at_mut(4);
        self.xor_len(seq, len4)?;
        self.body(body)?;
        tag.copy_from_slice(&self.poly.tag(&poly_key, packet)?);
        Ok(())
    }

    /// ChaCha20 is a stream: the body before `at` and after the data are encrypted in
    /// place, the data straight from the caller's buffer, in stream order.
    fn seal_from(
        &mut self,
        seq: u32,
        packet: &mut [u8],
        at: usize,
        data: &[u8],
        tag: &mut [u8],
    ) -> Result<()> {
        let poly_key = self.start(seq)?;
        let (len4, body) = packet.split_at_mut(4);
        self.xor_len(seq, len4)?;
        let (head, rest) = body.split_at_mut(at - 4);
        let (middle, tail) = rest.split_at_mut(data.len());
        self.body(head)?;
        self.main
            .cipher_update(data, Some(middle))
            .map_err(|e| Error::openssl("chacha20 body", e))?;
        self.body(tail)?;
        tag.copy_from_slice(&self.poly.tag(&poly_key, packet)?);
        Ok(())
    }

    fn packet_length(&mut self, seq: u32, first4: &[u8; 4]) -> Result<u32> {
        let mut l = *first4;
        self.xor_len(seq, &mut l)?;
        Ok(u32::from_be_bytes(l))
    }

    fn open(&mut self, seq: u32, packet: &mut [u8], tag: &[u8]) -> Result<()> {
        let poly_key = self.start(seq)?;
        let want = self.poly.tag(&poly_key, packet)?;
        if !openssl::memcmp::eq(&want, tag) {
            return Err(Error::Integrity);
        }
        let (len4, body) = packet.split_at_mut(4);
        self.xor_len(seq, len4)?;
        self.body(body)
    }
}

/// HMAC (RFC 2104) over libcrypto's hash: the keyed inner and outer states are computed once
/// and cloned per packet, which avoids re-hashing the key for every packet.
struct EvpHmac {
    inner: Hasher,
    outer: Hasher,
}

impl EvpHmac {
    fn new(md: MessageDigest, key: &[u8]) -> Result<Self> {
        let err = |e| Error::openssl("hmac init", e);
        let block = md.block_size();
        let mut k = if key.len() > block {
            openssl::hash::hash(md, key).map_err(err)?.to_vec()
        } else {
            key.to_vec()
        };
        k.resize(block, 0);
        let pad = |b: u8| k.iter().map(|x| x ^ b).collect::<Vec<u8>>();
        let mut inner = Hasher::new(md).map_err(err)?;
        inner.update(&pad(0x36)).map_err(err)?;
        let mut outer = Hasher::new(md).map_err(err)?;
        outer.update(&pad(0x5c)).map_err(err)?;
        Ok(EvpHmac { inner, outer })
    }
}

impl Mac for EvpHmac {
    fn sign(&mut self, seq: u32, data: &[u8], out: &mut [u8]) -> Result<()> {
        let err = |e| Error::openssl("hmac", e);
        let mut i = self.inner.clone();
        i.update(&seq.to_be_bytes()).map_err(err)?;
        i.update(data).map_err(err)?;
        let d = i.finish().map_err(err)?;
        let mut o = self.outer.clone();
        o.update(&d).map_err(err)?;
        let t = o.finish().map_err(err)?;
        out.copy_from_slice(&t[..out.len()]);
        Ok(())
    }
}

/// AES-128 single blocks for UMAC's key derivation and pad, from libcrypto.
pub(super) struct EvpAes(Crypter);

impl UmacAes for EvpAes {
    fn with_key(key: &[u8]) -> Result<Self> {
        let mut c = Crypter::new(
            openssl::symm::Cipher::aes_128_ecb(),
            Mode::Encrypt,
            key,
            None,
        )
        .map_err(|e| Error::openssl("umac aes init", e))?;
        c.pad(false);
        Ok(EvpAes(c))
    }

    fn encrypt_block(&mut self, block: &mut [u8; 16]) {
        let mut out = [0u8; 32];
        // ECB without padding on one whole block cannot fail once keyed.
        let n = self.0.update(block, &mut out).unwrap_or(0);
        debug_assert_eq!(n, 16);
        block.copy_from_slice(&out[..16]);
    }
}

pub(super) fn mac(spec: &'static MacSpec, key: &[u8]) -> Result<Box<dyn Mac>> {
    let md = match spec.family {
        "sha2-256" => MessageDigest::sha256(),
        "sha2-512" => MessageDigest::sha512(),
        "sha1" => MessageDigest::sha1(),
        "md5" => MessageDigest::md5(),
        "umac" => return Ok(Box::new(Umac::<EvpAes>::new(key, spec.tag_len)?)),
        _ => return Err(Error::UnknownMac(spec.name.into())),
    };
    Ok(Box::new(EvpHmac::new(md, key)?))
}
