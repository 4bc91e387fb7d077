//! User authentication, publickey method only (RFC 4252 §7): the client signs with one of
//! its identities; the server checks the key with a `Policy` (serve's authorized_keys) and
//! the signature with `sig.rs`.

use super::conn::Transport;
use super::error::{Error, Result};
use super::hostkey;
use super::sig;
use super::userkey::UserKey;
use crate::wire::numbers as n;
use crate::wire::transport::{ExtInfo, ServiceAccept, ServiceRequest};
use crate::wire::userauth::{
    Method, UserauthFailure, UserauthPkOk, UserauthRequest, UserauthSuccess, PUBLICKEY,
};
use crate::wire::Message;

const USERAUTH: &[u8] = b"ssh-userauth";
const CONNECTION: &[u8] = b"ssh-connection";
/// Attempts a client gets before we hang up (OpenSSH's MaxAuthTries default).
const MAX_TRIES: u32 = 6;

/// A publickey request for `user` with key `blob`, before it is signed.
fn publickey_request<'a>(user: &'a [u8], alg: &'a [u8], blob: &'a [u8]) -> UserauthRequest<'a> {
    UserauthRequest {
        user,
        service: CONNECTION,
        method: Method::PublicKey {
            algorithm: alg,
            blob,
            signature: None,
        },
    }
}

/// Tries each identity of `key` in turn (RFC 4252 §7: a failure lets us try the next).
pub fn client(t: &mut Transport, user: &str, key: &dyn UserKey) -> Result<()> {
    t.send_msg(&ServiceRequest { service: USERAUTH })?;
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
        let mut req = publickey_request(user.as_bytes(), id.alg.as_bytes(), &id.blob);
        let sig = key.sign(id, &req.signed_data(t.session_id()))?;
        if let Method::PublicKey { signature, .. } = &mut req.method {
            *signature = Some(&sig);
        }
        t.send_msg(&req)?;
        loop {
            t.recv()?;
            match t.payload()[0] {
                n::USERAUTH_SUCCESS => return Ok(()),
                n::USERAUTH_BANNER | n::EXT_INFO => {}
                n::USERAUTH_FAILURE => {
                    methods = UserauthFailure::decode(t.payload())
                        .map(|f| f.methods.to_string())
                        .unwrap_or_default();
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

/// What the server asks about each offered key (serve answers from authorized_keys).
pub trait Policy {
    /// `None` if `user` may not log in with `key_blob`; otherwise the forced command the
    /// login is limited to, if any. The implementation logs its refusals.
    fn allow(&self, user: &str, key_blob: &[u8]) -> Option<Option<String>>;
    /// A key `user` offered, refused for its type, size or signature algorithm before `allow`
    /// is asked, or for a bad signature after.
    fn unusable_key(&self, _user: &str, _why: &str) {}
}

/// A successful login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    pub user: String,
    /// From the key's `command="…"`: run this instead of whatever the client asks for.
    pub forced_command: Option<String>,
}

/// Runs the server side until a user proves a key `policy` allows. The "query" form (no
/// signature, RFC 4252 §7) gets PK_OK for a key that would be accepted, as `ssh` expects.
pub fn server(t: &mut Transport, policy: &dyn Policy) -> Result<Login> {
    t.recv()?;
    if ServiceRequest::decode(t.payload()).map(|r| r.service) != Ok(USERAUTH) {
        return Err(Error::protocol("expected a ssh-userauth SERVICE_REQUEST"));
    }
    if t.negotiated.as_ref().is_some_and(|n| n.client_ext_info) {
        // Still the first packet after our NEWKEYS (RFC 8308 §2.4). Without server-sig-algs,
        // OpenSSH's client never offers an RSA key with rsa-sha2-*.
        let algs = sig::USER_ALGS.join(",");
        t.send_msg(&ExtInfo {
            extensions: vec![(b"server-sig-algs", algs.as_bytes())],
        })?;
    }
    t.send_msg(&ServiceAccept { service: USERAUTH })?;
    let failure = UserauthFailure {
        methods: [PUBLICKEY].into_iter().collect(),
        partial_success: false,
    }
    .encode();
    for _ in 0..MAX_TRIES {
        t.recv()?;
        let p = t.payload().to_vec();
        match request(t.session_id(), &p, policy)? {
            Step::Success(login) => {
                t.send_msg(&UserauthSuccess)?;
                return Ok(login);
            }
            Step::PkOk(reply) => t.send(&reply)?,
            Step::Failure => t.send(&failure)?,
        }
    }
    Err(Error::Auth("too many failed attempts".into()))
}

/// The answer to one USERAUTH_REQUEST.
enum Step {
    Success(Login),
    PkOk(Vec<u8>),
    Failure,
}

fn request(session_id: &[u8], p: &[u8], policy: &dyn Policy) -> Result<Step> {
    if p.first() != Some(&n::USERAUTH_REQUEST) {
        return Err(Error::protocol("expected USERAUTH_REQUEST"));
    }
    let req = UserauthRequest::decode(p)?;
    let Method::PublicKey {
        algorithm: alg,
        blob,
        signature,
    } = req.method
    else {
        return Ok(Step::Failure);
    };
    if req.service != CONNECTION {
        return Ok(Step::Failure);
    }
    let (Ok(user_s), Ok(alg_s)) = (std::str::from_utf8(req.user), std::str::from_utf8(alg)) else {
        return Ok(Step::Failure);
    };
    if let Err(why) = sig::check_key(alg_s, blob) {
        policy.unusable_key(user_s, &why.0);
        return Ok(Step::Failure);
    }
    let Some(forced_command) = policy.allow(user_s, blob) else {
        return Ok(Step::Failure);
    };
    let Some(signature) = signature else {
        let ok = UserauthPkOk {
            algorithm: alg,
            blob,
        };
        return Ok(Step::PkOk(ok.encode()));
    };
    let data = publickey_request(req.user, alg, blob).signed_data(session_id);
    match sig::verify(alg_s, blob, &data, signature) {
        Ok(()) => Ok(Step::Success(Login {
            user: user_s.to_string(),
            forced_command,
        })),
        Err(why) => {
            policy.unusable_key(user_s, &why.0);
            Ok(Step::Failure)
        }
    }
}

/// One USERAUTH_REQUEST answered as `server` would: the login it grants, if any (fuzzing).
#[doc(hidden)]
pub fn fuzz_request(
    session_id: &[u8],
    payload: &[u8],
    policy: &dyn Policy,
) -> Result<Option<Login>> {
    Ok(match request(session_id, payload, policy)? {
        Step::Success(login) => Some(login),
        Step::PkOk(_) | Step::Failure => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::hostkey::Ed25519Key;
    use std::cell::RefCell;

    /// Lets `user` in with `blob`, limited to `sink`; records why keys were unusable.
    struct OneKey {
        blob: Vec<u8>,
        notes: RefCell<Vec<String>>,
    }

    impl Policy for OneKey {
        fn allow(&self, user: &str, key_blob: &[u8]) -> Option<Option<String>> {
            (user == "u" && key_blob == self.blob).then(|| Some("sink".into()))
        }
        fn unusable_key(&self, _user: &str, why: &str) {
            self.notes.borrow_mut().push(why.into());
        }
    }

    fn req(user: &str, alg: &str, blob: &[u8], sig: Option<&[u8]>) -> Vec<u8> {
        let mut r = publickey_request(user.as_bytes(), alg.as_bytes(), blob);
        if let Method::PublicKey { signature, .. } = &mut r.method {
            *signature = sig;
        }
        r.encode()
    }

    fn signed_data(session_id: &[u8], user: &[u8], alg: &[u8], blob: &[u8]) -> Vec<u8> {
        publickey_request(user, alg, blob).signed_data(session_id)
    }

    fn answer(p: &OneKey, msg: &[u8]) -> &'static str {
        match request(b"sid", msg, p).unwrap() {
            Step::Success(l) => {
                assert_eq!(l.forced_command.as_deref(), Some("sink"));
                "success"
            }
            Step::PkOk(_) => "pk_ok",
            Step::Failure => "failure",
        }
    }

    #[test]
    fn query_signature_user_and_sha1_rsa() {
        let k = Ed25519Key::generate().unwrap();
        let other = Ed25519Key::generate().unwrap();
        let p = OneKey {
            blob: k.public_blob(),
            notes: RefCell::default(),
        };
        let blob = k.public_blob();
        assert_eq!(answer(&p, &req("u", ED25519_ALG, &blob, None)), "pk_ok");
        let good = k.sign(&signed_data(b"sid", b"u", ED25519_ALG.as_bytes(), &blob));
        assert_eq!(
            answer(&p, &req("u", ED25519_ALG, &blob, Some(&good))),
            "success"
        );
        assert_eq!(
            answer(&p, &req("x", ED25519_ALG, &blob, Some(&good))),
            "failure"
        );
        let forged = other.sign(&signed_data(b"sid", b"u", ED25519_ALG.as_bytes(), &blob));
        assert_eq!(
            answer(&p, &req("u", ED25519_ALG, &blob, Some(&forged))),
            "failure"
        );
        // An RSA blob offered with SHA-1 signatures is refused before any lookup.
        let mut w = crate::wire::Writer::new();
        w.string(b"ssh-rsa")
            .string(&[1, 0, 1])
            .string(&sig::mpint(&[0xc1; 256]));
        assert_eq!(
            answer(&p, &req("u", "ssh-rsa", &w.into_bytes(), None)),
            "failure"
        );
        assert!(p.notes.borrow().iter().any(|n| n.contains("SHA-1")));
    }

    const ED25519_ALG: &str = sig::ED25519;
}
