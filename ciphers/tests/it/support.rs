//! Helpers shared by the ciphers crate's tests.

use ciphers::{Backend, CipherSpec, DirectionKeys, MacSpec, OpeningKey, SealingKey, CIPHERS, MACS};

/// Deterministic, distinct key material per role so a swapped key shows up as a failure.
pub fn material(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt))
        .collect()
}

/// Key material for one direction of any algorithm in the catalog: a 64-byte cipher key, a
/// 16-byte IV and a 64-byte MAC key, each [`material`] of its own salt. A cipher reads the
/// first bytes it needs.
pub struct Keying {
    key: Vec<u8>,
    iv: Vec<u8>,
    mac_key: Vec<u8>,
}

impl Default for Keying {
    fn default() -> Self {
        let (key, iv, mac_key) = (material(64, 1), material(16, 2), material(64, 3));
        Self { key, iv, mac_key }
    }
}

impl Keying {
    /// The keys of `cipher` (with `mac`, `None` for an AEAD) from this material.
    pub fn direction<'a>(&'a self, cipher: &'a str, mac: Option<&'a str>) -> DirectionKeys<'a> {
        let (key, iv, mac_key) = (&self.key[..], &self.iv[..], &self.mac_key[..]);
        DirectionKeys {
            cipher,
            mac,
            key,
            iv,
            mac_key,
        }
    }
}

/// Every (cipher, MAC) pair SSH can negotiate: AEADs alone, `none` with and without a MAC,
/// the rest with every MAC.
pub fn pairs() -> Vec<(&'static CipherSpec, Option<&'static MacSpec>)> {
    let mut v = Vec::new();
    for c in CIPHERS {
        if c.is_aead() {
            v.push((c, None));
        } else {
            if c.name == "none" {
                v.push((c, None));
            }
            for m in MACS {
                v.push((c, Some(m)));
            }
        }
    }
    v
}

pub fn keys(c: &CipherSpec, m: Option<&MacSpec>) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    (
        material(c.key_len, 1),
        material(c.iv_len, 2),
        material(m.map_or(0, |m| m.key_len), 3),
    )
}

pub fn pair_keys(
    c: &'static CipherSpec,
    m: Option<&'static MacSpec>,
    seal: Backend,
    open: Backend,
) -> (SealingKey, OpeningKey) {
    pair_keys_on(c, m, Some(seal), Some(open))
}

/// As [`pair_keys`]; a backend of None is the catalog's default for this CPU.
pub fn pair_keys_on(
    c: &'static CipherSpec,
    m: Option<&'static MacSpec>,
    seal: Option<Backend>,
    open: Option<Backend>,
) -> (SealingKey, OpeningKey) {
    let (k, iv, mk) = keys(c, m);
    let dk = DirectionKeys {
        cipher: c.name,
        mac: m.map(|m| m.name),
        key: &k,
        iv: &iv,
        mac_key: &mk,
    };
    let s = SealingKey::new(&dk, seal).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    let o = OpeningKey::new(&dk, open).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    (s, o)
}

/// Seals then opens like a transport reading a stream: length first, then the rest.
pub fn roundtrip(s: &mut SealingKey, o: &mut OpeningKey, seq: u32, payload: &[u8]) {
    let mut wire = Vec::new();
    s.seal(seq, payload, &mut wire).unwrap();
    let n = o.length_bytes();
    let total = o.decrypt_length(seq, &mut wire[..n]).unwrap();
    assert_eq!(total, wire.len(), "{:?}", s.cipher().name);
    let r = o.open(seq, &mut wire).unwrap();
    assert_eq!(&wire[r], payload);
}
