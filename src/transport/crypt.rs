//! The seam between packet framing and the `ciphers` crate: what one direction's packet
//! protection must do, as the framing layer sees it. Framing (padding, lengths, sequence
//! numbers) stays in `packet.rs`; these objects only transform bytes in place.

use super::error::{Error, Result};

/// Protection of outgoing packets in one direction.
pub trait Sealer: Send {
    /// Padding multiple (at least 8, RFC 4253 §6).
    fn block_len(&self) -> usize;
    fn tag_len(&self) -> usize;
    /// 4 when the length field is authenticated but not part of the padded/encrypted body
    /// (AEAD and encrypt-then-MAC), 0 otherwise.
    fn aad_len(&self) -> usize;
    /// `packet` is `uint32 length || padding_length || payload || padding`; encrypts it in
    /// place and writes the tag.
    fn seal(&mut self, seq: u32, packet: &mut [u8], tag: &mut [u8]);
}

/// Protection of incoming packets in one direction.
pub trait Opener: Send {
    /// Bytes that must be read before the packet length is known.
    fn first_len(&self) -> usize;
    fn block_len(&self) -> usize;
    fn tag_len(&self) -> usize;
    fn aad_len(&self) -> usize;
    /// Learns the packet length from the first `first_len()` bytes, decrypting them in place
    /// when the cipher requires it.
    fn packet_len(&mut self, seq: u32, first: &mut [u8]) -> Result<u32>;
    /// Decrypts and authenticates the whole packet (`first_len()` bytes of it already went
    /// through `packet_len`).
    fn open(&mut self, seq: u32, packet: &mut [u8], tag: &[u8]) -> Result<()>;
}

/// The state before the first NEWKEYS (and the `none` cipher with no MAC).
#[derive(Debug, Default, Clone, Copy)]
pub struct Plain;

impl Sealer for Plain {
    fn block_len(&self) -> usize {
        8
    }
    fn tag_len(&self) -> usize {
        0
    }
    fn aad_len(&self) -> usize {
        0
    }
    fn seal(&mut self, _seq: u32, _packet: &mut [u8], _tag: &mut [u8]) {}
}

impl Opener for Plain {
    fn first_len(&self) -> usize {
        4
    }
    fn block_len(&self) -> usize {
        8
    }
    fn tag_len(&self) -> usize {
        0
    }
    fn aad_len(&self) -> usize {
        0
    }
    fn packet_len(&mut self, _seq: u32, first: &mut [u8]) -> Result<u32> {
        Ok(be32(first))
    }
    fn open(&mut self, _seq: u32, _packet: &mut [u8], _tag: &[u8]) -> Result<()> {
        Ok(())
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

/// Until the `ciphers` crate provides packet protection only `none` exists here.
mod backend {
    use super::*;

    pub fn has_cipher(name: &str) -> bool {
        name == "none"
    }

    pub fn has_mac(_name: &str) -> bool {
        false
    }

    pub fn sealer(keys: &DirectionKeys) -> Result<Box<dyn Sealer>> {
        match (keys.cipher, keys.mac) {
            ("none", None) => Ok(Box::new(Plain)),
            (c, m) => Err(unsupported(&format!("{c}/{}", m.unwrap_or("-")))),
        }
    }

    pub fn opener(keys: &DirectionKeys) -> Result<Box<dyn Opener>> {
        match (keys.cipher, keys.mac) {
            ("none", None) => Ok(Box::new(Plain)),
            (c, m) => Err(unsupported(&format!("{c}/{}", m.unwrap_or("-")))),
        }
    }
}
