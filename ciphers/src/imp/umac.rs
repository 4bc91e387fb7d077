//! UMAC (RFC 4418), as OpenSSH uses it for `umac-64@openssh.com` and `umac-128@openssh.com`.
//!
//! No maintained crate implements UMAC, so it is written here from the RFC's pseudocode over
//! the backend's AES-128 (the only block cipher UMAC uses: key derivation and the pad).
//! OpenSSH's nonce is the packet sequence number as 8 big-endian bytes. The hash layers are
//! kept literal (NH, then POLY over 2^64-59, then the inner product mod 2^36-5) so they can be
//! read against the RFC; NH, where nearly all the time goes, works on whole 32-byte strides.

use super::Mac;
use crate::error::{Error, Result};

/// AES-128 as UMAC needs it: keyed from 16 bytes, one block at a time.
pub(crate) trait UmacAes: Send + Sized {
    fn with_key(key: &[u8]) -> Result<Self>;
    fn encrypt_block(&mut self, block: &mut [u8; 16]);
}

/// L1 processes the message in 1024-byte chunks (RFC 4418 §5.2.1).
const L1_CHUNK: usize = 1024;
/// Past 2^17 bytes of L1 output (a 16 MiB message) L2 switches to a 128-bit polynomial; SSH
/// packets are at most 256 KiB, so that branch is refused instead of carried untested.
const L2_64BIT_LIMIT: usize = 1 << 17;
const P64: u64 = 0xFFFF_FFFF_FFFF_FFC5; // 2^64 - 59
const P36: u64 = (1 << 36) - 5;

/// One of the `taglen / 4` independent UHASH iterations.
struct Iteration {
    /// 32-bit words of this iteration's L1 key (1024 bytes), big-endian.
    l1: Vec<u32>,
    k64: u64,
    l3k1: [u64; 8],
    l3k2: u32,
}

pub(crate) struct Umac<A: UmacAes> {
    iters: Vec<Iteration>,
    /// AES under the PDF key K' (RFC 4418 §5.1).
    pdf: A,
    tag_len: usize,
    /// Scratch for L1 output, kept to avoid an allocation per packet.
    l1_out: Vec<u64>,
}

fn kdf<A: UmacAes>(aes: &mut A, index: u8, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len.div_ceil(16) * 16);
    let mut i: u64 = 1;
    while out.len() < len {
        let mut t = [0u8; 16];
        t[7] = index;
        t[8..].copy_from_slice(&i.to_be_bytes());
        aes.encrypt_block(&mut t);
        out.extend_from_slice(&t);
        i += 1;
    }
    out.truncate(len);
    out
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

impl<A: UmacAes> Umac<A> {
    /// Derives all subkeys from the 16-byte MAC key (RFC 4418 §3.2.1 KDF, index 0 for the
    /// pad key, 1 to 4 for the hash layers).
    pub(crate) fn new(key: &[u8], tag_len: usize) -> Result<Self> {
        let mut aes = A::with_key(key)?;
        let n = tag_len / 4;
        let l1 = kdf(&mut aes, 1, L1_CHUNK + (n - 1) * 16);
        let l2 = kdf(&mut aes, 2, n * 24);
        let l3a = kdf(&mut aes, 3, n * 64);
        let l3b = kdf(&mut aes, 4, n * 4);
        let pdf_key = kdf(&mut aes, 0, 16);
        let iters = (0..n)
            .map(|i| {
                let k1 = &l1[i * 16..i * 16 + L1_CHUNK];
                let mut l3k1 = [0u64; 8];
                for (j, k) in l3k1.iter_mut().enumerate() {
                    *k = be64(&l3a[i * 64 + j * 8..]) % P36;
                }
                Iteration {
                    l1: k1.chunks_exact(4).map(be32).collect(),
                    k64: be64(&l2[i * 24..]) & 0x01FF_FFFF_01FF_FFFF,
                    l3k1,
                    l3k2: be32(&l3b[i * 4..]),
                }
            })
            .collect();
        Ok(Umac {
            iters,
            pdf: A::with_key(&pdf_key)?,
            tag_len,
            l1_out: Vec::new(),
        })
    }

    /// The full RFC 4418 UMAC with an arbitrary nonce (1 to 16 bytes); the SSH MAC calls it
    /// with the sequence number.
    pub(crate) fn tag(&mut self, nonce: &[u8], msg: &[u8], out: &mut [u8]) -> Result<()> {
        if msg.len().div_ceil(L1_CHUNK) * 8 > L2_64BIT_LIMIT {
            return Err(Error::BadLength(msg.len()));
        }
        let mut pad = self.pad(nonce);
        for (i, it) in self.iters.iter().enumerate() {
            let y = uhash_iteration(it, msg, &mut self.l1_out);
            for (p, b) in pad[i * 4..i * 4 + 4].iter_mut().zip(y.to_be_bytes()) {
                *p ^= b;
            }
        }
        out.copy_from_slice(&pad[..out.len()]);
        Ok(())
    }

    /// PDF (RFC 4418 §5.1): for 4- and 8-byte tags the low nonce bits pick a slice of one
    /// AES output, so consecutive nonces share a block.
    fn pad(&mut self, nonce: &[u8]) -> [u8; 16] {
        let mut block = [0u8; 16];
        block[..nonce.len()].copy_from_slice(nonce);
        let index = if self.tag_len <= 8 {
            let per = 16 / self.tag_len;
            let idx = (nonce[nonce.len() - 1] as usize) % per;
            block[nonce.len() - 1] ^= idx as u8;
            idx
        } else {
            0
        };
        self.pdf.encrypt_block(&mut block);
        let mut out = [0u8; 16];
        let start = index * self.tag_len;
        out[..self.tag_len].copy_from_slice(&block[start..start + self.tag_len]);
        out
    }
}

/// NH (RFC 4418 §5.2.2) over one zero-padded, whole-32-byte chunk. Message words are read
/// little-endian (the RFC's ENDIAN-SWAP), key words big-endian.
fn nh(key: &[u32], chunk: &[u8]) -> u64 {
    let mut y: u64 = 0;
    for (m, k) in chunk.chunks_exact(32).zip(key.chunks_exact(8)) {
        let w = |i: usize| u32::from_le_bytes([m[i * 4], m[i * 4 + 1], m[i * 4 + 2], m[i * 4 + 3]]);
        for j in 0..4 {
            let a = w(j).wrapping_add(k[j]) as u64;
            let b = w(j + 4).wrapping_add(k[j + 4]) as u64;
            y = y.wrapping_add(a.wrapping_mul(b));
        }
    }
    y
}

fn l1_hash(key: &[u32], msg: &[u8], out: &mut Vec<u64>) {
    out.clear();
    let mut chunks = msg.chunks(L1_CHUNK).peekable();
    if chunks.peek().is_none() {
        out.push(nh(key, &[0u8; 32]));
        return;
    }
    for c in chunks {
        let bits = (c.len() as u64) * 8;
        let h = if c.len() % 32 == 0 {
            nh(key, c)
        } else {
            let mut buf = [0u8; L1_CHUNK];
            let padded = c.len().div_ceil(32) * 32;
            buf[..c.len()].copy_from_slice(c);
            nh(key, &buf[..padded])
        };
        out.push(h.wrapping_add(bits));
    }
}

/// (a * b + c) mod 2^64 - 59.
fn mul_add_mod_p64(a: u64, b: u64, c: u64) -> u64 {
    ((a as u128 * b as u128 + c as u128) % P64 as u128) as u64
}

/// POLY(64, 2^64 - 2^32, k, M) from RFC 4418 §5.3.2 (the part of L2 SSH ever reaches).
fn poly64(k: u64, words: &[u64]) -> u64 {
    const MAX_WORD: u64 = 0xFFFF_FFFF_0000_0000;
    let mut y: u64 = 1;
    for &m in words {
        if m >= MAX_WORD {
            y = mul_add_mod_p64(k, y, P64 - 1);
            y = mul_add_mod_p64(k, y, m - 59);
        } else {
            y = mul_add_mod_p64(k, y, m);
        }
    }
    y
}

fn l3_hash(it: &Iteration, b: [u8; 16]) -> u32 {
    let mut y: u64 = 0;
    for (j, k) in it.l3k1.iter().enumerate() {
        let m = u16::from_be_bytes([b[j * 2], b[j * 2 + 1]]) as u64;
        y = (y + m * k) % P36;
    }
    (y as u32) ^ it.l3k2
}

fn uhash_iteration(it: &Iteration, msg: &[u8], scratch: &mut Vec<u64>) -> u32 {
    l1_hash(&it.l1, msg, scratch);
    let mut b = [0u8; 16];
    if msg.len() <= L1_CHUNK {
        b[8..].copy_from_slice(&scratch[0].to_be_bytes());
    } else {
        b[8..].copy_from_slice(&poly64(it.k64, scratch).to_be_bytes());
    }
    l3_hash(it, b)
}

impl<A: UmacAes> Mac for Umac<A> {
    fn sign(&mut self, seq: u32, data: &[u8], out: &mut [u8]) -> Result<()> {
        self.tag(&u64::from(seq).to_be_bytes(), data, out)
    }
}
