//! The seam between "run a transfer" and everything else: engines implement `Executor`, and
//! the run loop, statistics and verdicts never know which engine produced a sample.

use super::model::Direction;
use thiserror::Error;

#[derive(Debug, Clone)]
pub struct Job<'a> {
    pub cipher: &'a str,
    /// None for AEAD ciphers, or to let the client pick.
    pub mac: Option<&'a str>,
    pub direction: Direction,
    pub bytes: u64,
}

/// One timed transfer. CPU figures are seconds used during the timed window only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub bytes: u64,
    pub seconds: f64,
    pub client_cpu_s: Option<f64>,
    pub server_cpu_s: Option<f64>,
    /// Whole-server busy CPU seconds (all cores, all processes).
    pub server_busy_s: Option<f64>,
    pub server_quota_cores: Option<f64>,
}

impl Sample {
    pub fn mib_s(&self) -> f64 {
        self.bytes as f64 / (1024.0 * 1024.0) / self.seconds.max(1e-9)
    }

    pub fn pct(cpu_s: Option<f64>, seconds: f64) -> Option<f64> {
        cpu_s.map(|c| c / seconds.max(1e-9) * 100.0)
    }
}

#[derive(Debug, Error)]
pub enum TransferError {
    /// This cipher/MAC cannot be used here: a row saying so, and the run goes on.
    #[error("{0}")]
    Refused(String),
    /// This transfer failed (peer died, short count): a row with the error.
    #[error("{0}")]
    Failed(String),
    /// Nothing else can work either (unreachable, auth refused, host key, interrupted).
    #[error(transparent)]
    Fatal(#[from] anyhow::Error),
}

pub trait Executor {
    /// `openssh` or `native`, as written in result rows.
    fn engine(&self) -> &'static str;
    fn transfer(&mut self, job: &Job) -> Result<Sample, TransferError>;
}
