//! The `rust` backend: ring for the AEADs, RustCrypto for the rest — no C library at run time.

use super::umac::{Umac, UmacAes};
use super::{Aead, CipherKey, Crypt, GcmNonce, Identity, Mac};
use crate::catalog::{CipherKind, CipherSpec, MacSpec, Primitive};
use crate::error::{Error, Result};
use cipher::{
    BlockCipher, BlockDecryptMut, BlockEncrypt, BlockEncryptMut, KeyInit, KeyIvInit, StreamCipher,
};
use ring::aead::{self as raead, chacha20_poly1305_openssh as rchacha};

fn bad_key(spec: &CipherSpec) -> Error {
    Error::Backend {
        backend: "rust",
        context: "cipher init",
        detail: format!("{}: key or IV rejected", spec.name),
    }
}

/// A RustCrypto stream (CTR, RC4) applied over whole buffers, which lets the crates use their
/// many-blocks-at-once paths.
struct Stream<C>(C);

impl<C: StreamCipher + Send> Crypt for Stream<C> {
    fn apply(&mut self, buf: &mut [u8]) -> Result<()> {
        self.0.apply_keystream(buf);
        Ok(())
    }

    fn apply_from(&mut self, buf: &mut [u8], at: usize, data: &[u8]) -> Result<()> {
        let (head, rest) = buf.split_at_mut(at);
        let (middle, tail) = rest.split_at_mut(data.len());
        self.0.apply_keystream(head);
        self.0
            .apply_keystream_b2b(data, middle)
            .map_err(|_| Error::BadLength(data.len()))?;
        self.0.apply_keystream(tail);
        Ok(())
    }
}

/// CBC in the direction the key was made for.
enum Cbc<C: BlockEncryptMut + BlockDecryptMut + BlockCipher> {
    Encrypt(cbc::Encryptor<C>),
    Decrypt(cbc::Decryptor<C>),
}

impl<C: BlockEncryptMut + BlockDecryptMut + BlockCipher + Send> Crypt for Cbc<C> {
    fn apply(&mut self, buf: &mut [u8]) -> Result<()> {
        let (blocks, rest) = cipher::inout::InOutBuf::from(buf).into_chunks();
        debug_assert!(rest.is_empty());
        match self {
            Cbc::Encrypt(c) => c.encrypt_blocks_inout_mut(blocks),
            Cbc::Decrypt(c) => c.decrypt_blocks_inout_mut(blocks),
        }
        Ok(())
    }
}

fn cbc<C>(k: CipherKey) -> Result<Box<dyn Crypt>>
where
    C: BlockEncryptMut + BlockDecryptMut + BlockCipher + KeyInit + Send + 'static,
{
    let bad = |_| bad_key(k.spec);
    Ok(Box::new(if k.encrypt {
        Cbc::Encrypt(cbc::Encryptor::<C>::new_from_slices(k.key, k.iv).map_err(bad)?)
    } else {
        Cbc::Decrypt(cbc::Decryptor::<C>::new_from_slices(k.key, k.iv).map_err(bad)?)
    }))
}

fn ctr<C>(k: CipherKey) -> Result<Box<dyn Crypt>>
where
    C: BlockEncrypt + BlockCipher<BlockSize = cipher::consts::U16> + KeyInit + Send + 'static,
    ctr::Ctr128BE<C>: Send,
{
    Ok(Box::new(Stream(
        ctr::Ctr128BE::<C>::new_from_slices(k.key, k.iv).map_err(|_| bad_key(k.spec))?,
    )))
}

fn rc4(k: CipherKey, discard: usize) -> Result<Box<dyn Crypt>> {
    use rc4::{consts, Rc4};
    let bad = |_| bad_key(k.spec);
    let mut s: Box<dyn Crypt> = match k.key.len() {
        16 => Box::new(Stream(
            Rc4::<consts::U16>::new_from_slice(k.key).map_err(bad)?,
        )),
        32 => Box::new(Stream(
            Rc4::<consts::U32>::new_from_slice(k.key).map_err(bad)?,
        )),
        _ => return Err(bad_key(k.spec)),
    };
    s.apply(&mut vec![0u8; discard])?;
    Ok(s)
}

pub(super) fn crypt(k: CipherKey) -> Result<Box<dyn Crypt>> {
    use aes::{Aes128, Aes192, Aes256};
    match (k.spec.primitive, k.spec.kind, k.key.len()) {
        (Primitive::Null, _, _) => Ok(Box::new(Identity)),
        (Primitive::Aes, CipherKind::Ctr, 16) => ctr::<Aes128>(k),
        (Primitive::Aes, CipherKind::Ctr, 24) => ctr::<Aes192>(k),
        (Primitive::Aes, CipherKind::Ctr, 32) => ctr::<Aes256>(k),
        (Primitive::Aes, CipherKind::Cbc, 16) => cbc::<Aes128>(k),
        (Primitive::Aes, CipherKind::Cbc, 24) => cbc::<Aes192>(k),
        (Primitive::Aes, CipherKind::Cbc, 32) => cbc::<Aes256>(k),
        (Primitive::TripleDes, _, _) => cbc::<des::TdesEde3>(k),
        (Primitive::Blowfish, _, _) => cbc::<blowfish::Blowfish>(k),
        (Primitive::Cast128, _, _) => cbc::<cast5::Cast5>(k),
        (Primitive::Rc4 { discard }, _, _) => rc4(k, discard),
        _ => Err(Error::UnknownCipher(format!(
            "{} (no rust mapping)",
            k.spec.name
        ))),
    }
}

/// AES-GCM from ring (RFC 5647 framing: clear length as AAD, counter nonce).
struct RingGcm {
    key: raead::LessSafeKey,
    nonce: GcmNonce,
}

impl Aead for RingGcm {
    fn seal(&mut self, _seq: u32, packet: &mut [u8], tag: &mut [u8]) -> Result<()> {
        let (len4, body) = packet.split_at_mut(4);
        let nonce = raead::Nonce::assume_unique_for_key(self.nonce.current());
        let t = self
            .key
            .seal_in_place_separate_tag(nonce, raead::Aad::from(&*len4), body)
            .map_err(|_| Error::BadLength(body.len()))?;
        tag.copy_from_slice(t.as_ref());
        self.nonce.advance();
        Ok(())
    }

    fn packet_length(&mut self, _seq: u32, first4: &[u8; 4]) -> Result<u32> {
        Ok(u32::from_be_bytes(*first4))
    }

    fn open(&mut self, _seq: u32, packet: &mut [u8], tag: &[u8]) -> Result<()> {
        let (len4, body) = packet.split_at_mut(4);
        let nonce = raead::Nonce::assume_unique_for_key(self.nonce.current());
        self.nonce.advance();
        let tag = raead::Tag::try_from(tag).map_err(|_| Error::Integrity)?;
        self.key
            .open_in_place_separate_tag(nonce, raead::Aad::from(&*len4), tag, body, 0..)
            .map_err(|_| Error::Integrity)?;
        Ok(())
    }
}

/// chacha20-poly1305@openssh.com from ring, which implements exactly OpenSSH's construction.
///
/// Kept over composing the `chacha20` and `poly1305` crates as the `openssl` backend composes
/// libcrypto's parts: on the project's x86-64 machine (`cargo bench -p ciphers --bench chacha
/// -- whole`, CPU time, three runs) the crates sealed 1.20–1.27 GiB/s against ring's
/// 1.10–1.12, both about a third of libcrypto's fused cipher, because the crates' best
/// Poly1305 (AVX2, 3.0 GiB/s) is slower than libcrypto's whole construction (3.4 GiB/s). Ten
/// percent here does not pay for a second hand-composed construction, and on aarch64 boards
/// ring has NEON assembly while the `chacha20` crate needs a build-time cfg for its NEON code.
enum RingChaCha {
    Seal(rchacha::SealingKey),
    Open(rchacha::OpeningKey),
}

impl Aead for RingChaCha {
    fn seal(&mut self, seq: u32, packet: &mut [u8], tag: &mut [u8]) -> Result<()> {
        match self {
            RingChaCha::Seal(k) => {
                let mut t = [0u8; rchacha::TAG_LEN];
                k.seal_in_place(seq, packet, &mut t);
                tag.copy_from_slice(&t);
                Ok(())
            }
            RingChaCha::Open(_) => Err(wrong_direction()),
        }
    }

    fn packet_length(&mut self, seq: u32, first4: &[u8; 4]) -> Result<u32> {
        match self {
            RingChaCha::Open(k) => Ok(u32::from_be_bytes(k.decrypt_packet_length(seq, *first4))),
            RingChaCha::Seal(_) => Err(wrong_direction()),
        }
    }

    fn open(&mut self, seq: u32, packet: &mut [u8], tag: &[u8]) -> Result<()> {
        match self {
            RingChaCha::Open(k) => {
                let t: &[u8; rchacha::TAG_LEN] = tag.try_into().map_err(|_| Error::Integrity)?;
                let mut len4 = [0u8; 4];
                len4.copy_from_slice(&packet[..4]);
                k.open_in_place(seq, packet, t)
                    .map_err(|_| Error::Integrity)?;
                packet[..4].copy_from_slice(&k.decrypt_packet_length(seq, len4));
                Ok(())
            }
            RingChaCha::Seal(_) => Err(wrong_direction()),
        }
    }
}

fn wrong_direction() -> Error {
    Error::Backend {
        backend: "rust",
        context: "chacha20-poly1305",
        detail: "key used in the wrong direction".into(),
    }
}

pub(super) fn aead(k: CipherKey) -> Result<Box<dyn Aead>> {
    match k.spec.primitive {
        Primitive::AesGcm => {
            let alg = if k.key.len() == 16 {
                &raead::AES_128_GCM
            } else {
                &raead::AES_256_GCM
            };
            let unbound = raead::UnboundKey::new(alg, k.key).map_err(|_| bad_key(k.spec))?;
            Ok(Box::new(RingGcm {
                key: raead::LessSafeKey::new(unbound),
                nonce: GcmNonce::new(k.iv),
            }))
        }
        Primitive::ChaChaPoly => {
            let key: &[u8; rchacha::KEY_LEN] = k.key.try_into().map_err(|_| bad_key(k.spec))?;
            Ok(Box::new(if k.encrypt {
                RingChaCha::Seal(rchacha::SealingKey::new(key))
            } else {
                RingChaCha::Open(rchacha::OpeningKey::new(key))
            }))
        }
        _ => Err(Error::UnknownCipher(format!(
            "{} (no rust AEAD)",
            k.spec.name
        ))),
    }
}

/// HMAC from the `hmac` crate; the keyed state is cloned per packet.
struct RcHmac<D: hmac::digest::Mac + Clone>(D);

impl<D: hmac::digest::Mac + Clone + Send> Mac for RcHmac<D> {
    fn sign(&mut self, seq: u32, data: &[u8], out: &mut [u8]) -> Result<()> {
        let mut m = self.0.clone();
        m.update(&seq.to_be_bytes());
        m.update(data);
        let t = m.finalize().into_bytes();
        out.copy_from_slice(&t[..out.len()]);
        Ok(())
    }
}

fn hmac<M>(spec: &MacSpec, key: &[u8]) -> Result<Box<dyn Mac>>
where
    M: hmac::digest::Mac + hmac::digest::KeyInit + Clone + Send + 'static,
{
    let m = <M as hmac::digest::KeyInit>::new_from_slice(key)
        .map_err(|_| Error::UnknownMac(spec.name.into()))?;
    Ok(Box::new(RcHmac(m)))
}

/// AES-128 single blocks for UMAC from the `aes` crate.
pub(super) struct RcAes(aes::Aes128);

impl UmacAes for RcAes {
    fn with_key(key: &[u8]) -> Result<Self> {
        aes::Aes128::new_from_slice(key)
            .map(RcAes)
            .map_err(|_| Error::BadLength(key.len()))
    }

    fn encrypt_block(&mut self, block: &mut [u8; 16]) {
        self.0.encrypt_block(block.into());
    }
}

pub(super) fn mac(spec: &'static MacSpec, key: &[u8]) -> Result<Box<dyn Mac>> {
    match spec.family {
        "sha2-256" => hmac::<hmac::Hmac<sha2::Sha256>>(spec, key),
        "sha2-512" => hmac::<hmac::Hmac<sha2::Sha512>>(spec, key),
        "sha1" => hmac::<hmac::Hmac<sha1::Sha1>>(spec, key),
        "md5" => hmac::<hmac::Hmac<md5::Md5>>(spec, key),
        "umac" => Ok(Box::new(Umac::<RcAes>::new(key, spec.tag_len)?)),
        _ => Err(Error::UnknownMac(spec.name.into())),
    }
}
