//! What gets timed: one closure per row that processes `PACKET_BYTES` per call.

use ciphers::packet::{DirectionKeys, SealingKey, HEADER_LEN};
use ciphers::raw::{RawCipher, RawMac};
use ciphers::{Backend, CipherKind, CipherSpec, MacSpec};

/// OpenSSH's largest channel data packet payload, and the size `openssl speed -bytes` is
/// given, so both columns time the same amount of data per call.
pub const PACKET_BYTES: usize = 32 * 1024;

#[derive(Debug, Clone, Copy)]
pub enum Subject {
    Cipher(&'static CipherSpec),
    Mac(&'static MacSpec),
    Pair(&'static CipherSpec, &'static MacSpec),
}

/// One unit of work; returns an error if the backend fails.
pub type Op = Box<dyn FnMut() -> anyhow::Result<()>>;

fn material(len: usize, salt: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8) ^ salt).collect()
}

fn sealer(
    cipher: &'static CipherSpec,
    mac: Option<&'static MacSpec>,
    backend: Backend,
) -> anyhow::Result<Op> {
    let (key, iv) = (
        material(cipher.key_len, 0x11),
        material(cipher.iv_len, 0x22),
    );
    let mac_key = material(mac.map_or(0, |m| m.key_len), 0x33);
    let mut s = SealingKey::new(
        &DirectionKeys {
            cipher: cipher.name,
            mac: mac.map(|m| m.name),
            key: &key,
            iv: &iv,
            mac_key: &mac_key,
        },
        Some(backend),
    )?;
    // The transport writes payloads straight into its packet buffer, so the payload is
    // placed once; every call frames (length, fresh random padding), seals and tags it.
    let mut buf = vec![0u8; HEADER_LEN];
    buf.extend_from_slice(&material(PACKET_BYTES, 0x44));
    let payload_end = buf.len();
    let mut seq = 0u32;
    Ok(Box::new(move || {
        buf.truncate(payload_end);
        s.frame(&mut buf, 0)?;
        s.seal_in_place(seq, &mut buf)?;
        seq = seq.wrapping_add(1);
        Ok(())
    }))
}

impl Subject {
    pub fn cipher(&self) -> Option<&'static CipherSpec> {
        match self {
            Subject::Cipher(c) | Subject::Pair(c, _) => Some(c),
            Subject::Mac(_) => None,
        }
    }

    pub fn mac(&self) -> Option<&'static MacSpec> {
        match self {
            Subject::Mac(m) | Subject::Pair(_, m) => Some(m),
            Subject::Cipher(_) => None,
        }
    }

    /// Builds the timed operation. Non-AEAD ciphers run bare over the buffer (what
    /// `openssl speed -evp` times); AEADs, `none` and pairs seal complete SSH packets with
    /// framing, random padding and tag, as the transport would.
    pub fn op(&self, backend: Backend) -> anyhow::Result<Op> {
        match *self {
            // `none` has no primitive to time; sealing packets with it shows the framing cost.
            Subject::Cipher(c) if c.is_aead() || c.kind == CipherKind::None => {
                sealer(c, None, backend)
            }
            Subject::Cipher(c) => {
                let mut r = RawCipher::new(
                    c,
                    backend,
                    &material(c.key_len, 0x11),
                    &material(c.iv_len, 0x22),
                    true,
                )?;
                let mut buf = material(PACKET_BYTES, 0x44);
                Ok(Box::new(move || Ok(r.apply(&mut buf)?)))
            }
            Subject::Mac(m) => {
                let mut r = RawMac::new(m, backend, &material(m.key_len, 0x33))?;
                let buf = material(PACKET_BYTES, 0x44);
                let mut tag = [0u8; 64];
                let mut seq = 0u32;
                Ok(Box::new(move || {
                    r.sign(seq, &buf, &mut tag)?;
                    seq = seq.wrapping_add(1);
                    Ok(())
                }))
            }
            Subject::Pair(c, m) => sealer(c, Some(m), backend),
        }
    }
}
