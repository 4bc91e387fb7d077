//! Key exchange: algorithm negotiation (RFC 4253 §7.1), curve25519-sha256 (RFC 8731), the
//! exchange hash and key derivation (RFC 4253 §7.2), and strict KEX (OpenSSH PROTOCOL,
//! the Terrapin countermeasure).

use super::error::{Error, Result};
use crate::wire::codec::NameList;
use crate::wire::kexinit::KexInit;
use crate::wire::sanitize::PEER_TEXT_MAX;
use crate::wire::Writer;
use ciphers::Grade;
use ring::agreement;
use ring::digest;

pub const CURVE25519: &str = "curve25519-sha256";
pub const CURVE25519_LIBSSH: &str = "curve25519-sha256@libssh.org";
pub const DH14_SHA256: &str = "diffie-hellman-group14-sha256";
pub const DH14_SHA1: &str = "diffie-hellman-group14-sha1";

/// Key exchange methods in our preference order: X25519 first; the 2048-bit MODP group
/// (RFC 8268, RFC 4253 §8.2) for old boards whose sshd has nothing newer.
pub const KEX_METHODS: &[&str] = &[CURVE25519, CURVE25519_LIBSSH, DH14_SHA256, DH14_SHA1];

/// What `sshtune serve` offers by default: no SHA-1 exchange hash.
pub const KEX_RECOMMENDED: &[&str] = &[CURVE25519, CURVE25519_LIBSSH, DH14_SHA256];

/// The hash a key exchange method uses for H and for key derivation.
pub fn kex_hash(method: &str) -> &'static digest::Algorithm {
    match method {
        DH14_SHA1 => &digest::SHA1_FOR_LEGACY_USE_ONLY,
        _ => &digest::SHA256,
    }
}
pub const STRICT_CLIENT: &str = "kex-strict-c-v00@openssh.com";
pub const STRICT_SERVER: &str = "kex-strict-s-v00@openssh.com";

/// What we are willing to use, in preference order.
#[derive(Debug, Clone)]
pub struct Preferences {
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
}

impl Preferences {
    /// Every algorithm this build runs, without the legacy ones.
    pub fn modern() -> Self {
        Self::from_catalog(false)
    }

    /// Only what the catalog grades `ok`: the default offer of `sshtune serve`, which a
    /// stranger on the network talks to. Everything weaker needs `--allow-legacy`.
    pub fn recommended() -> Self {
        let ok_cipher = |c: &&str| ciphers::cipher(c).is_some_and(|s| s.grade == Grade::Ok);
        let ok_mac = |m: &&str| ciphers::mac(m).is_some_and(|s| s.grade == Grade::Ok);
        Self {
            ciphers: supported_ciphers()
                .into_iter()
                .filter(ok_cipher)
                .map(String::from)
                .collect(),
            macs: supported_macs()
                .into_iter()
                .filter(ok_mac)
                .map(String::from)
                .collect(),
        }
    }

    pub fn from_catalog(allow_legacy: bool) -> Self {
        let ciphers = supported_ciphers()
            .into_iter()
            .filter(|c| allow_legacy || !ciphers::cipher(c).is_some_and(|s| s.legacy))
            .map(String::from)
            .collect();
        let macs = supported_macs().into_iter().map(String::from).collect();
        Self { ciphers, macs }
    }
}

/// Every cipher of the catalog: each has an implementation in every build (a backend the
/// build lacks falls back to the other), in the catalog's preference order.
fn supported_ciphers() -> Vec<&'static str> {
    ciphers::CIPHERS.iter().map(|c| c.name).collect()
}

fn supported_macs() -> Vec<&'static str> {
    ciphers::MACS.iter().map(|m| m.name).collect()
}

/// Lists that replace our defaults in a KEXINIT (tests and the bench narrow them).
#[derive(Debug, Clone, Copy, Default)]
pub struct Offer<'a> {
    /// Key exchange methods instead of all of `KEX_METHODS`.
    pub kex: Option<&'a [String]>,
    /// Host key algorithms a client offers instead of all it can verify.
    pub host_keys: Option<&'a [String]>,
}

/// Builds our KEXINIT. `initial` adds the strict-KEX marker, which is only meaningful in
/// the first exchange.
pub fn our_kexinit(
    prefs: &Preferences,
    offer: Offer,
    is_server: bool,
    initial: bool,
) -> KexInit<'static> {
    let mut cookie = [0u8; 16];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut cookie);
    let methods: Vec<&str> = match offer.kex {
        Some(k) => k.iter().map(String::as_str).collect(),
        None => KEX_METHODS.to_vec(),
    };
    let marker = match (initial, is_server) {
        (false, _) => None,
        (true, true) => Some(STRICT_SERVER),
        (true, false) => Some(STRICT_CLIENT),
    };
    let host_key = match (offer.host_keys, is_server) {
        (_, true) => [super::hostkey::ED25519].into_iter().collect(),
        (Some(h), false) => h.iter().collect(),
        (None, false) => super::hostkey::VERIFIABLE.iter().collect(),
    };
    let none = || ["none"].into_iter().collect::<NameList>();
    KexInit {
        cookie,
        kex: methods.into_iter().chain(marker).collect(),
        host_key,
        ciphers_c2s: prefs.ciphers.iter().collect(),
        ciphers_s2c: prefs.ciphers.iter().collect(),
        macs_c2s: prefs.macs.iter().collect(),
        macs_s2c: prefs.macs.iter().collect(),
        compression_c2s: none(),
        compression_s2c: none(),
        languages_c2s: NameList::default(),
        languages_s2c: NameList::default(),
        first_kex_follows: false,
    }
}

/// The outcome of negotiation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    pub kex: String,
    pub host_key: String,
    pub cipher_c2s: &'static str,
    pub cipher_s2c: &'static str,
    pub mac_c2s: Option<&'static str>,
    pub mac_s2c: Option<&'static str>,
    pub strict: bool,
    /// The client's first KEXINIT named `ext-info-c` (RFC 8308): the server may send EXT_INFO.
    pub client_ext_info: bool,
}

/// RFC 4253 §7.1: the first client algorithm the server also supports, among those `usable`.
/// Names are compared where they lie in the two messages; only the chosen one is copied.
fn pick(
    what: &'static str,
    client: &NameList,
    server: &NameList,
    usable: impl Fn(&str) -> bool,
) -> Result<String> {
    client
        .iter()
        .filter(|c| usable(c))
        .find(|c| server.contains(c))
        .map(String::from)
        .ok_or_else(|| Error::NoCommonAlgorithm {
            what,
            ours: listed(client),
            theirs: listed(server),
        })
}

/// Any name: the lists other than key exchange hold no markers.
fn any(_: &str) -> bool {
    true
}

/// A key exchange method, not one of the markers that share its list (RFC 8308 `ext-info-*`,
/// strict KEX): a peer naming our marker must not get it negotiated as a method.
fn is_method(name: &str) -> bool {
    !name.starts_with("kex-strict-") && !name.starts_with("ext-info-")
}

/// A name-list for an error message: names are printable ASCII (the decoder checks), but a
/// peer's list may be long, so only its start reaches a log line.
fn listed(names: &NameList) -> String {
    crate::wire::sanitize::peer_text(names.as_str().as_bytes(), 2 * PEER_TEXT_MAX)
}

fn catalog_cipher(name: &str) -> Result<&'static ciphers::CipherSpec> {
    ciphers::cipher(name).ok_or_else(|| Error::protocol(format!("unknown cipher {name}")))
}

pub fn negotiate(client: &KexInit, server: &KexInit, initial: bool) -> Result<Negotiated> {
    let kex = pick("key exchange", &client.kex, &server.kex, is_method)?;
    let host_key = pick("host key type", &client.host_key, &server.host_key, any)?;
    let c2s = catalog_cipher(&pick(
        "cipher",
        &client.ciphers_c2s,
        &server.ciphers_c2s,
        any,
    )?)?;
    let s2c = catalog_cipher(&pick(
        "cipher",
        &client.ciphers_s2c,
        &server.ciphers_s2c,
        any,
    )?)?;
    let mac = |cipher: &ciphers::CipherSpec, c: &NameList, s: &NameList| -> Result<_> {
        if cipher.is_aead() {
            return Ok(None);
        }
        if cipher.name == "none" && (c.is_empty() || s.is_empty()) {
            return Ok(None);
        }
        let name = pick("MAC", c, s, any)?;
        Ok(Some(ciphers::mac(&name).map(|m| m.name).ok_or_else(
            || Error::protocol(format!("unknown MAC {name}")),
        )?))
    };
    let mac_c2s = mac(c2s, &client.macs_c2s, &server.macs_c2s)?;
    let mac_s2c = mac(s2c, &client.macs_s2c, &server.macs_s2c)?;
    let (comp_c, comp_s) = (&client.compression_c2s, &server.compression_c2s);
    pick("compression", comp_c, comp_s, any)?;
    let (comp_c, comp_s) = (&client.compression_s2c, &server.compression_s2c);
    pick("compression", comp_c, comp_s, any)?;
    let strict =
        initial && client.kex.contains(STRICT_CLIENT) && server.kex.contains(STRICT_SERVER);
    Ok(Negotiated {
        kex,
        host_key,
        cipher_c2s: c2s.name,
        cipher_s2c: s2c.name,
        mac_c2s,
        mac_s2c,
        strict,
        client_ext_info: initial && client.kex.contains("ext-info-c"),
    })
}

/// Our half of the exchange. `public` is what goes on the wire as a `string` (X25519's
/// 32 bytes, or the body of the DH mpint `e`/`f`, which encodes identically).
pub struct Ephemeral {
    secret: Secret,
    pub public: Vec<u8>,
}

enum Secret {
    X25519(agreement::EphemeralPrivateKey),
    Dh(super::dh::Exponent),
}

impl Ephemeral {
    pub fn new(method: &str) -> Result<Self> {
        if method == DH14_SHA256 || method == DH14_SHA1 {
            let (x, e) = super::dh::Exponent::generate()?;
            return Ok(Self {
                public: e,
                secret: Secret::Dh(x),
            });
        }
        let rng = ring::rand::SystemRandom::new();
        let private = agreement::EphemeralPrivateKey::generate(&agreement::X25519, &rng)
            .map_err(|_| Error::protocol("X25519 key generation failed"))?;
        let public = private
            .compute_public_key()
            .map_err(|_| Error::protocol("X25519 public key failed"))?
            .as_ref()
            .to_vec();
        Ok(Self {
            secret: Secret::X25519(private),
            public,
        })
    }

    /// The shared secret K, encoded as an mpint (RFC 8731 §3.1, RFC 4253 §8), ready for
    /// hashing.
    pub fn agree(self, peer: &[u8]) -> Result<Vec<u8>> {
        match self.secret {
            Secret::X25519(private) => {
                if peer.len() != 32 {
                    return Err(Error::protocol("X25519 public key is not 32 bytes"));
                }
                let peer = agreement::UnparsedPublicKey::new(&agreement::X25519, peer);
                agreement::agree_ephemeral(private, &peer, |k| {
                    let mut w = Writer::new();
                    mpint(&mut w, k);
                    w.into_bytes()
                })
                .map_err(|_| Error::protocol("X25519 agreement failed (all-zero shared secret)"))
            }
            Secret::Dh(x) => {
                let k = x.agree(peer)?;
                let mut w = Writer::new();
                mpint(&mut w, &k);
                Ok(w.into_bytes())
            }
        }
    }
}

/// Writes unsigned big-endian `v` as an SSH mpint (RFC 4251 §5).
pub fn mpint(w: &mut Writer, v: &[u8]) {
    let v = &v[v.iter().take_while(|&&b| b == 0).count()..];
    if v.first().is_some_and(|&b| b & 0x80 != 0) {
        w.u32(v.len() as u32 + 1).u8(0).raw(v);
    } else {
        w.string(v);
    }
}

/// The exchange hash H (RFC 4253 §8, RFC 5656 §4), fed as the exchange goes: the version
/// lines and both KEXINITs go in as soon as they are known, so no KEXINIT payload is kept
/// while the peer's ephemeral key is awaited.
pub struct ExchangeHash(digest::Context);

impl ExchangeHash {
    pub fn start(
        alg: &'static digest::Algorithm,
        client_ident: &str,
        server_ident: &str,
        client_kexinit: &[u8],
        server_kexinit: &[u8],
    ) -> Self {
        let mut h = Self(digest::Context::new(alg));
        for s in [
            client_ident.as_bytes(),
            server_ident.as_bytes(),
            client_kexinit,
            server_kexinit,
        ] {
            h.string(s);
        }
        h
    }

    /// H, from the host key blob, both ephemeral public keys (or DH `e`/`f`) and K (already
    /// encoded as an mpint).
    pub fn finish(
        mut self,
        host_key: &[u8],
        client_public: &[u8],
        server_public: &[u8],
        shared: &[u8],
    ) -> Vec<u8> {
        for s in [host_key, client_public, server_public] {
            self.string(s);
        }
        self.0.update(shared);
        self.0.finish().as_ref().to_vec()
    }

    fn string(&mut self, s: &[u8]) {
        self.0.update(&(s.len() as u32).to_be_bytes());
        self.0.update(s);
    }
}

/// RFC 4253 §7.2: HASH(K || H || letter || session_id), extended with HASH(K || H || K1 ...).
pub fn derive(
    alg: &'static digest::Algorithm,
    shared: &[u8],
    h: &[u8],
    letter: u8,
    session_id: &[u8],
    len: usize,
) -> Vec<u8> {
    let mut ctx = digest::Context::new(alg);
    ctx.update(shared);
    ctx.update(h);
    ctx.update(&[letter]);
    ctx.update(session_id);
    let mut out = ctx.finish().as_ref().to_vec();
    while out.len() < len {
        let mut ctx = digest::Context::new(alg);
        ctx.update(shared);
        ctx.update(h);
        ctx.update(&out);
        out.extend_from_slice(ctx.finish().as_ref());
    }
    out.truncate(len);
    out
}

/// The derived key bytes of one direction, owned (RFC 4253 §7.2: IV, encryption key and
/// integrity key), which `ciphers::DirectionKeys` borrows to build the packet keys. Kept
/// apart because the derivation outlives the borrow only here, and never printed.
#[derive(Clone)]
pub struct KeyMaterial {
    pub cipher: &'static str,
    pub mac: Option<&'static str>,
    pub iv: Vec<u8>,
    pub key: Vec<u8>,
    pub mac_key: Vec<u8>,
}

impl KeyMaterial {
    pub fn keys(&self) -> ciphers::DirectionKeys<'_> {
        ciphers::DirectionKeys {
            cipher: self.cipher,
            mac: self.mac,
            key: &self.key,
            iv: &self.iv,
            mac_key: &self.mac_key,
        }
    }
}

impl std::fmt::Debug for KeyMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyMaterial")
            .field("cipher", &self.cipher)
            .field("mac", &self.mac)
            .finish_non_exhaustive()
    }
}

/// Keys for both directions: (client-to-server, server-to-client).
pub fn derive_keys(
    neg: &Negotiated,
    shared: &[u8],
    h: &[u8],
    session_id: &[u8],
) -> Result<(KeyMaterial, KeyMaterial)> {
    let alg = kex_hash(&neg.kex);
    let dir = |cipher: &'static str, mac: Option<&'static str>, letters: [u8; 3]| {
        let spec = catalog_cipher(cipher)?;
        let mac_len = mac.and_then(ciphers::mac).map_or(0, |m| m.key_len);
        Ok::<_, Error>(KeyMaterial {
            cipher,
            mac,
            iv: derive(alg, shared, h, letters[0], session_id, spec.iv_len),
            key: derive(alg, shared, h, letters[1], session_id, spec.key_len),
            mac_key: derive(alg, shared, h, letters[2], session_id, mac_len),
        })
    };
    Ok((
        dir(neg.cipher_c2s, neg.mac_c2s, [b'A', b'C', b'E'])?,
        dir(neg.cipher_s2c, neg.mac_s2c, [b'B', b'D', b'F'])?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpint_encoding_per_rfc4251() {
        let enc = |v: &[u8]| {
            let mut w = Writer::new();
            mpint(&mut w, v);
            w.into_bytes()
        };
        assert_eq!(enc(&[0, 0]), [0, 0, 0, 0]);
        assert_eq!(enc(&[0x09, 0xa3]), [0, 0, 0, 2, 0x09, 0xa3]);
        assert_eq!(enc(&[0x00, 0x80]), [0, 0, 0, 2, 0x00, 0x80]);
    }

    #[test]
    fn both_sides_agree_on_the_secret() {
        for m in KEX_METHODS {
            let a = Ephemeral::new(m).unwrap();
            let b = Ephemeral::new(m).unwrap();
            let (pa, pb) = (a.public.clone(), b.public.clone());
            assert_eq!(a.agree(&pb).unwrap(), b.agree(&pa).unwrap(), "{m}");
        }
        assert!(Ephemeral::new(CURVE25519)
            .unwrap()
            .agree(&[0u8; 32])
            .is_err());
        assert!(Ephemeral::new(DH14_SHA256).unwrap().agree(&[1]).is_err());
        assert!(Ephemeral::new(DH14_SHA256)
            .unwrap()
            .agree(&[0xff; 256])
            .is_err());
    }

    #[test]
    fn derivation_extends_past_one_hash() {
        let k = derive(
            &digest::SHA1_FOR_LEGACY_USE_ONLY,
            b"K",
            b"H",
            b'C',
            b"S",
            64,
        );
        assert_eq!(k.len(), 64);
        assert_eq!(
            &derive(
                &digest::SHA1_FOR_LEGACY_USE_ONLY,
                b"K",
                b"H",
                b'C',
                b"S",
                16
            )[..],
            &k[..16]
        );
    }

    #[test]
    fn recommended_offer_is_only_ok_graded() {
        let p = Preferences::recommended();
        for c in ["aes128-cbc", "3des-cbc", "arcfour", "none"] {
            assert!(!p.ciphers.iter().any(|x| x == c), "{c}");
        }
        for m in [
            "hmac-sha1",
            "hmac-sha1-96",
            "umac-64@openssh.com",
            "hmac-md5",
        ] {
            assert!(!p.macs.iter().any(|x| x == m), "{m}");
        }
        assert!(p.ciphers.iter().any(|c| c == "aes128-gcm@openssh.com"));
        assert!(p.macs.iter().any(|m| m == "hmac-sha2-256-etm@openssh.com"));
        assert!(!KEX_RECOMMENDED.contains(&DH14_SHA1));
    }

    #[test]
    fn client_preference_wins_and_strict_only_initially() {
        let prefs = Preferences {
            ciphers: vec!["none".into()],
            macs: vec![],
        };
        let mut c = our_kexinit(&prefs, Offer::default(), false, true);
        let s = our_kexinit(&prefs, Offer::default(), true, true);
        c.ciphers_c2s = ["aes128-ctr", "none"].into_iter().collect();
        let n = negotiate(&c, &s, true).unwrap();
        assert_eq!(n.cipher_c2s, "none");
        assert_eq!(n.kex, CURVE25519);
        assert!(n.strict);
        assert!(!negotiate(&c, &s, false).unwrap().strict);
        c.ciphers_s2c = ["aes128-ctr"].into_iter().collect();
        assert!(matches!(
            negotiate(&c, &s, true),
            Err(Error::NoCommonAlgorithm { .. })
        ));
        // The server's strict-KEX marker offered as a method is not one.
        let mut c = our_kexinit(&prefs, Offer::default(), false, true);
        c.kex = [STRICT_SERVER, CURVE25519].into_iter().collect();
        assert_eq!(negotiate(&c, &s, true).unwrap().kex, CURVE25519);
    }

    /// H is the hash of the RFC 4253 §8 concatenation, whichever way it is fed.
    #[test]
    fn exchange_hash_is_the_rfc4253_concatenation() {
        let mut w = Writer::new();
        for s in [&b"V_C"[..], b"V_S", b"I_C", b"I_S", b"K_S", b"e", b"f"] {
            w.string(s);
        }
        w.raw(b"K as mpint");
        let want = digest::digest(&digest::SHA256, &w.into_bytes());
        let h = ExchangeHash::start(&digest::SHA256, "V_C", "V_S", b"I_C", b"I_S");
        assert_eq!(h.finish(b"K_S", b"e", b"f", b"K as mpint"), want.as_ref());
    }
}
