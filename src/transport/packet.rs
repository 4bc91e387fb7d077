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
        let wire = self.opener.wire_len(seq, &mut self.buf[s..s + first])?;
        if !(first..=MAX_PACKET_LEN + 256).contains(&wire) {
            return Err(Error::Packet(format!("invalid packet size {wire}")));
        }
        self.fill(wire)?;
        // fill() may have moved the buffered bytes to the front.
        let s = self.start;
        let range = self.opener.open(seq, &mut self.buf[s..s + wire])?;
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
