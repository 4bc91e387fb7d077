//! One session channel (RFC 4254 §5–§6): flow-control windows, data, EOF/close and the
//! requests a benchmark needs. Used by both ends; the role only changes who opens.

use super::conn::Transport;
use super::error::{Error, Result};
use crate::wire::connection::{
    ChannelClose, ChannelData, ChannelEof, ChannelExtendedData, ChannelFailure, ChannelOpen,
    ChannelOpenConfirmation, ChannelOpenFailure, ChannelRequest, ChannelSuccess,
    ChannelWindowAdjust, GlobalRequest, Request, RequestFailure, EXTENDED_DATA_STDERR,
};
use crate::wire::numbers as n;
use crate::wire::sanitize::PEER_TEXT_MAX;
use crate::wire::Message;

pub use crate::wire::connection::{OPEN_PROHIBITED, OPEN_UNKNOWN_CHANNEL_TYPE};

/// Our receive window. OpenSSH uses 2 MiB; a larger one keeps a fast sender from stalling
/// on window adjustments.
pub const DEFAULT_WINDOW: u32 = 8 << 20;
/// Largest data packet payload we accept (OpenSSH: 32 KiB).
pub const DEFAULT_MAX_PACKET: u32 = 32 * 1024;
/// The smallest maximum packet size we accept from a peer. RFC 4254 §5.1 sets no floor, but
/// with 0 no data fits (we would send empty CHANNEL_DATA forever) and a few bytes turn each
/// write into thousands of packets; every real client offers 16 KiB or more.
pub const MIN_PEER_MAX_PACKET: u32 = 1024;
/// The largest data payload that fits one of our packets, whatever the peer offers.
const MAX_DATA: u32 = (ciphers::MAX_PACKET_LEN - 1024) as u32;

/// A peer's maximum packet size at CHANNEL_OPEN / OPEN_CONFIRMATION: refused below
/// `MIN_PEER_MAX_PACKET`, clamped to what one of our packets holds.
pub fn peer_max_packet(max_packet: u32) -> Result<u32> {
    if max_packet < MIN_PEER_MAX_PACKET {
        return Err(Error::protocol(format!(
            "channel maximum packet size {max_packet} is below {MIN_PEER_MAX_PACKET}"
        )));
    }
    Ok(max_packet.min(MAX_DATA))
}

#[derive(Debug)]
pub enum Event {
    /// The peer granted more window (already added to `remote_window`).
    Window,
    /// `payload()[range]` of the transport holds the data.
    Data(std::ops::Range<usize>),
    ExtendedData(std::ops::Range<usize>),
    Eof,
    Close,
    ExitStatus(u32),
    /// A request the peer made on this channel; already answered with failure if asked.
    Request(String),
    /// `exec`: the caller must answer with `reply`.
    Exec {
        command: Vec<u8>,
        want_reply: bool,
    },
    /// CHANNEL_SUCCESS / CHANNEL_FAILURE to our own request.
    Reply(bool),
}

#[derive(Debug)]
pub struct Channel {
    pub local_id: u32,
    pub remote_id: u32,
    pub remote_window: u64,
    pub remote_max_packet: u32,
    /// Receive window size we grant, and what has arrived since the last adjustment.
    window: u32,
    consumed: u32,
    /// Largest data payload we put in one packet.
    pub packet_size: u32,
    pub eof_received: bool,
    pub closed: bool,
}

impl Channel {
    /// Opens a session channel (client side).
    pub fn open_session(t: &mut Transport, window: u32, packet_size: u32) -> Result<Self> {
        t.send_msg(&ChannelOpen {
            kind: SESSION,
            sender: 0,
            window,
            max_packet: DEFAULT_MAX_PACKET.max(packet_size),
            extra: b"",
        })?;
        loop {
            t.recv()?;
            let p = t.payload();
            match p[0] {
                n::CHANNEL_OPEN_CONFIRMATION => {
                    let ok = ChannelOpenConfirmation::decode(p)?;
                    return Ok(Self::new(
                        ok.recipient,
                        ok.sender,
                        ok.window as u64,
                        peer_max_packet(ok.max_packet)?,
                        window,
                        packet_size,
                    ));
                }
                n::CHANNEL_OPEN_FAILURE => {
                    let no = ChannelOpenFailure::decode(p)?;
                    let text = crate::wire::sanitize::peer_text(no.description, PEER_TEXT_MAX);
                    return Err(Error::protocol(format!(
                        "server refused the session channel ({}): {text}",
                        no.reason
                    )));
                }
                n::GLOBAL_REQUEST => reply_global(t)?,
                n::EXT_INFO | n::USERAUTH_BANNER | n::REQUEST_SUCCESS | n::REQUEST_FAILURE => {}
                m => {
                    return Err(Error::protocol(format!(
                        "unexpected message {m} while opening a channel"
                    )))
                }
            }
        }
    }

    pub fn new(
        local_id: u32,
        remote_id: u32,
        remote_window: u64,
        remote_max_packet: u32,
        window: u32,
        packet_size: u32,
    ) -> Self {
        Self {
            local_id,
            remote_id,
            remote_window,
            remote_max_packet,
            window,
            consumed: 0,
            packet_size,
            eof_received: false,
            closed: false,
        }
    }

    /// Sends a channel request (`exec` with its command, or another by name).
    pub fn request(&self, t: &mut Transport, request: Request, want_reply: bool) -> Result<()> {
        t.send_msg(&ChannelRequest {
            recipient: self.remote_id,
            want_reply,
            request,
        })
    }

    /// Answers a request that wanted a reply.
    pub fn reply(&self, t: &mut Transport, ok: bool) -> Result<()> {
        let recipient = self.remote_id;
        if ok {
            t.send_msg(&ChannelSuccess { recipient })
        } else {
            t.send_msg(&ChannelFailure { recipient })
        }
    }

    /// Sends bytes on the extended-data stream 1 (stderr); small messages only.
    pub fn write_stderr(&mut self, t: &mut Transport, text: &[u8]) -> Result<()> {
        let n = text
            .len()
            .min(self.remote_window as usize)
            .min(self.remote_max_packet as usize);
        self.remote_window -= n as u64;
        t.send_msg(&ChannelExtendedData {
            recipient: self.remote_id,
            code: EXTENDED_DATA_STDERR,
            data: &text[..n],
        })
    }

    pub fn exit_status(&self, t: &mut Transport, code: u32) -> Result<()> {
        self.request(t, Request::ExitStatus(code), false)
    }

    pub fn send_eof(&self, t: &mut Transport) -> Result<()> {
        t.send_msg(&ChannelEof {
            recipient: self.remote_id,
        })
    }

    pub fn send_close(&mut self, t: &mut Transport) -> Result<()> {
        t.send_msg(&ChannelClose {
            recipient: self.remote_id,
        })
    }

    /// The next event on this channel. Window bookkeeping and transport chatter are handled
    /// here; data is left in the transport's buffer (no copy).
    pub fn next_event(&mut self, t: &mut Transport) -> Result<Event> {
        loop {
            t.recv()?;
            let p = t.payload();
            let num = p[0];
            match num {
                n::CHANNEL_WINDOW_ADJUST => {
                    let m = ChannelWindowAdjust::decode(p)?;
                    self.check_recipient(m.recipient)?;
                    self.remote_window += m.bytes as u64;
                    // RFC 4254 §5.2: a window never exceeds 2^32 - 1 bytes.
                    if self.remote_window > u32::MAX as u64 {
                        return Err(Error::protocol("window adjusted beyond 2^32 - 1 bytes"));
                    }
                    return Ok(Event::Window);
                }
                n::CHANNEL_DATA | n::CHANNEL_EXTENDED_DATA => {
                    let (recipient, len) = if num == n::CHANNEL_DATA {
                        let m = ChannelData::decode(p)?;
                        (m.recipient, m.data.len())
                    } else {
                        let m = ChannelExtendedData::decode(p)?;
                        (m.recipient, m.data.len())
                    };
                    self.check_recipient(recipient)?;
                    // The data is the message's last field.
                    let end = p.len();
                    let start = end - len;
                    if len as u64 > (self.window - self.consumed) as u64 {
                        return Err(Error::protocol(
                            "peer sent more data than the window allows",
                        ));
                    }
                    self.consumed += len as u32;
                    if self.consumed >= self.window / 2 {
                        let grant = self.consumed;
                        self.consumed = 0;
                        t.send_msg(&ChannelWindowAdjust {
                            recipient: self.remote_id,
                            bytes: grant,
                        })?;
                    }
                    return Ok(if num == n::CHANNEL_DATA {
                        Event::Data(start..end)
                    } else {
                        Event::ExtendedData(start..end)
                    });
                }
                n::CHANNEL_EOF => {
                    self.check_recipient(ChannelEof::decode(p)?.recipient)?;
                    self.eof_received = true;
                    return Ok(Event::Eof);
                }
                n::CHANNEL_CLOSE => {
                    self.check_recipient(ChannelClose::decode(p)?.recipient)?;
                    self.closed = true;
                    return Ok(Event::Close);
                }
                n::CHANNEL_SUCCESS => {
                    self.check_recipient(ChannelSuccess::decode(p)?.recipient)?;
                    return Ok(Event::Reply(true));
                }
                n::CHANNEL_FAILURE => {
                    self.check_recipient(ChannelFailure::decode(p)?.recipient)?;
                    return Ok(Event::Reply(false));
                }
                n::CHANNEL_REQUEST => {
                    let m = ChannelRequest::decode(p)?;
                    self.check_recipient(m.recipient)?;
                    let (want_reply, name) = match m.request {
                        Request::ExitStatus(code) => return Ok(Event::ExitStatus(code)),
                        Request::Exec { command } => {
                            return Ok(Event::Exec {
                                command: command.to_vec(),
                                want_reply: m.want_reply,
                            })
                        }
                        Request::Other { name, .. } => (m.want_reply, name.to_string()),
                    };
                    if want_reply {
                        self.reply(t, false)?;
                    }
                    return Ok(Event::Request(name));
                }
                n::GLOBAL_REQUEST => reply_global(t)?,
                n::REQUEST_SUCCESS | n::REQUEST_FAILURE | n::EXT_INFO => {}
                n::CHANNEL_OPEN => refuse_open(t)?,
                m => {
                    return Err(Error::protocol(format!(
                        "unexpected message {m} on a session"
                    )))
                }
            }
        }
    }

    /// A channel message must name this channel: we run one per connection.
    fn check_recipient(&self, id: u32) -> Result<()> {
        if id != self.local_id {
            return Err(Error::protocol(format!("message for unknown channel {id}")));
        }
        Ok(())
    }

    /// Sends `data` as CHANNEL_DATA, waiting for window space. Events that arrive while
    /// waiting are handed to `on_event` (stdout text, EOF...).
    pub fn write(
        &mut self,
        t: &mut Transport,
        mut data: &[u8],
        on_event: &mut dyn FnMut(&Transport, Event) -> Result<()>,
    ) -> Result<()> {
        while !data.is_empty() {
            // Waiting for window space reads (`next_event` → `recv`), which first writes
            // the packets held so far.
            while self.remote_window == 0 {
                let ev = self.next_event(t)?;
                if matches!(ev, Event::Close) {
                    return Err(Error::protocol("channel closed by the peer during a write"));
                }
                on_event(t, ev)?;
            }
            let n = data
                .len()
                .min(self.remote_window.min(u32::MAX as u64) as usize)
                .min(self.remote_max_packet as usize)
                .min(self.packet_size as usize);
            if n == 0 {
                return Err(Error::protocol("channel maximum packet size is 0"));
            }
            t.send_data_held(&data_header(self.remote_id, n as u32), &data[..n])?;
            self.remote_window -= n as u64;
            data = &data[n..];
        }
        t.flush_held()
    }
}

/// The CHANNEL_DATA payload up to its data (RFC 4254 §5.2: message number, recipient
/// channel, data length): the data itself is sealed from the caller's buffer.
fn data_header(recipient: u32, len: u32) -> [u8; ChannelData::HEADER_LEN] {
    let mut h = [0u8; ChannelData::HEADER_LEN];
    h[0] = n::CHANNEL_DATA;
    h[1..5].copy_from_slice(&recipient.to_be_bytes());
    h[5..9].copy_from_slice(&len.to_be_bytes());
    h
}

/// Answers a global request (e.g. OpenSSH's hostkeys-00) with "not supported" if asked.
pub fn reply_global(t: &mut Transport) -> Result<()> {
    if GlobalRequest::decode(t.payload())?.want_reply {
        t.send_msg(&RequestFailure)?;
    }
    Ok(())
}

/// We run one session per connection; further channels are refused (RFC 4254 §5.1).
pub fn refuse_open(t: &mut Transport) -> Result<()> {
    let sender = ChannelOpen::decode(t.payload())?.sender;
    refuse_open_as(
        t,
        sender,
        OPEN_PROHIBITED,
        "only one session per connection",
    )
}

/// The channel type of RFC 4254 §6.1, the only one we open or accept.
pub const SESSION: &[u8] = b"session";

/// CHANNEL_OPEN_FAILURE for the peer's channel `sender`.
pub fn refuse_open_as(t: &mut Transport, sender: u32, code: u32, why: &str) -> Result<()> {
    t.send_msg(&ChannelOpenFailure {
        recipient: sender,
        reason: code,
        description: why.as_bytes(),
        language: b"",
    })
}

/// Our answer to a session CHANNEL_OPEN from the peer's channel `sender` (server side): our
/// channel 0, our window and packet size.
pub fn accept_open(t: &mut Transport, sender: u32, window: u32, packet_size: u32) -> Result<()> {
    t.send_msg(&ChannelOpenConfirmation {
        recipient: sender,
        sender: 0,
        window,
        max_packet: DEFAULT_MAX_PACKET.max(packet_size),
        extra: b"",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Message;

    #[test]
    fn data_header_is_the_encoded_message_without_its_data() {
        let data = [7u8; 33];
        let whole = ChannelData {
            recipient: 0x0102_0304,
            data: &data,
        }
        .encode();
        let head = data_header(0x0102_0304, 33);
        assert_eq!(&whole[..head.len()], &head[..]);
        assert_eq!(&whole[head.len()..], &data[..]);
    }
}
