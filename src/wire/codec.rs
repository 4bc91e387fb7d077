//! Encoding of SSH data types (RFC 4251 §5): a bounds-checked reader that never panics on
//! hostile input, a writer, and [`Message`], the one way a whole message is encoded and
//! decoded (as rustls' `Codec`): a message is a struct whose layout is written once, so the
//! sending and the receiving side cannot disagree and a round-trip test covers both.

use serde::Serialize;
use std::borrow::Cow;
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

    /// A `name-list` (RFC 4251 §5), checked and borrowed from the message: see [`NameList`].
    pub fn name_list(&mut self, what: &'static str) -> Result<NameList<'a>, DecodeError> {
        NameList::parse(self.string(what)?, what)
    }

    /// Fails unless the whole message was consumed, so a parser cannot silently ignore data.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(DecodeError::Trailing(n)),
        }
    }
}

/// A `name-list` (RFC 4251 §5): comma-separated names of printable US-ASCII, none empty.
///
/// A received list is checked once and then read where it lies in the message: its names
/// are borrowed slices, so a peer's list costs no memory beyond the packet that carried it,
/// however many names it holds. That is why there is no cap on names per list or on a name's
/// length here (RFC 4251 §6 asks for at most 64 characters; OpenSSH does not check it): the
/// packet size bounds the list, and before login the transport keeps packets small
/// (`transport::packet::PRE_AUTH_MAX_PACKET`). Our own lists are owned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameList<'a>(Cow<'a, str>);

impl<'a> NameList<'a> {
    /// Checks `raw` as a name-list; `what` names the field in the error.
    pub fn parse(raw: &'a [u8], what: &'static str) -> Result<Self, DecodeError> {
        let text = std::str::from_utf8(raw).map_err(|_| DecodeError::NotText { what })?;
        let bad = |n: &str| n.is_empty() || !n.bytes().all(|b| b.is_ascii_graphic());
        if !text.is_empty() && text.split(',').any(bad) {
            return Err(DecodeError::BadNameList);
        }
        Ok(Self(Cow::Borrowed(text)))
    }

    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let text: &str = &self.0;
        text.split(',').filter(|_| !text.is_empty())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|n| n == name)
    }

    pub fn first(&self) -> Option<&str> {
        self.iter().next()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The list as it travels: names joined by commas.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The same list, no longer borrowed from a message.
    pub fn into_owned(self) -> NameList<'static> {
        NameList(Cow::Owned(self.0.into_owned()))
    }
}

/// Our own names: trusted to be names (no commas, printable), as they come from our tables.
impl<S: AsRef<str>> FromIterator<S> for NameList<'static> {
    fn from_iter<I: IntoIterator<Item = S>>(names: I) -> Self {
        let mut text = String::new();
        for n in names {
            if !text.is_empty() {
                text.push(',');
            }
            text.push_str(n.as_ref());
        }
        NameList(Cow::Owned(text))
    }
}

impl std::fmt::Display for NameList<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// As a list of names (the probe's JSON).
/// A saved report's list (`["a", "b"]`) read back: each name is checked as the wire's are.
impl<'de> serde::Deserialize<'de> for NameList<'_> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names: Vec<String> = Vec::deserialize(d)?;
        let text = names.join(",");
        NameList::parse(text.as_bytes(), "name-list").map_err(serde::de::Error::custom)?;
        Ok(NameList(Cow::Owned(text)))
    }
}

impl Serialize for NameList<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
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

/// Declares messages whose body is a fixed list of fields: each becomes a struct and its
/// [`Message`] impl, written from one list, so a field's order, encoding and name in decode
/// errors are stated once. A field is `name: encoding "what"`, the encoding one of `u32`,
/// `bool`, `string` (`&[u8]`), `name_list` ([`NameList`]), or `rest` (raw bytes to the end of
/// the message, with no "what"); `Name = number;` is a message with no fields. Each derives
/// `Debug, Clone, PartialEq, Eq` (and `Copy` when it borrows nothing: add it). Messages with
/// variable layouts implement [`Message`] by hand.
macro_rules! messages {
    (@ty u32) => { u32 };
    (@ty bool) => { bool };
    (@ty string) => { &'a [u8] };
    (@ty rest) => { &'a [u8] };
    (@ty name_list) => { $crate::wire::codec::NameList<'a> };
    (@write $w:ident name_list $v:expr) => { $w.name_list(&$v) };
    (@write $w:ident rest $v:expr) => { $w.raw($v) };
    (@write $w:ident $enc:ident $v:expr) => { $w.$enc($v) };
    (@read $r:ident rest) => { $r.rest() };
    (@read $r:ident $enc:ident $what:literal) => { $r.$enc($what)? };
    () => {};
    // A message with no fields after its number.
    ($(#[$meta:meta])* $name:ident = $number:expr; $($more:tt)*) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name;

        impl $crate::wire::codec::Message<'_> for $name {
            const NUMBER: u8 = $number;
            fn write_body(&self, _: &mut $crate::wire::codec::Writer) {}
            fn read_body(
                _: &mut $crate::wire::codec::Reader<'_>,
            ) -> Result<Self, $crate::wire::codec::DecodeError> {
                Ok(Self)
            }
        }

        $crate::wire::codec::messages!($($more)*);
    };
    (
        $(#[$meta:meta])*
        $name:ident $(<$lt:lifetime>)? = $number:expr => {
            $($(#[$field_meta:meta])* $field:ident: $enc:ident $($what:literal)?,)*
        }
        $($more:tt)*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name $(<$lt>)? {
            $($(#[$field_meta])* pub $field: $crate::wire::codec::messages!(@ty $enc),)*
        }

        impl<'a> $crate::wire::codec::Message<'a> for $name $(<$lt>)? {
            const NUMBER: u8 = $number;
            fn write_body(&self, w: &mut $crate::wire::codec::Writer) {
                $($crate::wire::codec::messages!(@write w $enc self.$field);)*
            }
            fn read_body(
                r: &mut $crate::wire::codec::Reader<'a>,
            ) -> Result<Self, $crate::wire::codec::DecodeError> {
                Ok(Self {
                    $($field: $crate::wire::codec::messages!(@read r $enc $($what)?),)*
                })
            }
        }

        $crate::wire::codec::messages!($($more)*);
    };
}
pub(crate) use messages;

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

    pub fn name_list(&mut self, names: &NameList) -> &mut Self {
        self.string(names.as_str().as_bytes())
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// What the message modules' round-trip tests share.
#[cfg(test)]
pub(crate) mod testing {
    use super::{DecodeError, Message};
    use proptest::prelude::*;

    /// The encoding with one byte more, so that the trailing-byte check borrows as long as
    /// the decoded message does.
    pub fn trail(mut bytes: Vec<u8>) -> Vec<u8> {
        bytes.push(0);
        bytes
    }

    /// Up to 64 arbitrary bytes, for string and raw fields.
    pub fn bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..64)
    }

    /// `long` is the encoding of `m` followed by one stray byte ([`trail`]): `m` encodes to
    /// it, decodes back, and no prefix nor the longer input decodes to `m` (a message that
    /// ends in a raw tail may decode from them, as another message).
    pub fn round_trip<'a, M: Message<'a> + PartialEq + std::fmt::Debug>(m: &M, long: &'a [u8]) {
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

    /// [`round_trip`] for a message without a raw tail: every prefix fails to decode, and so
    /// does the input with its stray byte.
    pub fn round_trip_exact<'a, M: Message<'a> + PartialEq + std::fmt::Debug>(
        m: &M,
        long: &'a [u8],
    ) {
        round_trip(m, long);
        let bytes = &long[..long.len() - 1];
        for cut in 0..bytes.len() {
            assert!(M::decode(&bytes[..cut]).is_err(), "prefix {cut}");
        }
        assert_eq!(M::decode(long), Err(DecodeError::Trailing(1)));
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
            .name_list(&["a", "b-c@x"].into_iter().collect())
            .bool(true);
        let bytes = w.into_bytes();
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u8("x").unwrap(), 7);
        assert_eq!(r.u32("x").unwrap(), 0xdead_beef);
        assert_eq!(r.string("x").unwrap(), b"abc");
        let names = r.name_list("x").unwrap();
        assert_eq!(names.iter().collect::<Vec<_>>(), ["a", "b-c@x"]);
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
        for bad in [&b"a,,b"[..], b",", b"a,", b"a b", b"\xff"] {
            assert!(NameList::parse(bad, "n").is_err(), "{bad:?}");
        }
        let empty = NameList::parse(b"", "n").unwrap();
        assert!(empty.is_empty() && empty.first().is_none());
    }

    /// A list of 100,000 names is read in place: no name is copied out of the message.
    #[test]
    fn names_are_borrowed_from_the_message() {
        let text = vec!["x"; 100_000].join(",") + ",aes128-ctr";
        let list = NameList::parse(text.as_bytes(), "n").unwrap();
        assert!(matches!(list.0, Cow::Borrowed(_)));
        assert_eq!(list.iter().count(), 100_001);
        assert!(list.contains("aes128-ctr") && !list.contains("aes"));
        assert_eq!(list.first(), Some("x"));
        let json = serde_json::to_string(&list.into_owned()).unwrap();
        assert!(json.starts_with(r#"["x","x","#) && json.ends_with(r#","aes128-ctr"]"#));
    }
}
