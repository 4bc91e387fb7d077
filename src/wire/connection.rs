//! Connection protocol messages (RFC 4254): global requests and session channels, as both
//! ends of the native transport send and read them. Byte fields borrow the received payload,
//! so reading CHANNEL_DATA copies nothing.

use super::codec::{DecodeError, Message, Reader, Writer};
use super::numbers as n;

/// SSH_MSG_GLOBAL_REQUEST (§4): the request-specific data stays raw, we refuse them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalRequest<'a> {
    pub name: &'a [u8],
    pub want_reply: bool,
    pub data: &'a [u8],
}

impl<'a> Message<'a> for GlobalRequest<'a> {
    const NUMBER: u8 = n::GLOBAL_REQUEST;
    fn write_body(&self, w: &mut Writer) {
        w.string(self.name).bool(self.want_reply).raw(self.data);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            name: r.string("request name")?,
            want_reply: r.bool("want reply")?,
            data: r.rest(),
        })
    }
}

/// SSH_MSG_REQUEST_FAILURE (§4): the answer to a global request we do not support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestFailure;

impl Message<'_> for RequestFailure {
    const NUMBER: u8 = n::REQUEST_FAILURE;
    fn write_body(&self, _: &mut Writer) {}
    fn read_body(_: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self)
    }
}

/// SSH_MSG_CHANNEL_OPEN (§5.1). `extra` is the channel-type-specific data (none for
/// `session`), kept so that a type we refuse still decodes and gets a polite refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelOpen<'a> {
    pub kind: &'a [u8],
    pub sender: u32,
    pub window: u32,
    pub max_packet: u32,
    pub extra: &'a [u8],
}

impl<'a> Message<'a> for ChannelOpen<'a> {
    const NUMBER: u8 = n::CHANNEL_OPEN;
    fn write_body(&self, w: &mut Writer) {
        w.string(self.kind)
            .u32(self.sender)
            .u32(self.window)
            .u32(self.max_packet)
            .raw(self.extra);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            kind: r.string("channel type")?,
            sender: r.u32("sender channel")?,
            window: r.u32("initial window")?,
            max_packet: r.u32("maximum packet")?,
            extra: r.rest(),
        })
    }
}

/// SSH_MSG_CHANNEL_OPEN_CONFIRMATION (§5.1); `extra` as in [`ChannelOpen`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelOpenConfirmation<'a> {
    pub recipient: u32,
    pub sender: u32,
    pub window: u32,
    pub max_packet: u32,
    pub extra: &'a [u8],
}

impl<'a> Message<'a> for ChannelOpenConfirmation<'a> {
    const NUMBER: u8 = n::CHANNEL_OPEN_CONFIRMATION;
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.recipient)
            .u32(self.sender)
            .u32(self.window)
            .u32(self.max_packet)
            .raw(self.extra);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            recipient: r.u32("recipient channel")?,
            sender: r.u32("sender channel")?,
            window: r.u32("initial window")?,
            max_packet: r.u32("maximum packet")?,
            extra: r.rest(),
        })
    }
}

/// RFC 4254 §5.1 reason codes of CHANNEL_OPEN_FAILURE.
pub const OPEN_PROHIBITED: u32 = 1;
pub const OPEN_UNKNOWN_CHANNEL_TYPE: u32 = 3;

/// SSH_MSG_CHANNEL_OPEN_FAILURE (§5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelOpenFailure<'a> {
    pub recipient: u32,
    pub reason: u32,
    pub description: &'a [u8],
    pub language: &'a [u8],
}

impl<'a> Message<'a> for ChannelOpenFailure<'a> {
    const NUMBER: u8 = n::CHANNEL_OPEN_FAILURE;
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.recipient)
            .u32(self.reason)
            .string(self.description)
            .string(self.language);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            recipient: r.u32("recipient channel")?,
            reason: r.u32("reason code")?,
            description: r.string("description")?,
            language: r.string("language tag")?,
        })
    }
}

/// SSH_MSG_CHANNEL_WINDOW_ADJUST (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelWindowAdjust {
    pub recipient: u32,
    pub bytes: u32,
}

impl Message<'_> for ChannelWindowAdjust {
    const NUMBER: u8 = n::CHANNEL_WINDOW_ADJUST;
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.recipient).u32(self.bytes);
    }
    fn read_body(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            recipient: r.u32("recipient channel")?,
            bytes: r.u32("bytes to add")?,
        })
    }
}

/// SSH_MSG_CHANNEL_DATA (§5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelData<'a> {
    pub recipient: u32,
    pub data: &'a [u8],
}

impl ChannelData<'_> {
    /// Bytes of a CHANNEL_DATA payload before the data: number, recipient, length.
    pub const HEADER_LEN: usize = 9;
}

impl<'a> Message<'a> for ChannelData<'a> {
    const NUMBER: u8 = n::CHANNEL_DATA;
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.recipient).string(self.data);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            recipient: r.u32("recipient channel")?,
            data: r.string("data")?,
        })
    }
}

/// SSH_MSG_CHANNEL_EXTENDED_DATA (§5.2); code 1 is stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelExtendedData<'a> {
    pub recipient: u32,
    pub code: u32,
    pub data: &'a [u8],
}

/// The extended-data type of stderr (§5.2).
pub const EXTENDED_DATA_STDERR: u32 = 1;

impl<'a> Message<'a> for ChannelExtendedData<'a> {
    const NUMBER: u8 = n::CHANNEL_EXTENDED_DATA;
    fn write_body(&self, w: &mut Writer) {
        w.u32(self.recipient).u32(self.code).string(self.data);
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self {
            recipient: r.u32("recipient channel")?,
            code: r.u32("data type")?,
            data: r.string("data")?,
        })
    }
}

/// The messages whose only field is the recipient channel.
macro_rules! recipient_only {
    ($($(#[$doc:meta])* $name:ident = $num:expr;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name {
            pub recipient: u32,
        }

        impl Message<'_> for $name {
            const NUMBER: u8 = $num;
            fn write_body(&self, w: &mut Writer) {
                w.u32(self.recipient);
            }
            fn read_body(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(Self { recipient: r.u32("recipient channel")? })
            }
        }
    )*};
}

recipient_only! {
    /// SSH_MSG_CHANNEL_EOF (§5.3).
    ChannelEof = n::CHANNEL_EOF;
    /// SSH_MSG_CHANNEL_CLOSE (§5.3).
    ChannelClose = n::CHANNEL_CLOSE;
    /// SSH_MSG_CHANNEL_SUCCESS (§5.4).
    ChannelSuccess = n::CHANNEL_SUCCESS;
    /// SSH_MSG_CHANNEL_FAILURE (§5.4).
    ChannelFailure = n::CHANNEL_FAILURE;
}

/// The channel requests a benchmark session uses; any other stays raw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request<'a> {
    /// `exec` (§6.5).
    Exec { command: &'a [u8] },
    /// `exit-status` (§6.10).
    ExitStatus(u32),
    /// Any other request: its name and request-specific data.
    Other { name: &'a str, data: &'a [u8] },
}

/// SSH_MSG_CHANNEL_REQUEST (§5.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelRequest<'a> {
    pub recipient: u32,
    pub want_reply: bool,
    pub request: Request<'a>,
}

const EXEC: &str = "exec";
const EXIT_STATUS: &str = "exit-status";

impl<'a> Message<'a> for ChannelRequest<'a> {
    const NUMBER: u8 = n::CHANNEL_REQUEST;
    fn write_body(&self, w: &mut Writer) {
        let name = match &self.request {
            Request::Exec { .. } => EXEC,
            Request::ExitStatus(_) => EXIT_STATUS,
            Request::Other { name, .. } => name,
        };
        w.u32(self.recipient)
            .string(name.as_bytes())
            .bool(self.want_reply);
        match &self.request {
            Request::Exec { command } => w.string(command),
            Request::ExitStatus(code) => w.u32(*code),
            Request::Other { data, .. } => w.raw(data),
        };
    }
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let recipient = r.u32("recipient channel")?;
        let name = r.utf8("request type")?;
        let want_reply = r.bool("want reply")?;
        let request = match name {
            EXEC => Request::Exec {
                command: r.string("command")?,
            },
            EXIT_STATUS => Request::ExitStatus(r.u32("exit status")?),
            _ => Request::Other {
                name,
                data: r.rest(),
            },
        };
        Ok(Self {
            recipient,
            want_reply,
            request,
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
        assert_eq!(bytes, &m.encode()[..]);
        assert_eq!(&M::decode(bytes).unwrap(), m);
        let mut appended = vec![0xee];
        m.encode_into(&mut appended);
        assert_eq!(&appended[1..], bytes, "encode_into appends");
        for cut in 0..bytes.len() {
            // Every strict prefix fails, except where the message ends in a raw tail.
            if let Ok(short) = M::decode(&bytes[..cut]) {
                assert_ne!(&short, m, "prefix {cut}");
            }
        }
        assert!(M::decode(long).map_or(true, |l| &l != m), "trailing byte");
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..64)
    }

    proptest! {
        #[test]
        fn channel_open_family(kind in bytes(), extra in bytes(), a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), d in any::<u32>(), text in bytes(), lang in bytes()) {
            let open = ChannelOpen { kind: &kind, sender: a, window: b, max_packet: c, extra: &extra };
            round_trip(&open, &trail(open.encode()));
            let ok = ChannelOpenConfirmation { recipient: a, sender: b, window: c, max_packet: d, extra: &extra };
            round_trip(&ok, &trail(ok.encode()));
            let no = ChannelOpenFailure { recipient: a, reason: b, description: &text, language: &lang };
            round_trip(&no, &trail(no.encode()));
        }

        #[test]
        fn channel_traffic(data in bytes(), a in any::<u32>(), b in any::<u32>()) {
            let m = ChannelData { recipient: a, data: &data };
            let enc = m.encode();
            prop_assert_eq!(enc.len(), ChannelData::HEADER_LEN + data.len());
            round_trip(&m, &trail(enc));
            let m = ChannelExtendedData { recipient: a, code: b, data: &data };
            round_trip(&m, &trail(m.encode()));
            let m = ChannelWindowAdjust { recipient: a, bytes: b };
            round_trip(&m, &trail(m.encode()));
            for m in [ChannelEof { recipient: a }.encode(), ChannelClose { recipient: a }.encode(),
                      ChannelSuccess { recipient: a }.encode(), ChannelFailure { recipient: a }.encode()] {
                prop_assert_eq!(&m[1..], &a.to_be_bytes()[..]);
            }
            round_trip(&ChannelEof { recipient: a }, &trail(ChannelEof { recipient: a }.encode()));
            round_trip(&ChannelClose { recipient: a }, &trail(ChannelClose { recipient: a }.encode()));
            round_trip(&ChannelSuccess { recipient: a }, &trail(ChannelSuccess { recipient: a }.encode()));
            round_trip(&ChannelFailure { recipient: a }, &trail(ChannelFailure { recipient: a }.encode()));
            round_trip(&RequestFailure, &trail(RequestFailure.encode()));
        }

        #[test]
        fn requests(a in any::<u32>(), want in any::<bool>(), data in bytes(), name in "[a-z@.-]{1,20}") {
            prop_assume!(name != EXEC && name != EXIT_STATUS);
            for request in [Request::Exec { command: &data }, Request::ExitStatus(a),
                            Request::Other { name: &name, data: &data }] {
                let m = ChannelRequest { recipient: a, want_reply: want, request };
                round_trip(&m, &trail(m.encode()));
            }
            let g = GlobalRequest { name: name.as_bytes(), want_reply: want, data: &data };
            round_trip(&g, &trail(g.encode()));
        }
    }

    #[test]
    fn other_numbers_are_refused() {
        let eof = ChannelEof { recipient: 1 }.encode();
        assert_eq!(
            ChannelClose::decode(&eof),
            Err(DecodeError::WrongMessage(n::CHANNEL_CLOSE))
        );
    }
}
