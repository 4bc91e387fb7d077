//! Keystream computed ahead on a helper thread must not change a single wire byte: every
//! packet sealed by `SealingKey::with_keystream_ahead` equals the single-thread key's, across
//! chunk boundaries, oversized packets and sequence-number jumps, and opens normally.

use crate::support::{material, Keying};
use ciphers::{Backend, OpeningKey, SealingKey, HEADER_LEN};

fn same_wire(cipher: &str, mac: Option<&str>, backend: Backend) {
    let keying = Keying::default();
    let dk = keying.direction(cipher, mac);
    let mut plain = SealingKey::new(&dk, Some(backend)).unwrap();
    let mut ahead = SealingKey::with_keystream_ahead(&dk, Some(backend)).unwrap();
    let mut open = OpeningKey::new(&dk, Some(backend)).unwrap();
    // Sizes cross the helper's chunks (64 KiB for CTR, one 32 KiB packet for chacha);
    // 100000 is longer than a chacha chunk; seq 500 is a jump the helper did not expect.
    let seqs_and_sizes = [
        (3u32, 32768usize),
        (4, 0),
        (5, 40000),
        (6, 100_000),
        (7, 31),
        (500, 32768),
        (501, 32768),
        (u32::MAX, 1000),
        (0, 1000),
    ];
    for (seq, len) in seqs_and_sizes {
        let payload = material(len, seq as u8);
        let mut p = vec![0u8; HEADER_LEN];
        p.extend_from_slice(&payload);
        plain.frame(&mut p, 0).unwrap();
        let (mut a, mut b) = (p.clone(), p);
        plain.seal_in_place(seq, &mut a).unwrap();
        ahead.seal_in_place(seq, &mut b).unwrap();
        assert!(a == b, "{cipher} {backend}: seq {seq}, {len} bytes differ");
        let n = open.length_bytes();
        open.decrypt_length(seq, &mut b[..n]).unwrap();
        let r = open.open(seq, &mut b).unwrap();
        assert_eq!(&b[r], &payload[..]);
    }
}

#[test]
fn ctr_ahead_seals_the_same_bytes_in_both_backends() {
    for &b in Backend::AVAILABLE {
        same_wire("aes128-ctr", Some("umac-64-etm@openssh.com"), b);
        same_wire("aes256-ctr", Some("hmac-sha2-256"), b);
    }
}

#[test]
fn chacha_ahead_seals_the_same_bytes_in_both_backends() {
    for &b in Backend::AVAILABLE {
        same_wire("chacha20-poly1305@openssh.com", None, b);
    }
}

#[test]
fn ciphers_without_a_precomputable_keystream_are_refused() {
    let keying = Keying::default();
    let mut cases = Vec::new();
    for &b in Backend::AVAILABLE {
        cases.push(("aes128-gcm@openssh.com", None, b));
        cases.push(("aes128-cbc", Some("hmac-sha2-256"), b));
    }
    for (c, mac, b) in cases {
        let dk = keying.direction(c, mac);
        assert!(
            SealingKey::with_keystream_ahead(&dk, Some(b)).is_err(),
            "{c} {b}"
        );
    }
}
