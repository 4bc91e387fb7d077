//! Signature verification for every key type the native transport accepts, host keys and
//! user keys alike, so there is one place that decides what counts as a valid signature:
//! ssh-ed25519 (RFC 8709), ecdsa-sha2-nistp256/384 (RFC 5656) and RSA with SHA-2 only
//! (RFC 8332), at least 2048 bits. `ssh-rsa` signatures (SHA-1) are refused, as OpenSSH 9
//! does by default. All of it is ring's verification; this file only translates encodings.

use crate::wire::{Reader, Writer};
use ring::signature;

pub const ED25519: &str = "ssh-ed25519";
pub const ECDSA_P256: &str = "ecdsa-sha2-nistp256";
pub const ECDSA_P384: &str = "ecdsa-sha2-nistp384";
pub const RSA_SHA512: &str = "rsa-sha2-512";
pub const RSA_SHA256: &str = "rsa-sha2-256";
/// The key type of RSA key blobs (and the SHA-1 signature name we refuse).
pub const SSH_RSA: &str = "ssh-rsa";
/// The smallest RSA modulus we accept, in bits (ring's own floor for PKCS#1 v1.5).
pub const RSA_MIN_BITS: usize = 2048;

/// User key signature algorithms a server accepts, strongest first.
pub const USER_ALGS: &[&str] = &[ED25519, ECDSA_P256, ECDSA_P384, RSA_SHA512, RSA_SHA256];

/// Why a key or a signature is not accepted; the text goes to the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn refused(msg: impl Into<String>) -> Refused {
    Refused(msg.into())
}

/// The key type named at the start of a key blob.
pub fn key_type(key_blob: &[u8]) -> Option<&str> {
    std::str::from_utf8(Reader::new(key_blob).string("key type").ok()?).ok()
}

/// Whether a key blob of this type may sign with `alg`, and is one we can verify: the RSA
/// blob says `ssh-rsa` and signs as rsa-sha2-*, the others sign under their own name. Small
/// RSA moduli are refused here, before any signature is asked for.
pub fn check_key(alg: &str, key_blob: &[u8]) -> Result<(), Refused> {
    let kind = key_type(key_blob).ok_or_else(|| refused("malformed key blob"))?;
    let unfit = || {
        refused(format!(
            "signature algorithm {alg} does not fit a {} key",
            crate::wire::sanitize::peer_text(kind.as_bytes(), 40)
        ))
    };
    match alg {
        SSH_RSA => Err(refused(
            "ssh-rsa signatures use SHA-1 and are refused (use rsa-sha2-256 or rsa-sha2-512)",
        )),
        RSA_SHA256 | RSA_SHA512 => {
            if kind != SSH_RSA {
                return Err(unfit());
            }
            let bits = rsa_parts(key_blob)?.bits();
            if bits < RSA_MIN_BITS {
                return Err(refused(format!(
                    "RSA key has {bits} bits, fewer than {RSA_MIN_BITS}"
                )));
            }
            Ok(())
        }
        ED25519 | ECDSA_P256 | ECDSA_P384 if kind == alg => Ok(()),
        ED25519 | ECDSA_P256 | ECDSA_P384 => Err(unfit()),
        _ => Err(refused(format!(
            "signature algorithm {} is not supported",
            crate::wire::sanitize::peer_text(alg.as_bytes(), 40)
        ))),
    }
}

/// Verifies `sig_blob` (string alg, string signature) over `data` with `key_blob`, made with
/// the algorithm `alg` (negotiated host key algorithm, or the one a USERAUTH_REQUEST names).
pub fn verify(alg: &str, key_blob: &[u8], data: &[u8], sig_blob: &[u8]) -> Result<(), Refused> {
    check_key(alg, key_blob)?;
    let mut s = Reader::new(sig_blob);
    let sig_alg = s.string("signature algorithm").map_err(malformed)?;
    let sig = s.string("signature").map_err(malformed)?;
    s.finish().map_err(malformed)?;
    if sig_alg != alg.as_bytes() {
        return Err(refused(format!(
            "signature is {}, {alg} was named",
            crate::wire::sanitize::peer_text(sig_alg, 40)
        )));
    }
    let ok = match alg {
        ED25519 => {
            let mut k = Reader::new(key_blob);
            k.string("key type").map_err(malformed)?;
            let pk = k.string("ed25519 key").map_err(malformed)?;
            k.finish().map_err(malformed)?;
            if pk.len() != 32 || sig.len() != 64 {
                return Err(refused("malformed ed25519 key or signature"));
            }
            signature::UnparsedPublicKey::new(&signature::ED25519, pk).verify(data, sig)
        }
        ECDSA_P256 | ECDSA_P384 => {
            let (params, curve, width): (&signature::EcdsaVerificationAlgorithm, &[u8], usize) =
                if alg == ECDSA_P256 {
                    (&signature::ECDSA_P256_SHA256_FIXED, b"nistp256", 32)
                } else {
                    (&signature::ECDSA_P384_SHA384_FIXED, b"nistp384", 48)
                };
            let mut k = Reader::new(key_blob);
            k.string("key type").map_err(malformed)?;
            if k.string("curve").map_err(malformed)? != curve {
                return Err(refused("ECDSA curve does not match the key type"));
            }
            let point = k.string("EC point").map_err(malformed)?;
            k.finish().map_err(malformed)?;
            let fixed = ecdsa_fixed(sig, width)?;
            signature::UnparsedPublicKey::new(params, point).verify(data, &fixed)
        }
        _ => {
            let params = if alg == RSA_SHA512 {
                &signature::RSA_PKCS1_2048_8192_SHA512
            } else {
                &signature::RSA_PKCS1_2048_8192_SHA256
            };
            let parts = rsa_parts(key_blob)?;
            signature::RsaPublicKeyComponents {
                n: parts.n,
                e: parts.e,
            }
            .verify(params, data, sig)
        }
    };
    ok.map_err(|_| refused(format!("{alg} signature does not verify")))
}

fn malformed(e: crate::wire::codec::DecodeError) -> Refused {
    refused(format!("malformed key or signature: {e}"))
}

struct RsaParts<'a> {
    e: &'a [u8],
    n: &'a [u8],
}

impl RsaParts<'_> {
    fn bits(&self) -> usize {
        match self.n.first() {
            Some(&top) => self.n.len() * 8 - top.leading_zeros() as usize,
            None => 0,
        }
    }
}

fn rsa_parts(key_blob: &[u8]) -> Result<RsaParts<'_>, Refused> {
    let mut k = Reader::new(key_blob);
    if k.string("key type").map_err(malformed)? != SSH_RSA.as_bytes() {
        return Err(refused("not an RSA key"));
    }
    let e = strip_zeros(k.string("RSA exponent").map_err(malformed)?);
    let n = strip_zeros(k.string("RSA modulus").map_err(malformed)?);
    k.finish().map_err(malformed)?;
    Ok(RsaParts { e, n })
}

fn strip_zeros(v: &[u8]) -> &[u8] {
    &v[v.iter().take_while(|&&b| b == 0).count()..]
}

/// SSH's ECDSA signature (mpint r, mpint s) as ring's fixed-width r‖s.
fn ecdsa_fixed(sig: &[u8], width: usize) -> Result<Vec<u8>, Refused> {
    let mut r = Reader::new(sig);
    let mut out = Vec::with_capacity(2 * width);
    for what in ["ECDSA r", "ECDSA s"] {
        let v = strip_zeros(r.string(what).map_err(malformed)?);
        if v.len() > width {
            return Err(refused("ECDSA signature value too long"));
        }
        out.resize(out.len() + width - v.len(), 0);
        out.extend_from_slice(v);
    }
    r.finish().map_err(malformed)?;
    Ok(out)
}

/// The SSH encoding of a fixed-width r‖s ECDSA signature (what ring's signers produce).
pub fn ecdsa_ssh_signature(alg: &str, fixed: &[u8]) -> Vec<u8> {
    let (r, s) = fixed.split_at(fixed.len() / 2);
    let mut inner = Writer::new();
    inner.string(&mpint(r)).string(&mpint(s));
    let mut w = Writer::new();
    w.string(alg.as_bytes()).string(&inner.into_bytes());
    w.into_bytes()
}

/// An unsigned big-endian integer as an SSH mpint body (RFC 4251 §5).
pub fn mpint(v: &[u8]) -> Vec<u8> {
    let v = strip_zeros(v);
    let mut out = Vec::with_capacity(v.len() + 1);
    if v.first().is_some_and(|&b| b & 0x80 != 0) {
        out.push(0);
    }
    out.extend_from_slice(v);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rsa_blob(n_bytes: usize) -> Vec<u8> {
        let mut w = Writer::new();
        w.string(SSH_RSA.as_bytes())
            .string(&[1, 0, 1])
            .string(&mpint(&vec![0xc5; n_bytes]));
        w.into_bytes()
    }

    #[test]
    fn small_rsa_and_sha1_are_refused_before_any_signature() {
        assert!(check_key(RSA_SHA256, &rsa_blob(256)).is_ok());
        let small = check_key(RSA_SHA256, &rsa_blob(128)).unwrap_err();
        assert!(small.0.contains("1024 bits"), "{small}");
        assert!(check_key(SSH_RSA, &rsa_blob(256))
            .unwrap_err()
            .0
            .contains("SHA-1"));
    }

    #[test]
    fn algorithm_must_fit_the_key() {
        let k = crate::transport::hostkey::Ed25519Key::generate().unwrap();
        assert!(check_key(ED25519, &k.public_blob()).is_ok());
        assert!(check_key(ECDSA_P256, &k.public_blob()).is_err());
        assert!(check_key(RSA_SHA256, &k.public_blob()).is_err());
        let sig = k.sign(b"m");
        verify(ED25519, &k.public_blob(), b"m", &sig).unwrap();
        assert!(verify(ED25519, &k.public_blob(), b"n", &sig).is_err());
    }

    #[test]
    fn ecdsa_round_trip_through_ssh_encoding() {
        use ring::signature::{EcdsaKeyPair, KeyPair as _, ECDSA_P256_SHA256_FIXED_SIGNING};
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let mut w = Writer::new();
        w.string(ECDSA_P256.as_bytes())
            .string(b"nistp256")
            .string(pair.public_key().as_ref());
        let blob = w.into_bytes();
        let fixed = pair.sign(&rng, b"data").unwrap();
        let sig = ecdsa_ssh_signature(ECDSA_P256, fixed.as_ref());
        verify(ECDSA_P256, &blob, b"data", &sig).unwrap();
        assert!(verify(ECDSA_P256, &blob, b"datb", &sig).is_err());
        assert!(verify(ECDSA_P384, &blob, b"data", &sig).is_err());
    }
}
