//! One session channel (RFC 4254 §5–§6): flow-control windows, data, EOF/close and the
//! requests a benchmark needs. Used by both ends; the role only changes who opens.

use super::conn::Transport;
use super::error::{Error, Result};
use crate::wire::numbers as n;
use crate::wire::sanitize::PEER_TEXT_MAX;
use crate::wire::{Reader, Writer};

/// Our receive window. OpenSSH uses 2 MiB; a larger one keeps a fast sender from stalling
/// on window adjustments.
pub const DEFAULT_WINDOW: u32 = 8 << 20;
/// Largest data packet payload we accept (OpenSSH: 32 KiB).
pub const DEFAULT_MAX_PACKET: u32 = 32 * 1024;
/// Bytes of CHANNEL_DATA framing before the data itself.
const DATA_HEADER: usize = 9;
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
        let mut w = Writer::new();
        w.u8(n::CHANNEL_OPEN)
            .string(b"session")
            .u32(0)
            .u32(window)
            .u32(DEFAULT_MAX_PACKET.max(packet_size));
        t.send(&w.into_bytes())?;
        loop {
            t.recv()?;
            let p = t.payload();
            match p[0] {
                n::CHANNEL_OPEN_CONFIRMATION => {
                    let mut r = Reader::new(&p[1..]);
                    let local_id = r.u32("recipient channel")?;
                    let remote_id = r.u32("sender channel")?;
                    let remote_window = r.u32("initial window")? as u64;
                    let remote_max_packet = peer_max_packet(r.u32("maximum packet")?)?;
                    return Ok(Self::new(
                        local_id,
                        remote_id,
                        remote_window,
                        remote_max_packet,
                        window,
                        packet_size,
                    ));
                }
                n::CHANNEL_OPEN_FAILURE => {
                    let mut r = Reader::new(&p[1..]);
                    let _ = r.u32("recipient");
                    let code = r.u32("reason").unwrap_or(0);
                    let text = r.string("description").unwrap_or_default();
                    let text = crate::wire::sanitize::peer_text(text, PEER_TEXT_MAX);
                    return Err(Error::protocol(format!(
                        "server refused the session channel ({code}): {text}"
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

    /// Sends a channel request such as `exec` with one string argument.
    pub fn request(
        &self,
        t: &mut Transport,
        name: &str,
        arg: Option<&[u8]>,
        want_reply: bool,
    ) -> Result<()> {
        let mut w = Writer::new();
        w.u8(n::CHANNEL_REQUEST)
            .u32(self.remote_id)
            .string(name.as_bytes())
            .bool(want_reply);
        if let Some(a) = arg {
            w.string(a);
        }
        t.send(&w.into_bytes())
    }

    /// Answers a request that wanted a reply.
    pub fn reply(&self, t: &mut Transport, ok: bool) -> Result<()> {
        let mut w = Writer::new();
        w.u8(if ok {
            n::CHANNEL_SUCCESS
        } else {
            n::CHANNEL_FAILURE
        })
        .u32(self.remote_id);
        t.send(&w.into_bytes())
    }

    /// Sends bytes on the extended-data stream 1 (stderr); small messages only.
    pub fn write_stderr(&mut self, t: &mut Transport, text: &[u8]) -> Result<()> {
        let n = text
            .len()
            .min(self.remote_window as usize)
            .min(self.remote_max_packet as usize);
        let mut w = Writer::new();
        w.u8(n::CHANNEL_EXTENDED_DATA)
            .u32(self.remote_id)
            .u32(1)
            .string(&text[..n]);
        self.remote_window -= n as u64;
        t.send(&w.into_bytes())
    }

    pub fn exit_status(&self, t: &mut Transport, code: u32) -> Result<()> {
        let mut w = Writer::new();
        w.u8(n::CHANNEL_REQUEST)
            .u32(self.remote_id)
            .string(b"exit-status")
            .bool(false)
            .u32(code);
        t.send(&w.into_bytes())
    }

    pub fn send_eof(&self, t: &mut Transport) -> Result<()> {
        let mut w = Writer::new();
        w.u8(n::CHANNEL_EOF).u32(self.remote_id);
        t.send(&w.into_bytes())
    }

    pub fn send_close(&mut self, t: &mut Transport) -> Result<()> {
        let mut w = Writer::new();
        w.u8(n::CHANNEL_CLOSE).u32(self.remote_id);
        t.send(&w.into_bytes())
    }

    /// The next event on this channel. Window bookkeeping and transport chatter are handled
    /// here; data is left in the transport's buffer (no copy).
    pub fn next_event(&mut self, t: &mut Transport) -> Result<Event> {
        loop {
            t.recv()?;
            let p = t.payload();
            let num = p[0];
            let mut r = Reader::new(&p[1..]);
            if (n::CHANNEL_WINDOW_ADJUST..=n::CHANNEL_FAILURE).contains(&num) {
                let id = r.u32("recipient channel")?;
                if id != self.local_id {
                    return Err(Error::protocol(format!("message for unknown channel {id}")));
                }
            }
            match num {
                n::CHANNEL_WINDOW_ADJUST => {
                    self.remote_window += r.u32("bytes to add")? as u64;
                    r.finish()?;
                    // RFC 4254 §5.2: a window never exceeds 2^32 - 1 bytes.
                    if self.remote_window > u32::MAX as u64 {
                        return Err(Error::protocol("window adjusted beyond 2^32 - 1 bytes"));
                    }
                    return Ok(Event::Window);
                }
                n::CHANNEL_DATA | n::CHANNEL_EXTENDED_DATA => {
                    if num == n::CHANNEL_EXTENDED_DATA {
                        r.u32("data type")?;
                    }
                    let len = r.string("data")?.len();
                    r.finish()?;
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
                        let mut w = Writer::new();
                        w.u8(n::CHANNEL_WINDOW_ADJUST)
                            .u32(self.remote_id)
                            .u32(grant);
                        t.send(&w.into_bytes())?;
                    }
                    return Ok(if num == n::CHANNEL_DATA {
                        Event::Data(start..end)
                    } else {
                        Event::ExtendedData(start..end)
                    });
                }
                n::CHANNEL_EOF => {
                    self.eof_received = true;
                    return Ok(Event::Eof);
                }
                n::CHANNEL_CLOSE => {
                    self.closed = true;
                    return Ok(Event::Close);
                }
                n::CHANNEL_SUCCESS => return Ok(Event::Reply(true)),
                n::CHANNEL_FAILURE => return Ok(Event::Reply(false)),
                n::CHANNEL_REQUEST => {
                    let name = r.utf8("request type")?.to_string();
                    let want_reply = r.bool("want reply")?;
                    if name == "exit-status" {
                        return Ok(Event::ExitStatus(r.u32("exit status")?));
                    }
                    if name == "exec" {
                        let command = r.string("command")?.to_vec();
                        r.finish()?;
                        return Ok(Event::Exec {
                            command,
                            want_reply,
                        });
                    }
                    if want_reply {
                        let mut w = Writer::new();
                        w.u8(n::CHANNEL_FAILURE).u32(self.remote_id);
                        t.send(&w.into_bytes())?;
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

    /// Sends `data` as CHANNEL_DATA, waiting for window space. Events that arrive while
    /// waiting are handed to `on_event` (stdout text, EOF...).
    pub fn write(
        &mut self,
        t: &mut Transport,
        mut data: &[u8],
        on_event: &mut dyn FnMut(&Transport, Event) -> Result<()>,
    ) -> Result<()> {
        while !data.is_empty() {
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
            let buf = t.begin()?;
            buf.reserve(DATA_HEADER + n);
            buf.push(n::CHANNEL_DATA);
            buf.extend_from_slice(&self.remote_id.to_be_bytes());
            buf.extend_from_slice(&(n as u32).to_be_bytes());
            buf.extend_from_slice(&data[..n]);
            t.send_begun()?;
            self.remote_window -= n as u64;
            data = &data[n..];
        }
        Ok(())
    }
}

/// Answers a global request (e.g. OpenSSH's hostkeys-00) with "not supported" if asked.
fn reply_global(t: &mut Transport) -> Result<()> {
    let mut r = Reader::new(&t.payload()[1..]);
    r.string("request name")?;
    if r.bool("want reply")? {
        t.send(&[n::REQUEST_FAILURE])?;
    }
    Ok(())
}

/// We run one session per connection; further channels are refused (RFC 4254 §5.1).
pub fn refuse_open(t: &mut Transport) -> Result<()> {
    let mut r = Reader::new(&t.payload()[1..]);
    r.string("channel type")?;
    let sender = r.u32("sender channel")?;
    refuse_open_as(
        t,
        sender,
        OPEN_PROHIBITED,
        "only one session per connection",
    )
}

/// RFC 4254 §5.1 reason codes.
pub const OPEN_PROHIBITED: u32 = 1;
pub const OPEN_UNKNOWN_CHANNEL_TYPE: u32 = 3;

/// CHANNEL_OPEN_FAILURE for the peer's channel `sender`.
pub fn refuse_open_as(t: &mut Transport, sender: u32, code: u32, why: &str) -> Result<()> {
    let mut w = Writer::new();
    w.u8(n::CHANNEL_OPEN_FAILURE)
        .u32(sender)
        .u32(code)
        .string(why.as_bytes())
        .string(b"");
    t.send(&w.into_bytes())
}
