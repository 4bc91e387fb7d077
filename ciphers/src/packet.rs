//! The SSH binary packet (RFC 4253 §6) sealed and opened, one object per direction.
//!
//! Why this shape: the transport reads a stream, so it must learn a packet's size from its
//! first bytes before it has the rest; and the three SSH framings disagree on exactly that:
//!
//! * encrypt-and-MAC (plain MACs): everything including the length is encrypted and the MAC
//!   covers `seq || plaintext`, so the first cipher block must be decrypted to learn the size;
//! * encrypt-then-MAC (`-etm@openssh.com`) and AES-GCM (RFC 5647): the length travels in clear
//!   (authenticated: MAC input or AAD) and the rest is encrypted;
//! * chacha20-poly1305@openssh.com: the length is encrypted with a key of its own, so it can
//!   be decrypted from four bytes without touching the body.
//!
//! `SealingKey`/`OpeningKey` hide which one applies; the transport only asks how many bytes to
//! read first ([`OpeningKey::length_bytes`]), how long the whole packet is
//! ([`OpeningKey::decrypt_length`]) and then opens it. Both backends share this framing code,
//! so they cannot disagree about the wire format.
//!
//! ```
//! use ciphers::{Backend, DirectionKeys, OpeningKey, SealingKey};
//! # fn main() -> Result<(), ciphers::Error> {
//! let (key, iv, mac_key) = ([1u8; 32], [2u8; 16], [3u8; 32]);
//! let keys = DirectionKeys {
//!     cipher: "aes256-ctr",
//!     mac: Some("hmac-sha2-256-etm@openssh.com"),
//!     key: &key,
//!     iv: &iv,
//!     mac_key: &mac_key,
//! };
//! // `None` picks each algorithm's default backend from the catalog.
//! let mut tx = SealingKey::new(&keys, None)?;
//! let mut rx = OpeningKey::new(&keys, Some(Backend::Rust))?;
//!
//! let mut wire = Vec::new();
//! tx.seal(0, b"\x5eSSH_MSG_CHANNEL_DATA...", &mut wire)?;
//!
//! // Reader side: the first bytes tell how much more to read.
//! let n = rx.length_bytes();
//! let total = rx.decrypt_length(0, &mut wire[..n])?;
//! assert_eq!(total, wire.len());
//! let payload = rx.open(0, &mut wire)?;
//! assert_eq!(&wire[payload], b"\x5eSSH_MSG_CHANNEL_DATA...");
//! # Ok(()) }
//! ```
//!
//! Sequence numbers are the caller's: they count every packet of the direction since the
//! connection started (not reset by rekeying, except with strict KEX), which only the
//! transport knows.
//!
//! Before the first NEWKEYS a connection still frames packets, only without protection:
//! [`SealingKey::cleartext`] and [`OpeningKey::cleartext`] are that state, so the transport
//! (and the probe, which never leaves it) use the same length checks and padding rules for
//! every packet of a connection and no second framing exists to drift from this one.

use crate::backend::Backend;
use crate::catalog::{self, CipherKind, CipherSpec, MacSpec};
use crate::error::{Error, Result};
use crate::imp::{self, Aead, Crypt, Mac};
use std::ops::Range;

/// The largest `packet_length` accepted, as OpenSSH's PACKET_MAX_SIZE (256 KiB): RFC 4253
/// asks for at least 35000, and refusing more bounds what a peer can make us buffer.
pub const MAX_PACKET_LEN: usize = 256 * 1024;

/// `packet_length` (4) and `padding_length` (1) precede the payload.
pub const HEADER_LEN: usize = 5;

/// RFC 4253 §6: at least four bytes of padding.
const MIN_PADDING: usize = 4;

/// Keys for one direction, as the key exchange derives them (RFC 4253 §7.2: IV, encryption
/// key and integrity key for this direction). Longer slices are cut to the catalog's sizes,
/// because the KEX hash output is usually longer than a key.
#[derive(Clone, Copy)]
pub struct DirectionKeys<'a> {
    pub cipher: &'a str,
    /// `None` for AEAD ciphers, which ignore any MAC negotiated.
    pub mac: Option<&'a str>,
    pub key: &'a [u8],
    pub iv: &'a [u8],
    pub mac_key: &'a [u8],
}

/// What the transport needs to know about a direction's framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// Padding makes the encrypted part a multiple of this (at least 8).
    pub block_len: usize,
    /// Bytes after the packet: the AEAD tag or the MAC.
    pub tag_len: usize,
    /// `packet_length` travels unencrypted (EtM and GCM).
    pub length_in_clear: bool,
    /// Bytes the reader needs before it can learn the packet length.
    pub length_bytes: usize,
}

enum Engine {
    Aead(Box<dyn Aead>),
    Mac {
        crypt: Box<dyn Crypt>,
        mac: Option<Box<dyn Mac>>,
        etm: bool,
    },
}

/// What a sealing and an opening key both tell about their [`Direction`]: its framing, cipher,
/// MAC and backend.
macro_rules! direction_accessors {
    () => {
        pub fn framing(&self) -> Framing {
            self.d.framing
        }
        pub fn cipher(&self) -> &'static CipherSpec {
            self.d.cipher
        }
        pub fn mac(&self) -> Option<&'static MacSpec> {
            self.d.mac
        }
        pub fn backend(&self) -> Backend {
            self.d.backend
        }
    };
}

struct Direction {
    cipher: &'static CipherSpec,
    mac: Option<&'static MacSpec>,
    backend: Backend,
    framing: Framing,
    /// 4 when the length field is outside the padded block run (EtM and both AEADs, as
    /// OpenSSH's `aadlen`), 0 when it is the start of the first encrypted block.
    aad_len: usize,
    engine: Engine,
}

fn take<'a>(
    what: &'static str,
    name: &'static str,
    got: &'a [u8],
    want: usize,
) -> Result<&'a [u8]> {
    got.get(..want).ok_or(Error::KeyLength {
        what,
        name,
        got: got.len(),
        want,
    })
}

impl Direction {
    /// The state before the first NEWKEYS: the `none` cipher without a MAC, whose length
    /// field is readable from its four bytes (RFC 4253 §6: the 8-byte block rule still holds).
    fn cleartext() -> Self {
        let keys = DirectionKeys {
            cipher: "none",
            mac: None,
            key: &[],
            iv: &[],
            mac_key: &[],
        };
        // The identity transform is the same in both backends; Rust links nothing.
        let mut d = Self::new(&keys, Some(Backend::Rust), true, false)
            .expect("the catalog's `none` cipher needs no key");
        d.framing.length_bytes = 4;
        d
    }

    fn new(
        keys: &DirectionKeys,
        backend_override: Option<Backend>,
        encrypt: bool,
        ahead: bool,
    ) -> Result<Self> {
        let cipher =
            catalog::cipher(keys.cipher).ok_or_else(|| Error::UnknownCipher(keys.cipher.into()))?;
        let backend = backend_override.unwrap_or_else(|| cipher.default_backend());
        let key = take("encryption", cipher.name, keys.key, cipher.key_len)?;
        let iv = take("IV", cipher.name, keys.iv, cipher.iv_len)?;
        let block_len = cipher.block_len.max(8);
        let cipher_key = imp::CipherKey {
            spec: cipher,
            key,
            iv,
            encrypt,
        };
        if cipher.is_aead() {
            let build = if ahead { imp::aead_ahead } else { imp::aead };
            let engine = Engine::Aead(build(cipher_key, backend)?);
            let length_in_clear = cipher.primitive != catalog::Primitive::ChaChaPoly;
            return Ok(Direction {
                cipher,
                mac: None,
                backend,
                framing: Framing {
                    block_len,
                    tag_len: cipher.tag_len,
                    length_in_clear,
                    length_bytes: 4,
                },
                aad_len: 4,
                engine,
            });
        }
        let mac = match keys.mac {
            Some(m) => Some(catalog::mac(m).ok_or_else(|| Error::UnknownMac(m.into()))?),
            None if cipher.kind == CipherKind::None => None,
            None => return Err(Error::MacRequired(cipher.name)),
        };
        let build = if ahead { imp::crypt_ahead } else { imp::crypt };
        let crypt = build(cipher_key, backend)?;
        let (mac_impl, etm, tag_len) = match mac {
            Some(m) => {
                let mk = take("integrity", m.name, keys.mac_key, m.key_len)?;
                let mac_backend = backend_override.unwrap_or_else(|| m.default_backend());
                (Some(imp::mac(m, mac_backend, mk)?), m.etm, m.tag_len)
            }
            None => (None, false, 0),
        };
        Ok(Direction {
            cipher,
            mac,
            backend,
            framing: Framing {
                block_len,
                tag_len,
                length_in_clear: etm,
                length_bytes: if etm { 4 } else { block_len },
            },
            aad_len: if etm { 4 } else { 0 },
            engine: Engine::Mac {
                crypt,
                mac: mac_impl,
                etm,
            },
        })
    }

    /// Padding for a payload: at least four bytes, the padded run (the whole packet, or all
    /// but the length field for EtM and the AEADs, as OpenSSH counts it) a multiple of the
    /// block, and the packet at least 16 bytes long (RFC 4253 §6).
    fn padding_len(&self, payload_len: usize) -> usize {
        let bs = self.framing.block_len;
        let unpadded = 4 + 1 + payload_len - self.aad_len;
        let mut pad = bs - unpadded % bs;
        if pad < MIN_PADDING {
            pad += bs;
        }
        while 4 + 1 + payload_len + pad < 16 {
            pad += bs;
        }
        pad
    }
}

/// Seals outgoing packets of one direction.
pub struct SealingKey {
    d: Direction,
}

impl SealingKey {
    /// `backend: None` uses the cipher's default from the catalog for this CPU.
    pub fn new(keys: &DirectionKeys, backend: Option<Backend>) -> Result<Self> {
        Ok(SealingKey {
            d: Direction::new(keys, backend, true, false)?,
        })
    }

    /// Packets before the first NEWKEYS: framed and padded, neither encrypted nor MACed.
    pub fn cleartext() -> Self {
        SealingKey {
            d: Direction::cleartext(),
        }
    }

    /// Like [`new`](Self::new), but a helper thread computes the keystream ahead while this
    /// one XORs it in and computes the MAC (HPN-SSH's idea; opt-in, one thread per key,
    /// stopped when the key is dropped). For counter-mode ciphers and
    /// chacha20-poly1305@openssh.com, in either backend; other ciphers are refused. The wire
    /// bytes are identical to `new`'s. Whether it pays depends on a free core: see the
    /// `ahead` bench of this crate.
    pub fn with_keystream_ahead(keys: &DirectionKeys, backend: Option<Backend>) -> Result<Self> {
        Ok(SealingKey {
            d: Direction::new(keys, backend, true, true)?,
        })
    }

    direction_accessors!();

    /// Padding bytes a payload of this size gets.
    pub fn padding_len(&self, payload_len: usize) -> usize {
        self.d.padding_len(payload_len)
    }

    /// Whether [`with_keystream_ahead`](Self::with_keystream_ahead) accepts this cipher:
    /// counter mode and chacha20-poly1305@openssh.com, whose keystream does not depend on
    /// the data.
    pub fn keystream_ahead_possible(cipher: &str) -> bool {
        catalog::cipher(cipher).is_some_and(|c| {
            c.kind == CipherKind::Ctr || c.primitive == catalog::Primitive::ChaChaPoly
        })
    }

    /// CPU seconds a keystream helper thread has spent for this key so far (0 without one).
    /// A caller that reports its CPU per byte adds this: the helper's core is work too.
    pub fn helper_cpu_seconds(&self) -> f64 {
        match &self.d.engine {
            Engine::Aead(a) => a.helper_cpu_seconds(),
            Engine::Mac { crypt, .. } => crypt.helper_cpu_seconds(),
        }
    }

    /// Frames `payload` (length, padding length, payload, random padding), seals it and
    /// appends the wire bytes, tag included, to `out`. Copies the payload once; a transport
    /// that builds payloads in its own buffer avoids that with [`frame`](Self::frame).
    pub fn seal(&mut self, seq: u32, payload: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        out.reserve(HEADER_LEN + payload.len() + 2 * self.d.framing.block_len + 64);
        out.extend_from_slice(&[0u8; HEADER_LEN]);
        out.extend_from_slice(payload);
        self.frame(out, start)?;
        self.seal_in_place(seq, &mut out[start..])
    }

    /// Completes a packet whose payload was written in place: `out[start..]` holds
    /// [`HEADER_LEN`] bytes of room followed by the payload. Fills in the length and padding
    /// length, appends random padding and room for the tag; then call
    /// [`seal_in_place`](Self::seal_in_place) on `out[start..]`.
    pub fn frame(&self, out: &mut Vec<u8>, start: usize) -> Result<()> {
        let payload_len = out
            .len()
            .checked_sub(start + HEADER_LEN)
            .ok_or(Error::BadLength(out.len()))?;
        let pad = self.padding_len(payload_len);
        let packet_len = 1 + payload_len + pad;
        if packet_len > MAX_PACKET_LEN {
            return Err(Error::BadLength(packet_len));
        }
        out[start..start + 4].copy_from_slice(&(packet_len as u32).to_be_bytes());
        out[start + 4] = pad as u8;
        let pad_start = out.len();
        out.resize(pad_start + pad, 0);
        // RFC 4253 wants random padding: batched (see `padding`).
        crate::padding::fill(&mut out[pad_start..])?;
        out.resize(out.len() + self.d.framing.tag_len, 0);
        Ok(())
    }

    /// Wire bytes of a packet with a payload of `payload_len` bytes: what
    /// [`seal_into`](Self::seal_into) needs room for.
    pub fn sealed_len(&self, payload_len: usize) -> usize {
        4 + 1 + payload_len + self.padding_len(payload_len) + self.d.framing.tag_len
    }

    /// Frames and seals the packet whose payload is `head` followed by `data` into the start of
    /// `out` (at least [`sealed_len`](Self::sealed_len) bytes) and returns its wire length.
    ///
    /// Why: bulk data lives in the caller's buffer, and copying it into a packet buffer
    /// before encrypting it there is one more pass over every byte. Here a stream cipher
    /// (counter mode, ChaCha20 in either construction's libcrypto path, RC4) encrypts `data`
    /// from where it is straight into `out`. Block ciphers, ring's AEADs and encrypt-and-MAC
    /// framings (whose MAC covers the plaintext, which would then be in two places) copy it
    /// in and seal in place: the same bytes on the wire either way.
    pub fn seal_into(
        &mut self,
        seq: u32,
        head: &[u8],
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize> {
        let payload_len = head.len() + data.len();
        let pad = self.padding_len(payload_len);
        let packet_len = 1 + payload_len + pad;
        if packet_len > MAX_PACKET_LEN {
            return Err(Error::BadLength(packet_len));
        }
        let total = 4 + packet_len + self.d.framing.tag_len;
        let have = out.len();
        let out = out.get_mut(..total).ok_or(Error::BadLength(have))?;
        out[..4].copy_from_slice(&(packet_len as u32).to_be_bytes());
        out[4] = pad as u8;
        let at = HEADER_LEN + head.len();
        let end = at + data.len();
        out[HEADER_LEN..at].copy_from_slice(head);
        crate::padding::fill(&mut out[end..end + pad])?;
        if matches!(self.d.engine, Engine::Mac { etm: false, .. }) {
            out[at..end].copy_from_slice(data);
            return self.seal_in_place(seq, out).map(|()| total);
        }
        let (packet, tag) = out.split_at_mut(4 + packet_len);
        match &mut self.d.engine {
            Engine::Aead(a) => a.seal_from(seq, packet, at, data, tag)?,
            Engine::Mac { crypt, mac, .. } => {
                crypt.apply_from(&mut packet[4..], at - 4, data)?;
                if let Some(m) = mac {
                    m.sign(seq, packet, tag)?;
                }
            }
        }
        Ok(total)
    }

    /// Seals an already framed packet: `buf` is `length || padding length || payload ||
    /// padding` followed by `tag_len` bytes of room for the tag. The framing must match
    /// [`padding_len`](Self::padding_len)'s rules; this is the zero-copy path.
    pub fn seal_in_place(&mut self, seq: u32, buf: &mut [u8]) -> Result<()> {
        let tag_len = self.d.framing.tag_len;
        if buf.len() < 4 + tag_len {
            return Err(Error::BadLength(buf.len()));
        }
        let (packet, tag) = buf.split_at_mut(buf.len() - tag_len);
        if (packet.len() - self.d.aad_len) % self.d.framing.block_len != 0 {
            return Err(Error::BadPadding(
                "packet is not a multiple of the block size",
            ));
        }
        match &mut self.d.engine {
            Engine::Aead(a) => a.seal(seq, packet, tag),
            Engine::Mac { crypt, mac, etm } => {
                if *etm {
                    crypt.apply(&mut packet[4..])?;
                    if let Some(m) = mac {
                        m.sign(seq, packet, tag)?;
                    }
                } else {
                    if let Some(m) = mac {
                        m.sign(seq, packet, tag)?;
                    }
                    crypt.apply(packet)?;
                }
                Ok(())
            }
        }
    }
}

/// Opens incoming packets of one direction.
pub struct OpeningKey {
    d: Direction,
    /// Set when `decrypt_length` has already decrypted the first block in place
    /// (encrypt-and-MAC), so `open` must not decrypt it twice.
    first_done: Option<u32>,
}

impl OpeningKey {
    /// `backend: None` uses the cipher's default from the catalog for this CPU.
    pub fn new(keys: &DirectionKeys, backend: Option<Backend>) -> Result<Self> {
        Ok(OpeningKey {
            d: Direction::new(keys, backend, false, false)?,
            first_done: None,
        })
    }

    /// Packets before the first NEWKEYS: the length is read from four bytes, checked against
    /// [`MAX_PACKET_LEN`] and the 8-byte block like any other, and nothing is verified.
    pub fn cleartext() -> Self {
        OpeningKey {
            d: Direction::cleartext(),
            first_done: None,
        }
    }

    /// Whether a bad packet must be answered only after [`MAX_PACKET_LEN`] bytes were read
    /// (OpenSSH's `packet_discard`): CBC with an encrypt-and-MAC MAC, where the moment of
    /// failure tells an attacker bits of the first decrypted block (Albrecht, Paterson and
    /// Watson, 2009). Other framings authenticate the length or have no block chaining.
    pub fn discards_on_error(&self) -> bool {
        self.d.cipher.kind == CipherKind::Cbc && !self.d.framing.length_in_clear
    }

    direction_accessors!();

    /// How many bytes [`decrypt_length`](Self::decrypt_length) needs.
    pub fn length_bytes(&self) -> usize {
        self.d.framing.length_bytes
    }

    /// Learns the whole packet's wire size (length field, packet, tag) from its first
    /// [`length_bytes`](Self::length_bytes) bytes. For encrypt-and-MAC ciphers this decrypts
    /// `first` in place — pass the same, now decrypted, bytes to [`open`](Self::open). The
    /// size is checked against [`MAX_PACKET_LEN`] and the block size before the caller buffers
    /// anything.
    pub fn decrypt_length(&mut self, seq: u32, first: &mut [u8]) -> Result<usize> {
        let need = self.d.framing.length_bytes;
        if first.len() < need {
            return Err(Error::BadLength(first.len()));
        }
        let len = match &mut self.d.engine {
            Engine::Aead(a) => {
                let mut l = [0u8; 4];
                l.copy_from_slice(&first[..4]);
                a.packet_length(seq, &l)?
            }
            Engine::Mac { crypt, etm, .. } => {
                if !*etm && self.first_done != Some(seq) {
                    crypt.apply(&mut first[..need])?;
                    self.first_done = Some(seq);
                }
                u32::from_be_bytes([first[0], first[1], first[2], first[3]])
            }
        } as usize;
        if !(5..=MAX_PACKET_LEN).contains(&len)
            || (len + 4 - self.d.aad_len) % self.d.framing.block_len != 0
            || len + 4 < need
        {
            return Err(Error::BadLength(len));
        }
        Ok(4 + len + self.d.framing.tag_len)
    }

    /// Verifies and decrypts a whole packet in place (`buf` is exactly the size
    /// `decrypt_length` returned, first bytes as it left them) and returns where the payload
    /// is. MACs and tags are compared in constant time; on failure nothing in `buf` may be
    /// trusted.
    pub fn open(&mut self, seq: u32, buf: &mut [u8]) -> Result<Range<usize>> {
        let need = self.d.framing.length_bytes;
        if buf.len() < need {
            return Err(Error::BadLength(buf.len()));
        }
        let total = self.decrypt_length(seq, buf)?;
        if buf.len() != total {
            return Err(Error::BadLength(buf.len()));
        }
        self.first_done = None;
        let tag_len = self.d.framing.tag_len;
        let (packet, tag) = buf.split_at_mut(total - tag_len);
        match &mut self.d.engine {
            Engine::Aead(a) => a.open(seq, packet, tag)?,
            Engine::Mac { crypt, mac, etm } => {
                let mut want = [0u8; 64];
                let want = &mut want[..tag_len];
                if *etm {
                    if let Some(m) = mac {
                        m.sign(seq, packet, want)?;
                        if !constant_time_eq(want, tag) {
                            return Err(Error::Integrity);
                        }
                    }
                    crypt.apply(&mut packet[4..])?;
                } else {
                    crypt.apply(&mut packet[need..])?;
                    if let Some(m) = mac {
                        m.sign(seq, packet, want)?;
                        if !constant_time_eq(want, tag) {
                            return Err(Error::Integrity);
                        }
                    }
                }
            }
        }
        let pad = packet[4] as usize;
        let end = packet.len().checked_sub(pad).filter(|&e| e >= 5);
        match end {
            Some(end) if pad >= MIN_PADDING => Ok(5..end),
            _ => Err(Error::BadPadding("padding length out of range")),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{CIPHERS, MACS};

    fn assert_send<T: Send>() {}

    /// One key of 64 bytes for every part: enough for any cipher and MAC of the catalog.
    const KEY: [u8; 64] = [7; 64];

    fn keys<'a>(cipher: &'a str, mac: Option<&'a str>) -> DirectionKeys<'a> {
        DirectionKeys {
            cipher,
            mac,
            key: &KEY,
            iv: &KEY,
            mac_key: &KEY,
        }
    }

    #[test]
    fn keys_can_move_to_another_thread() {
        // The transport may run each direction on its own task.
        assert_send::<SealingKey>();
        assert_send::<OpeningKey>();
    }

    #[test]
    fn cleartext_round_trips_with_a_four_byte_length() {
        let mut tx = SealingKey::cleartext();
        let mut rx = OpeningKey::cleartext();
        assert_eq!(rx.length_bytes(), 4);
        assert!(!rx.discards_on_error());
        for len in [0usize, 1, 3, 11, 1000] {
            let payload = vec![0x5a; len];
            let mut wire = Vec::new();
            tx.seal(9, &payload, &mut wire).unwrap();
            assert_eq!(wire.len() % 8, 0);
            assert_eq!(&wire[5..5 + len], &payload[..], "sent in clear");
            assert_eq!(rx.decrypt_length(9, &mut wire[..4]).unwrap(), wire.len());
            let range = rx.open(9, &mut wire).unwrap();
            assert_eq!(&wire[range], &payload[..]);
        }
        let mut huge = (MAX_PACKET_LEN as u32 + 4).to_be_bytes();
        assert!(rx.decrypt_length(0, &mut huge).is_err());
    }

    /// `seal_into` (the data encrypted from the caller's buffer where the cipher allows)
    /// puts the same packet on the wire as `seal`: the other backend opens it, for every
    /// cipher and framing, and the payload comes back whole.
    #[test]
    fn seal_into_opens_like_seal_for_every_framing_and_backend() {
        let backends: &[Backend] = if cfg!(feature = "openssl") {
            &[Backend::Rust, Backend::Openssl]
        } else {
            &[Backend::Rust]
        };
        for c in CIPHERS {
            let macs: Vec<Option<&str>> = if c.is_aead() {
                vec![None]
            } else if c.kind == CipherKind::None {
                vec![None, Some("hmac-sha2-256")]
            } else {
                MACS.iter().map(|m| Some(m.name)).collect()
            };
            for m in macs {
                for &seal_b in backends {
                    let open_b = *backends.iter().find(|&&b| b != seal_b).unwrap_or(&seal_b);
                    let keys = keys(c.name, m);
                    let Ok(mut tx) = SealingKey::new(&keys, Some(seal_b)) else {
                        continue; // not in this backend (legacy provider missing)
                    };
                    let mut rx = OpeningKey::new(&keys, Some(open_b)).unwrap();
                    let head = [94u8, 0, 0, 0, 1, 0, 0, 0, 0];
                    for (seq, len) in [(0u32, 0usize), (1, 1), (2, 17), (3, 32768), (4, 1000)] {
                        let data: Vec<u8> =
                            (0..len).map(|i| (i * 7 + seq as usize) as u8).collect();
                        let mut out = vec![0u8; tx.sealed_len(head.len() + len) + 3];
                        let n = tx.seal_into(seq, &head, &data, &mut out).unwrap();
                        assert_eq!(n, tx.sealed_len(head.len() + len));
                        let wire = &mut out[..n];
                        let need = rx.length_bytes();
                        let total = rx.decrypt_length(seq, &mut wire[..need]).unwrap();
                        assert_eq!(total, n, "{} {m:?}", c.name);
                        let r = rx.open(seq, wire).unwrap_or_else(|e| {
                            panic!("{} {m:?} {seal_b:?}→{open_b:?} {len}: {e}", c.name)
                        });
                        assert_eq!(&wire[r.start..r.start + 9], &head[..]);
                        assert_eq!(&wire[r.start + 9..r.end], &data[..], "{}", c.name);
                    }
                    let mut small = vec![0u8; 10];
                    assert!(tx.seal_into(9, &head, &[1; 100], &mut small).is_err());
                }
            }
        }
    }

    #[test]
    fn padding_follows_rfc4253_for_every_framing() {
        for c in CIPHERS {
            let macs: Vec<Option<&str>> = if c.is_aead() {
                vec![None]
            } else {
                MACS.iter().map(|m| Some(m.name)).collect()
            };
            for m in macs {
                let s = SealingKey::new(&keys(c.name, m), Some(Backend::Rust)).unwrap();
                let f = s.framing();
                let aad = if f.length_in_clear || c.is_aead() {
                    4
                } else {
                    0
                };
                for len in 0..300 {
                    let pad = s.padding_len(len);
                    assert!((4..=255).contains(&pad), "{} {len}: {pad}", c.name);
                    assert_eq!(
                        (4 + 1 + len + pad - aad) % f.block_len,
                        0,
                        "{} {len}",
                        c.name
                    );
                    assert!(4 + 1 + len + pad >= 16);
                }
            }
        }
    }
}
