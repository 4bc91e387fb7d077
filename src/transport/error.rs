//! One error type for the transport, split like rustls: what the peer sent that is malformed,
//! what it did that breaks the protocol, what we cannot agree on, and plain I/O.

use crate::wire::numbers::reason;
use crate::wire::DecodeError;
use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("malformed message from peer: {0}")]
    Decode(#[from] DecodeError),
    #[error("peer misbehaved: {0}")]
    Protocol(String),
    #[error("bad packet: {0}")]
    Packet(String),
    #[error("message authentication failed (corrupted or tampered packet)")]
    Mac,
    #[error("no common {what}: we offer {ours}, peer offers {theirs}")]
    NoCommonAlgorithm {
        what: &'static str,
        ours: String,
        theirs: String,
    },
    #[error("host key verification failed: {0}")]
    HostKey(String),
    #[error("authentication refused: {0}")]
    Auth(String),
    #[error("peer disconnected (reason {code}): {text}")]
    PeerDisconnected { code: u32, text: String },
    #[error("peer closed the connection")]
    Closed,
    #[error("version exchange: {0}")]
    Ident(#[from] crate::wire::ident::IdentError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn protocol(msg: impl Into<String>) -> Self {
        Error::Protocol(msg.into())
    }

    /// The reason code our DISCONNECT carries for this failure, or None when the peer is
    /// already gone and sending would be pointless.
    pub fn disconnect_reason(&self) -> Option<u32> {
        match self {
            Error::Decode(_) | Error::Protocol(_) | Error::Packet(_) => {
                Some(reason::PROTOCOL_ERROR)
            }
            Error::Mac => Some(reason::MAC_ERROR),
            Error::NoCommonAlgorithm { .. } => Some(reason::KEY_EXCHANGE_FAILED),
            Error::HostKey(_) => Some(reason::HOST_KEY_NOT_VERIFIABLE),
            Error::Auth(_) => Some(reason::NO_MORE_AUTH_METHODS),
            Error::PeerDisconnected { .. } | Error::Closed | Error::Ident(_) | Error::Io(_) => None,
        }
    }
}
