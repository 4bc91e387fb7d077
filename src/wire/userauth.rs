//! User authentication messages (RFC 4252), publickey method only (§7): the native client
//! sends them, `sshtune serve` reads them.

use super::codec::{DecodeError, Message, NameList, Reader, Writer};
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

/// SSH_MSG_USERAUTH_FAILURE (§5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserauthFailure<'a> {
    /// Methods that may continue.
    pub methods: NameList<'a>,
    pub partial_success: bool,
}

impl<'a> Message<'a> for UserauthFailure<'a> {
    const NUMBER: u8 = n::USERAUTH_FAILURE;
    fn write_body(&self, w: &mut Writer) {
        w.name_list(&self.methods).bool(self.partial_success);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            methods: r.name_list("methods")?,
            partial_success: r.bool("partial success")?,
        })
    }
}

/// SSH_MSG_USERAUTH_SUCCESS (§5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserauthSuccess;

impl Message<'_> for UserauthSuccess {
    const NUMBER: u8 = n::USERAUTH_SUCCESS;
    fn write_body(&self, _: &mut Writer) {}
    fn read_body(_: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self)
    }
}

/// SSH_MSG_USERAUTH_PK_OK (§7): the key of a query would be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserauthPkOk<'a> {
    pub algorithm: &'a [u8],
    pub blob: &'a [u8],
}

impl<'a> Message<'a> for UserauthPkOk<'a> {
    const NUMBER: u8 = n::USERAUTH_PK_OK;
    fn write_body(&self, w: &mut Writer) {
        w.string(self.algorithm).string(self.blob);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            algorithm: r.string("algorithm")?,
            blob: r.string("key")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip<'a, M: Message<'a> + PartialEq + std::fmt::Debug>(m: &M, bytes: &'a [u8]) {
        assert_eq!(&M::decode(bytes).unwrap(), m);
        for cut in 0..bytes.len() {
            if let Ok(short) = M::decode(&bytes[..cut]) {
                assert_ne!(&short, m, "prefix {cut}");
            }
        }
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..64)
    }

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
            round_trip(&pk, &pk.encode());
            let o = UserauthRequest { user: &user, service: b"x", method: Method::Other { name: other.as_bytes(), data: &blob } };
            round_trip(&o, &o.encode());
            let f = UserauthFailure { methods: methods.iter().collect(), partial_success: partial };
            round_trip(&f, &f.encode());
            let ok = UserauthPkOk { algorithm: &alg, blob: &blob };
            round_trip(&ok, &ok.encode());
            round_trip(&UserauthSuccess, &UserauthSuccess.encode());
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
