//! Protocol version exchange (RFC 4253 §4.2).

use super::sanitize::peer_text;
use std::io::{self, BufRead};
use thiserror::Error;

/// A server may send other lines before its identification; these caps stop a hostile peer from
/// feeding us an endless preamble.
const MAX_LINE: usize = 255;
const MAX_PREAMBLE_LINES: usize = 64;

#[derive(Debug, Error)]
pub enum IdentError {
    #[error("peer closed the connection before sending an SSH identification")]
    Closed,
    #[error("peer is not an SSH server (first line: {0:?})")]
    NotSsh(String),
    #[error("identification line longer than {MAX_LINE} bytes")]
    TooLong,
    #[error("peer speaks SSH protocol {0}, only 2.0 (or 1.99) is supported")]
    Version(String),
    #[error("peer stopped answering (timeout)")]
    Timeout,
    #[error("peer reset the connection")]
    Reset,
    #[error(transparent)]
    Io(io::Error),
}

impl From<io::Error> for IdentError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => IdentError::Timeout,
            io::ErrorKind::ConnectionReset => IdentError::Reset,
            _ => IdentError::Io(e),
        }
    }
}

/// The peer's identification string, split per RFC 4253 §4.2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// The whole line without CR LF; it enters the exchange hash verbatim.
    pub line: String,
    pub proto: String,
    pub software: String,
    pub comments: Option<String>,
}

impl Ident {
    pub fn parse(line: &str) -> Result<Self, IdentError> {
        let rest = line
            .strip_prefix("SSH-")
            .ok_or_else(|| IdentError::NotSsh(peer_text(line.as_bytes(), 60)))?;
        let (proto, rest) = rest
            .split_once('-')
            .ok_or_else(|| IdentError::NotSsh(peer_text(line.as_bytes(), 60)))?;
        if proto != "2.0" && proto != "1.99" {
            return Err(IdentError::Version(peer_text(proto.as_bytes(), 60)));
        }
        let (software, comments) = match rest.split_once(' ') {
            Some((s, c)) => (s, Some(c.to_string())),
            None => (rest, None),
        };
        Ok(Self {
            line: line.to_string(),
            proto: proto.to_string(),
            software: software.to_string(),
            comments,
        })
    }
}

/// Reads lines until the identification, skipping a bounded preamble.
pub fn read_ident<R: BufRead>(r: &mut R) -> Result<Ident, IdentError> {
    let mut first_line = None;
    for _ in 0..MAX_PREAMBLE_LINES {
        let line = match read_line(r) {
            Ok(l) => l,
            // A peer that said something else and hung up is "not SSH", not "closed early".
            Err(IdentError::Closed) if first_line.is_some() => break,
            Err(e) => return Err(e),
        };
        if line.starts_with("SSH-") {
            return Ident::parse(&line);
        }
        first_line.get_or_insert(line);
    }
    Err(IdentError::NotSsh(peer_text(
        first_line.unwrap_or_default().as_bytes(),
        60,
    )))
}

fn read_line<R: BufRead>(r: &mut R) -> Result<String, IdentError> {
    let mut buf = Vec::new();
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if avail.is_empty() {
            if buf.is_empty() {
                return Err(IdentError::Closed);
            }
            return Err(IdentError::NotSsh(peer_text(&buf, 60)));
        }
        let (used, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        buf.extend_from_slice(&avail[..used]);
        r.consume(used);
        if buf.len() > MAX_LINE {
            if buf.starts_with(b"SSH-") {
                return Err(IdentError::TooLong);
            }
            return Err(IdentError::NotSsh(peer_text(&buf, 60)));
        }
        if done {
            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                buf.pop();
            }
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_openssh_and_dropbear() {
        let mut r = &b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6\r\nrest"[..];
        let id = read_ident(&mut r).unwrap();
        assert_eq!(id.software, "OpenSSH_9.2p1");
        assert_eq!(id.comments.as_deref(), Some("Debian-2+deb12u6"));
        let id = Ident::parse("SSH-2.0-dropbear_2022.83").unwrap();
        assert_eq!(id.software, "dropbear_2022.83");
    }

    #[test]
    fn skips_preamble_and_rejects_http() {
        let mut r = &b"hello\r\nSSH-2.0-x\r\n"[..];
        assert_eq!(read_ident(&mut r).unwrap().software, "x");
        let mut r = &b"HTTP/1.1 400 Bad Request\r\n\r\n"[..];
        assert!(matches!(
            read_ident(&mut r),
            Err(IdentError::NotSsh(_) | IdentError::Closed)
        ));
    }

    #[test]
    fn long_garbage_is_rejected() {
        let junk = vec![b'a'; 10_000];
        assert!(matches!(
            read_ident(&mut &junk[..]),
            Err(IdentError::NotSsh(_))
        ));
        assert!(matches!(read_ident(&mut &b""[..]), Err(IdentError::Closed)));
        assert!(matches!(
            read_ident(&mut &b"SSH-1.5-old\r\n"[..]),
            Err(IdentError::Version(_))
        ));
    }
}
