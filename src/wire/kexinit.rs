//! SSH_MSG_KEXINIT (RFC 4253 §7.1): the algorithm lists a peer offers. A received KEXINIT
//! borrows its lists from the payload (`NameList`); `into_owned` keeps one past it.

use super::codec::{DecodeError, Message, NameList, Reader, Writer};
use super::numbers as msg;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KexInit<'a> {
    #[serde(skip)]
    pub cookie: [u8; 16],
    pub kex: NameList<'a>,
    pub host_key: NameList<'a>,
    pub ciphers_c2s: NameList<'a>,
    pub ciphers_s2c: NameList<'a>,
    pub macs_c2s: NameList<'a>,
    pub macs_s2c: NameList<'a>,
    pub compression_c2s: NameList<'a>,
    pub compression_s2c: NameList<'a>,
    pub languages_c2s: NameList<'a>,
    pub languages_s2c: NameList<'a>,
    pub first_kex_follows: bool,
}

impl<'a> Message<'a> for KexInit<'a> {
    const NUMBER: u8 = msg::KEXINIT;

    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let mut cookie = [0u8; 16];
        cookie.copy_from_slice(r.take(16, "cookie")?);
        let k = Self {
            cookie,
            kex: r.name_list("kex algorithms")?,
            host_key: r.name_list("host key algorithms")?,
            ciphers_c2s: r.name_list("ciphers client to server")?,
            ciphers_s2c: r.name_list("ciphers server to client")?,
            macs_c2s: r.name_list("MACs client to server")?,
            macs_s2c: r.name_list("MACs server to client")?,
            compression_c2s: r.name_list("compression client to server")?,
            compression_s2c: r.name_list("compression server to client")?,
            languages_c2s: r.name_list("languages client to server")?,
            languages_s2c: r.name_list("languages server to client")?,
            first_kex_follows: r.bool("first_kex_packet_follows")?,
        };
        r.u32("reserved")?;
        Ok(k)
    }

    fn write_body(&self, w: &mut Writer) {
        w.raw(&self.cookie);
        for list in [
            &self.kex,
            &self.host_key,
            &self.ciphers_c2s,
            &self.ciphers_s2c,
            &self.macs_c2s,
            &self.macs_s2c,
            &self.compression_c2s,
            &self.compression_s2c,
            &self.languages_c2s,
            &self.languages_s2c,
        ] {
            w.name_list(list);
        }
        w.bool(self.first_kex_follows).u32(0);
    }
}

impl<'a> KexInit<'a> {
    /// [`Message::decode`], callable without the trait in scope (the exchange hash needs the
    /// peer's exact bytes, so callers keep the payload and decode it here).
    pub fn decode(payload: &'a [u8]) -> Result<Self, DecodeError> {
        <Self as Message>::decode(payload)
    }

    /// [`Message::encode`], callable without the trait in scope.
    pub fn encode(&self) -> Vec<u8> {
        <Self as Message>::encode(self)
    }

    /// Strict KEX (OpenSSH 9.6+, the Terrapin countermeasure), as advertised by a server.
    pub fn server_strict_kex(&self) -> bool {
        self.kex.contains("kex-strict-s-v00@openssh.com")
    }

    /// The same message, no longer borrowed from a payload.
    pub fn into_owned(self) -> KexInit<'static> {
        KexInit {
            cookie: self.cookie,
            kex: self.kex.into_owned(),
            host_key: self.host_key.into_owned(),
            ciphers_c2s: self.ciphers_c2s.into_owned(),
            ciphers_s2c: self.ciphers_s2c.into_owned(),
            macs_c2s: self.macs_c2s.into_owned(),
            macs_s2c: self.macs_s2c.into_owned(),
            compression_c2s: self.compression_c2s.into_owned(),
            compression_s2c: self.compression_s2c.into_owned(),
            languages_c2s: self.languages_c2s.into_owned(),
            languages_s2c: self.languages_s2c.into_owned(),
            first_kex_follows: self.first_kex_follows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> KexInit<'static> {
        let l = |s: &str| s.split(',').collect::<NameList>();
        KexInit {
            cookie: [7; 16],
            kex: l("curve25519-sha256,kex-strict-s-v00@openssh.com"),
            host_key: l("ssh-ed25519"),
            ciphers_c2s: l("aes128-ctr,aes128-gcm@openssh.com"),
            ciphers_s2c: l("aes128-ctr"),
            macs_c2s: l("hmac-sha2-256"),
            macs_s2c: l("hmac-sha2-256"),
            compression_c2s: l("none"),
            compression_s2c: l("none,zlib@openssh.com"),
            languages_c2s: NameList::default(),
            languages_s2c: NameList::default(),
            first_kex_follows: false,
        }
    }

    #[test]
    fn round_trip() {
        let k = sample();
        assert_eq!(KexInit::decode(&k.encode()).unwrap(), k);
        assert!(k.server_strict_kex());
    }

    #[test]
    fn other_messages_are_rejected() {
        let mut bytes = sample().encode();
        bytes[0] = msg::IGNORE;
        assert!(KexInit::decode(&bytes).is_err());
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = sample().encode();
        for n in 0..bytes.len() {
            if n == 0 {
                continue;
            }
            assert!(KexInit::decode(&bytes[..n]).is_err(), "prefix {n}");
        }
    }
}
