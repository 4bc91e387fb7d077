//! Encoding of SSH data types (RFC 4251 §5): a bounds-checked reader that never panics on
//! hostile input, a writer, and [`Message`], the one way a whole message is encoded and
//! decoded (as rustls' `Codec`): a message is a struct whose layout is written once, so the
//! sending and the receiving side cannot disagree and a round-trip test covers both.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("message truncated: needed {needed} more bytes for {what}")]
    Truncated { what: &'static str, needed: usize },
    #[error("{what} is not valid UTF-8/ASCII")]
    NotText { what: &'static str },
    #[error("{0} trailing bytes after the message")]
    Trailing(usize),
    #[error("name-list contains an empty or non-printable name")]
    BadNameList,
    #[error("{0}")]
    Unexpected(&'static str),
    #[error("not message {0}")]
    WrongMessage(u8),
}

/// A cursor over a received message. Every read checks the remaining length first.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Everything not read yet: the type-specific tail of a message (RFC 4254 §5.1, §5.4).
    pub fn rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos..];
        self.pos = self.buf.len();
        out
    }

    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated {
                what,
                needed: n - self.remaining(),
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(1, what)?[0])
    }

    pub fn bool(&mut self, what: &'static str) -> Result<bool, DecodeError> {
        Ok(self.u8(what)? != 0)
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A `string`: uint32 length then that many bytes.
    pub fn string(&mut self, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let len = self.u32(what)? as usize;
        self.take(len, what)
    }

    pub fn utf8(&mut self, what: &'static str) -> Result<&'a str, DecodeError> {
        std::str::from_utf8(self.string(what)?).map_err(|_| DecodeError::NotText { what })
    }

    /// A `name-list`: comma-separated printable US-ASCII names, none empty.
    pub fn name_list(&mut self, what: &'static str) -> Result<Vec<String>, DecodeError> {
        let raw = self.string(what)?;
        if raw.is_empty() {
            return Ok(Vec::new());
        }
        let text = std::str::from_utf8(raw).map_err(|_| DecodeError::NotText { what })?;
        text.split(',')
            .map(|n| {
                if n.is_empty() || !n.bytes().all(|b| b.is_ascii_graphic()) {
                    Err(DecodeError::BadNameList)
                } else {
                    Ok(n.to_string())
                }
            })
            .collect()
    }

    /// Fails unless the whole message was consumed, so a parser cannot silently ignore data.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(DecodeError::Trailing(n)),
        }
    }
}

/// One SSH message: its number and the fields after it. Decoding a whole payload checks the
/// number and refuses trailing bytes, so a parser cannot silently ignore data.
pub trait Message<'a>: Sized {
    /// The message number (RFC 4250 §4.1, `numbers`).
    const NUMBER: u8;

    /// Writes the fields after the message number.
    fn write_body(&self, w: &mut Writer);

    /// Reads the fields after the message number; [`decode`](Self::decode) checks the rest.
    fn read_body(r: &mut Reader<'a>) -> Result<Self, DecodeError>;

    /// The whole payload, message number first.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Appends the payload to `out`: the transport builds packets in place this way, which
    /// spares a copy of bulk data.
    fn encode_into(&self, out: &mut Vec<u8>) {
        let mut w = Writer {
            buf: std::mem::take(out),
        };
        w.u8(Self::NUMBER);
        self.write_body(&mut w);
        *out = w.into_bytes();
    }

    /// Decodes a whole payload, message number included.
    fn decode(payload: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(payload);
        if r.u8("message number")? != Self::NUMBER {
            return Err(DecodeError::WrongMessage(Self::NUMBER));
        }
        let m = Self::read_body(&mut r)?;
        r.finish()?;
        Ok(m)
    }
}

/// Builds an outgoing message.
#[derive(Debug, Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }

    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.u8(v as u8)
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(v);
        self
    }

    pub fn string(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32).raw(v)
    }

    pub fn name_list<S: AsRef<str>>(&mut self, names: &[S]) -> &mut Self {
        let joined: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
        self.string(joined.join(",").as_bytes())
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut w = Writer::new();
        w.u8(7)
            .u32(0xdead_beef)
            .string(b"abc")
            .name_list(&["a", "b-c@x"])
            .bool(true);
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u8("x").unwrap(), 7);
        assert_eq!(r.u32("x").unwrap(), 0xdead_beef);
        assert_eq!(r.string("x").unwrap(), b"abc");
        assert_eq!(r.name_list("x").unwrap(), ["a", "b-c@x"]);
        assert!(r.bool("x").unwrap());
        r.finish().unwrap();
    }

    #[test]
    fn oversized_length_is_an_error_not_a_panic() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 1, 2]);
        assert!(matches!(r.string("s"), Err(DecodeError::Truncated { .. })));
    }

    #[test]
    fn empty_names_are_rejected() {
        let mut w = Writer::new();
        w.string(b"a,,b");
        let bytes = w.into_bytes();
        assert_eq!(
            Reader::new(&bytes).name_list("n"),
            Err(DecodeError::BadNameList)
        );
    }
}
