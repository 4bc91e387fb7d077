//! The catalog: one static table per algorithm family.
//!
//! Versions come from the OpenSSH release notes: CTR in 3.7, umac-64 in 4.7, hmac-sha2 in 5.9,
//! GCM/EtM/umac-128 in 6.2, chacha20-poly1305 in 6.5, CBC/arcfour/blowfish/cast128 dropped from
//! sshd's default proposal in 6.7 and arcfour/blowfish/cast128 removed entirely in 7.6. Releases
//! before 3.x are recorded as 2.3 (the earliest SSH-2 release worth distinguishing here).

use crate::backend::{Backend, Preference};
use crate::cpu::AesHardware;
use crate::grade::Grade;
use crate::version::OpenSshVersion as V;
use serde::Serialize;

/// How a cipher frames packets; the transport and the grades both depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CipherKind {
    /// Authenticated encryption: no separate MAC is negotiated.
    Aead,
    /// Block cipher in counter mode.
    Ctr,
    /// Block cipher in CBC mode.
    Cbc,
    /// Stream cipher (RC4).
    Stream,
    /// No encryption at all.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CipherSpec {
    pub name: &'static str,
    pub kind: CipherKind,
    /// Key bytes the key exchange must derive.
    pub key_len: usize,
    /// IV bytes the key exchange must derive.
    pub iv_len: usize,
    /// Block size used for padding (8 for stream ciphers, as RFC 4253 asks).
    pub block_len: usize,
    /// Authentication tag bytes for AEAD ciphers, 0 otherwise.
    pub tag_len: usize,
    pub grade: Grade,
    pub reason: &'static str,
    /// Affected by Terrapin (CVE-2023-48795) unless both sides do strict KEX. For CBC this
    /// holds only with an `-etm` MAC; the flag marks the cipher as a candidate.
    pub terrapin: bool,
    /// Never enabled by our own server without an explicit opt-in.
    pub legacy: bool,
    /// First OpenSSH release that accepts the name.
    pub openssh_added: Option<V>,
    /// First OpenSSH release whose sshd no longer offers it by default.
    pub openssh_server_default_dropped: Option<V>,
    /// First OpenSSH release that rejects the name (sshd refuses to start with it).
    pub openssh_removed: Option<V>,
    /// Offered by Debian's Dropbear build (2022.83).
    pub dropbear: bool,
    /// The block or stream primitive underneath; with `kind` and `key_len` it picks the code.
    pub primitive: Primitive,
    /// The same primitive's name for `openssl speed -evp` / `openssl enc`, the reference it is
    /// timed and cross-checked against.
    pub openssl_evp: Option<&'static str>,
    /// The backend used unless the caller overrides it, with and without AES instructions:
    /// the faster one as measured by `sshtune speed` (docs/speed-json.md, "default
    /// backends"). Read it through [`default_backend`](Self::default_backend).
    pub backends: Preference,
}

/// The primitive beneath an SSH cipher name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Primitive {
    Aes,
    AesGcm,
    ChaChaPoly,
    TripleDes,
    Blowfish,
    Cast128,
    /// RC4; `discard` keystream bytes are thrown away after keying (RFC 4345 says 1536 for
    /// arcfour128/256, the original `arcfour` discards none).
    Rc4 {
        discard: usize,
    },
    Null,
}

impl Primitive {
    /// OpenSSL 3 keeps these in its `legacy` provider, which must be loaded explicitly.
    pub fn needs_legacy_provider(self) -> bool {
        matches!(
            self,
            Primitive::Blowfish | Primitive::Cast128 | Primitive::Rc4 { .. }
        )
    }
}

impl CipherSpec {
    pub fn is_aead(&self) -> bool {
        self.kind == CipherKind::Aead
    }

    /// The backend used unless the caller overrides it, on this CPU (`Rust` in a build
    /// without the `openssl` feature).
    pub fn default_backend(&self) -> Backend {
        self.backends.on(AesHardware::this_cpu())
    }

    /// Whether an sshd of `version` accepts the name in a `Ciphers` line.
    pub fn accepted_by(&self, version: V) -> bool {
        match self.openssh_added {
            None => false,
            Some(added) => version >= added && self.openssh_removed.is_none_or(|r| version < r),
        }
    }
}

const fn v(major: u16, minor: u16) -> Option<V> {
    Some(V::new(major, minor))
}

const RC4: &str = "RC4 keystream biases (RFC 7465 forbids it in TLS)";
const BLOCK64: &str = "64-bit block: Sweet32 birthday attack, needs frequent rekeying";
const CBC: &str = "CBC mode: plaintext-recovery attacks on SSH, Terrapin with -etm MACs";

macro_rules! cipher {
    ($name:expr, $kind:ident, key $key:expr, iv $iv:expr, block $block:expr, tag $tag:expr,
     $grade:ident, $reason:expr, terrapin $terrapin:expr, legacy $legacy:expr,
     added $added:expr, default_dropped $dropped:expr, removed $removed:expr, dropbear $dropbear:expr,
     primitive $prim:expr, evp $evp:expr, backend $hw:ident / $sw:ident) => {
        CipherSpec {
            name: $name,
            kind: CipherKind::$kind,
            key_len: $key,
            iv_len: $iv,
            block_len: $block,
            tag_len: $tag,
            grade: Grade::$grade,
            reason: $reason,
            terrapin: $terrapin,
            legacy: $legacy,
            openssh_added: $added,
            openssh_server_default_dropped: $dropped,
            openssh_removed: $removed,
            dropbear: $dropbear,
            primitive: {
                use Primitive::*;
                $prim
            },
            openssl_evp: $evp,
            backends: Preference {
                aes_hardware: Backend::$hw,
                aes_software: Backend::$sw,
            },
        }
    };
}

/// Every SSH cipher the tool knows, in OpenSSH's default preference order first.
pub static CIPHERS: &[CipherSpec] = &[
    cipher!("chacha20-poly1305@openssh.com", Aead, key 64, iv 0, block 8, tag 16, Ok,
        "AEAD; Terrapin-affected unless both sides do strict KEX", terrapin true, legacy false,
        added v(6, 5), default_dropped None, removed None, dropbear true,
        primitive ChaChaPoly, evp Some("chacha20-poly1305"), backend Openssl / Openssl),
    cipher!("aes128-ctr", Ctr, key 16, iv 16, block 16, tag 0, Ok,
        "AES in counter mode with a MAC", terrapin false, legacy false,
        added v(3, 7), default_dropped None, removed None, dropbear true,
        primitive Aes, evp Some("aes-128-ctr"), backend Openssl / Openssl),
    cipher!("aes192-ctr", Ctr, key 24, iv 16, block 16, tag 0, Ok,
        "AES in counter mode with a MAC", terrapin false, legacy false,
        added v(3, 7), default_dropped None, removed None, dropbear false,
        primitive Aes, evp Some("aes-192-ctr"), backend Openssl / Openssl),
    cipher!("aes256-ctr", Ctr, key 32, iv 16, block 16, tag 0, Ok,
        "AES in counter mode with a MAC", terrapin false, legacy false,
        added v(3, 7), default_dropped None, removed None, dropbear true,
        primitive Aes, evp Some("aes-256-ctr"), backend Openssl / Openssl),
    cipher!("aes128-gcm@openssh.com", Aead, key 16, iv 12, block 16, tag 16, Ok,
        "AEAD (RFC 5647)", terrapin false, legacy false,
        added v(6, 2), default_dropped None, removed None, dropbear false,
        primitive AesGcm, evp Some("aes-128-gcm"), backend Rust / Openssl),
    cipher!("aes256-gcm@openssh.com", Aead, key 32, iv 12, block 16, tag 16, Ok,
        "AEAD (RFC 5647)", terrapin false, legacy false,
        added v(6, 2), default_dropped None, removed None, dropbear false,
        primitive AesGcm, evp Some("aes-256-gcm"), backend Rust / Openssl),
    cipher!("aes128-cbc", Cbc, key 16, iv 16, block 16, tag 0, Weak, CBC, terrapin true, legacy false,
        added v(2, 3), default_dropped v(6, 7), removed None, dropbear false,
        primitive Aes, evp Some("aes-128-cbc"), backend Openssl / Openssl),
    cipher!("aes192-cbc", Cbc, key 24, iv 16, block 16, tag 0, Weak, CBC, terrapin true, legacy false,
        added v(2, 3), default_dropped v(6, 7), removed None, dropbear false,
        primitive Aes, evp Some("aes-192-cbc"), backend Openssl / Openssl),
    cipher!("aes256-cbc", Cbc, key 32, iv 16, block 16, tag 0, Weak, CBC, terrapin true, legacy false,
        added v(2, 3), default_dropped v(6, 7), removed None, dropbear false,
        primitive Aes, evp Some("aes-256-cbc"), backend Openssl / Openssl),
    cipher!("3des-cbc", Cbc, key 24, iv 8, block 8, tag 0, Broken,
        "Triple DES: 64-bit block (Sweet32) and CBC mode; very slow", terrapin true, legacy true,
        added v(2, 3), default_dropped v(6, 7), removed None, dropbear false,
        primitive TripleDes, evp Some("des-ede3-cbc"), backend Openssl / Openssl),
    cipher!("blowfish-cbc", Cbc, key 16, iv 8, block 8, tag 0, Weak, BLOCK64, terrapin true, legacy true,
        added v(2, 3), default_dropped v(6, 7), removed v(7, 6), dropbear false,
        primitive Blowfish, evp Some("bf-cbc"), backend Openssl / Openssl),
    cipher!("cast128-cbc", Cbc, key 16, iv 8, block 8, tag 0, Weak, BLOCK64, terrapin true, legacy true,
        added v(2, 3), default_dropped v(6, 7), removed v(7, 6), dropbear false,
        primitive Cast128, evp Some("cast5-cbc"), backend Openssl / Openssl),
    cipher!("arcfour", Stream, key 16, iv 0, block 8, tag 0, Broken,
        "RC4 keystream biases, and no discard of the weak first keystream bytes", terrapin false, legacy true,
        added v(2, 3), default_dropped v(6, 7), removed v(7, 6), dropbear false,
        primitive Rc4 { discard: 0 }, evp Some("rc4"), backend Openssl / Openssl),
    cipher!("arcfour128", Stream, key 16, iv 0, block 8, tag 0, Broken, RC4, terrapin false, legacy true,
        added v(4, 2), default_dropped v(6, 7), removed v(7, 6), dropbear false,
        primitive Rc4 { discard: 1536 }, evp Some("rc4"), backend Openssl / Openssl),
    cipher!("arcfour256", Stream, key 32, iv 0, block 8, tag 0, Broken, RC4, terrapin false, legacy true,
        added v(4, 2), default_dropped v(6, 7), removed v(7, 6), dropbear false,
        primitive Rc4 { discard: 1536 }, evp Some("rc4"), backend Openssl / Openssl),
    cipher!("none", None, key 0, iv 0, block 8, tag 0, Broken,
        "no encryption and no integrity: anyone on the path reads and alters the data",
        terrapin false, legacy true,
        added None, default_dropped None, removed None, dropbear false,
        primitive Null, evp None, backend Openssl / Openssl),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MacSpec {
    pub name: &'static str,
    /// The underlying hash or universal-hash family.
    pub family: &'static str,
    pub key_len: usize,
    pub tag_len: usize,
    /// Encrypt-then-MAC: the MAC covers the ciphertext and the length stays in clear.
    pub etm: bool,
    pub grade: Grade,
    pub reason: &'static str,
    pub openssh_added: Option<V>,
    pub openssh_removed: Option<V>,
    pub dropbear: bool,
    /// The backend used unless the caller overrides it (see `CipherSpec::backends`); the
    /// same with and without AES instructions today.
    pub backends: Preference,
}

impl MacSpec {
    /// The backend used unless the caller overrides it, on this CPU.
    pub fn default_backend(&self) -> Backend {
        self.backends.on(AesHardware::this_cpu())
    }

    /// The digest name `openssl speed -hmac` takes for the same HMAC; `None` for UMAC, which
    /// libcrypto does not implement.
    pub fn openssl_digest(&self) -> Option<&'static str> {
        match self.family {
            "sha2-256" => Some("sha256"),
            "sha2-512" => Some("sha512"),
            "sha1" => Some("sha1"),
            "md5" => Some("md5"),
            _ => None,
        }
    }

    pub fn accepted_by(&self, version: V) -> bool {
        match self.openssh_added {
            None => false,
            Some(added) => version >= added && self.openssh_removed.is_none_or(|r| version < r),
        }
    }
}

const EAM: &str = "encrypt-and-MAC: the MAC is computed over plaintext";

macro_rules! mac {
    ($name:expr, $family:expr, key $key:expr, tag $tag:expr, etm $etm:expr, $grade:ident, $reason:expr,
     added $added:expr, dropbear $dropbear:expr) => {
        MacSpec {
            name: $name,
            family: $family,
            key_len: $key,
            tag_len: $tag,
            etm: $etm,
            grade: Grade::$grade,
            reason: $reason,
            openssh_added: $added,
            openssh_removed: None,
            dropbear: $dropbear,
            backends: Preference {
                aes_hardware: Backend::Openssl,
                aes_software: Backend::Openssl,
            },
        }
    };
}

/// Every SSH MAC the tool knows, in OpenSSH's default preference order first.
pub static MACS: &[MacSpec] = &[
    mac!("umac-64-etm@openssh.com", "umac", key 16, tag 8, etm true, Weak,
        "64-bit tag", added v(6, 2), dropbear false),
    mac!("umac-128-etm@openssh.com", "umac", key 16, tag 16, etm true, Ok,
        "UMAC (RFC 4418), encrypt-then-MAC", added v(6, 2), dropbear false),
    mac!("hmac-sha2-256-etm@openssh.com", "sha2-256", key 32, tag 32, etm true, Ok,
        "HMAC-SHA-256, encrypt-then-MAC", added v(6, 2), dropbear false),
    mac!("hmac-sha2-512-etm@openssh.com", "sha2-512", key 64, tag 64, etm true, Ok,
        "HMAC-SHA-512, encrypt-then-MAC", added v(6, 2), dropbear false),
    mac!("hmac-sha1-etm@openssh.com", "sha1", key 20, tag 20, etm true, Weak,
        "SHA-1 is deprecated", added v(6, 2), dropbear false),
    mac!("umac-64@openssh.com", "umac", key 16, tag 8, etm false, Weak,
        "64-bit tag; encrypt-and-MAC", added v(4, 7), dropbear false),
    mac!("umac-128@openssh.com", "umac", key 16, tag 16, etm false, Ok, EAM,
        added v(6, 2), dropbear false),
    mac!("hmac-sha2-256", "sha2-256", key 32, tag 32, etm false, Ok, EAM,
        added v(5, 9), dropbear true),
    mac!("hmac-sha2-512", "sha2-512", key 64, tag 64, etm false, Ok, EAM,
        added v(5, 9), dropbear false),
    mac!("hmac-sha1", "sha1", key 20, tag 20, etm false, Weak,
        "SHA-1 is deprecated; encrypt-and-MAC", added v(2, 3), dropbear true),
    mac!("hmac-sha1-96", "sha1", key 20, tag 12, etm false, Weak,
        "SHA-1, truncated 96-bit tag", added v(2, 3), dropbear false),
    mac!("hmac-sha1-96-etm@openssh.com", "sha1", key 20, tag 12, etm true, Weak,
        "SHA-1, truncated 96-bit tag", added v(6, 2), dropbear false),
    mac!("hmac-md5", "md5", key 16, tag 16, etm false, Broken,
        "MD5 is broken", added v(2, 3), dropbear false),
    mac!("hmac-md5-96", "md5", key 16, tag 12, etm false, Broken,
        "MD5 is broken; truncated tag", added v(2, 3), dropbear false),
    mac!("hmac-md5-etm@openssh.com", "md5", key 16, tag 16, etm true, Broken,
        "MD5 is broken", added v(6, 2), dropbear false),
    mac!("hmac-md5-96-etm@openssh.com", "md5", key 16, tag 12, etm true, Broken,
        "MD5 is broken; truncated tag", added v(6, 2), dropbear false),
];

/// Looks a cipher up by its SSH name.
pub fn cipher(name: &str) -> Option<&'static CipherSpec> {
    CIPHERS.iter().find(|c| c.name == name)
}

/// Looks a MAC up by its SSH name.
pub fn mac(name: &str) -> Option<&'static MacSpec> {
    MACS.iter().find(|m| m.name == name)
}

/// The grade of a cipher used with a MAC (none for an AEAD cipher, whose tag is its MAC): the
/// weaker of the two, since a connection is as weak as either. Every command that grades a
/// combination (bench rows, speed's pairs, reports) asks here, so one pair never gets two grades.
pub fn pair_grade(cipher: &CipherSpec, mac: Option<&MacSpec>) -> Grade {
    mac.map_or(cipher.grade, |m| cipher.grade.min(m.grade))
}

/// `pair_grade` by SSH names; `None` when either name is not in the catalog.
pub fn grade_of(cipher: &str, mac: Option<&str>) -> Option<Grade> {
    let c = self::cipher(cipher)?;
    let m = match mac {
        Some(name) => Some(self::mac(name)?),
        None => None,
    };
    Some(pair_grade(c, m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn a_pair_takes_the_weaker_grade_of_its_cipher_and_mac() {
        assert_eq!(
            grade_of("aes128-ctr", Some("umac-64-etm@openssh.com")),
            Some(Grade::Weak)
        );
        assert_eq!(
            grade_of("aes128-ctr", Some("hmac-md5")),
            Some(Grade::Broken)
        );
        assert_eq!(
            grade_of("3des-cbc", Some("hmac-sha2-256")),
            cipher("3des-cbc").map(|c| c.grade)
        );
        assert_eq!(grade_of("aes128-gcm@openssh.com", None), Some(Grade::Ok));
        assert_eq!(grade_of("aes128-ctr", Some("no-such-mac")), None);
        for c in CIPHERS {
            for m in MACS {
                let g = grade_of(c.name, Some(m.name)).unwrap();
                assert_eq!(g, c.grade.min(m.grade), "{} + {}", c.name, m.name);
            }
        }
    }

    /// AES-GCM is sealed with ring only where AES and carry-less multiply are instructions;
    /// every other algorithm keeps one backend whatever the CPU.
    #[cfg(feature = "openssl")]
    #[test]
    fn only_aes_gcm_changes_backend_with_the_cpu() {
        use crate::{AesHardware, Backend};
        for c in CIPHERS {
            let (hw, sw) = (
                c.backends.on(AesHardware::Present),
                c.backends.on(AesHardware::Absent),
            );
            if c.primitive == Primitive::AesGcm {
                assert_eq!((hw, sw), (Backend::Rust, Backend::Openssl), "{}", c.name);
                assert!(c.backends.depends_on_cpu());
            } else {
                assert_eq!((hw, sw), (Backend::Openssl, Backend::Openssl), "{}", c.name);
                assert!(!c.backends.depends_on_cpu());
            }
        }
        assert!(MACS.iter().all(|m| !m.backends.depends_on_cpu()));
        let cpu = AesHardware::this_cpu();
        assert!(CIPHERS
            .iter()
            .all(|c| c.default_backend() == c.backends.on(cpu)));
    }

    #[test]
    fn names_are_unique() {
        let c: HashSet<_> = CIPHERS.iter().map(|c| c.name).collect();
        assert_eq!(c.len(), CIPHERS.len());
        let m: HashSet<_> = MACS.iter().map(|m| m.name).collect();
        assert_eq!(m.len(), MACS.len());
    }

    #[test]
    fn aead_ciphers_have_tags_and_others_do_not() {
        for c in CIPHERS {
            assert_eq!(c.is_aead(), c.tag_len > 0, "{}", c.name);
        }
    }

    #[test]
    fn openssh_9_rejects_the_ciphers_removed_in_7_6() {
        let v92 = V::new(9, 2);
        let accepted: Vec<_> = CIPHERS
            .iter()
            .filter(|c| c.accepted_by(v92))
            .map(|c| c.name)
            .collect();
        assert_eq!(
            accepted,
            [
                "chacha20-poly1305@openssh.com",
                "aes128-ctr",
                "aes192-ctr",
                "aes256-ctr",
                "aes128-gcm@openssh.com",
                "aes256-gcm@openssh.com",
                "aes128-cbc",
                "aes192-cbc",
                "aes256-cbc",
                "3des-cbc"
            ]
        );
        assert!(cipher("arcfour256").unwrap().accepted_by(V::new(7, 5)));
        assert!(!cipher("chacha20-poly1305@openssh.com")
            .unwrap()
            .accepted_by(V::new(6, 4)));
    }

    #[test]
    fn every_legacy_cipher_is_graded_below_ok() {
        for c in CIPHERS.iter().filter(|c| c.legacy) {
            assert!(c.grade < Grade::Ok, "{}", c.name);
        }
    }
}
