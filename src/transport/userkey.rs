//! Keys a client can log in with (RFC 4252 §7): ed25519, ECDSA (nistp256/384) and RSA keys
//! from OpenSSH private key files, and the same types from an ssh-agent
//! (draft-miller-ssh-agent).

use super::error::{Error, Result};
use super::hostkey::{Ed25519Key, ED25519, RSA_SHA256, RSA_SHA512};
use super::sig::{ECDSA_P256, ECDSA_P384};
use crate::wire::{Reader, Writer};
use anyhow::Context as _;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// One public key offered in a USERAUTH_REQUEST, with its signature algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub alg: String,
    pub blob: Vec<u8>,
}

pub trait UserKey: Send + Sync {
    /// The identities to try, in order.
    fn identities(&self) -> Vec<Identity>;
    /// The signature blob over `data` for `id`.
    fn sign(&self, id: &Identity, data: &[u8]) -> Result<Vec<u8>>;
}

impl UserKey for Ed25519Key {
    fn identities(&self) -> Vec<Identity> {
        vec![Identity {
            alg: ED25519.into(),
            blob: self.public_blob(),
        }]
    }

    fn sign(&self, _id: &Identity, data: &[u8]) -> Result<Vec<u8>> {
        Ok(Ed25519Key::sign(self, data))
    }
}

/// An RSA private key; signs with SHA-2 only (RFC 8332), never SHA-1. Pure Rust (the `rsa`
/// crate, blinded) in both builds: a login signs once, so libcrypto's speed buys nothing.
pub struct RsaKey {
    key: rsa::RsaPrivateKey,
    blob: Vec<u8>,
}

impl RsaKey {
    fn from_ssh_key(k: &ssh_key::private::RsaKeypair) -> anyhow::Result<Self> {
        let positive = |m: &ssh_key::Mpint| m.as_positive_bytes().unwrap_or(&[]).to_vec();
        let mut w = Writer::new();
        w.string(b"ssh-rsa")
            .string(&super::sig::mpint(&positive(&k.public.e)))
            .string(&super::sig::mpint(&positive(&k.public.n)));
        // From the components ourselves: ssh-key 0.6's own conversion passes p twice, not p, q.
        let big = |m: &ssh_key::Mpint| rsa::BigUint::from_bytes_be(&positive(m));
        let key = rsa::RsaPrivateKey::from_components(
            big(&k.public.n),
            big(&k.public.e),
            big(&k.private.d),
            vec![big(&k.private.p), big(&k.private.q)],
        )?;
        Ok(Self {
            key,
            blob: w.into_bytes(),
        })
    }
}

impl UserKey for RsaKey {
    fn identities(&self) -> Vec<Identity> {
        [RSA_SHA512, RSA_SHA256]
            .iter()
            .map(|a| Identity {
                alg: a.to_string(),
                blob: self.blob.clone(),
            })
            .collect()
    }

    fn sign(&self, id: &Identity, data: &[u8]) -> Result<Vec<u8>> {
        use rsa::sha2::{Digest as _, Sha256, Sha512};
        use rsa::Pkcs1v15Sign;
        let (scheme, hashed) = match id.alg.as_str() {
            RSA_SHA512 => (Pkcs1v15Sign::new::<Sha512>(), Sha512::digest(data).to_vec()),
            _ => (Pkcs1v15Sign::new::<Sha256>(), Sha256::digest(data).to_vec()),
        };
        let sig = self
            .key
            .sign_with_rng(&mut rand::thread_rng(), scheme, &hashed)
            .map_err(|e| Error::protocol(format!("RSA signature: {e}")))?;
        let mut w = Writer::new();
        w.string(id.alg.as_bytes()).string(&sig);
        Ok(w.into_bytes())
    }
}

/// An ECDSA private key (RFC 5656), signed with ring.
pub struct EcdsaKey {
    alg: &'static str,
    pair: ring::signature::EcdsaKeyPair,
    blob: Vec<u8>,
}

impl EcdsaKey {
    fn from_ssh_key(key: &ssh_key::PrivateKey) -> anyhow::Result<Self> {
        use ring::signature::{
            EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING,
        };
        let pair = key.key_data().ecdsa().context("not an ECDSA key")?;
        let (alg, signing) = match pair.curve() {
            ssh_key::EcdsaCurve::NistP256 => (ECDSA_P256, &ECDSA_P256_SHA256_FIXED_SIGNING),
            ssh_key::EcdsaCurve::NistP384 => (ECDSA_P384, &ECDSA_P384_SHA384_FIXED_SIGNING),
            other => anyhow::bail!("ECDSA curve {other} is not supported (nistp256, nistp384 are)"),
        };
        let rng = ring::rand::SystemRandom::new();
        let pair = EcdsaKeyPair::from_private_key_and_public_key(
            signing,
            pair.private_key_bytes(),
            pair.public_key_bytes(),
            &rng,
        )
        .map_err(|e| anyhow::anyhow!("ECDSA key rejected: {e}"))?;
        Ok(Self {
            alg,
            pair,
            blob: key.public_key().to_bytes()?,
        })
    }
}

impl UserKey for EcdsaKey {
    fn identities(&self) -> Vec<Identity> {
        vec![Identity {
            alg: self.alg.into(),
            blob: self.blob.clone(),
        }]
    }

    fn sign(&self, _id: &Identity, data: &[u8]) -> Result<Vec<u8>> {
        let sig = self
            .pair
            .sign(&ring::rand::SystemRandom::new(), data)
            .map_err(|_| Error::protocol("ECDSA signing failed"))?;
        Ok(super::sig::ecdsa_ssh_signature(self.alg, sig.as_ref()))
    }
}

/// Reads an unencrypted OpenSSH private key file (ed25519, ECDSA or RSA).
pub fn load(path: &Path) -> anyhow::Result<std::sync::Arc<dyn UserKey>> {
    let key = super::hostkey::read_private_key(path, "load it into ssh-agent instead")?;
    if let Some(pair) = key.key_data().ed25519() {
        return Ok(std::sync::Arc::new(Ed25519Key::from_seed(
            pair.private.to_bytes(),
        )?));
    }
    if let Some(pair) = key.key_data().rsa() {
        return Ok(std::sync::Arc::new(
            RsaKey::from_ssh_key(pair)
                .with_context(|| format!("loading RSA key {}", path.display()))?,
        ));
    }
    if key.key_data().ecdsa().is_some() {
        return Ok(std::sync::Arc::new(
            EcdsaKey::from_ssh_key(&key)
                .with_context(|| format!("loading ECDSA key {}", path.display()))?,
        ));
    }
    anyhow::bail!(
        "key {} is {}: only ssh-ed25519, ecdsa-sha2-nistp256/384 and RSA keys are supported",
        path.display(),
        key.algorithm()
    )
}

const AGENTC_REQUEST_IDENTITIES: u8 = 11;
const AGENT_IDENTITIES_ANSWER: u8 = 12;
const AGENTC_SIGN_REQUEST: u8 = 13;
const AGENT_SIGN_RESPONSE: u8 = 14;
const AGENT_RSA_SHA2_256: u32 = 2;
const AGENT_RSA_SHA2_512: u32 = 4;

/// The keys an ssh-agent holds; signing goes through the agent, keys never leave it.
pub struct Agent {
    socket: PathBuf,
    ids: Vec<Identity>,
}

fn agent_call(socket: &Path, req: &[u8]) -> Result<Vec<u8>> {
    let mut s = UnixStream::connect(socket)?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut framed = (req.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(req);
    s.write_all(&framed)?;
    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len == 0 || len > 256 * 1024 {
        return Err(Error::Auth(format!("ssh-agent sent a {len}-byte reply")));
    }
    let mut buf = vec![0u8; len];
    s.read_exact(&mut buf)?;
    Ok(buf)
}

impl Agent {
    /// Connects to the agent at `socket` (usually `$SSH_AUTH_SOCK`) and lists its keys.
    pub fn connect(socket: &Path) -> Result<Self> {
        let reply = agent_call(socket, &[AGENTC_REQUEST_IDENTITIES])?;
        let mut r = Reader::new(&reply);
        if r.u8("agent reply")? != AGENT_IDENTITIES_ANSWER {
            return Err(Error::Auth("ssh-agent refused to list keys".into()));
        }
        let n = r.u32("key count")?;
        let mut ids = Vec::new();
        for _ in 0..n.min(1024) {
            let blob = r.string("key blob")?.to_vec();
            r.string("comment")?;
            let kind = Reader::new(&blob)
                .utf8("key type")
                .unwrap_or("")
                .to_string();
            match kind.as_str() {
                ED25519 | ECDSA_P256 | ECDSA_P384 => ids.push(Identity { alg: kind, blob }),
                "ssh-rsa" => {
                    for alg in [RSA_SHA512, RSA_SHA256] {
                        ids.push(Identity {
                            alg: alg.into(),
                            blob: blob.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(Self {
            socket: socket.to_path_buf(),
            ids,
        })
    }
}

impl UserKey for Agent {
    fn identities(&self) -> Vec<Identity> {
        self.ids.clone()
    }

    fn sign(&self, id: &Identity, data: &[u8]) -> Result<Vec<u8>> {
        let flags = match id.alg.as_str() {
            RSA_SHA512 => AGENT_RSA_SHA2_512,
            RSA_SHA256 => AGENT_RSA_SHA2_256,
            _ => 0,
        };
        let mut w = Writer::new();
        w.u8(AGENTC_SIGN_REQUEST)
            .string(&id.blob)
            .string(data)
            .u32(flags);
        let reply = agent_call(&self.socket, &w.into_bytes())?;
        let mut r = Reader::new(&reply);
        if r.u8("agent reply")? != AGENT_SIGN_RESPONSE {
            return Err(Error::Auth("ssh-agent refused to sign".into()));
        }
        Ok(r.string("signature")?.to_vec())
    }
}
