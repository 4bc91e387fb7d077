//! Transport layer messages (RFC 4253 §7–§11, RFC 5656 §4, RFC 8308) other than KEXINIT
//! (`kexinit`): what the key exchange, the service request and a hang-up put on the wire.

use super::codec::{DecodeError, Message, Reader, Writer};
use super::numbers as n;

/// SSH_MSG_DISCONNECT (RFC 4253 §11.1); reason codes in `numbers::reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disconnect<'a> {
    pub reason: u32,
    pub description: &'a [u8],
    pub language: &'a [u8],
}

impl<'a> Message<'a> for Disconnect<'a> {
    const NUMBER: u8 = n::DISCONNECT;
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.reason)
            .string(self.description)
            .string(self.language);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            reason: r.u32("reason code")?,
            description: r.string("description")?,
            language: r.string("language tag")?,
        })
    }
}

impl<'a> Disconnect<'a> {
    /// Ours: a reason and a text, no language tag.
    pub fn new(reason: u32, description: &'a str) -> Self {
        Self {
            reason,
            description: description.as_bytes(),
            language: b"",
        }
    }
}

/// SSH_MSG_SERVICE_REQUEST (RFC 4253 §10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRequest<'a> {
    pub service: &'a [u8],
}

/// SSH_MSG_SERVICE_ACCEPT (RFC 4253 §10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAccept<'a> {
    pub service: &'a [u8],
}

impl<'a> Message<'a> for ServiceRequest<'a> {
    const NUMBER: u8 = n::SERVICE_REQUEST;
    fn write_body(&self, w: &mut Writer) {
        w.string(self.service);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            service: r.string("service name")?,
        })
    }
}

impl<'a> Message<'a> for ServiceAccept<'a> {
    const NUMBER: u8 = n::SERVICE_ACCEPT;
    fn write_body(&self, w: &mut Writer) {
        w.string(self.service);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            service: r.string("service name")?,
        })
    }
}

/// SSH_MSG_EXT_INFO (RFC 8308 §2.3): extension names and their raw values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtInfo<'a> {
    pub extensions: Vec<(&'a [u8], &'a [u8])>,
}

impl<'a> Message<'a> for ExtInfo<'a> {
    const NUMBER: u8 = n::EXT_INFO;
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.extensions.len() as u32);
        for (name, value) in &self.extensions {
            w.string(name).string(value);
        }
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let count = r.u32("extension count")?;
        // Each extension takes at least 8 bytes: a count beyond that is a lie, not a size.
        if count as usize > r.remaining() / 8 {
            return Err(DecodeError::Unexpected(
                "EXT_INFO counts more extensions than it holds",
            ));
        }
        let extensions = (0..count)
            .map(|_| Ok((r.string("extension name")?, r.string("extension value")?)))
            .collect::<Result<_, DecodeError>>()?;
        Ok(Self { extensions })
    }
}

/// SSH_MSG_NEWKEYS (RFC 4253 §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewKeys;

impl Message<'_> for NewKeys {
    const NUMBER: u8 = n::NEWKEYS;
    fn write_body(&self, _: &mut Writer) {}
    fn read_body(_: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self)
    }
}

/// SSH_MSG_KEX_ECDH_INIT (RFC 5656 §4), also KEXDH_INIT (RFC 4253 §8): the DH `e` is an
/// mpint, whose body encodes as this string does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KexEcdhInit<'a> {
    pub client_public: &'a [u8],
}

impl<'a> Message<'a> for KexEcdhInit<'a> {
    const NUMBER: u8 = n::KEX_ECDH_INIT;
    fn write_body(&self, w: &mut Writer) {
        w.string(self.client_public);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            client_public: r.string("client ephemeral key")?,
        })
    }
}

/// SSH_MSG_KEX_ECDH_REPLY (RFC 5656 §4), also KEXDH_REPLY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KexEcdhReply<'a> {
    pub host_key: &'a [u8],
    pub server_public: &'a [u8],
    pub signature: &'a [u8],
}

impl<'a> Message<'a> for KexEcdhReply<'a> {
    const NUMBER: u8 = n::KEX_ECDH_REPLY;
    fn write_body(&self, w: &mut Writer) {
        w.string(self.host_key)
            .string(self.server_public)
            .string(self.signature);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            host_key: r.string("host key")?,
            server_public: r.string("server ephemeral key")?,
            signature: r.string("exchange hash signature")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The encoding with one byte more, so that the trailing-byte check borrows as long as
    /// the decoded message does.
    fn trail(mut bytes: Vec<u8>) -> Vec<u8> {
        bytes.push(0);
        bytes
    }

    /// `long` is the encoding of `m` followed by one stray byte ([`trail`]).
    fn round_trip<'a, M: Message<'a> + PartialEq + std::fmt::Debug>(m: &M, long: &'a [u8]) {
        let bytes = &long[..long.len() - 1];
        assert_eq!(&M::decode(bytes).unwrap(), m);
        for cut in 0..bytes.len() {
            assert!(M::decode(&bytes[..cut]).is_err(), "prefix {cut}");
        }
        assert_eq!(M::decode(long), Err(DecodeError::Trailing(1)));
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..64)
    }

    proptest! {
        #[test]
        fn transport_messages(a in bytes(), b in bytes(), c in bytes(), code in any::<u32>()) {
            let m = Disconnect { reason: code, description: &a, language: &b };
            round_trip(&m, &trail(m.encode()));
            let m = ServiceRequest { service: &a };
            round_trip(&m, &trail(m.encode()));
            let m = ServiceAccept { service: &a };
            round_trip(&m, &trail(m.encode()));
            let m = ExtInfo { extensions: vec![(&a[..], &b[..]), (&c[..], &a[..])] };
            round_trip(&m, &trail(m.encode()));
            let m = KexEcdhInit { client_public: &a };
            round_trip(&m, &trail(m.encode()));
            let m = KexEcdhReply { host_key: &a, server_public: &b, signature: &c };
            round_trip(&m, &trail(m.encode()));
            round_trip(&NewKeys, &trail(NewKeys.encode()));
        }
    }

    #[test]
    fn ext_info_count_cannot_ask_for_memory() {
        let mut w = Writer::new();
        w.u8(n::EXT_INFO).u32(u32::MAX);
        assert!(ExtInfo::decode(&w.into_bytes()).is_err());
    }
}
