//! What a speed run is asked to do, in the domain's own terms; `cmd/speed.rs` fills one in from
//! the command line.

use super::model::RowKind;

/// Which crypto backends to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    Openssl,
    Rust,
    /// Every backend this build has; a warning names any it lacks.
    Both,
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Ciphers to time (SSH names); empty: every cipher in the catalog.
    pub ciphers: Vec<String>,
    /// MACs to time alone and to pair with each non-AEAD cipher; empty: every MAC alone, pairs
    /// with `DEFAULT_PAIR_MAC`.
    pub macs: Vec<String>,
    /// Which kinds of rows to measure; empty: all.
    pub rows: Vec<RowKind>,
    pub backends: BackendChoice,
    /// CPU seconds a sample may last.
    pub min_time_s: f64,
    /// Timed samples per row.
    pub repeat: u32,
    /// Time `openssl speed` of the same primitive beside each row.
    pub reference: bool,
}

impl Options {
    /// The defaults `sshtune speed` documents (its `--help` shows these values).
    pub const DEFAULT: Self = Self {
        ciphers: Vec::new(),
        macs: Vec::new(),
        rows: Vec::new(),
        backends: BackendChoice::Both,
        min_time_s: 1.0,
        repeat: 3,
        reference: true,
    };
}

impl Default for Options {
    fn default() -> Self {
        Self::DEFAULT
    }
}
