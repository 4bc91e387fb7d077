//! diffie-hellman-group14 arithmetic (RFC 4253 §8, RFC 8268): the 2048-bit MODP group of
//! RFC 3526 §3.
//!
//! The modular exponentiation is libcrypto's with the `openssl` feature and `num-bigint-dig`'s
//! without it: measured side by side, the pure-Rust one took about 8 times as long (tens of
//! milliseconds per exchange instead of a few), which a slow board would feel on every
//! connection, so the default build keeps libcrypto. A test checks both give the same numbers.
//! `num-bigint-dig`'s `modpow` is not constant time. The exponent is ephemeral (fresh for each
//! exchange, dropped after it), the group only serves old sshds that lack curve25519, and
//! sshtune is a benchmark tool, not a long-lived server holding secrets: a timing side channel
//! on one throwaway exponent is not worth a hand-rolled ladder here.

use super::error::{Error, Result};
use num_bigint_dig::BigUint;
use ring::rand::SecureRandom as _;

/// RFC 3526 §3: 2^2048 - 2^1984 - 1 + 2^64 * ( [2^1918 pi] + 124476 ).
const GROUP14_PRIME: &str = concat!(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74",
    "020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437",
    "4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED",
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF05",
    "98DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB",
    "9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B",
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF695581718",
    "3995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF",
);

/// Bytes of the private exponent: 512 bits, twice the security level of the largest derived key.
const EXPONENT_BYTES: usize = 64;

fn prime() -> BigUint {
    BigUint::parse_bytes(GROUP14_PRIME.as_bytes(), 16).expect("RFC 3526 prime is valid hex")
}

/// The mpint body of unsigned big-endian `v`: a leading zero when the top bit is set.
fn mpint_body(mut v: Vec<u8>) -> Vec<u8> {
    if v.first().is_some_and(|&b| b & 0x80 != 0) {
        v.insert(0, 0);
    }
    v
}

/// Our secret exponent x.
pub struct Exponent([u8; EXPONENT_BYTES]);

impl Exponent {
    /// A fresh exponent with its top bit set, and the public value e = g^x mod p as an mpint
    /// body (what goes on the wire as a `string`, and what [`Exponent::agree`] takes).
    pub fn generate() -> Result<(Self, Vec<u8>)> {
        let mut bytes = [0u8; EXPONENT_BYTES];
        ring::rand::SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| Error::protocol("no randomness for the DH exponent"))?;
        bytes[0] |= 0x80;
        let e = modpow(&[2], &bytes)?;
        Ok((Self(bytes), mpint_body(e)))
    }

    /// The shared secret K = f^x mod p as unsigned big-endian bytes, after checking the
    /// peer's value `f` (an mpint body) lies in 1 < f < p-1 (RFC 4253 §8), else the secret
    /// is predictable.
    pub fn agree(&self, peer: &[u8]) -> Result<Vec<u8>> {
        if peer.first().is_some_and(|&b| b & 0x80 != 0) || peer.len() > 257 {
            return Err(Error::protocol("DH public value is negative or too long"));
        }
        let p = prime();
        let f = BigUint::from_bytes_be(peer);
        let one = BigUint::from(1u32);
        if f <= one || f >= &p - &one {
            return Err(Error::protocol("DH public value out of range"));
        }
        modpow(peer, &self.0)
    }
}

/// base^exp mod p with libcrypto; big-endian in and out.
#[cfg(feature = "openssl")]
fn modpow(base: &[u8], exp: &[u8]) -> Result<Vec<u8>> {
    use openssl::bn::{BigNum, BigNumContext};
    let ossl = |e: openssl::error::ErrorStack| Error::protocol(format!("libcrypto: {e}"));
    let p = BigNum::get_rfc3526_prime_2048().map_err(ossl)?;
    let base = BigNum::from_slice(base).map_err(ossl)?;
    let exp = BigNum::from_slice(exp).map_err(ossl)?;
    let mut ctx = BigNumContext::new().map_err(ossl)?;
    let mut r = BigNum::new().map_err(ossl)?;
    r.mod_exp(&base, &exp, &p, &mut ctx).map_err(ossl)?;
    Ok(r.to_vec())
}

/// base^exp mod p in pure Rust; big-endian in and out.
#[cfg(not(feature = "openssl"))]
fn modpow(base: &[u8], exp: &[u8]) -> Result<Vec<u8>> {
    Ok(modpow_rust(base, exp))
}

#[cfg(any(test, not(feature = "openssl")))]
fn modpow_rust(base: &[u8], exp: &[u8]) -> Vec<u8> {
    let (base, exp) = (BigUint::from_bytes_be(base), BigUint::from_bytes_be(exp));
    base.modpow(&exp, &prime()).to_bytes_be()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_agree() {
        // Enough pairs that public values with the top bit set (an mpint's leading zero) occur.
        for _ in 0..8 {
            let (a, ea) = Exponent::generate().unwrap();
            let (b, eb) = Exponent::generate().unwrap();
            assert_eq!(a.agree(&eb).unwrap(), b.agree(&ea).unwrap());
        }
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let (a, _) = Exponent::generate().unwrap();
        assert!(a.agree(&[1]).is_err());
        assert!(a.agree(&[]).is_err());
        let p1 = (prime() - BigUint::from(1u32)).to_bytes_be();
        let mut body = vec![0];
        body.extend(p1);
        assert!(a.agree(&body).is_err());
    }

    #[test]
    fn both_arithmetics_agree() {
        let (a, ea) = Exponent::generate().unwrap();
        let ea = BigUint::from_bytes_be(&ea).to_bytes_be();
        assert_eq!(modpow_rust(&[2], &a.0), ea);
        assert_eq!(modpow_rust(&ea, &a.0), modpow(&ea, &a.0).unwrap());
    }

    #[cfg(feature = "openssl")]
    #[test]
    fn prime_is_libcrypto_rfc3526_prime() {
        let ossl = openssl::bn::BigNum::get_rfc3526_prime_2048().unwrap();
        assert_eq!(ossl.to_vec(), prime().to_bytes_be());
    }
}
