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
    /// How many samples, how long, and whether rows race.
    pub sampling: SamplingOptions,
    /// Where the raw-TCP ceiling comes from.
    pub ceiling: CeilingSource,
    /// The native engine's transport settings.
    pub native: NativeOptions,
    /// Path of sshtune on the server, for the raw-TCP ceiling.
    pub remote_sshtune: Option<String>,
    /// Connections per row measured at once besides the single stream (`bench::streams`).
    pub streams: super::model::StreamsAsked,
}

/// How a run samples each row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplingOptions {
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
    /// The default mode stops sampling contenders once the run has lasted this many seconds
    /// (every engine together); every row still gets its first round.
    pub max_time_s: Option<f64>,
}

impl SamplingOptions {
    /// The defaults `sshtune bench` documents (its `--help` shows these values).
    pub const DEFAULT: Self = Self {
        repeat: 3,
        warmup: 1,
        size: None,
        min_duration_s: 2.0,
        thorough: false,
        max_time_s: None,
    };

    /// `sshtune bench`'s time cap in the default mode when `--max-time` is not given: the
    /// answer within a minute. Racing rounds and the last visit start only before it, and
    /// one round of samples can run past it; the embedded default with both engines took
    /// 57.2–61.5 s without a cap on an idle machine (docs/measurements.md, "Wall time").
    pub const DEFAULT_CAP_S: f64 = 57.0;

    /// The default mode: samples sized by stability and rows raced (`bench::adaptive`);
    /// `--thorough` and a fixed `--size` take the reference loop (`bench::thorough`).
    pub fn adaptive(&self) -> bool {
        !self.thorough && self.size.is_none()
    }

    /// The options with the default mode's cap where the run is in the default mode
    /// (neither `--thorough` nor a fixed `--size`) and no `--max-time` was given.
    pub fn capped_by_default(self) -> Self {
        Self {
            max_time_s: self
                .max_time_s
                .or(self.adaptive().then_some(Self::DEFAULT_CAP_S)),
            ..self
        }
    }
}

impl Default for SamplingOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Where the raw-TCP ceiling of the path comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CeilingSource {
    /// Measured by the engine (loopback, a receiver on the server, `sshtune serve`).
    Measure,
    /// Measured elsewhere (`--ceiling`); it replaces any measurement.
    Given(Rate),
    /// Not measured (`--no-ceiling`): no receiver is started on the server.
    None,
}

impl CeilingSource {
    /// Whether the run is to measure no ceiling at all.
    pub fn skipped(&self) -> bool {
        matches!(self, CeilingSource::None)
    }

    /// The ceiling measured elsewhere, if one was given.
    pub fn given(&self) -> Option<&Rate> {
        match self {
            CeilingSource::Given(rate) => Some(rate),
            CeilingSource::Measure | CeilingSource::None => None,
        }
    }
}

/// The native engine's transport settings (None: the client's defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct NativeOptions {
    /// Largest data packet we send and accept.
    pub packet_size: Option<u32>,
    /// Channel window we grant.
    pub window: Option<u32>,
    /// Threads that seal what we send (`transport::conn::Options::threads`).
    pub threads: u8,
    /// known_hosts file instead of `UserKnownHostsFile` from `ssh -G`.
    pub known_hosts: Option<PathBuf>,
}

impl NativeOptions {
    /// The defaults `sshtune bench` documents.
    pub const DEFAULT: Self = Self {
        packet_size: None,
        window: None,
        threads: 1,
        known_hosts: None,
    };

    /// The channel window the native client grants.
    pub fn window(&self) -> u32 {
        self.window
            .unwrap_or(crate::transport::channel::DEFAULT_WINDOW)
    }

    /// The largest data packet the native client uses.
    pub fn packet_size(&self) -> u32 {
        self.packet_size
            .unwrap_or(crate::transport::channel::DEFAULT_MAX_PACKET)
    }
}

impl Default for NativeOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
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
            sampling: SamplingOptions::DEFAULT,
            ceiling: CeilingSource::Measure,
            native: NativeOptions::DEFAULT,
            remote_sshtune: None,
            streams: Default::default(),
        }
    }

    pub fn runs(&self, kind: EngineKind) -> bool {
        self.engines.contains(&kind)
    }
}

#[cfg(test)]
mod tests {
    use super::SamplingOptions;

    /// The default mode gets the cap unless `--max-time` set one; `--thorough` and a fixed
    /// `--size` (the reference loop, which has no racing to stop) get none.
    #[test]
    fn only_the_default_mode_is_capped_by_default() {
        let d = SamplingOptions::DEFAULT;
        let cap = |o: SamplingOptions| o.capped_by_default().max_time_s;
        assert_eq!(cap(d), Some(SamplingOptions::DEFAULT_CAP_S));
        let given = SamplingOptions {
            max_time_s: Some(120.0),
            ..d
        };
        assert_eq!(cap(given), Some(120.0));
        let thorough = SamplingOptions {
            thorough: true,
            ..d
        };
        assert_eq!(cap(thorough), None);
        let sized = SamplingOptions {
            size: Some(64 << 20),
            ..d
        };
        assert_eq!(cap(sized), None);
    }
}
