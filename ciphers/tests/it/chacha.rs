//! chacha20-poly1305@openssh.com against an independent implementation of the same
//! construction, ring's `chacha20_poly1305_openssh`: byte-identical wire output from both
//! backends, each opening what ring seals, and every single-bit change refused. Poly1305 alone
//! is checked against RFC 8439's vector in both backends.

use crate::support::material;
use ciphers::raw::RawPoly1305;
use ciphers::{Backend, DirectionKeys, Error, OpeningKey, SealingKey, HEADER_LEN};
use ring::aead::chacha20_poly1305_openssh as reference;

const NAME: &str = "chacha20-poly1305@openssh.com";

fn key() -> [u8; 64] {
    material(64, 9).try_into().unwrap()
}

fn direction(key: &[u8]) -> DirectionKeys<'_> {
    DirectionKeys {
        cipher: NAME,
        mac: None,
        key,
        iv: &[],
        mac_key: &[],
    }
}

/// A framed, unsealed packet with tag room, as `frame` leaves it; random padding included,
/// so each side below seals the very same bytes.
fn framed(s: &SealingKey, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0u8; HEADER_LEN];
    p.extend_from_slice(payload);
    s.frame(&mut p, 0).unwrap();
    p
}

fn ring_seal(key: &[u8; 64], seq: u32, framed: &[u8]) -> Vec<u8> {
    let mut wire = framed.to_vec();
    let (packet, tag) = wire.split_at_mut(framed.len() - reference::TAG_LEN);
    let mut t = [0u8; reference::TAG_LEN];
    reference::SealingKey::new(key).seal_in_place(seq, packet, &mut t);
    tag.copy_from_slice(&t);
    wire
}

const CASES: &[(u32, usize)] = &[
    (0, 0),
    (1, 1),
    (2, 59),
    (3, 60),
    (7, 1000),
    (0x0102_0304, 32768),
    (u32::MAX, 32768 + 17),
];

#[test]
fn both_backends_seal_exactly_what_ring_seals() {
    let k = key();
    for &b in Backend::AVAILABLE {
        let mut s = SealingKey::new(&direction(&k), Some(b)).unwrap();
        for &(seq, len) in CASES {
            let p = framed(&s, &material(len, seq as u8));
            let want = ring_seal(&k, seq, &p);
            let mut got = p.clone();
            s.seal_in_place(seq, &mut got).unwrap();
            assert!(
                got == want,
                "{b}: seq {seq}, {len}-byte payload differs from ring"
            );
        }
    }
}

#[test]
fn both_backends_open_what_ring_seals() {
    let k = key();
    for &b in Backend::AVAILABLE {
        let s = SealingKey::new(&direction(&k), Some(b)).unwrap();
        let mut o = OpeningKey::new(&direction(&k), Some(b)).unwrap();
        for &(seq, len) in CASES {
            let payload = material(len, seq as u8 ^ 0x5a);
            let mut wire = ring_seal(&k, seq, &framed(&s, &payload));
            let total = o.decrypt_length(seq, &mut wire[..4]).unwrap();
            assert_eq!(total, wire.len());
            let r = o.open(seq, &mut wire).unwrap();
            assert_eq!(&wire[r], &payload[..], "{b}: seq {seq}");
        }
    }
}

#[test]
fn every_single_bit_flip_is_refused_and_the_original_still_opens() {
    let k = key();
    for &b in Backend::AVAILABLE {
        let mut s = SealingKey::new(&direction(&k), Some(b)).unwrap();
        let mut wire = Vec::new();
        s.seal(41, &material(70, 3), &mut wire).unwrap();
        for bit in 0..wire.len() * 8 {
            let mut t = wire.clone();
            t[bit / 8] ^= 1 << (bit % 8);
            let mut o = OpeningKey::new(&direction(&k), Some(b)).unwrap();
            match o.open(41, &mut t) {
                Err(Error::Integrity | Error::BadLength(_)) => {}
                other => panic!("{b}: flip of bit {bit} gave {other:?}"),
            }
        }
        let mut o = OpeningKey::new(&direction(&k), Some(b)).unwrap();
        assert!(matches!(
            o.open(42, &mut wire.clone()),
            Err(Error::Integrity | Error::BadLength(_))
        ));
        assert!(o.open(41, &mut wire).is_ok(), "{b}");
    }
}

#[test]
fn poly1305_rfc8439_vector_in_both_backends() {
    // RFC 8439 §2.5.2.
    let key: [u8; 32] = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
    let want: [u8; 16] = hex("a8061dc1305136c6c22b8baf0c0127a9");
    for &b in Backend::AVAILABLE {
        let mut p = RawPoly1305::new(b).unwrap();
        assert_eq!(
            p.tag(&key, b"Cryptographic Forum Research Group").unwrap(),
            want,
            "{b}"
        );
        // A reused context is rekeyed, not continued.
        p.tag(&[1; 32], &[2; 1000]).unwrap();
        assert_eq!(
            p.tag(&key, b"Cryptographic Forum Research Group").unwrap(),
            want,
            "{b}"
        );
    }
}

fn hex<const N: usize>(s: &str) -> [u8; N] {
    let v: Vec<u8> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect();
    v.try_into().unwrap()
}
