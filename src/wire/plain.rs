//! Reading unencrypted binary packets (RFC 4253 §6), as they flow before the first NEWKEYS.

use std::io::{self, Read, Write};
use thiserror::Error;

/// RFC 4253 §6.1 requires 35000; real peers stay below it before kex. Anything larger is
/// treated as garbage rather than an allocation request.
pub const MAX_PACKET_LEN: usize = 35_000;

#[derive(Debug, Error)]
pub enum PacketError {
    #[error("peer closed the connection")]
    Closed,
    #[error("invalid packet length {0} (not an SSH binary packet)")]
    BadLength(u32),
    #[error("invalid padding length {padding} for packet length {len}")]
    BadPadding { padding: u8, len: u32 },
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

/// Reads one packet and returns its payload.
pub fn read_packet<R: Read>(r: &mut R) -> Result<Vec<u8>, PacketError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len);
    if !(5..=MAX_PACKET_LEN as u32).contains(&len) {
        return Err(PacketError::BadLength(len));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body)?;
    let padding = body[0];
    if padding as u32 + 1 > len || padding < 4 {
        return Err(PacketError::BadPadding { padding, len });
    }
    Ok(body[1..len as usize - padding as usize].to_vec())
}

/// Writes one unencrypted packet with the minimum valid padding for an 8-byte block.
pub fn write_packet<W: Write>(w: &mut W, payload: &[u8]) -> io::Result<()> {
    let mut padding = 8 - (4 + 1 + payload.len()) % 8;
    if padding < 4 {
        padding += 8;
    }
    let len = (1 + payload.len() + padding) as u32;
    let mut out = Vec::with_capacity(4 + len as usize);
    out.extend_from_slice(&len.to_be_bytes());
    out.push(padding as u8);
    out.extend_from_slice(payload);
    out.resize(out.len() + padding, 0);
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
            read_packet(&mut &b"\x00\x00\x00\x08\x09aaaaaaa"[..]),
            Err(PacketError::BadPadding { .. })
        ));
    }
}
