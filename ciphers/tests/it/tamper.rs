//! Integrity: any flipped bit in a sealed packet must make `open` fail, and the length
//! checks must refuse sizes a peer could use to make us buffer too much.

use crate::support::*;
use ciphers::{Backend, CipherKind, Error, MAX_PACKET_LEN};

#[test]
fn every_flipped_bit_position_class_is_rejected() {
    for (c, m) in pairs() {
        if c.kind == CipherKind::None && m.is_none() {
            continue; // no integrity at all: nothing to detect with
        }
        for &b in Backend::AVAILABLE {
            let (mut s, mut o) = pair_keys(c, m, b, b);
            let payload = material(200, 5);
            let mut wire = Vec::new();
            s.seal(7, &payload, &mut wire).unwrap();
            let len = wire.len();
            // Length field, first payload byte, middle, last padding byte, tag/MAC.
            for pos in [0, 3, 5, len / 2, len - s.framing().tag_len - 1, len - 1] {
                for bit in [0, 7] {
                    let mut t = wire.clone();
                    t[pos] ^= 1 << bit;
                    // A fresh key each time: a failed open leaves the direction unusable.
                    let (_, mut o2) = pair_keys(c, m, b, b);
                    let r = o2.open(7, &mut t);
                    assert!(
                        r.is_err(),
                        "{} {:?} {b}: flip at {pos}:{bit} accepted",
                        c.name,
                        m.map(|m| m.name)
                    );
                }
            }
            // The untouched packet still opens, under the right sequence number only (GCM's
            // nonce is its own counter, not the sequence number: RFC 5647 §7.1).
            if c.primitive != ciphers::Primitive::AesGcm {
                let mut t = wire.clone();
                let (_, mut wrong_seq) = pair_keys(c, m, b, b);
                assert!(
                    wrong_seq.open(8, &mut t).is_err(),
                    "{} accepted the wrong sequence number",
                    c.name
                );
            }
            let r = o.open(7, &mut wire).unwrap();
            assert_eq!(&wire[r], &payload[..]);
        }
    }
}

#[test]
fn lengths_over_the_limit_or_off_the_block_grid_are_refused() {
    for name in ["aes128-gcm@openssh.com", "aes128-ctr"] {
        let c = ciphers::cipher(name).unwrap();
        let m = (!c.is_aead()).then(|| ciphers::mac("hmac-sha2-256-etm@openssh.com").unwrap());
        for &b in Backend::AVAILABLE {
            let (_, mut o) = pair_keys(c, m, b, b);
            // Both have the length in clear, so any value can be forged directly.
            for bad in [MAX_PACKET_LEN + 16, 17, 0, 4] {
                let mut first = (bad as u32).to_be_bytes().to_vec();
                let r = o.decrypt_length(0, &mut first);
                assert!(
                    matches!(r, Err(Error::BadLength(_))),
                    "{name} {b} accepted {bad}"
                );
            }
        }
    }
}

#[test]
fn the_length_is_learned_from_the_first_bytes_alone() {
    for (c, m) in pairs() {
        for &b in Backend::AVAILABLE {
            let (mut s, mut o) = pair_keys(c, m, b, b);
            let mut wire = Vec::new();
            s.seal(3, &material(1000, 1), &mut wire).unwrap();
            let n = o.length_bytes();
            assert_eq!(
                n,
                if o.framing().length_in_clear || c.is_aead() {
                    4
                } else {
                    c.block_len.max(8)
                }
            );
            let mut first = wire[..n].to_vec();
            assert_eq!(
                o.decrypt_length(3, &mut first).unwrap(),
                wire.len(),
                "{}",
                c.name
            );
        }
    }
}
