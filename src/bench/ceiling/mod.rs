//! The raw-TCP ceiling: what the path carries with no SSH in the way. Without it no run can
//! honestly be called network-bound.
//!
//! Over loopback it is measured here; to a remote host with whatever receiver the server has
//! (the preflight lists them): `sshtune tcp-sink`, `iperf3`, `socat`, netcat, python3 or bash's
//! `/dev/tcp`, the first that works. Each run records both ends' CPU, because a ceiling that
//! a CPU imposed is not the network's (docs/verdicts.md).

mod drive;
mod job;
mod methods;
pub mod rtt;
pub mod scripts;
pub mod serve;
pub mod step;

pub use job::Run;
pub use methods::{candidates, measure_remote, Receiver, RemoteCeiling, RemoteSetup};

use super::model::Ceiling;
use crate::stats;
use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// What a ceiling step found: the ceiling or none, and the warnings saying why there is none
/// or what else was tried.
#[derive(Debug, Default)]
pub struct Outcome {
    pub ceiling: Option<Ceiling>,
    pub warnings: Vec<String>,
}

impl Outcome {
    pub fn found(ceiling: Ceiling) -> Self {
        Self {
            ceiling: Some(ceiling),
            warnings: Vec::new(),
        }
    }

    /// No ceiling, and why.
    pub fn none(why: impl Into<String>) -> Self {
        Self {
            ceiling: None,
            warnings: vec![why.into()],
        }
    }
}

/// Measures TCP throughput over loopback (the path the embedded server uses): three runs of
/// `per_run`, median in MiB/s, with min and max.
pub fn loopback_tcp(per_run: Duration) -> Result<(f64, f64, f64)> {
    let mut samples = Vec::new();
    for _ in 0..3 {
        samples.push(one_run(per_run)?);
    }
    Ok((
        stats::median(&samples).unwrap_or(0.0),
        stats::min(&samples).unwrap_or(0.0),
        stats::max(&samples).unwrap_or(0.0),
    ))
}

fn one_run(per_run: Duration) -> Result<f64> {
    let mut pair = LoopbackPair::open()?;
    let chunk = vec![0x5au8; 256 * 1024];
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < per_run {
        pair.sender.write_all(&chunk)?;
        sent += chunk.len() as u64;
    }
    let received = pair.finish()?;
    let secs = start.elapsed().as_secs_f64();
    anyhow::ensure!(
        received == sent,
        "loopback lost bytes: {received} of {sent}"
    );
    Ok(received as f64 / (1024.0 * 1024.0) / secs)
}

/// A loopback TCP connection whose far end a thread of its own reads and discards: what the
/// TCP ceiling and the transport-overhead socket figure both time their writes into.
pub struct LoopbackPair {
    pub sender: TcpStream,
    reader: std::thread::JoinHandle<std::io::Result<u64>>,
}

impl LoopbackPair {
    pub fn open() -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback port")?;
        let addr = listener.local_addr()?;
        let reader = std::thread::spawn(move || -> std::io::Result<u64> {
            let (mut s, _) = listener.accept()?;
            let mut buf = vec![0u8; 256 * 1024];
            let mut total = 0u64;
            loop {
                match s.read(&mut buf)? {
                    0 => return Ok(total),
                    n => total += n as u64,
                }
            }
        });
        let sender = TcpStream::connect(addr).context("connecting over loopback")?;
        Ok(Self { sender, reader })
    }

    /// Ends the sending side and returns the bytes the reader received.
    pub fn finish(self) -> Result<u64> {
        self.sender.shutdown(std::net::Shutdown::Write)?;
        self.reader
            .join()
            .map_err(|_| anyhow::anyhow!("the loopback reader panicked"))?
            .context("reading the loopback connection")
    }
}
