//! Unencrypted binary packets (RFC 4253 §6) read from and written to a plain stream, as they
//! flow before the first NEWKEYS: for the probe, which never goes further, and for messages
//! sent before a transport exists. The framing is the `ciphers` crate's cleartext key state,
//! the same the native transport starts in, so lengths and padding follow one set of rules.

use ciphers::{OpeningKey, SealingKey};
use std::io::{self, Read, Write};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum PacketError {
    #[error("peer closed the connection")]
    Closed,
    #[error("invalid packet length {0} (not an SSH binary packet)")]
    BadLength(usize),
    #[error("invalid padding ({0})")]
    BadPadding(&'static str),
    #[error("peer stopped answering (timeout)")]
    Timeout,
    #[error(transparent)]
    Io(io::Error),
}

impl From<io::Error> for PacketError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => PacketError::Closed,
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => PacketError::Timeout,
            _ => PacketError::Io(e),
        }
    }
}

/// Reads one packet and returns its payload. The length is checked (at most
/// `ciphers::MAX_PACKET_LEN`, whole 8-byte blocks) before anything is allocated for it.
pub fn read_packet<R: Read>(r: &mut R) -> Result<Vec<u8>, PacketError> {
    let mut key = OpeningKey::cleartext();
    let mut wire = vec![0u8; key.length_bytes()];
    r.read_exact(&mut wire)?;
    let total = key.decrypt_length(0, &mut wire).map_err(framing_error)?;
    let first = wire.len();
    wire.resize(total, 0);
    r.read_exact(&mut wire[first..])?;
    let payload = key.open(0, &mut wire).map_err(framing_error)?;
    wire.truncate(payload.end);
    wire.drain(..payload.start);
    Ok(wire)
}

fn framing_error(e: ciphers::Error) -> PacketError {
    match e {
        ciphers::Error::BadLength(n) => PacketError::BadLength(n),
        ciphers::Error::BadPadding(why) => PacketError::BadPadding(why),
        other => PacketError::Io(io::Error::other(other)),
    }
}

/// Writes one unencrypted packet, padded as every packet of the connection is.
pub fn write_packet<W: Write>(w: &mut W, payload: &[u8]) -> io::Result<()> {
    let mut out = Vec::with_capacity(payload.len() + 32);
    SealingKey::cleartext()
        .seal(0, payload, &mut out)
        .map_err(io::Error::other)?;
    w.write_all(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let mut buf = Vec::new();
        write_packet(&mut buf, b"hello").unwrap();
        assert_eq!(buf.len() % 8, 0);
        assert_eq!(read_packet(&mut &buf[..]).unwrap(), b"hello");
        assert!(matches!(
            read_packet(&mut &b"\xff\xff\xff\xffjunk"[..]),
            Err(PacketError::BadLength(_))
        ));
        assert!(matches!(
            read_packet(&mut &b"\x00\x00"[..]),
            Err(PacketError::Closed)
        ));
        assert!(matches!(
            read_packet(&mut &b"\x00\x00\x00\x0c\x0daaaaaaaaaaa"[..]),
            Err(PacketError::BadPadding(_))
        ));
    }
}
