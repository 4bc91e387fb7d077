//! Connection protocol messages (RFC 4254): global requests and session channels, as both
//! ends of the native transport send and read them. Byte fields borrow the received payload,
//! so reading CHANNEL_DATA copies nothing.

use super::codec::{messages, DecodeError, Message, Reader, Writer};
use super::numbers as n;

messages! {
    /// SSH_MSG_GLOBAL_REQUEST (§4): the request-specific data stays raw, we refuse them all.
    GlobalRequest<'a> = n::GLOBAL_REQUEST => {
        name: string "request name",
        want_reply: bool "want reply",
        data: rest,
    }

    /// SSH_MSG_CHANNEL_OPEN (§5.1). `extra` is the channel-type-specific data (none for
    /// `session`), kept so that a type we refuse still decodes and gets a polite refusal.
    ChannelOpen<'a> = n::CHANNEL_OPEN => {
        kind: string "channel type",
        sender: u32 "sender channel",
        window: u32 "initial window",
        max_packet: u32 "maximum packet",
        extra: rest,
    }

    /// SSH_MSG_CHANNEL_OPEN_CONFIRMATION (§5.1); `extra` as in [`ChannelOpen`].
    ChannelOpenConfirmation<'a> = n::CHANNEL_OPEN_CONFIRMATION => {
        recipient: u32 "recipient channel",
        sender: u32 "sender channel",
        window: u32 "initial window",
        max_packet: u32 "maximum packet",
        extra: rest,
    }

    /// SSH_MSG_CHANNEL_OPEN_FAILURE (§5.1).
    ChannelOpenFailure<'a> = n::CHANNEL_OPEN_FAILURE => {
        recipient: u32 "recipient channel",
        reason: u32 "reason code",
        description: string "description",
        language: string "language tag",
    }

    /// SSH_MSG_CHANNEL_WINDOW_ADJUST (§5.2).
    #[derive(Copy)]
    ChannelWindowAdjust = n::CHANNEL_WINDOW_ADJUST => {
        recipient: u32 "recipient channel",
        bytes: u32 "bytes to add",
    }

    /// SSH_MSG_CHANNEL_DATA (§5.2).
    ChannelData<'a> = n::CHANNEL_DATA => {
        recipient: u32 "recipient channel",
        data: string "data",
    }

    /// SSH_MSG_CHANNEL_EXTENDED_DATA (§5.2); code 1 is stderr.
    ChannelExtendedData<'a> = n::CHANNEL_EXTENDED_DATA => {
        recipient: u32 "recipient channel",
        code: u32 "data type",
        data: string "data",
    }

    /// SSH_MSG_CHANNEL_EOF (§5.3).
    #[derive(Copy)]
    ChannelEof = n::CHANNEL_EOF => { recipient: u32 "recipient channel", }

    /// SSH_MSG_CHANNEL_CLOSE (§5.3).
    #[derive(Copy)]
    ChannelClose = n::CHANNEL_CLOSE => { recipient: u32 "recipient channel", }

    /// SSH_MSG_CHANNEL_SUCCESS (§5.4).
    #[derive(Copy)]
    ChannelSuccess = n::CHANNEL_SUCCESS => { recipient: u32 "recipient channel", }

    /// SSH_MSG_CHANNEL_FAILURE (§5.4).
    #[derive(Copy)]
    ChannelFailure = n::CHANNEL_FAILURE => { recipient: u32 "recipient channel", }

    /// SSH_MSG_REQUEST_FAILURE (§4): the answer to a global request we do not support.
    RequestFailure = n::REQUEST_FAILURE;
}

/// RFC 4254 §5.1 reason codes of CHANNEL_OPEN_FAILURE.
pub const OPEN_PROHIBITED: u32 = 1;
pub const OPEN_UNKNOWN_CHANNEL_TYPE: u32 = 3;

impl ChannelData<'_> {
    /// Bytes of a CHANNEL_DATA payload before the data: number, recipient, length.
    pub const HEADER_LEN: usize = 9;
}

/// The extended-data type of stderr (§5.2).
pub const EXTENDED_DATA_STDERR: u32 = 1;

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
    use crate::wire::codec::testing::{bytes, round_trip, trail};
    use proptest::prelude::*;

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
