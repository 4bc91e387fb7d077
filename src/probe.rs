//! `sshtune probe`: read a server's banner and SSH_MSG_KEXINIT without logging in.

use crate::target::{Resolved, SshTarget};
use crate::transport::stream::Stream;
use crate::wire::codec::NameList;
use crate::wire::ident::{read_ident, Ident};
use crate::wire::kexinit::KexInit;
use crate::wire::numbers as msg;
use crate::wire::plain::{read_packet, write_packet};
use crate::wire::transport::Disconnect;
use crate::wire::Message;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufReader, Write};
use std::time::Duration;

pub mod model;

/// The whole exchange must finish within this; a silent peer must not hang us.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Servers may send IGNORE/DEBUG first; more than this many before KEXINIT is hostile.
const MAX_PACKETS_BEFORE_KEXINIT: usize = 16;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeResult {
    pub host: String,
    pub port: u16,
    pub banner: String,
    pub software: String,
    pub comments: Option<String>,
    /// Parsed OpenSSH release, when the peer is OpenSSH.
    pub openssh_version: Option<String>,
    pub strict_kex: bool,
    pub kexinit: KexInit<'static>,
}

impl ProbeResult {
    /// Ciphers usable in both directions, in the server's order.
    pub fn ciphers(&self) -> Vec<String> {
        both_ways(&self.kexinit.ciphers_c2s, &self.kexinit.ciphers_s2c)
    }

    /// MACs usable in both directions, in the server's order.
    pub fn macs(&self) -> Vec<String> {
        both_ways(&self.kexinit.macs_c2s, &self.kexinit.macs_s2c)
    }

    pub fn version(&self) -> Option<ciphers::OpenSshVersion> {
        ciphers::OpenSshVersion::parse(&self.software)
    }
}

/// The names of `c2s` that `s2c` holds too, in `c2s`'s order.
fn both_ways(c2s: &NameList, s2c: &NameList) -> Vec<String> {
    c2s.iter()
        .filter(|n| s2c.contains(n))
        .map(String::from)
        .collect()
}

/// Connects to `host:port`, exchanges identifications and reads the server's KEXINIT.
pub fn probe(host: &str, port: u16, timeout: Duration) -> Result<ProbeResult> {
    let stream = crate::proxy::tcp(host, port, timeout)?;
    stream.set_write_timeout(Some(timeout))?;
    probe_over(stream.into(), host, port, timeout)
}

/// The same over a connection already open (direct, or through a jump host's proxy process).
pub fn probe_over(stream: Stream, host: &str, port: u16, timeout: Duration) -> Result<ProbeResult> {
    stream.set_read_timeout(Some(timeout))?;
    let ctx = || format!("probing {host} port {port}");
    exchange(stream, host, port).with_context(ctx)
}

/// Probes the target `ssh -G` resolved, through its `ProxyJump`/`ProxyCommand` if it has one.
pub fn probe_target(target: &SshTarget, r: &Resolved, timeout: Duration) -> Result<ProbeResult> {
    let stream = crate::proxy::dial(r, &target.options, &target.destination, timeout)?;
    probe_over(stream, &r.hostname, r.port, timeout)
}

fn exchange(mut stream: Stream, host: &str, port: u16) -> Result<ProbeResult> {
    // Servers speak first; reading their identification before sending ours means a peer
    // that is not SSH and hangs up at once is reported for what it said, not as a reset.
    let mut reader = BufReader::new(stream.try_clone()?);
    let ident: Ident = read_ident(&mut reader)?;
    let ours = format!("SSH-2.0-sshtune_{}\r\n", env!("CARGO_PKG_VERSION"));
    stream
        .write_all(ours.as_bytes())
        .context("sending identification")?;
    let mut kexinit = None;
    for _ in 0..MAX_PACKETS_BEFORE_KEXINIT {
        let payload = read_packet(&mut reader)?;
        match payload.first() {
            Some(&msg::KEXINIT) => {
                let k = KexInit::decode(&payload).context("malformed KEXINIT")?;
                kexinit = Some(k.into_owned());
                break;
            }
            Some(&msg::IGNORE | &msg::DEBUG) => continue,
            Some(&msg::DISCONNECT) => bail!("server sent DISCONNECT before key exchange"),
            Some(n) => bail!("unexpected message {n} before KEXINIT"),
            None => bail!("empty packet before KEXINIT"),
        }
    }
    let kexinit = kexinit.context("server sent no KEXINIT")?;
    let bye = Disconnect::new(msg::reason::BY_APPLICATION, "probe done");
    // The goodbye is a courtesy; a server that already hung up is no error.
    let _ = write_packet(&mut stream, &bye.encode());
    let openssh_version = ciphers::OpenSshVersion::parse(&ident.software).map(|v| v.to_string());
    Ok(ProbeResult {
        host: host.to_string(),
        port,
        banner: ident.line.clone(),
        software: ident.software,
        comments: ident.comments,
        openssh_version,
        strict_kex: kexinit.server_strict_kex(),
        kexinit,
    })
}
