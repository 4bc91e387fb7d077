//! The binary packet stream (RFC 4253 §6) of one connection: sequence numbers, the counters
//! that drive rekeying, buffering, and the CBC discard rule. What a packet looks like —
//! lengths, padding, encryption, MAC — is the `ciphers` crate's alone: before the first
//! NEWKEYS its cleartext keys, afterwards the negotiated ones, so every packet of a
//! connection is framed by the same code.

use super::error::{Error, Result};
use ciphers::{OpeningKey, SealingKey, HEADER_LEN, MAX_PACKET_LEN};
use std::io::{self, Read, Write};

/// How much the reader asks the socket for at once.
const READ_CHUNK: usize = 256 * 1024;

/// The largest `packet_length` a server reads before the client has logged in: 35,000 bytes,
/// the size RFC 4253 §6.1 says every implementation must be able to process, so no client can
/// count on sending more. Nothing a client sends before login comes near it (OpenSSH's
/// KEXINIT is about 1.5 KB; a USERAUTH_REQUEST with a 16384-bit RSA key and its signature
/// about 4.2 KB). With it the read buffer of an unauthenticated connection is 70 KiB instead
/// of 512 KiB, and a peer's name-lists stay small.
pub const PRE_AUTH_MAX_PACKET: usize = 35_000;

/// The read buffer for packets up to `max_packet`: one read of up to `READ_CHUNK` (or one
/// packet) and one whole packet with its length, tag and padding.
fn read_buffer_len(max_packet: usize) -> usize {
    READ_CHUNK.min(max_packet) + max_packet + 512
}

/// Traffic since the last key exchange, for RFC 4344 rekey limits.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub packets: u64,
    pub bytes: u64,
    pub blocks: u64,
}

impl Counters {
    fn add(&mut self, wire: usize, block_len: usize) {
        self.packets += 1;
        self.bytes += wire as u64;
        self.blocks += (wire / block_len.max(8)) as u64;
    }
}

/// Keys for one direction as the key exchange derived them, ready for packets; a
/// negotiated algorithm this build cannot run is a protocol error, not a crash. With
/// `keystream_ahead`, a cipher that has a data-independent keystream gets a helper thread
/// that computes it ahead (`SealingKey::with_keystream_ahead`); any other seals as usual.
pub fn sealer(keys: &ciphers::DirectionKeys, keystream_ahead: bool) -> Result<SealingKey> {
    if keystream_ahead && SealingKey::keystream_ahead_possible(keys.cipher) {
        SealingKey::with_keystream_ahead(keys, None)
    } else {
        SealingKey::new(keys, None)
    }
    .map_err(|e| unsupported(&e))
}

/// See [`sealer`].
pub fn opener(keys: &ciphers::DirectionKeys) -> Result<OpeningKey> {
    OpeningKey::new(keys, None).map_err(|e| unsupported(&e))
}

fn unsupported(e: &ciphers::Error) -> Error {
    Error::protocol(format!("{e} negotiated but not available in this build"))
}

/// A packet the peer got wrong, in the transport's terms.
fn packet_error(e: ciphers::Error) -> Error {
    match e {
        ciphers::Error::Integrity => Error::Mac,
        ciphers::Error::BadLength(n) => Error::Packet(format!("invalid packet length {n}")),
        ciphers::Error::BadPadding(why) => Error::Packet(format!("bad padding: {why}")),
        other => Error::protocol(other.to_string()),
    }
}

pub struct PacketReader<R> {
    r: R,
    buf: Vec<u8>,
    /// The largest `packet_length` accepted (see `set_max_packet`).
    max_packet: usize,
    start: usize,
    end: usize,
    opener: OpeningKey,
    pub seq: u32,
    pub since_kex: Counters,
    /// Range of the last payload inside `buf`.
    cur: (usize, usize),
}

impl<R: Read> PacketReader<R> {
    pub fn new(r: R) -> Self {
        Self::with_max_packet(r, MAX_PACKET_LEN)
    }

    /// A reader that refuses packets longer than `max_packet` (at most `MAX_PACKET_LEN`).
    pub fn with_max_packet(r: R, max_packet: usize) -> Self {
        let max_packet = max_packet.min(MAX_PACKET_LEN);
        Self {
            r,
            buf: vec![0; read_buffer_len(max_packet)],
            max_packet,
            start: 0,
            end: 0,
            opener: OpeningKey::cleartext(),
            seq: 0,
            since_kex: Counters::default(),
            cur: (0, 0),
        }
    }

    /// Bytes that arrived before the binary protocol started (after the ident line).
    pub fn preload(&mut self, bytes: &[u8]) {
        self.buf[..bytes.len()].copy_from_slice(bytes);
        self.start = 0;
        self.end = bytes.len();
    }

    /// Changes the largest packet accepted; the read buffer grows to fit (bytes already
    /// buffered, and the last payload, stay where they are).
    pub fn set_max_packet(&mut self, max_packet: usize) {
        self.max_packet = max_packet.min(MAX_PACKET_LEN);
        let len = read_buffer_len(self.max_packet);
        if len > self.buf.len() {
            // A fresh zeroed allocation is mapped lazily; resizing would write every byte.
            let mut bigger = vec![0; len];
            bigger[..self.end].copy_from_slice(&self.buf[..self.end]);
            self.buf = bigger;
        }
    }

    pub fn set_opener(&mut self, o: OpeningKey) {
        self.opener = o;
        self.since_kex = Counters::default();
    }

    /// Ensures `need` buffered bytes from `start`.
    fn fill(&mut self, need: usize) -> Result<()> {
        if self.end - self.start >= need {
            return Ok(());
        }
        if self.start + need > self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end - self.start < need {
            let room = self.buf.len() - self.end;
            let want = room.min(READ_CHUNK.max(need - (self.end - self.start)));
            match self.r.read(&mut self.buf[self.end..self.end + want]) {
                Ok(0) => return Err(Error::Closed),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Reads, decrypts and checks one packet; the payload is then at `payload()`.
    pub fn read_next(&mut self) -> Result<()> {
        let seq = self.seq;
        let first = self.opener.length_bytes();
        self.fill(first)?;
        let s = self.start;
        // Whole wire size: length field, packet, tag.
        let most = 4 + self.max_packet + self.opener.framing().tag_len;
        let wire = match self.opener.decrypt_length(seq, &mut self.buf[s..s + first]) {
            Ok(w) if (first..=most).contains(&w) => w,
            Ok(w) => {
                let why = format!("packet of {w} bytes, over the limit of {most}");
                return Err(self.discard(Error::Packet(why)));
            }
            Err(e) => return Err(self.discard(packet_error(e))),
        };
        self.fill(wire)?;
        // fill() may have moved the buffered bytes to the front.
        let s = self.start;
        let range = match self.opener.open(seq, &mut self.buf[s..s + wire]) {
            Ok(r) => r,
            Err(e) => return Err(self.discard(packet_error(e))),
        };
        self.cur = (s + range.start, s + range.end);
        self.start = s + wire;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            // `cur` still points into the buffer, which is not overwritten until the next read.
        }
        self.seq = seq.wrapping_add(1);
        self.since_kex.add(wire, self.opener.framing().block_len);
        Ok(())
    }

    /// The length oracle (see [`OpeningKey::discards_on_error`]): like OpenSSH's
    /// `packet_discard`, read `MAX_PACKET_LEN` bytes from the start of the bad packet either
    /// way (or until the peer stops), then report a bad length and a bad MAC alike, as a MAC
    /// failure: one DISCONNECT reason and one text, so their lengths on the wire do not tell
    /// them apart either. Other framings report `e` at once. The connection is dead afterwards.
    fn discard(&mut self, e: Error) -> Error {
        if !self.opener.discards_on_error() {
            return e;
        }
        let mut left = MAX_PACKET_LEN.saturating_sub(self.end - self.start);
        while left > 0 {
            let n = left.min(self.buf.len());
            match self.r.read(&mut self.buf[..n]) {
                Ok(0) => break,
                Ok(got) => left -= got,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.start = 0;
        self.end = 0;
        Error::Mac
    }

    pub fn payload(&self) -> &[u8] {
        &self.buf[self.cur.0..self.cur.1]
    }

    pub fn get_ref(&self) -> &R {
        &self.r
    }
}

/// Sealed packets held for one write reach at least this size before `send_held` writes
/// them: a 32 KiB data packet per `write` costs a syscall and a trip through the socket
/// layer each, eight of them in one write cost one.
pub const WRITE_BATCH: usize = 256 * 1024;

/// Seals packets into one output buffer and writes them from there.
///
/// Why this shape: bulk data (`send_data_held`) is encrypted from the caller's buffer
/// straight into the output buffer where the cipher allows it (`SealingKey::seal_into`), so
/// the payload is not copied into a packet buffer first, and nothing is allocated per packet.
/// Data packets wait until `WRITE_BATCH` bytes are ready, so eight 32 KiB packets cost one
/// `write`; any other packet, and `flush_held`, writes everything that waits, in order. Other
/// messages are small: they are built in `msg` (`begin`), sealed there and copied over.
pub struct PacketWriter<W> {
    w: W,
    /// Sealed packets not yet written, `out[..start]`. Its length never changes: room for a
    /// batch and one more packet of any size.
    out: Vec<u8>,
    start: usize,
    /// The message being built by `begin`'s caller.
    msg: Vec<u8>,
    sealer: SealingKey,
    /// CPU of keystream helpers of sealers already replaced by a rekey.
    retired_helper_cpu_s: f64,
    pub seq: u32,
    pub since_kex: Counters,
}

/// `out`'s fixed length: a batch, one more packet of the largest size, its tag and padding.
const OUT_LEN: usize = WRITE_BATCH + MAX_PACKET_LEN + 1024;

impl<W: Write> PacketWriter<W> {
    pub fn new(w: W) -> Self {
        Self {
            w,
            out: vec![0; OUT_LEN],
            start: 0,
            msg: Vec::with_capacity(4096),
            sealer: SealingKey::cleartext(),
            retired_helper_cpu_s: 0.0,
            seq: 0,
            since_kex: Counters::default(),
        }
    }

    /// Packets sealed so far keep their keys: a rekey changes only the packets after it.
    pub fn set_sealer(&mut self, s: SealingKey) {
        let old = std::mem::replace(&mut self.sealer, s);
        self.retired_helper_cpu_s += old.helper_cpu_seconds();
        self.since_kex = Counters::default();
    }

    /// CPU seconds of every keystream helper this writer's sealers have run.
    pub fn helper_cpu_seconds(&self) -> f64 {
        self.retired_helper_cpu_s + self.sealer.helper_cpu_seconds()
    }

    /// A cleared buffer for the next message; the caller appends the payload and calls
    /// `send`.
    pub fn begin(&mut self) -> &mut Vec<u8> {
        self.msg.clear();
        self.msg.resize(HEADER_LEN, 0);
        &mut self.msg
    }

    /// Counts a packet of `wire` bytes (tag included) sealed at `seq`.
    fn sealed(&mut self, wire: usize) {
        self.seq = self.seq.wrapping_add(1);
        let framing = self.sealer.framing();
        self.since_kex
            .add(wire - framing.tag_len, framing.block_len);
        self.start += wire;
    }

    /// Seals the begun message and writes it, with everything held before it.
    pub fn send(&mut self) -> Result<()> {
        self.sealer.frame(&mut self.msg, 0).map_err(packet_error)?;
        self.sealer
            .seal_in_place(self.seq, &mut self.msg)
            .map_err(packet_error)?;
        let n = self.msg.len();
        if self.start + n > self.out.len() {
            self.flush_held()?;
        }
        self.out[self.start..self.start + n].copy_from_slice(&self.msg);
        self.sealed(n);
        self.flush_held()
    }

    /// Seals a packet whose payload is `head` followed by `data` (e.g. a CHANNEL_DATA
    /// header and the bytes) into the output buffer; writes once `WRITE_BATCH` bytes wait.
    pub fn send_data_held(&mut self, head: &[u8], data: &[u8]) -> Result<()> {
        let need = self.sealer.sealed_len(head.len() + data.len());
        if self.start + need > self.out.len() {
            self.flush_held()?;
        }
        let n = self
            .sealer
            .seal_into(self.seq, head, data, &mut self.out[self.start..])
            .map_err(packet_error)?;
        self.sealed(n);
        if self.start >= WRITE_BATCH {
            self.flush_held()?;
        }
        Ok(())
    }

    /// Writes every sealed packet that waits.
    pub fn flush_held(&mut self) -> Result<()> {
        if self.start > 0 {
            let n = std::mem::take(&mut self.start);
            // On error the connection is dead: the packets are dropped with it.
            self.w.write_all(&self.out[..n])?;
        }
        Ok(())
    }

    /// Sends a ready-made payload.
    pub fn send_payload(&mut self, payload: &[u8]) -> Result<()> {
        self.begin().extend_from_slice(payload);
        self.send()
    }

    pub fn flush(&mut self) -> Result<()> {
        self.flush_held()?;
        Ok(self.w.flush()?)
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_round_trip_counts_sequence_numbers() {
        let mut out = Vec::new();
        {
            let mut w = PacketWriter::new(&mut out);
            w.send_payload(b"hello").unwrap();
            w.send_payload(&[7u8; 1000]).unwrap();
            assert_eq!(w.seq, 2);
        }
        assert_eq!(out.len() % 8, 0);
        let mut r = PacketReader::new(&out[..]);
        r.read_next().unwrap();
        assert_eq!(r.payload(), b"hello");
        r.read_next().unwrap();
        assert_eq!(r.payload(), &[7u8; 1000][..]);
        assert_eq!(r.seq, 2);
        assert!(matches!(r.read_next(), Err(Error::Closed)));
    }

    /// Held data packets wait for a batch, then leave in order; any other send writes them
    /// first, and every packet still gets its own sequence number.
    #[test]
    fn held_packets_are_written_in_order_in_batches() {
        let big = WRITE_BATCH / 32768 + 1;
        let mut out = Vec::new();
        {
            let mut w = PacketWriter::new(&mut out);
            for i in 0..3u8 {
                w.send_data_held(&[i], &[i; 1000]).unwrap();
            }
            assert!(w.get_mut().is_empty(), "three small packets wait");
            w.send_payload(b"control").unwrap();
            assert!(
                !w.get_mut().is_empty(),
                "a plain send writes the held ones first"
            );
            let before = w.get_mut().len();
            for _ in 0..big {
                w.send_data_held(b"h", &[9; 32768]).unwrap();
            }
            assert!(w.get_mut().len() > before, "a full batch is written");
            w.send_data_held(b"", b"tail").unwrap();
            w.flush_held().unwrap();
            assert_eq!(w.seq, 3 + 1 + big as u32 + 1);
        }
        let mut r = PacketReader::new(&out[..]);
        for i in 0..3u8 {
            r.read_next().unwrap();
            assert_eq!(r.payload()[0], i);
            assert_eq!(&r.payload()[1..], &[i; 1000][..]);
        }
        r.read_next().unwrap();
        assert_eq!(r.payload(), b"control");
        for _ in 0..big {
            r.read_next().unwrap();
            assert_eq!(r.payload()[0], b'h');
            assert_eq!(&r.payload()[1..], &[9; 32768][..]);
        }
        r.read_next().unwrap();
        assert_eq!(r.payload(), b"tail");
        assert!(matches!(r.read_next(), Err(Error::Closed)));
    }

    #[test]
    fn hostile_lengths_are_errors() {
        for bytes in [
            &b"\xff\xff\xff\xff"[..],
            &b"\x00\x00\x00\x01\x00"[..],
            &b"\x00\x00\x00\x0c\x0caaaaaaaaaaa"[..],
            &b"\x00\x00\x00\x0b\x04aaaaaaaaaa"[..],
        ] {
            let mut r = PacketReader::new(bytes);
            assert!(matches!(r.read_next(), Err(Error::Packet(_))), "{bytes:?}");
        }
    }
}

#[cfg(test)]
mod regression {
    use super::*;
    use ciphers::DirectionKeys;

    /// A peer that delivers a few bytes per read, as a network does, counting what was read.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(16).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    fn keys(
        cipher: &'static str,
        mac: &'static str,
        mac_key: &'static [u8],
    ) -> DirectionKeys<'static> {
        DirectionKeys {
            cipher,
            mac: Some(mac),
            iv: &[7; 64],
            key: &[9; 64],
            mac_key,
        }
    }

    /// Bytes read before a bad packet is reported.
    fn read_before_error(keys: &DirectionKeys, wire: Vec<u8>) -> usize {
        let mut r = PacketReader::new(Trickle { data: wire, pos: 0 });
        r.set_opener(opener(keys).unwrap());
        assert!(r.read_next().is_err());
        r.get_ref().pos
    }

    /// A packet sealed with another MAC key: its length is plausible, its MAC fails.
    fn bad_mac_packet(cipher: &'static str, mac: &'static str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = PacketWriter::new(&mut out);
        w.set_sealer(sealer(&keys(cipher, mac, &[4; 64]), false).unwrap());
        w.send_payload(&[94; 1000]).unwrap();
        out
    }

    /// CBC with an encrypt-and-MAC MAC used to fail on a bad length after one block and on a
    /// bad MAC after the whole packet: the difference is the length oracle.
    #[test]
    fn cbc_with_encrypt_and_mac_discards_before_failing() {
        let (cbc, mac) = ("aes128-cbc", "hmac-sha2-256");
        let mut garbage = vec![0x5a; 2 * MAX_PACKET_LEN];
        assert_eq!(
            read_before_error(&keys(cbc, mac, &[3; 64]), garbage.clone()),
            MAX_PACKET_LEN
        );
        let mut bad_mac = bad_mac_packet(cbc, mac);
        bad_mac.append(&mut garbage);
        assert_eq!(
            read_before_error(&keys(cbc, mac, &[3; 64]), bad_mac),
            MAX_PACKET_LEN
        );
        // A peer that hangs up during the discard ends it.
        assert_eq!(
            read_before_error(&keys(cbc, mac, &[3; 64]), vec![0x5a; 100]),
            100
        );
    }

    /// After the discard, a bad length and a bad MAC used to end in different DISCONNECTs
    /// (reason 2 "invalid packet size N" and reason 5 with a longer text), which an observer
    /// tells apart by their length on the wire: now one reason and one text.
    #[test]
    fn cbc_bad_length_and_bad_mac_look_the_same() {
        let (cbc, mac) = ("aes128-cbc", "hmac-sha2-256");
        let error = |wire: Vec<u8>| {
            let mut r = PacketReader::new(Trickle { data: wire, pos: 0 });
            r.set_opener(opener(&keys(cbc, mac, &[3; 64])).unwrap());
            r.read_next().unwrap_err()
        };
        let bad_length = error(vec![0x5a; 2 * MAX_PACKET_LEN]);
        let mut bad_mac = bad_mac_packet(cbc, mac);
        bad_mac.extend_from_slice(&[0x5a; MAX_PACKET_LEN]);
        let bad_mac = error(bad_mac);
        assert_eq!(bad_length.disconnect_reason(), bad_mac.disconnect_reason());
        assert_eq!(bad_length.to_string(), bad_mac.to_string());
    }

    /// Where the length is authenticated or not CBC there is no oracle: fail at once.
    #[test]
    fn other_framings_fail_at_once() {
        let garbage = vec![0x5a; 2 * MAX_PACKET_LEN];
        assert!(
            read_before_error(
                &keys("aes128-ctr", "hmac-sha2-256", &[3; 64]),
                garbage.clone()
            ) <= 16
        );
        let etm = "hmac-sha2-256-etm@openssh.com";
        assert!(read_before_error(&keys("aes128-cbc", etm, &[3; 64]), garbage) <= 16);
        let bad_mac = bad_mac_packet("aes128-ctr", "hmac-sha2-256");
        let len = bad_mac.len();
        let mut wire = bad_mac;
        wire.extend_from_slice(&[0; 4096]);
        assert_eq!(
            read_before_error(&keys("aes128-ctr", "hmac-sha2-256", &[3; 64]), wire),
            len
        );
    }

    /// Before login a server reads packets of at most `PRE_AUTH_MAX_PACKET` from a buffer of
    /// 70 KiB; raising the limit grows the buffer and keeps what it holds.
    #[test]
    fn small_packets_before_login_and_any_after() {
        let wire = |sizes: &[usize]| {
            let mut out = Vec::new();
            let mut w = PacketWriter::new(&mut out);
            for (i, &n) in sizes.iter().enumerate() {
                w.send_payload(&vec![i as u8; n]).unwrap();
            }
            out
        };
        let big = wire(&[40_000]);
        let mut r = PacketReader::with_max_packet(&big[..], PRE_AUTH_MAX_PACKET);
        assert!(r.buf.len() < 72 * 1024, "{}", r.buf.len());
        assert!(matches!(r.read_next(), Err(Error::Packet(_))));
        let data = wire(&[34_000, 1000, 200_000]);
        let mut r = PacketReader::with_max_packet(Trickle { data, pos: 0 }, PRE_AUTH_MAX_PACKET);
        r.read_next().unwrap();
        assert_eq!(r.payload().len(), 34_000);
        r.read_next().unwrap();
        r.set_max_packet(MAX_PACKET_LEN);
        assert_eq!(r.payload(), &[1u8; 1000][..]);
        r.read_next().unwrap();
        assert_eq!(r.payload(), &[2u8; 200_000][..]);
    }

    /// The biggest login request a client can make: an RSA key of 16,384 bits (OpenSSH's
    /// largest) with its signature and a 255-byte user name fits the pre-login packet limit
    /// in under a quarter of it (about 4,500 bytes), and a reader held to that limit takes it.
    #[test]
    fn largest_login_request_fits_before_login() {
        use crate::wire::userauth::{Method, UserauthRequest};
        use crate::wire::{codec::Writer, Message};
        let mut blob = Writer::new();
        let mut modulus = vec![0xc5u8; 16_384 / 8];
        modulus.insert(0, 0); // mpint: a leading zero keeps it positive
        blob.string(b"ssh-rsa").string(&[1, 0, 1]).string(&modulus);
        let blob = blob.into_bytes();
        let mut sig = Writer::new();
        sig.string(b"rsa-sha2-512").string(&[0x5a; 16_384 / 8]);
        let sig = sig.into_bytes();
        let user = [b'u'; 255];
        let request = UserauthRequest {
            user: &user,
            service: b"ssh-connection",
            method: Method::PublicKey {
                algorithm: b"rsa-sha2-512",
                blob: &blob,
                signature: Some(&sig),
            },
        }
        .encode();
        assert!(request.len() < PRE_AUTH_MAX_PACKET / 4, "{}", request.len());
        let mut wire = Vec::new();
        PacketWriter::new(&mut wire).send_payload(&request).unwrap();
        let mut r = PacketReader::with_max_packet(&wire[..], PRE_AUTH_MAX_PACKET);
        r.read_next().unwrap();
        assert_eq!(r.payload(), &request[..]);
    }

    /// A packet straddling the end of the read buffer used to be read at its old offset
    /// after the buffer was compacted.
    #[test]
    fn packet_across_buffer_compaction() {
        let mut out = Vec::new();
        {
            let mut w = PacketWriter::new(&mut out);
            for i in 0..40u8 {
                w.send_payload(&vec![i; 200_000]).unwrap();
            }
        }
        let mut r = PacketReader::new(&out[..]);
        for i in 0..40u8 {
            r.read_next().unwrap();
            assert!(r.payload().iter().all(|&b| b == i));
            assert_eq!(r.payload().len(), 200_000);
        }
    }
}
