//! CPU and I/O sampling around the measurements: both ends' samplers started once the run
//! directory exists (the remote loop is named after it), stopped after the last rsync, and
//! their intervals turned into each row's CPU breakdown.

use super::model::{CpuShare, Row};
use super::remote;
use super::sampler::{self, Interval, Samplers, Shared};
use super::ssh::ssh_command;
use crate::target::SshTarget;
use anyhow::Result;
use std::time::Duration;

/// Starts both samplers. `dm_device` is the destination's dm-crypt device whose writes are
/// counted; `token` names the remote loop so it can be told from another run's.
pub fn start(
    target: &SshTarget,
    dm_device: Option<String>,
    interval_ms: u64,
    token: &str,
) -> Result<(Shared, Samplers)> {
    let shared = Shared::default();
    if let Ok(mut g) = shared.dm.lock() {
        *g = dm_device;
    }
    let interval = Duration::from_millis(interval_ms);
    let samplers = Samplers::start(
        shared.clone(),
        ssh_command(
            target,
            None,
            &remote::sampler(interval.as_secs_f64(), token),
        ),
        interval,
    )?;
    Ok((shared, samplers))
}

/// Stops both samplers and returns what they recorded; a remote sampler that failed is a
/// warning (the client side still counts).
pub fn finish(samplers: Samplers, warnings: &mut Vec<String>) -> Vec<Interval> {
    let remote_error = samplers.remote_error.lock().ok().and_then(|g| g.clone());
    let intervals = samplers.finish();
    if let Some(e) = remote_error {
        warnings.push(format!(
            "{e}: server-side CPU is missing from the breakdown"
        ));
    }
    intervals
}

/// Each row's CPU: the intervals tagged with its phases (`cipher/variant#n`), averaged.
pub fn attach(rows: &mut [Row], intervals: &[Interval]) {
    for row in rows {
        let prefix = format!("{}/{}#", row.cipher, row.variant);
        row.cpu = sampler::shares(intervals, &prefix)
            .into_iter()
            .map(|(side, group, pct)| CpuShare {
                side: side.as_str().into(),
                group,
                pct: (pct * 10.0).round() / 10.0,
            })
            .collect();
    }
}
