//! What a bench run is asked to do, in the domain's own terms. `sshtune bench`, `sshtune config
//! --host` and the pipeline's SSH-only stage each fill one in; none of them hands the suite a
//! command-line struct, so the command line can change without touching the measurement.

use super::model::{Direction, EngineKind};
use super::ssh_args::SshArgsUsed;
use crate::target::SshTarget;
use crate::units::Rate;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Options {
    /// The destination and the ssh options that reach it; None: a private server on loopback,
    /// started for the run and removed after it.
    pub target: Option<SshTarget>,
    /// `-p`, `-l`, `-i`, `-F`, `-o` as the user typed them, recorded in the report (the native
    /// engine also takes its key from `identity`).
    pub ssh_args: SshArgsUsed,
    /// The engines to run, in order; the first one's server facts lead the report.
    pub engines: Vec<EngineKind>,
    /// The engines were the default rather than asked for (a warning then says what was
    /// missing for the other one).
    pub engines_defaulted: bool,
    /// Ciphers to measure; empty: the engine's default pairs.
    pub ciphers: Vec<String>,
    /// MACs to pair with non-AEAD ciphers; empty: the one the client would negotiate.
    pub macs: Vec<String>,
    pub directions: Vec<Direction>,
    pub repeat: u32,
    pub warmup: u32,
    /// Fixed bytes per transfer; None: grow until one lasts `min_duration_s`.
    pub size: Option<u64>,
    pub min_duration_s: f64,
    /// The reference settings (`--thorough`): `repeat` samples of at least `min_duration_s`,
    /// fixed warm-up, every row sampled in full. Off (the default): samples start short and
    /// lengthen only while they disagree, and rows below the leader stop early
    /// (`bench::adaptive`).
    pub thorough: bool,
    /// The default mode stops sampling contenders after this many seconds per engine.
    pub max_time_s: Option<f64>,
    /// Native engine: largest data packet and channel window (None: the client's defaults).
    pub packet_size: Option<u32>,
    pub window: Option<u32>,
    /// Native engine: threads that seal what we send (`transport::conn::Options::threads`).
    pub threads: u8,
    /// Native engine: known_hosts file instead of `UserKnownHostsFile` from `ssh -G`.
    pub known_hosts: Option<PathBuf>,
    /// A ceiling measured elsewhere; it replaces any measurement.
    pub ceiling: Option<Rate>,
    pub no_ceiling: bool,
    /// Path of sshtune on the server, for the raw-TCP ceiling.
    pub remote_sshtune: Option<String>,
    /// Connections per row measured at once besides the single stream (`bench::streams`).
    pub streams: super::model::StreamsAsked,
}

impl Options {
    /// The defaults `sshtune bench` documents, for one target and engine list.
    pub fn new(target: Option<SshTarget>, engines: Vec<EngineKind>) -> Self {
        Self {
            target,
            ssh_args: SshArgsUsed::default(),
            engines,
            engines_defaulted: false,
            ciphers: Vec::new(),
            macs: Vec::new(),
            directions: vec![Direction::Upload, Direction::Download],
            repeat: 3,
            warmup: 1,
            size: None,
            min_duration_s: 2.0,
            thorough: false,
            max_time_s: None,
            packet_size: None,
            threads: 1,
            window: None,
            known_hosts: None,
            ceiling: None,
            no_ceiling: false,
            remote_sshtune: None,
            streams: Default::default(),
        }
    }

    /// The channel window the native client grants.
    pub fn native_window(&self) -> u32 {
        self.window
            .unwrap_or(crate::transport::channel::DEFAULT_WINDOW)
    }

    /// The largest data packet the native client uses.
    pub fn native_packet_size(&self) -> u32 {
        self.packet_size
            .unwrap_or(crate::transport::channel::DEFAULT_MAX_PACKET)
    }

    pub fn runs(&self, kind: EngineKind) -> bool {
        self.engines.contains(&kind)
    }
}
