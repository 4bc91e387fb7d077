//! The seam between packet framing and the `ciphers` crate: what one direction's packet
//! protection must do, as the framing layer sees it. Framing (padding, lengths, sequence
//! numbers) stays in `packet.rs`; these objects only transform bytes in place.

use super::error::{Error, Result};
use std::ops::Range;

/// Protection of outgoing packets in one direction.
pub trait Sealer: Send {
    /// Padding multiple (at least 8, RFC 4253 §6), for the rekey block count.
    fn block_len(&self) -> usize;
    fn tag_len(&self) -> usize;
    /// Padding a payload of this size gets (the framing rules live with the cipher).
    fn padding_len(&self, payload_len: usize) -> usize;
    /// `buf` is `uint32 length || padding_length || payload || padding || tag room`;
    /// encrypts in place and writes the tag.
    fn seal(&mut self, seq: u32, buf: &mut [u8]) -> Result<()>;
}

/// Protection of incoming packets in one direction.
pub trait Opener: Send {
    /// Bytes that must be read before the packet length is known.
    fn first_len(&self) -> usize;
    fn block_len(&self) -> usize;
    /// The whole wire size (length field, packet, tag) from the first `first_len()` bytes,
    /// decrypting them in place when the cipher requires it.
    fn wire_len(&mut self, seq: u32, first: &mut [u8]) -> Result<usize>;
    /// Authenticates and decrypts the whole packet in place; returns where the payload is.
    fn open(&mut self, seq: u32, buf: &mut [u8]) -> Result<Range<usize>>;
    /// A bad length or MAC must not be reported before a fixed amount was read (CBC with an
    /// encrypt-and-MAC MAC, where the moment of failure leaks plaintext bits).
    fn discards_on_error(&self) -> bool {
        false
    }
}

/// The state before the first NEWKEYS: no encryption, no MAC.
#[derive(Debug, Default, Clone, Copy)]
pub struct Plain;

impl Sealer for Plain {
    fn block_len(&self) -> usize {
        8
    }
    fn tag_len(&self) -> usize {
        0
    }
    fn padding_len(&self, payload_len: usize) -> usize {
        let mut pad = 8 - (5 + payload_len) % 8;
        if pad < 4 {
            pad += 8;
        }
        pad
    }
    fn seal(&mut self, _seq: u32, _buf: &mut [u8]) -> Result<()> {
        Ok(())
    }
}

impl Opener for Plain {
    fn first_len(&self) -> usize {
        4
    }
    fn block_len(&self) -> usize {
        8
    }
    fn wire_len(&mut self, _seq: u32, first: &mut [u8]) -> Result<usize> {
        let len = be32(first) as usize;
        if !(5..=super::packet::MAX_PACKET_LEN).contains(&len) || (len + 4) % 8 != 0 {
            return Err(Error::Packet(format!("invalid packet length {len}")));
        }
        Ok(4 + len)
    }
    fn open(&mut self, _seq: u32, buf: &mut [u8]) -> Result<Range<usize>> {
        let pad = buf[4] as usize;
        if pad < 4 || pad + 5 > buf.len() {
            return Err(Error::Packet(format!(
                "invalid padding length {pad} for packet length {}",
                buf.len() - 4
            )));
        }
        Ok(5..buf.len() - pad)
    }
}

pub fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Keys for one direction, as derived by the key exchange (RFC 4253 §7.2).
#[derive(Clone)]
pub struct DirectionKeys {
    pub cipher: &'static str,
    pub mac: Option<&'static str>,
    pub iv: Vec<u8>,
    pub key: Vec<u8>,
    pub mac_key: Vec<u8>,
}

impl std::fmt::Debug for DirectionKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectionKeys")
            .field("cipher", &self.cipher)
            .field("mac", &self.mac)
            .finish_non_exhaustive()
    }
}

/// Ciphers this build can run, in our preference order (fastest first on AES-NI machines).
pub fn supported_ciphers() -> Vec<&'static str> {
    ciphers::CIPHERS
        .iter()
        .filter(|c| backend::has_cipher(c.name))
        .map(|c| c.name)
        .collect()
}

pub fn supported_macs() -> Vec<&'static str> {
    ciphers::MACS
        .iter()
        .filter(|m| backend::has_mac(m.name))
        .map(|m| m.name)
        .collect()
}

pub fn sealer(keys: &DirectionKeys) -> Result<Box<dyn Sealer>> {
    backend::sealer(keys)
}

pub fn opener(keys: &DirectionKeys) -> Result<Box<dyn Opener>> {
    backend::opener(keys)
}

fn unsupported(what: &str) -> Error {
    Error::protocol(format!("{what} negotiated but not available in this build"))
}

/// The `ciphers` crate does the arithmetic; this adapts its keys to the framing layer.
mod backend {
    use super::*;
    use ciphers::{OpeningKey, SealingKey};

    pub fn has_cipher(name: &str) -> bool {
        ciphers::cipher(name).is_some()
    }

    pub fn has_mac(name: &str) -> bool {
        ciphers::mac(name).is_some()
    }

    fn keys(k: &DirectionKeys) -> ciphers::DirectionKeys<'_> {
        ciphers::DirectionKeys {
            cipher: k.cipher,
            mac: k.mac,
            key: &k.key,
            iv: &k.iv,
            mac_key: &k.mac_key,
        }
    }

    fn map(e: ciphers::Error) -> Error {
        match e {
            ciphers::Error::Integrity => Error::Mac,
            ciphers::Error::BadLength(n) => Error::Packet(format!("invalid packet length {n}")),
            ciphers::Error::BadPadding(why) => Error::Packet(format!("bad padding: {why}")),
            other => Error::protocol(other.to_string()),
        }
    }

    pub fn sealer(k: &DirectionKeys) -> Result<Box<dyn Sealer>> {
        let key = SealingKey::new(&keys(k), None).map_err(|e| unsupported(&e.to_string()))?;
        Ok(Box::new(key))
    }

    pub fn opener(k: &DirectionKeys) -> Result<Box<dyn Opener>> {
        let key = OpeningKey::new(&keys(k), None).map_err(|e| unsupported(&e.to_string()))?;
        Ok(Box::new(key))
    }

    impl Sealer for SealingKey {
        fn block_len(&self) -> usize {
            self.framing().block_len
        }
        fn tag_len(&self) -> usize {
            self.framing().tag_len
        }
        fn padding_len(&self, payload_len: usize) -> usize {
            SealingKey::padding_len(self, payload_len)
        }
        fn seal(&mut self, seq: u32, buf: &mut [u8]) -> Result<()> {
            self.seal_in_place(seq, buf).map_err(map)
        }
    }

    impl Opener for OpeningKey {
        fn first_len(&self) -> usize {
            self.length_bytes()
        }
        fn block_len(&self) -> usize {
            self.framing().block_len
        }
        fn wire_len(&mut self, seq: u32, first: &mut [u8]) -> Result<usize> {
            self.decrypt_length(seq, first).map_err(map)
        }
        fn open(&mut self, seq: u32, buf: &mut [u8]) -> Result<Range<usize>> {
            OpeningKey::open(self, seq, buf).map_err(map)
        }
        fn discards_on_error(&self) -> bool {
            self.cipher().kind == ciphers::CipherKind::Cbc && !self.framing().length_in_clear
        }
    }
}
