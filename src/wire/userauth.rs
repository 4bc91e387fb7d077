//! User authentication messages (RFC 4252), publickey method only (§7): the native client
//! sends them, `sshtune serve` reads them.

use super::codec::{messages, DecodeError, Message, Reader, Writer};
use super::numbers as n;

/// The method name of RFC 4252 §7.
pub const PUBLICKEY: &str = "publickey";

/// What a USERAUTH_REQUEST asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method<'a> {
    /// `publickey`: a query (no signature) or a login attempt.
    PublicKey {
        algorithm: &'a [u8],
        blob: &'a [u8],
        signature: Option<&'a [u8]>,
    },
    /// Any other method, its fields raw: we answer failure without reading them.
    Other { name: &'a [u8], data: &'a [u8] },
}

/// SSH_MSG_USERAUTH_REQUEST (§5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserauthRequest<'a> {
    pub user: &'a [u8],
    pub service: &'a [u8],
    pub method: Method<'a>,
}

impl UserauthRequest<'_> {
    /// What a publickey signature covers (§7): the session id, then this request as it would
    /// be sent with a signature, up to but without the signature.
    pub fn signed_data(&self, session_id: &[u8]) -> Vec<u8> {
        let mut w = Writer::new();
        w.string(session_id).u8(n::USERAUTH_REQUEST);
        w.string(self.user).string(self.service);
        match &self.method {
            Method::PublicKey {
                algorithm, blob, ..
            } => {
                w.string(PUBLICKEY.as_bytes())
                    .bool(true)
                    .string(algorithm)
                    .string(blob);
            }
            Method::Other { name, data } => {
                w.string(name).raw(data);
            }
        }
        w.into_bytes()
    }
}

impl<'a> Message<'a> for UserauthRequest<'a> {
    const NUMBER: u8 = n::USERAUTH_REQUEST;
    fn write_body(&self, w: &mut Writer) {
        w.string(self.user).string(self.service);
        match &self.method {
            Method::PublicKey {
                algorithm,
                blob,
                signature,
            } => {
                w.string(PUBLICKEY.as_bytes())
                    .bool(signature.is_some())
                    .string(algorithm)
                    .string(blob);
                if let Some(s) = signature {
                    w.string(s);
                }
            }
            Method::Other { name, data } => {
                w.string(name).raw(data);
            }
        }
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let user = r.string("user")?;
        let service = r.string("service")?;
        let name = r.string("method")?;
        let method = if name == PUBLICKEY.as_bytes() {
            let has_signature = r.bool("has signature")?;
            Method::PublicKey {
                algorithm: r.string("algorithm")?,
                blob: r.string("key")?,
                signature: if has_signature {
                    Some(r.string("signature")?)
                } else {
                    None
                },
            }
        } else {
            Method::Other {
                name,
                data: r.rest(),
            }
        };
        Ok(Self {
            user,
            service,
            method,
        })
    }
}

messages! {
    /// SSH_MSG_USERAUTH_FAILURE (§5.1).
    UserauthFailure<'a> = n::USERAUTH_FAILURE => {
        /// Methods that may continue.
        methods: name_list "methods",
        partial_success: bool "partial success",
    }

    /// SSH_MSG_USERAUTH_PK_OK (§7): the key of a query would be accepted.
    UserauthPkOk<'a> = n::USERAUTH_PK_OK => {
        algorithm: string "algorithm",
        blob: string "key",
    }

    /// SSH_MSG_USERAUTH_SUCCESS (§5.1).
    UserauthSuccess = n::USERAUTH_SUCCESS;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::codec::testing::{bytes, round_trip, trail};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn userauth_messages(user in bytes(), alg in bytes(), blob in bytes(), sig in proptest::option::of(bytes()),
                             other in "[a-z-]{1,12}", methods in proptest::collection::vec("[a-z-]{1,12}", 0..4), partial in any::<bool>()) {
            prop_assume!(other != PUBLICKEY);
            let pk = UserauthRequest {
                user: &user,
                service: b"ssh-connection",
                method: Method::PublicKey { algorithm: &alg, blob: &blob, signature: sig.as_deref() },
            };
            round_trip(&pk, &trail(pk.encode()));
            let o = UserauthRequest { user: &user, service: b"x", method: Method::Other { name: other.as_bytes(), data: &blob } };
            round_trip(&o, &trail(o.encode()));
            let f = UserauthFailure { methods: methods.iter().collect(), partial_success: partial };
            round_trip(&f, &trail(f.encode()));
            let ok = UserauthPkOk { algorithm: &alg, blob: &blob };
            round_trip(&ok, &trail(ok.encode()));
            round_trip(&UserauthSuccess, &trail(UserauthSuccess.encode()));
        }
    }

    #[test]
    fn signed_data_is_the_request_without_its_signature() {
        let req = UserauthRequest {
            user: b"u",
            service: b"ssh-connection",
            method: Method::PublicKey {
                algorithm: b"ssh-ed25519",
                blob: b"key",
                signature: Some(b"sig"),
            },
        };
        let mut want = Writer::new();
        want.string(b"sid");
        let mut want = want.into_bytes();
        let mut sent = req.encode();
        // The flag is already true; drop the trailing signature string.
        sent.truncate(sent.len() - 4 - 3);
        want.extend_from_slice(&sent);
        assert_eq!(req.signed_data(b"sid"), want);
    }
}
