//! Binary packet framing (RFC 4253 §6): lengths, padding, sequence numbers and the counters
//! that drive rekeying. Encryption itself is delegated to a `Sealer`/`Opener`.

use super::crypt::{Opener, Plain, Sealer};
use super::error::{Error, Result};
use rand::{RngCore, SeedableRng};
use std::io::{self, Read, Write};

/// Largest packet we accept. RFC 4253 §6.1 requires 35000; OpenSSH accepts up to 256 KiB and
/// our own peers may use large packets for speed.
pub const MAX_PACKET_LEN: usize = ciphers::MAX_PACKET_LEN;

/// How much the reader asks the socket for at once.
const READ_CHUNK: usize = 256 * 1024;

/// Traffic since the last key exchange, for RFC 4344 rekey limits.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub packets: u64,
    pub bytes: u64,
    pub blocks: u64,
}

pub struct PacketReader<R> {
    r: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    opener: Box<dyn Opener>,
    pub seq: u32,
    pub since_kex: Counters,
    /// Range of the last payload inside `buf`.
    cur: (usize, usize),
}

impl<R: Read> PacketReader<R> {
    pub fn new(r: R) -> Self {
        Self {
            r,
            buf: vec![0; READ_CHUNK + MAX_PACKET_LEN + 512],
            start: 0,
            end: 0,
            opener: Box::new(Plain),
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

    pub fn set_opener(&mut self, o: Box<dyn Opener>) {
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
        let first = self.opener.first_len();
        self.fill(first)?;
        let s = self.start;
        let wire = match self.opener.wire_len(seq, &mut self.buf[s..s + first]) {
            Ok(w) if (first..=MAX_PACKET_LEN + 256).contains(&w) => w,
            Ok(w) => return Err(self.discard(Error::Packet(format!("invalid packet size {w}")))),
            Err(e) => return Err(self.discard(e)),
        };
        self.fill(wire)?;
        // fill() may have moved the buffered bytes to the front.
        let s = self.start;
        let range = match self.opener.open(seq, &mut self.buf[s..s + wire]) {
            Ok(r) => r,
            Err(e) => return Err(self.discard(e)),
        };
        self.cur = (s + range.start, s + range.end);
        self.start = s + wire;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            // `cur` still points into the buffer, which is not overwritten until the next read.
        }
        self.seq = seq.wrapping_add(1);
        self.since_kex.packets += 1;
        self.since_kex.bytes += wire as u64;
        self.since_kex.blocks += (wire / self.opener.block_len().max(8)) as u64;
        Ok(())
    }

    /// The length oracle of Albrecht, Paterson and Watson (2009): with CBC and
    /// encrypt-and-MAC, failing at once on a bad length but only after reading a plausible
    /// one tells the attacker bits of the first decrypted block. So, like OpenSSH's
    /// `packet_discard`, read `MAX_PACKET_LEN` bytes from the start of the bad packet either
    /// way (or until the peer stops) before reporting `e`. The connection is dead afterwards.
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
        e
    }

    pub fn payload(&self) -> &[u8] {
        &self.buf[self.cur.0..self.cur.1]
    }

    pub fn get_ref(&self) -> &R {
        &self.r
    }
}

pub struct PacketWriter<W> {
    w: W,
    buf: Vec<u8>,
    sealer: Box<dyn Sealer>,
    pub seq: u32,
    pub since_kex: Counters,
    rng: rand::rngs::SmallRng,
}

/// Space for `uint32 length || byte padding_length` before the payload.
pub const HEADER: usize = 5;

impl<W: Write> PacketWriter<W> {
    pub fn new(w: W) -> Self {
        Self {
            w,
            buf: Vec::with_capacity(MAX_PACKET_LEN + 64),
            sealer: Box::new(Plain),
            seq: 0,
            since_kex: Counters::default(),
            rng: rand::rngs::SmallRng::from_entropy(),
        }
    }

    pub fn set_sealer(&mut self, s: Box<dyn Sealer>) {
        self.sealer = s;
        self.since_kex = Counters::default();
    }

    /// A cleared buffer for the next payload; the caller appends the payload and calls
    /// `send`. Writing the payload in place saves a copy of bulk data.
    pub fn begin(&mut self) -> &mut Vec<u8> {
        self.buf.clear();
        self.buf.resize(HEADER, 0);
        &mut self.buf
    }

    pub fn send(&mut self) -> Result<()> {
        let payload_len = self.buf.len() - HEADER;
        let padding = self.sealer.padding_len(payload_len);
        let len = 1 + payload_len + padding;
        self.buf[..4].copy_from_slice(&(len as u32).to_be_bytes());
        self.buf[4] = padding as u8;
        let start = self.buf.len();
        self.buf.resize(start + padding, 0);
        self.rng.fill_bytes(&mut self.buf[start..]);
        let tag = self.sealer.tag_len();
        self.buf.resize(4 + len + tag, 0);
        self.sealer.seal(self.seq, &mut self.buf)?;
        self.w.write_all(&self.buf)?;
        self.seq = self.seq.wrapping_add(1);
        self.since_kex.packets += 1;
        self.since_kex.bytes += (4 + len) as u64;
        self.since_kex.blocks += ((4 + len) / self.sealer.block_len().max(8)) as u64;
        Ok(())
    }

    /// Sends a ready-made payload.
    pub fn send_payload(&mut self, payload: &[u8]) -> Result<()> {
        self.begin().extend_from_slice(payload);
        self.send()
    }

    pub fn flush(&mut self) -> Result<()> {
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
    use crate::transport::crypt::{self, DirectionKeys};

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

    fn keys(cipher: &'static str, mac: &'static str, mac_key: u8) -> DirectionKeys {
        DirectionKeys {
            cipher,
            mac: Some(mac),
            iv: vec![7; 64],
            key: vec![9; 64],
            mac_key: vec![mac_key; 64],
        }
    }

    /// Bytes read before a bad packet is reported.
    fn read_before_error(keys: &DirectionKeys, wire: Vec<u8>) -> usize {
        let mut r = PacketReader::new(Trickle { data: wire, pos: 0 });
        r.set_opener(crypt::opener(keys).unwrap());
        assert!(r.read_next().is_err());
        r.get_ref().pos
    }

    /// A packet sealed with another MAC key: its length is plausible, its MAC fails.
    fn bad_mac_packet(cipher: &'static str, mac: &'static str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = PacketWriter::new(&mut out);
        w.set_sealer(crypt::sealer(&keys(cipher, mac, 4)).unwrap());
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
            read_before_error(&keys(cbc, mac, 3), garbage.clone()),
            MAX_PACKET_LEN
        );
        let mut bad_mac = bad_mac_packet(cbc, mac);
        bad_mac.append(&mut garbage);
        assert_eq!(
            read_before_error(&keys(cbc, mac, 3), bad_mac),
            MAX_PACKET_LEN
        );
        // A peer that hangs up during the discard ends it.
        assert_eq!(read_before_error(&keys(cbc, mac, 3), vec![0x5a; 100]), 100);
    }

    /// Where the length is authenticated or not CBC there is no oracle: fail at once.
    #[test]
    fn other_framings_fail_at_once() {
        let garbage = vec![0x5a; 2 * MAX_PACKET_LEN];
        assert!(read_before_error(&keys("aes128-ctr", "hmac-sha2-256", 3), garbage.clone()) <= 16);
        let etm = "hmac-sha2-256-etm@openssh.com";
        assert!(read_before_error(&keys("aes128-cbc", etm, 3), garbage) <= 16);
        let bad_mac = bad_mac_packet("aes128-ctr", "hmac-sha2-256");
        let len = bad_mac.len();
        let mut wire = bad_mac;
        wire.extend_from_slice(&[0; 4096]);
        assert_eq!(
            read_before_error(&keys("aes128-ctr", "hmac-sha2-256", 3), wire),
            len
        );
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
