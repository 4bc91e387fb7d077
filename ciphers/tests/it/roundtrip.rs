//! Every cipher × MAC pair in every backend combination seals what the other side opens
//! (with the `openssl` feature; without it, the rust backend against itself).
//! Crossing backends (seal with one, open with the other) is what proves they agree on the
//! wire format, since the two share only the framing code.

use crate::support::*;
use ciphers::Backend;
use proptest::prelude::*;

#[test]
fn every_pair_roundtrips_across_backends() {
    for (c, m) in pairs() {
        for &seal in Backend::AVAILABLE {
            for &open in Backend::AVAILABLE {
                let (mut s, mut o) = pair_keys(c, m, seal, open);
                for (seq, len) in [(0u32, 0usize), (1, 1), (2, 31), (3, 32768), (u32::MAX, 100)] {
                    let payload = material(len, seq as u8);
                    roundtrip(&mut s, &mut o, seq, &payload);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    #[test]
    fn random_payloads_roundtrip(payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..3000), 1..4), first_seq in any::<u32>()) {
        for (c, m) in pairs() {
            for &seal in Backend::AVAILABLE {
                // The other backend where the build has two.
                let open = *Backend::AVAILABLE.iter().find(|&&o| o != seal).unwrap_or(&seal);
                let (mut s, mut o) = pair_keys(c, m, seal, open);
                for (i, p) in payloads.iter().enumerate() {
                    roundtrip(&mut s, &mut o, first_seq.wrapping_add(i as u32), p);
                }
            }
        }
    }
}
