//! What the `--luks` steps share: the phase tag of a setting's cells, the time left before
//! `--max-time`, a setting mapped by the helper, the mapping the samplers watch, rounding.

use super::agent::Agent;
use super::settings;
use crate::pipeline::model::{LuksSetting, LuksTiming};
use crate::pipeline::setup::Setup;
use anyhow::Result;
use std::time::Instant;

/// The phase label of a cell's runs; `recording::attach_tagged` finds them by it.
pub fn tag(setting: &str) -> String {
    format!("luks:{setting}|")
}

/// Seconds left before `--max-time`, less what the run needs after the matrix (`reserve`).
pub fn time_left(s: &Setup, t: &LuksTiming) -> Option<f64> {
    let d = s.opts.deadline?;
    Some(d.saturating_duration_since(Instant::now()).as_secs_f64() - reserve(t))
}

/// What `--max-time` keeps back for after the matrix: closing the helper and the samplers
/// and removing the run directory, about two logins, and `CLEANUP_S`.
fn reserve(t: &LuksTiming) -> f64 {
    2.0 * t.login_s.unwrap_or(2.0) + CLEANUP_S
}

/// Seconds kept back for the clean-up beyond its logins (docs/pipeline.md).
const CLEANUP_S: f64 = 5.0;

/// Setting `st` as the helper's mapping `i`; its `dm-N`.
pub fn map(agent: &mut Agent, i: usize, st: &LuksSetting) -> Result<String> {
    agent.map(
        i,
        &st.cipher,
        st.key_bits,
        st.sector_size,
        &settings::perf_args(st),
    )
}

/// Which `dm-N` the samplers read the write rate of.
pub fn set_dm(s: &Setup, dm: Option<String>) {
    if let Ok(mut g) = s.shared.dm.lock() {
        *g = dm;
    }
}

pub fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}
