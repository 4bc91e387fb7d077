//! Ed25519 keys in SSH encodings (RFC 8709): the server's host key, user keys, signature
//! blobs. Whether a server's key is trusted is `known_hosts.rs`.

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
        let key = read_private_key(path, "use an unencrypted key or ssh-agent")?;
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

/// Reads an OpenSSH private key file, refusing a passphrase-protected one with `advice`.
pub fn read_private_key(path: &Path, advice: &str) -> anyhow::Result<ssh_key::PrivateKey> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading key {}", path.display()))?;
    let key = ssh_key::PrivateKey::from_openssh(&text)
        .with_context(|| format!("parsing OpenSSH private key {}", path.display()))?;
    if key.is_encrypted() {
        anyhow::bail!("key {} is passphrase-protected: {advice}", path.display());
    }
    Ok(key)
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
    fn save_and_load_openssh_format() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k");
        let k = Ed25519Key::generate().unwrap();
        k.save(&p, "test").unwrap();
        let l = Ed25519Key::load(&p).unwrap();
        assert_eq!(l.public_blob(), k.public_blob());
    }
}
