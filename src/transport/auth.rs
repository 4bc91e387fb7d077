//! User authentication, publickey method only (RFC 4252 §7): the client signs with an
//! ed25519 key; the server checks the key against an authorized_keys list.

use super::conn::Transport;
use super::error::{Error, Result};
use super::hostkey::{self, ED25519};
use super::userkey::UserKey;
use crate::wire::numbers as n;
use crate::wire::{Reader, Writer};

const USERAUTH: &[u8] = b"ssh-userauth";
const CONNECTION: &[u8] = b"ssh-connection";
const PUBLICKEY: &[u8] = b"publickey";
/// Attempts a client gets before we hang up (OpenSSH's MaxAuthTries default).
const MAX_TRIES: u32 = 6;

/// The data a publickey signature covers (RFC 4252 §7).
fn signed_data(session_id: &[u8], user: &[u8], alg: &[u8], blob: &[u8]) -> Vec<u8> {
    let mut w = Writer::new();
    w.string(session_id)
        .u8(n::USERAUTH_REQUEST)
        .string(user)
        .string(CONNECTION)
        .string(PUBLICKEY)
        .bool(true)
        .string(alg)
        .string(blob);
    w.into_bytes()
}

/// Tries each identity of `key` in turn (RFC 4252 §7: a failure lets us try the next).
pub fn client(t: &mut Transport, user: &str, key: &dyn UserKey) -> Result<()> {
    let mut w = Writer::new();
    w.u8(n::SERVICE_REQUEST).string(USERAUTH);
    t.send(&w.into_bytes())?;
    loop {
        t.recv()?;
        match t.payload()[0] {
            n::SERVICE_ACCEPT => break,
            n::EXT_INFO => {}
            m => return Err(Error::protocol(format!("expected SERVICE_ACCEPT, got {m}"))),
        }
    }
    let ids = key.identities();
    let mut methods = String::new();
    for id in &ids {
        let sig = key.sign(
            id,
            &signed_data(t.session_id(), user.as_bytes(), id.alg.as_bytes(), &id.blob),
        )?;
        let mut w = Writer::new();
        w.u8(n::USERAUTH_REQUEST)
            .string(user.as_bytes())
            .string(CONNECTION)
            .string(PUBLICKEY)
            .bool(true)
            .string(id.alg.as_bytes())
            .string(&id.blob)
            .string(&sig);
        t.send(&w.into_bytes())?;
        loop {
            t.recv()?;
            match t.payload()[0] {
                n::USERAUTH_SUCCESS => return Ok(()),
                n::USERAUTH_BANNER | n::EXT_INFO => {}
                n::USERAUTH_FAILURE => {
                    let mut r = Reader::new(&t.payload()[1..]);
                    methods = r.utf8("methods").unwrap_or("").to_string();
                    break;
                }
                m => {
                    return Err(Error::protocol(format!(
                        "unexpected message {m} during authentication"
                    )))
                }
            }
        }
    }
    let tried: Vec<String> = ids
        .iter()
        .map(|i| format!("{} {}", i.alg, hostkey::fingerprint(&i.blob)))
        .collect();
    Err(Error::Auth(format!(
        "no key accepted for user {user} (tried: {}; server allows: {methods})",
        if tried.is_empty() {
            "none".to_string()
        } else {
            tried.join(", ")
        }
    )))
}

/// Runs the server side until a user proves a key in `authorized`; returns the user name.
pub fn server(t: &mut Transport, authorized: &[Vec<u8>]) -> Result<String> {
    t.recv()?;
    let mut r = Reader::new(t.payload());
    if r.u8("message")? != n::SERVICE_REQUEST || r.string("service")? != USERAUTH {
        return Err(Error::protocol("expected a ssh-userauth SERVICE_REQUEST"));
    }
    let mut w = Writer::new();
    w.u8(n::SERVICE_ACCEPT).string(USERAUTH);
    t.send(&w.into_bytes())?;
    let failure = {
        let mut w = Writer::new();
        w.u8(n::USERAUTH_FAILURE).string(PUBLICKEY).bool(false);
        w.into_bytes()
    };
    for _ in 0..MAX_TRIES {
        t.recv()?;
        let p = t.payload().to_vec();
        let mut r = Reader::new(&p);
        if r.u8("message")? != n::USERAUTH_REQUEST {
            return Err(Error::protocol("expected USERAUTH_REQUEST"));
        }
        let user = r.utf8("user")?.to_string();
        let service = r.string("service")?;
        let method = r.string("method")?;
        if method != PUBLICKEY || service != CONNECTION {
            t.send(&failure)?;
            continue;
        }
        let has_sig = r.bool("has signature")?;
        let alg = r.string("algorithm")?;
        let blob = r.string("key")?;
        if alg != ED25519.as_bytes() || !authorized.iter().any(|k| k == blob) {
            t.send(&failure)?;
            continue;
        }
        if !has_sig {
            r.finish()?;
            let mut w = Writer::new();
            w.u8(n::USERAUTH_PK_OK).string(alg).string(blob);
            t.send(&w.into_bytes())?;
            continue;
        }
        let sig = r.string("signature")?;
        r.finish()?;
        let data = signed_data(t.session_id(), user.as_bytes(), alg, blob);
        if hostkey::verify(blob, &data, sig).is_ok() {
            t.send(&[n::USERAUTH_SUCCESS])?;
            return Ok(user);
        }
        t.send(&failure)?;
    }
    Err(Error::Auth("too many failed attempts".into()))
}

/// Key blobs of the ed25519 keys in an authorized_keys file (options before the key type
/// are skipped; other key types are ignored because we cannot verify them).
pub fn parse_authorized_keys(text: &str) -> Vec<Vec<u8>> {
    use base64ct::Encoding as _;
    text.lines()
        .filter_map(|line| {
            let mut it = line.split_whitespace();
            it.by_ref().find(|t| *t == ED25519)?;
            base64ct::Base64::decode_vec(it.next()?).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::transport::hostkey::Ed25519Key;

    #[test]
    fn authorized_keys_with_options_and_comments() {
        let k = Ed25519Key::generate().unwrap();
        let text = format!(
            "# comment\nrestrict,command=\"x\" {} me@host\nssh-rsa AAAA other\n",
            k.public_openssh()
        );
        assert_eq!(parse_authorized_keys(&text), vec![k.public_blob()]);
    }
}
