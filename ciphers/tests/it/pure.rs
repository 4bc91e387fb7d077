//! A build without the `openssl` feature: every catalog default is the rust backend, and
//! asking for the openssl backend anywhere is an error that says why, not a panic.
#![cfg(not(feature = "openssl"))]

use crate::support::*;
use ciphers::raw::{RawCipher, RawMac, RawPoly1305};
use ciphers::{AesHardware, Backend, DirectionKeys, Error, OpeningKey, SealingKey, CIPHERS, MACS};

#[test]
fn every_default_backend_is_rust() {
    assert_eq!(Backend::AVAILABLE, [Backend::Rust]);
    assert!(!Backend::Openssl.is_available());
    for cpu in [AesHardware::Present, AesHardware::Absent] {
        assert!(CIPHERS.iter().all(|c| c.backends.on(cpu) == Backend::Rust));
        assert!(MACS.iter().all(|m| m.backends.on(cpu) == Backend::Rust));
    }
    assert!(CIPHERS.iter().all(|c| c.default_backend() == Backend::Rust));
}

#[test]
fn every_pair_works_with_the_default_backend() {
    for (c, m) in pairs() {
        let (mut s, mut o) = pair_keys_on(c, m, None, None);
        assert_eq!(s.backend(), Backend::Rust);
        roundtrip(&mut s, &mut o, 7, b"payload");
    }
}

fn is_unavailable<T>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::BackendUnavailable("openssl")))
}

#[test]
fn the_openssl_backend_is_a_clear_error() {
    let k = material(64, 1);
    for c in CIPHERS {
        let dk = DirectionKeys {
            cipher: c.name,
            mac: Some("hmac-sha2-256"),
            key: &k,
            iv: &k,
            mac_key: &k,
        };
        assert!(
            is_unavailable(SealingKey::new(&dk, Some(Backend::Openssl))),
            "{}",
            c.name
        );
        assert!(
            is_unavailable(OpeningKey::new(&dk, Some(Backend::Openssl))),
            "{}",
            c.name
        );
        if !c.is_aead() {
            let raw = RawCipher::new(c, Backend::Openssl, &k[..c.key_len], &k[..c.iv_len], true);
            assert!(is_unavailable(raw), "{}", c.name);
        }
    }
    for m in MACS {
        assert!(is_unavailable(RawMac::new(
            m,
            Backend::Openssl,
            &k[..m.key_len]
        )));
    }
    assert!(is_unavailable(RawPoly1305::new(Backend::Openssl)));
    let msg = Error::BackendUnavailable("openssl").to_string();
    assert!(msg.contains("openssl") && msg.contains("rust"), "{msg}");
}
