//! Ed25519 keys in SSH encodings (RFC 8709): the server's host key, user keys, signature
//! blobs, and checking a server's key against a known_hosts file.

use super::error::{Error, Result};
use crate::wire::Writer;
use anyhow::Context as _;
use ring::signature::{Ed25519KeyPair, KeyPair as _};
use std::path::Path;

pub use super::sig::{ED25519, RSA_SHA256, RSA_SHA512};

/// Host key algorithms a client can verify, in preference order. `ssh-rsa` (SHA-1
/// signatures) is deliberately absent.
pub const VERIFIABLE: &[&str] = &[ED25519, RSA_SHA512, RSA_SHA256];

/// Verifies a signature made with the negotiated host key algorithm `alg` (RFC 8332 for RSA:
/// the key blob says `ssh-rsa`, the signature names the SHA-2 variant). The checks live in
/// `sig.rs`, shared with user authentication.
pub fn verify_as(alg: &str, key_blob: &[u8], data: &[u8], sig_blob: &[u8]) -> Result<()> {
    super::sig::verify(alg, key_blob, data, sig_blob).map_err(|e| Error::HostKey(e.0))
}

/// A private ed25519 key usable as host key or user key.
pub struct Ed25519Key {
    pair: Ed25519KeyPair,
    seed: [u8; 32],
}

impl Ed25519Key {
    pub fn generate() -> Result<Self> {
        let mut seed = [0u8; 32];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut seed)
            .map_err(|_| Error::protocol("system random source failed"))?;
        Self::from_seed(seed)
    }

    pub fn from_seed(seed: [u8; 32]) -> Result<Self> {
        let pair = Ed25519KeyPair::from_seed_unchecked(&seed)
            .map_err(|_| Error::protocol("invalid ed25519 seed"))?;
        Ok(Self { pair, seed })
    }

    /// Reads an unencrypted OpenSSH private key file (`ssh-keygen -t ed25519 -N ''`).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading key {}", path.display()))?;
        let key = ssh_key::PrivateKey::from_openssh(&text)
            .with_context(|| format!("parsing OpenSSH private key {}", path.display()))?;
        if key.is_encrypted() {
            anyhow::bail!(
                "key {} is passphrase-protected: use an unencrypted key or ssh-agent",
                path.display()
            );
        }
        let pair = key.key_data().ed25519().with_context(|| {
            format!(
                "key {} is {}, only ssh-ed25519 keys are supported here",
                path.display(),
                key.algorithm()
            )
        })?;
        Ok(Self::from_seed(pair.private.to_bytes())?)
    }

    /// Writes the key in OpenSSH format, readable by `ssh-keygen -l -f`.
    pub fn save(&self, path: &Path, comment: &str) -> anyhow::Result<()> {
        use ssh_key::private::{Ed25519Keypair, Ed25519PrivateKey, KeypairData};
        use ssh_key::public::Ed25519PublicKey;
        let pk: [u8; 32] = self.public_bytes();
        let pair = Ed25519Keypair {
            public: Ed25519PublicKey(pk),
            private: Ed25519PrivateKey::from_bytes(&self.seed),
        };
        let key = ssh_key::PrivateKey::new(KeypairData::Ed25519(pair), comment)
            .context("building the host key")?;
        let text = key
            .to_openssh(ssh_key::LineEnding::LF)
            .context("encoding the host key")?;
        write_private(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        std::fs::write(
            path.with_extension("pub"),
            format!("{} {comment}\n", self.public_openssh()),
        )
        .with_context(|| format!("writing {}.pub", path.display()))?;
        Ok(())
    }

    pub fn public_bytes(&self) -> [u8; 32] {
        let mut pk = [0u8; 32];
        pk.copy_from_slice(self.pair.public_key().as_ref());
        pk
    }

    /// The public key blob (RFC 8709 §4).
    pub fn public_blob(&self) -> Vec<u8> {
        public_blob(&self.public_bytes())
    }

    pub fn public_openssh(&self) -> String {
        use base64ct::Encoding as _;
        format!(
            "{ED25519} {}",
            base64ct::Base64::encode_string(&self.public_blob())
        )
    }

    /// The signature blob (RFC 8709 §6).
    pub fn sign(&self, data: &[u8]) -> Vec<u8> {
        let sig = self.pair.sign(data);
        let mut w = Writer::new();
        w.string(ED25519.as_bytes()).string(sig.as_ref());
        w.into_bytes()
    }
}

pub fn public_blob(pk: &[u8; 32]) -> Vec<u8> {
    let mut w = Writer::new();
    w.string(ED25519.as_bytes()).string(pk);
    w.into_bytes()
}

/// `SHA256:...` as `ssh-keygen -l` prints it.
pub fn fingerprint(blob: &[u8]) -> String {
    use base64ct::Encoding as _;
    let d = ring::digest::digest(&ring::digest::SHA256, blob);
    format!(
        "SHA256:{}",
        base64ct::Base64Unpadded::encode_string(d.as_ref())
    )
}

/// Verifies an ed25519 `sig_blob` over `data` with the key in `key_blob`.
pub fn verify(key_blob: &[u8], data: &[u8], sig_blob: &[u8]) -> Result<()> {
    verify_as(ED25519, key_blob, data, sig_blob)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)
}

/// What a known_hosts file says about a host.
#[derive(Debug, PartialEq, Eq)]
pub enum HostStatus {
    Trusted,
    /// The host is listed, but with other keys: refuse, like ssh does.
    Changed,
    Unknown,
}

/// Looks `host` (with `port`) up in an OpenSSH known_hosts file, hashed entries included.
pub fn check_known_hosts(text: &str, host: &str, port: u16, key_blob: &[u8]) -> HostStatus {
    let name = if port == 22 {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    };
    let mut listed = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split_whitespace();
        let Some(mut hosts) = parts.next() else {
            continue;
        };
        let revoked = hosts == "@revoked";
        if hosts.starts_with('@') {
            match parts.next() {
                Some(h) => hosts = h,
                None => continue,
            }
        }
        if !host_matches(hosts, &name) {
            continue;
        }
        let (Some(kind), Some(b64)) = (parts.next(), parts.next()) else {
            continue;
        };
        use base64ct::Encoding as _;
        let Ok(blob) = base64ct::Base64::decode_vec(b64) else {
            continue;
        };
        if blob == key_blob {
            if revoked {
                return HostStatus::Changed;
            }
            return HostStatus::Trusted;
        }
        if kind == ED25519 || kind.starts_with("ssh-") || kind.starts_with("ecdsa") {
            listed = true;
        }
    }
    if listed {
        HostStatus::Changed
    } else {
        HostStatus::Unknown
    }
}

fn host_matches(patterns: &str, name: &str) -> bool {
    if let Some(rest) = patterns.strip_prefix("|1|") {
        use base64ct::Encoding as _;
        let Some((salt, hash)) = rest.split_once('|') else {
            return false;
        };
        let (Ok(salt), Ok(hash)) = (
            base64ct::Base64::decode_vec(salt),
            base64ct::Base64::decode_vec(hash),
        ) else {
            return false;
        };
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, &salt);
        return ring::hmac::verify(&key, name.as_bytes(), &hash).is_ok();
    }
    let mut matched = false;
    for p in patterns.split(',') {
        if let Some(neg) = p.strip_prefix('!') {
            if neg == name {
                return false;
            }
        } else if p == name {
            matched = true;
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_verify_and_tamper() {
        let k = Ed25519Key::generate().unwrap();
        let sig = k.sign(b"data");
        verify(&k.public_blob(), b"data", &sig).unwrap();
        assert!(verify(&k.public_blob(), b"datb", &sig).is_err());
        assert!(verify(&k.public_blob()[..10], b"data", &sig).is_err());
    }

    #[test]
    fn known_hosts_plain_hashed_and_changed() {
        let k = Ed25519Key::generate().unwrap();
        let other = Ed25519Key::generate().unwrap();
        let text = format!("[127.0.0.1]:2222 {}\n", k.public_openssh());
        let blob = k.public_blob();
        assert_eq!(
            check_known_hosts(&text, "127.0.0.1", 2222, &blob),
            HostStatus::Trusted
        );
        assert_eq!(
            check_known_hosts(&text, "127.0.0.1", 2222, &other.public_blob()),
            HostStatus::Changed
        );
        assert_eq!(
            check_known_hosts(&text, "127.0.0.1", 22, &blob),
            HostStatus::Unknown
        );
        // Hashed entry: HMAC-SHA1(salt, name) as ssh-keygen -H writes it.
        use base64ct::Encoding as _;
        let salt = [5u8; 20];
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, &salt);
        let tag = ring::hmac::sign(&key, b"example.org");
        let hashed = format!(
            "|1|{}|{} {}\n",
            base64ct::Base64::encode_string(&salt),
            base64ct::Base64::encode_string(tag.as_ref()),
            k.public_openssh()
        );
        assert_eq!(
            check_known_hosts(&hashed, "example.org", 22, &blob),
            HostStatus::Trusted
        );
    }

    #[test]
    fn save_and_load_openssh_format() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k");
        let k = Ed25519Key::generate().unwrap();
        k.save(&p, "test").unwrap();
        let l = Ed25519Key::load(&p).unwrap();
        assert_eq!(l.public_blob(), k.public_blob());
    }
}
