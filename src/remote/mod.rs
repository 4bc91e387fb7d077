//! The remote side both ends speak: every `SSHTUNE-*` line (`line.rs`: one `Line` enum,
//! parsed and displayed in one place), the POSIX-sh programs that print them on a server with
//! a shell (`scripts.rs`), and what the lines say about the server (`facts.rs`). `sshtune
//! serve`'s built-ins and `sshtune tcp-sink` write the same lines with `Line`'s `Display`;
//! bench and pipeline read them.

pub mod facts;
pub mod line;
pub mod scripts;

pub use facts::{machine, parse_quota, same_boot, Info, Ready, RemoteCounters};
pub use line::{
    done, info, info_line, missing, refusal, said_ok, spoke, Fields, Line, ParseError, CEIL_DONE,
    CEIL_ERR, CEIL_LISTEN, DISK, DONE, ERR, HELLO, INFO, MISSING, OK, READY, SINK_DONE,
    SINK_LISTENING, SYNC, TCP,
};
pub use scripts::{
    download_script, preflight_script, session_script, upload_script, Request, MACHINE_FACTS,
    WIDEN_PIPES,
};
