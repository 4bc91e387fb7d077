//! Transport layer messages (RFC 4253 §7–§11, RFC 5656 §4, RFC 8308) other than KEXINIT
//! (`kexinit`): what the key exchange, the service request and a hang-up put on the wire.

use super::codec::{messages, DecodeError, Message, Reader, Writer};
use super::numbers as n;

messages! {
    /// SSH_MSG_DISCONNECT (RFC 4253 §11.1); reason codes in `numbers::reason`.
    Disconnect<'a> = n::DISCONNECT => {
        reason: u32 "reason code",
        description: string "description",
        language: string "language tag",
    }

    /// SSH_MSG_SERVICE_REQUEST (RFC 4253 §10).
    ServiceRequest<'a> = n::SERVICE_REQUEST => { service: string "service name", }

    /// SSH_MSG_SERVICE_ACCEPT (RFC 4253 §10).
    ServiceAccept<'a> = n::SERVICE_ACCEPT => { service: string "service name", }

    /// SSH_MSG_KEX_ECDH_INIT (RFC 5656 §4), also KEXDH_INIT (RFC 4253 §8): the DH `e` is an
    /// mpint, whose body encodes as this string does.
    KexEcdhInit<'a> = n::KEX_ECDH_INIT => { client_public: string "client ephemeral key", }

    /// SSH_MSG_KEX_ECDH_REPLY (RFC 5656 §4), also KEXDH_REPLY.
    KexEcdhReply<'a> = n::KEX_ECDH_REPLY => {
        host_key: string "host key",
        server_public: string "server ephemeral key",
        signature: string "exchange hash signature",
    }

    /// SSH_MSG_NEWKEYS (RFC 4253 §7.3).
    NewKeys = n::NEWKEYS;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::codec::testing::{bytes, round_trip_exact, trail};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn transport_messages(a in bytes(), b in bytes(), c in bytes(), code in any::<u32>()) {
            let m = Disconnect { reason: code, description: &a, language: &b };
            round_trip_exact(&m, &trail(m.encode()));
            let m = ServiceRequest { service: &a };
            round_trip_exact(&m, &trail(m.encode()));
            let m = ServiceAccept { service: &a };
            round_trip_exact(&m, &trail(m.encode()));
            let m = ExtInfo { extensions: vec![(&a[..], &b[..]), (&c[..], &a[..])] };
            round_trip_exact(&m, &trail(m.encode()));
            let m = KexEcdhInit { client_public: &a };
            round_trip_exact(&m, &trail(m.encode()));
            let m = KexEcdhReply { host_key: &a, server_public: &b, signature: &c };
            round_trip_exact(&m, &trail(m.encode()));
            round_trip_exact(&NewKeys, &trail(NewKeys.encode()));
        }
    }

    #[test]
    fn ext_info_count_cannot_ask_for_memory() {
        let mut w = Writer::new();
        w.u8(n::EXT_INFO).u32(u32::MAX);
        assert!(ExtInfo::decode(&w.into_bytes()).is_err());
    }
}
