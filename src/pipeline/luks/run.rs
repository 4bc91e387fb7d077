//! The `--luks` run in the order it runs: the baseline, the stages alone (`alone.rs`), the
//! loop file, then each setting on one volume made once, its dm-crypt pass, trimming and
//! cells (`volume.rs`, `matrix.rs`). `finish.rs` turns what the samplers recorded into the
//! report's section; `step.rs` what the steps share. Here: the order, and the loop file's
//! size.

use super::agent::Agent;
use super::alone::{rsync_local, ssh_alone};
use super::costs;
use super::matrix::{matrix, Inputs};
use super::settings;
use super::step::{round2, set_dm};
use super::verify::{files, sums};
use crate::pipeline::model::{AloneStage, LuksSetting, LuksTiming, Row, StorageInfo};
use crate::pipeline::setup::Setup;
use crate::pipeline::MIB;
use crate::process::check_interrupted;
use crate::stats;
use anyhow::{bail, Context, Result};

/// What `measure` leaves for `finish` (which needs the samplers' intervals).
pub struct Measured {
    pub stale: Vec<String>,
    pub loop_bytes: u64,
    pub pass_bytes: u64,
    /// The dataset's bytes (what the stages alone moved).
    pub bytes: u64,
    pub settings: Vec<LuksSetting>,
    pub alone: Vec<AloneStage>,
    /// Setting name and its rows (one per cipher), and the mapping name it had.
    pub cells: Vec<(String, Vec<Row>)>,
    /// The user's mapping, and its size for the re-encryption estimate.
    pub storage: StorageInfo,
    pub device_bytes: Option<u64>,
    /// Set when a signal cut the matrix short: what was left out.
    pub partial: Option<String>,
    /// What `--max-time` left out, the first line saying why.
    pub left_out: Vec<String>,
    pub timing: LuksTiming,
}

/// Runs everything that writes, the scratch volumes through `agent` (the run's helper on
/// the destination, closed by `Resources::release`). `cores` is the destination's core
/// count (the model's shared-core limit).
pub fn measure(
    s: &Setup,
    ciphers: &[String],
    storage: &StorageInfo,
    stale: Vec<String>,
    cores: f64,
    agent: &mut Agent,
) -> Result<Measured> {
    let proc_crypto = agent.crypto()?;
    let mut list = settings::select(
        settings::candidates(storage, &proc_crypto),
        &s.opts.luks_settings,
    )?;
    let (loop_bytes, pass_bytes) = sizes(s.dataset.bytes);
    // What the machine does with only the samplers running: every stage below carries it,
    // and a model that adds three stages' costs would count it three times.
    (s.say)("LUKS model: the samplers' own load, nothing else running");
    s.shared.set_phase(Some(costs::BASELINE_PHASE.into()));
    std::thread::sleep(std::time::Duration::from_secs_f64(costs::BASELINE_S));
    s.shared.set_phase(Some("between".into()));
    check_interrupted()?;
    let mut logins = Vec::new();
    let mut alone = Vec::new();
    for c in ciphers {
        alone.push(ssh_alone(s, c, None, &mut logins)?);
    }
    alone.push(rsync_local(s)?);
    let mut timing = LuksTiming {
        max_time_s: s.opts.max_time_s,
        login_s: stats::median(&logins).map(round2),
        ..Default::default()
    };

    (s.say)(&format!(
        "LUKS: a {:.0} MiB loop file in {}, written once",
        loop_bytes as f64 / MIB,
        agent.work
    ));
    check_interrupted()?;
    agent.create(loop_bytes >> 20)?;
    // The reference first: every other setting is trimmed against it as soon as its own
    // pass is measured, on the volume its cells then use.
    if let Some(r) = list.iter().position(|x| x.current) {
        let x = list.remove(r);
        list.insert(0, x);
    }
    let want = sums(&files(s.dataset.root()), s.dataset.root())
        .context("hashing the source for the byte-for-byte check")?;
    let m = matrix(
        s,
        agent,
        &mut list,
        &mut alone,
        &Inputs {
            ciphers,
            want: &want,
            cores,
            pass_bytes,
        },
        &mut timing,
    )?;
    set_dm(s, storage.dm_device.clone());
    let device_bytes = match m.partial {
        Some(_) => None,
        None => storage
            .dm_device
            .as_deref()
            .and_then(|dm| agent.device_bytes(dm)),
    };
    Ok(Measured {
        stale,
        loop_bytes,
        pass_bytes,
        bytes: s.dataset.bytes,
        settings: list,
        alone,
        cells: m.cells,
        storage: storage.clone(),
        device_bytes,
        partial: m.partial,
        left_out: m.left_out,
        timing,
    })
}

/// The loop file and the dm-crypt pass for a dataset: the pass writes 16–128 MiB (whole
/// 16 MiB blocks); the file holds the dataset with ext4's journal and inode tables, rsync's
/// temp file and some slack, and at least the pass.
pub fn sizes(dataset_bytes: u64) -> (u64, u64) {
    let pass = (dataset_bytes.clamp(16 << 20, 128 << 20) >> 24) << 24;
    let file = (dataset_bytes + dataset_bytes / 4 + (64 << 20)).max(pass + (32 << 20));
    // Whole MiB: every sector size (up to 4096) divides the device then.
    (file.div_ceil(1 << 20) << 20, pass)
}

/// Refuses a loop file larger than half the free space of the destination's filesystem,
/// before anything is measured.
pub fn check_room(dataset_bytes: u64, free: Option<u64>, dir: &str) -> Result<()> {
    let (file, _) = sizes(dataset_bytes);
    match free {
        Some(free) if file > free / 2 => bail!(
            "--luks needs {:.0} MiB for its loop file in {dir} and only {:.0} MiB are free (it uses at most half)",
            file as f64 / MIB,
            free as f64 / MIB
        ),
        _ => Ok(()),
    }
}
