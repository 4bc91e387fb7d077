//! The `--luks` matrix, in the order it runs: the stages alone (ssh per cipher, rsync-local),
//! a dm-crypt pass per setting, the trimming, then every cipher end to end into each kept
//! setting's scratch volume. `finish` turns what the samplers recorded into the section of
//! the report (CPU per cell, the bound per cell, the model against the measurements, the
//! recommendation).

use super::agent::Agent;
use super::budget;
use super::costs::{self, costs, free_cores};
use super::{advice, copy, predict, settings};
use crate::bench::stats;
use crate::pipeline::model::{
    AloneStage, LuksCell, LuksSection, LuksSetting, LuksTiming, Row, Stage, StageCeiling,
    StorageInfo,
};
use crate::pipeline::options::Options;
use crate::pipeline::recording::{self, Interval};
use crate::pipeline::setup::Setup;
use crate::pipeline::ssh::ssh_command;
use crate::pipeline::{stages, verdict, MIB};
use crate::process::{check_interrupted, interrupted};
use anyhow::{bail, Context, Result};

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

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

/// The phase label of a cell's runs; `recording::attach_tagged` finds them by it.
pub fn tag(setting: &str) -> String {
    format!("luks:{setting}|")
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
        alone.push(ssh_alone(s, c, &mut logins)?);
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
    let mut left_out = Vec::new();
    let volumes = passes(s, agent, &mut list, pass_bytes, &timing, &mut left_out)?;
    timing.volume_s = stats::median(&volumes).map(round2);
    let free = trim(s, &mut alone, &mut list, (cores, pass_bytes), ciphers);

    let want = sums(&files(s.dataset.root()), s.dataset.root())
        .context("hashing the source for the byte-for-byte check")?;
    let m = matrix(
        s,
        agent,
        &list,
        &Inputs {
            alone: &alone,
            ciphers,
            free,
            want: &want,
        },
        &mut timing,
    )?;
    left_out.extend(m.left_out);
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
        left_out,
        timing,
    })
}

/// rsync without ssh, into a local temp directory: the model's rsync stage, `--repeat`
/// times.
fn rsync_local(s: &Setup) -> Result<AloneStage> {
    (s.say)("LUKS model: rsync without ssh, into a local temp directory");
    s.shared.set_phase(Some("luks-alone:rsync-local".into()));
    let scratch = s.dataset.scratch()?;
    // `--repeat` copies, as the cells: one copy of a small dataset under a loaded machine
    // varies by half, and the model's rsync stage is its median.
    let r = stages::rsync_local(
        &s.dataset.rsync_source(),
        scratch.path(),
        s.dataset.bytes,
        s.opts.repeat.max(1),
    );
    drop(scratch);
    s.shared.set_phase(Some("between".into()));
    Ok(AloneStage {
        bytes: None,
        stage: Stage::RsyncLocal,
        cipher: None,
        mib_s: r.median_mib_s,
        cpu_s_per_mib: None,
        method: r.method,
        error: r.error,
    })
}

/// Seconds left before `--max-time`, less what the run needs after the matrix (`reserve`).
fn time_left(s: &Setup, t: &LuksTiming) -> Option<f64> {
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

/// A dm-crypt pass per setting, each through ext4 on a fresh volume. Returns the seconds
/// each volume took to make ready and remove (the fixed cost every setting pays again in
/// the matrix). Settings `--max-time` leaves no room for are taken out of `list`.
fn passes(
    s: &Setup,
    agent: &mut Agent,
    list: &mut Vec<LuksSetting>,
    pass_bytes: u64,
    timing: &LuksTiming,
    left_out: &mut Vec<String>,
) -> Result<Vec<f64>> {
    let mut volumes = Vec::new();
    let mut i = 0;
    while i < list.len() {
        check_interrupted()?;
        let need = stats::median(&volumes).unwrap_or(0.0);
        if time_left(s, timing).is_some_and(|left| left < need) {
            let st = list.remove(i);
            left_out.push(format!(
                "setting {}: --max-time left no time for its dm-crypt pass",
                st.name
            ));
            continue;
        }
        let st = &mut list[i];
        let phase = format!("luks-pass:{}", st.name);
        (s.say)(&format!(
            "LUKS {}: dm-crypt pass, {} MiB written into ext4 on {}",
            st.name,
            pass_bytes >> 20,
            settings::describe(st)
        ));
        // Through ext4 on the mapping, as the cells write: the filesystem's journal and
        // allocation are part of what the destination's storage costs per byte. The first
        // setting writes its pass once untimed: in three of four virtual-machine runs the
        // first pass read slowest (2.0, 4.2 and 1.4 MiB/s against 3.8–10.4 for the others),
        // its writer once spending 9 CPU-s on 16 MiB while the machine made room for it.
        let t = Instant::now();
        let mut ready = 0.0;
        let r = map(agent, i, st).and_then(|dm| {
            agent.mount(i)?;
            ready = t.elapsed().as_secs_f64();
            set_dm(s, Some(dm));
            s.shared.set_phase(Some(phase));
            agent.pass(pass_bytes >> 20, i == 0)
        });
        s.shared.set_phase(Some("between".into()));
        match r {
            Ok(p) => {
                st.dm_crypt_mib_s = Some(round1(p.mib_s));
                st.writer_cpu_s = p.writer_cpu_s;
            }
            Err(e) => {
                check_interrupted()?;
                (s.say)(&format!("LUKS {}: {e:#}", st.name));
                st.error = Some(format!("{e:#}"));
            }
        }
        // A setting that failed half-way may have nothing to close: the helper removes the
        // rest when it ends.
        let u = Instant::now();
        if agent.unmap(i).is_ok() && st.error.is_none() {
            volumes.push(ready + u.elapsed().as_secs_f64());
        }
        i += 1;
    }
    Ok(volumes)
}

/// The CPU costs so far (the samplers keep running) and the trimming; returns the cores the
/// model shares out. `sizes`: the destination's cores and the pass's bytes.
fn trim(
    s: &Setup,
    alone: &mut [AloneStage],
    list: &mut [LuksSetting],
    (cores, pass_bytes): (f64, u64),
    ciphers: &[String],
) -> f64 {
    let so_far = s
        .shared
        .intervals
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    let same = s.end.embedded;
    let base = costs(alone, list, &so_far, same, s.dataset.bytes, pass_bytes);
    let free = free_cores(cores, base.destination(same));
    let reference = list.iter().position(|x| x.current).unwrap_or(0);
    if s.opts.luks_trim {
        predict::trim(list, reference, alone, ciphers, free);
        for st in list.iter().filter(|x| x.trimmed.is_some()) {
            (s.say)(&format!(
                "LUKS {}: trimmed, {}",
                st.name,
                st.trimmed.as_deref().unwrap_or("")
            ));
        }
    }
    free
}

/// What the matrix needs of the stages before it.
struct Inputs<'a> {
    alone: &'a [AloneStage],
    ciphers: &'a [String],
    /// The cores the model shares out.
    free: f64,
    /// The source's SHA-256 per file.
    want: &'a [(String, String)],
}

/// The end-to-end cells, and what they left out.
struct Matrix {
    cells: Vec<(String, Vec<Row>)>,
    partial: Option<String>,
    left_out: Vec<String>,
}

/// `--max-time` ran out during the matrix (the cells took longer than estimated).
#[derive(Debug, thiserror::Error)]
#[error("out of time")]
struct OutOfTime;

/// The time the matrix has taken against its plan, for the estimate as cells finish.
struct Tally {
    start: Instant,
    planned_total: f64,
    planned_done: f64,
    measured_done: f64,
    cells_done: usize,
    cells_total: usize,
    /// Each finished cell's seconds per copy beyond its data.
    copy_fixed: Vec<f64>,
}

impl Tally {
    /// The estimate of what is left, on the progress line.
    fn say(&self, s: &Setup) {
        let left = budget::remaining(
            self.planned_total - self.planned_done,
            self.planned_done,
            self.measured_done,
        );
        (s.say)(&format!(
            "LUKS matrix: {} of {} cells in {}, about {} left",
            self.cells_done,
            self.cells_total,
            budget::clock(self.start.elapsed().as_secs_f64()),
            budget::clock(left)
        ));
    }

    /// `planned` seconds of plan, scaled by how the matrix has gone so far.
    fn scaled(&self, planned: f64) -> f64 {
        budget::remaining(planned, self.planned_done, self.measured_done)
    }
}

/// What every setting's cells share: the plan, its fixed costs and data times, the source's
/// sums, and the timing so far (for `--max-time`).
struct Ctx<'a> {
    plan: &'a budget::Plan,
    fixed: budget::Fixed,
    data_s: &'a dyn Fn(&str, &str) -> f64,
    want: &'a [(String, String)],
    timing: &'a LuksTiming,
}

impl Ctx<'_> {
    /// Planned seconds of one cell (all its copies).
    fn cell_s(&self, setting: &str, cipher: &str) -> f64 {
        f64::from(self.plan.repeat) * (self.fixed.copy_s + (self.data_s)(setting, cipher))
    }
}

/// Every kept setting end to end under every cipher, cut to `--max-time`; a signal keeps
/// the cells that finished.
fn matrix(
    s: &Setup,
    agent: &mut Agent,
    list: &[LuksSetting],
    inp: &Inputs,
    timing: &mut LuksTiming,
) -> Result<Matrix> {
    let fixed = budget::Fixed {
        volume_s: timing.volume_s.unwrap_or(0.0),
        // Each copy logs in once (rsync's); the helper empties and flushes the volume.
        copy_s: timing.login_s.unwrap_or(0.0),
    };
    let data_s = |setting: &str, cipher: &str| data_seconds(s, inp, list, setting, cipher);
    let plan = plan(s, list, inp.ciphers, timing, fixed, &data_s);
    let opts = Options {
        repeat: plan.repeat,
        ..s.opts.clone()
    };
    let s = &Setup { opts: &opts, ..*s };
    let mut tally = Tally {
        start: Instant::now(),
        planned_total: plan.estimate_s,
        planned_done: 0.0,
        measured_done: 0.0,
        cells_done: 0,
        cells_total: plan.settings.len() * plan.ciphers.len(),
        copy_fixed: Vec::new(),
    };
    let snapshot = timing.clone();
    let ctx = Ctx {
        plan: &plan,
        fixed,
        data_s: &data_s,
        want: inp.want,
        timing: &snapshot,
    };
    let mut out = Matrix {
        cells: Vec::new(),
        partial: None,
        left_out: plan.left_out.clone(),
    };
    for (i, st) in list.iter().enumerate() {
        if !plan.settings.contains(&st.name) {
            continue;
        }
        if interrupted() {
            out.partial = Some(cut_short(&plan, &out.cells));
            break;
        }
        let first = plan
            .ciphers
            .first()
            .map_or(0.0, |c| ctx.cell_s(&st.name, c));
        if time_left(s, &snapshot).is_some_and(|l| l < tally.scaled(fixed.volume_s + first)) {
            out.left_out.push(late(&plan, &out.cells));
            break;
        }
        let t = Instant::now();
        let dm = map(agent, i, st)?;
        agent.mount(i)?;
        set_dm(s, Some(dm));
        tally.planned_done += fixed.volume_s;
        tally.measured_done += t.elapsed().as_secs_f64();
        (s.say)(&format!(
            "LUKS {}: rsync into ext4 on the scratch mapping",
            st.name
        ));
        let (rows, ended) = setting_cells(s, agent, st, &ctx, &mut tally);
        let stop = match ended {
            Ok(()) => None,
            Err(e) if e.is::<OutOfTime>() => Some(false),
            Err(_) if interrupted() => Some(true),
            Err(e) => return Err(e),
        };
        out.cells.push((st.name.clone(), rows));
        if stop == Some(true) {
            out.partial = Some(cut_short(&plan, &out.cells));
            break;
        }
        s.shared.set_phase(Some("between".into()));
        let u = Instant::now();
        agent.unmap(i)?;
        tally.measured_done += u.elapsed().as_secs_f64();
        if stop == Some(false) {
            out.left_out.push(late(&plan, &out.cells));
            break;
        }
    }
    timing.matrix_s = Some(round1(tally.start.elapsed().as_secs_f64()));
    timing.copy_fixed_s = stats::median(&tally.copy_fixed).map(round2);
    Ok(out)
}

/// The matrix cut to what `--max-time` leaves (everything without it), said with its
/// estimate before it starts.
fn plan(
    s: &Setup,
    list: &[LuksSetting],
    ciphers: &[String],
    timing: &mut LuksTiming,
    fixed: budget::Fixed,
    data_s: &dyn Fn(&str, &str) -> f64,
) -> budget::Plan {
    let names: Vec<String> = list
        .iter()
        .filter(|x| x.trimmed.is_none() && x.error.is_none())
        .map(|x| x.name.clone())
        .collect();
    let plan = budget::cut(
        &names,
        ciphers,
        s.opts.repeat,
        time_left(s, timing),
        fixed,
        data_s,
    );
    timing.estimate_s = Some(plan.estimate_s.max(0.0).round() + 0.0);
    (s.say)(&format!(
        "LUKS matrix: {} setting(s) × {} cipher(s) × {} copies, estimated {} (a volume {:.1} s, a copy's logins {:.1} s, its data from the model){}",
        plan.settings.len(),
        plan.ciphers.len(),
        plan.repeat,
        budget::clock(plan.estimate_s),
        fixed.volume_s,
        fixed.copy_s,
        if plan.left_out.is_empty() { String::new() } else { format!("; left out: {}", plan.left_out.join("; ")) }
    ));
    plan
}

/// One copy's data time, from the model's prediction of the cell (the slowest stage alone
/// when it has none).
fn data_seconds(s: &Setup, inp: &Inputs, list: &[LuksSetting], setting: &str, cipher: &str) -> f64 {
    let mib = s.dataset.bytes as f64 / MIB;
    let Some(st) = list.iter().find(|x| x.name == setting) else {
        return 0.0;
    };
    let rate = predict::cell(inp.alone, cipher, st, inp.free).or_else(|| {
        inp.alone
            .iter()
            .filter(|a| a.cipher.is_none() || a.cipher.as_deref() == Some(cipher))
            .filter_map(|a| a.mib_s)
            .chain(st.dm_crypt_mib_s)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))))
    });
    rate.filter(|r| *r > 0.0).map_or(0.0, |r| mib / r)
}

/// One setting's cells (its volume mapped and mounted): each cipher's copy is compared with
/// the source before the next cipher empties the volume (the hook runs ahead of each
/// cipher's cells), the last one after them. Before each cipher: the estimate of what is
/// left, and `OutOfTime` when its cells no longer fit `--max-time`. On a signal the cells
/// that finished stay (their copies unchecked past the last check).
fn setting_cells(
    s: &Setup,
    agent: &mut Agent,
    st: &LuksSetting,
    ctx: &Ctx,
    tally: &mut Tally,
) -> (Vec<Row>, Result<()>) {
    let mut checks: Vec<(String, Option<String>)> = Vec::new();
    let mut previous: Option<(String, Instant)> = None;
    let mut walls: Vec<(String, f64)> = Vec::new();
    let mut done = |p: String, t: Instant, agent: &mut Agent, tally: &mut Tally| {
        checks.push((p.clone(), compare(ctx.want, agent.sums())));
        let wall = t.elapsed().as_secs_f64();
        tally.planned_done += ctx.cell_s(&st.name, &p);
        tally.measured_done += wall;
        tally.cells_done += 1;
        tally.say(s);
        walls.push((p, wall));
    };
    let (mut rows, ended) = copy::cells(
        s,
        agent,
        &ctx.plan.ciphers,
        &tag(&st.name),
        &mut |c, agent| {
            check_interrupted()?;
            if let Some((p, t)) = previous.take() {
                done(p, t, agent, tally);
            }
            let need = tally.scaled(ctx.cell_s(&st.name, c));
            if time_left(s, ctx.timing).is_some_and(|left| left < need) {
                return Err(OutOfTime.into());
            }
            previous = Some((c.clone(), Instant::now()));
            Ok(())
        },
    );
    if interrupted() {
        rows.retain(|r| r.error.is_none() || checks.iter().any(|(c, _)| c == &r.cipher));
        mark_differing(&mut rows, &checks);
        return (rows, Err(crate::process::Interrupted.into()));
    }
    if ended.is_ok() {
        if let Some((p, t)) = previous {
            done(p, t, agent, tally);
        }
    }
    mark_differing(&mut rows, &checks);
    // A copy's fixed cost: its share of the cell's time beyond the data its samples moved.
    for r in rows.iter().filter(|r| !r.samples.is_empty()) {
        if let Some((_, wall)) = walls.iter().find(|(c, _)| c == &r.cipher) {
            let data: f64 = r.samples.iter().map(|m| r.bytes as f64 / MIB / m).sum();
            tally
                .copy_fixed
                .push(((wall - data) / r.samples.len() as f64).max(0.0));
        }
    }
    (rows, ended)
}

/// The rows whose copy differed from the source get that as their error.
fn mark_differing(rows: &mut [Row], checks: &[(String, Option<String>)]) {
    for r in rows.iter_mut().filter(|r| r.error.is_none()) {
        if let Some((_, Some(e))) = checks.iter().find(|(c, _)| c == &r.cipher) {
            r.error = Some(format!("the copy differs from the source: {e}"));
        }
    }
}

/// `luks.partial` after a signal.
fn cut_short(plan: &budget::Plan, done: &[(String, Vec<Row>)]) -> String {
    format!(
        "interrupted during the matrix; not measured: {}",
        missing(plan, done)
    )
}

/// The `luks.left_out` line when the cells ran longer than their estimate.
fn late(plan: &budget::Plan, done: &[(String, Vec<Row>)]) -> String {
    format!(
        "--max-time: the cells took longer than estimated; not measured: {}",
        missing(plan, done)
    )
}

/// The cells of the plan that have no row yet, as `setting: cipher, cipher; …`.
fn missing(plan: &budget::Plan, done: &[(String, Vec<Row>)]) -> String {
    let mut out = Vec::new();
    for st in &plan.settings {
        let rows = done.iter().find(|(n, _)| n == st).map(|(_, r)| r);
        let left: Vec<&str> = plan
            .ciphers
            .iter()
            .filter(|c| !rows.is_some_and(|r| r.iter().any(|r| &r.cipher == *c)))
            .map(String::as_str)
            .collect();
        if !left.is_empty() {
            out.push(format!("{st}: {}", left.join(", ")));
        }
    }
    if out.is_empty() {
        "nothing".into()
    } else {
        out.join("; ")
    }
}

/// Setting `st` as the helper's mapping `i`; its `dm-N`.
fn map(agent: &mut Agent, i: usize, st: &LuksSetting) -> Result<String> {
    agent.map(
        i,
        &st.cipher,
        st.key_bits,
        st.sector_size,
        &settings::perf_args(st),
    )
}

/// Which `dm-N` the samplers read the write rate of.
fn set_dm(s: &Setup, dm: Option<String>) {
    if let Ok(mut g) = s.shared.dm.lock() {
        *g = dm;
    }
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

/// The shortest window SSH alone is timed over: the dataset is sent again until it lasts
/// this long, so a small dataset on a fast link is not timed over a few sampler intervals.
const ALONE_MIN_S: f64 = 1.0;
/// At most this many passes over the dataset.
const ALONE_MAX_PASSES: u32 = 64;
/// The most of the dataset SSH alone holds in memory and sends, again and again.
const ALONE_MAX_BYTES: u64 = 64 << 20;

/// SSH alone: the dataset's bytes piped through `ssh -c CIPHER` into `cat > /dev/null` on
/// the destination — the bench's upload, with this run's data and samplers, so its CPU cost
/// per MiB is measured the same way as every other stage's. The bytes are read into memory
/// first (up to `ALONE_MAX_BYTES`): reading the source is rsync's work, measured in
/// rsync-local, and stays out of this stage. The remote side prints a marker
/// when its `cat` starts and another when it has read everything: the clock and the
/// sampler's phase run between the two, so process start, handshake and login are neither
/// timed nor charged (subtracting a separate empty session's login instead was off by as
/// much as the transfer itself on a slow board, whose logins vary by seconds).
fn ssh_alone(s: &Setup, cipher: &str, logins: &mut Vec<f64>) -> Result<AloneStage> {
    check_interrupted()?;
    (s.say)(&format!("LUKS model: SSH alone with {cipher}"));
    // Read once, outside the clock: the passes only send.
    let data = load(&files(s.dataset.root()), ALONE_MAX_BYTES);
    let data = match data {
        Ok(d) if !d.is_empty() => d,
        Ok(_) => bail!("the dataset is empty: nothing to send through ssh alone"),
        Err(e) => return Err(e).context("reading the dataset for ssh alone"),
    };
    let mut cmd = ssh_command(
        &s.end.target,
        Some(cipher),
        "echo SSHTUNE-READY; cat > /dev/null; echo SSHTUNE-DONE",
    );
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let login = Instant::now();
    let mut child = crate::process::ChildGuard::spawn(&mut cmd, "ssh")?;
    let stderr = crate::process::drain_stderr(child.child_mut());
    let mut stdin = child.child_mut().stdin.take().context("ssh stdin")?;
    let mut lines = BufReader::new(child.child_mut().stdout.take().context("ssh stdout")?).lines();
    let mut wait_for = |marker: &str| {
        lines
            .by_ref()
            .map_while(|l| l.ok())
            .any(|l| l.trim() == marker)
    };
    let mut sent = 0u64;
    let mut secs = 0.0;
    let mut error = None;
    if wait_for("SSHTUNE-READY") {
        logins.push(login.elapsed().as_secs_f64());
        s.shared.set_phase(Some(format!("luks-alone:ssh:{cipher}")));
        let t = Instant::now();
        let mut passes = 0;
        while passes < ALONE_MAX_PASSES && (passes == 0 || t.elapsed().as_secs_f64() < ALONE_MIN_S)
        {
            passes += 1;
            if let Err(e) = stdin.write_all(&data) {
                error = Some(e.to_string());
                break;
            }
            sent += data.len() as u64;
        }
        drop(stdin);
        if !wait_for("SSHTUNE-DONE") && error.is_none() {
            error = Some("the remote cat ended before it read everything".into());
        }
        secs = t.elapsed().as_secs_f64();
        s.shared.set_phase(Some("between".into()));
    } else {
        drop(stdin);
    }
    let status = child
        .wait_timeout(std::time::Duration::from_secs(30))
        .context("waiting for ssh")?;
    let stderr = stderr.text(std::time::Duration::from_secs(5));
    if !status.success() || secs == 0.0 {
        // ssh's own message says more than a broken pipe does.
        error = Some(crate::process::last_line(&stderr))
            .filter(|l| !l.is_empty())
            .or(error)
            .or(Some(format!("ssh exited with {status}")));
    }
    Ok(AloneStage {
        stage: Stage::Ssh,
        cipher: Some(cipher.into()),
        bytes: Some(sent),
        mib_s: error
            .is_none()
            .then(|| round1(sent as f64 / MIB / secs.max(1e-6))),
        cpu_s_per_mib: None,
        method: format!(
            "the dataset's bytes (read into memory first, at most {} MiB; again until {ALONE_MIN_S} s passed) through ssh -c {cipher} into cat > /dev/null, timed on the remote cat's start and end markers",
            ALONE_MAX_BYTES >> 20
        ),
        error,
    })
}

/// SHA-256 of every file of the source, by path relative to `root` (a single-file source
/// by its name).
fn sums(files: &[std::path::PathBuf], root: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for f in files {
        let rel = if root.is_file() {
            Path::new(root.file_name().unwrap_or_default()).to_path_buf()
        } else {
            f.strip_prefix(root).unwrap_or(f).to_path_buf()
        };
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        let mut file =
            std::fs::File::open(f).with_context(|| format!("reading {}", f.display()))?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = std::io::Read::read(&mut file, &mut buf)
                .with_context(|| format!("reading {}", f.display()))?;
            if n == 0 {
                break;
            }
            ctx.update(&buf[..n]);
        }
        let hex: String = ctx
            .finish()
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.push((rel.display().to_string(), hex));
    }
    Ok(out)
}

/// The first file whose copy is missing or differs (SHA-256 on both sides), if any.
fn compare(want: &[(String, String)], got: Result<Vec<(String, String)>>) -> Option<String> {
    let got = match got {
        Ok(g) => g,
        Err(e) => return Some(format!("{e:#}")),
    };
    want.iter()
        .find_map(|(p, h)| match got.iter().find(|(q, _)| q == p) {
            None => Some(format!("{p} is missing")),
            Some((_, g)) if g != h => Some(format!("{p} differs")),
            _ => None,
        })
}

/// The files' bytes in order, at most `cap` of them.
fn load(files: &[std::path::PathBuf], cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    for f in files {
        let left = cap.saturating_sub(out.len() as u64);
        if left == 0 {
            break;
        }
        std::fs::File::open(f)?.take(left).read_to_end(&mut out)?;
    }
    Ok(out)
}

/// Every regular file under `root` (or `root` itself).
fn files(root: &Path) -> Vec<std::path::PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.is_file() {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// The report's section, once the samplers have stopped.
pub fn finish(
    mut m: Measured,
    intervals: &[Interval],
    cores: f64,
    same_machine: bool,
    default_cipher: Option<&str>,
    ssh: &advice::SshSide,
) -> LuksSection {
    let base = costs(
        &mut m.alone,
        &mut m.settings,
        intervals,
        same_machine,
        m.bytes,
        m.pass_bytes,
    );
    let free = free_cores(cores, base.destination(same_machine));
    let ciphers: Vec<String> = m.alone.iter().filter_map(|a| a.cipher.clone()).collect();
    for st in m.settings.iter_mut() {
        st.predicted_best_mib_s = predict::best(&m.alone, &ciphers, st, free);
    }
    let mut cells = Vec::new();
    for (name, mut rows) in m.cells {
        recording::attach_tagged(&mut rows, intervals, &tag(&name));
        let Some(st) = m.settings.iter().find(|s| s.name == name) else {
            continue;
        };
        for row in rows {
            cells.push(cell(row, st, &m.alone, (cores, free), same_machine));
        }
    }
    let errors: Vec<f64> = cells
        .iter()
        .filter_map(|c| c.error_pct)
        .map(f64::abs)
        .collect();
    let model_max_error_pct = crate::bench::stats::max(&errors);
    let model_median_error_pct =
        crate::bench::stats::median(&errors).map(|e| (e * 10.0).round() / 10.0);
    let recommendation = advice::recommend(
        &cells,
        &m.settings,
        &m.storage,
        m.device_bytes,
        default_cipher,
        ssh,
    );
    LuksSection {
        loop_file_bytes: m.loop_bytes,
        pass_bytes: m.pass_bytes,
        stale_removed: m.stale,
        settings: m.settings,
        alone: m.alone,
        cells,
        model_max_error_pct,
        model_median_error_pct,
        partial: m.partial,
        left_out: m.left_out,
        timing: Some(m.timing),
        baseline_cores: Some((base.destination(same_machine) * 1000.0).round() / 1000.0),
        recommendation,
    }
}

/// One measured cell with its bound (the verdict code, this setting's dm-crypt pass as the
/// disk ceiling) and the model's prediction. `cores`: the destination's, and those free of
/// its baseline load (the model's).
fn cell(
    row: Row,
    st: &LuksSetting,
    alone: &[AloneStage],
    (cores, free): (f64, f64),
    same: bool,
) -> LuksCell {
    let ceiling = |stage: Stage, cipher: Option<&str>, v: Option<f64>, how: &str| -> StageCeiling {
        stages::ceiling(stage, cipher, v.into_iter().collect(), how.into())
    };
    let ssh = alone
        .iter()
        .find(|a| a.stage == Stage::Ssh && a.cipher.as_deref() == Some(row.cipher.as_str()));
    let rsync = alone.iter().find(|a| a.stage == Stage::RsyncLocal);
    let ceilings = vec![
        ceiling(
            Stage::Ssh,
            Some(&row.cipher),
            ssh.and_then(|a| a.mib_s),
            "ssh alone",
        ),
        ceiling(Stage::Disk, None, st.dm_crypt_mib_s, "dm-crypt pass"),
        ceiling(
            Stage::RsyncLocal,
            None,
            rsync.and_then(|a| a.mib_s),
            "rsync-local",
        ),
    ];
    let storage = StorageInfo {
        dm_name: Some(format!("scratch {}", st.name)),
        crypt_cipher: Some(st.cipher.clone()),
        sector_size: Some(st.sector_size),
        crypt_flags: st.flags.clone(),
        ..Default::default()
    };
    let v = verdict::decide(&verdict::Input {
        rows: std::slice::from_ref(&row),
        ceilings: &ceilings,
        storage: &storage,
        default_cipher: Some(&row.cipher),
        cores: Some(cores as u32),
        same_machine: same,
    });
    let predicted = predict::cell(alone, &row.cipher, st, free);
    let error_pct = match (predicted, row.median_mib_s) {
        (Some(p), Some(m)) if m > 0.0 => Some(predict::error_pct(p, m)),
        _ => None,
    };
    LuksCell {
        setting: st.name.clone(),
        bound_by: v.bound_by,
        reason: v.reason,
        predicted_mib_s: predicted,
        error_pct,
        row,
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cipher: &str) -> Row {
        Row {
            cipher: cipher.into(),
            variant: crate::pipeline::rsync::Variant::WholeFile,
            rsync_flags: Vec::new(),
            bytes: 1,
            samples: vec![1.0],
            flush_s: Vec::new(),
            median_mib_s: Some(1.0),
            min_mib_s: Some(1.0),
            max_mib_s: Some(1.0),
            wire_bytes: None,
            literal_bytes: None,
            cpu: Vec::new(),
            error: None,
        }
    }

    #[test]
    fn what_was_not_measured_is_named_by_setting_and_cipher_of_the_plan() {
        let plan = budget::Plan {
            settings: vec!["a".into(), "b".into()],
            ciphers: vec!["x".into(), "y".into()],
            repeat: 1,
            left_out: Vec::new(),
            estimate_s: 0.0,
        };
        let done = vec![("a".to_string(), vec![row("x")])];
        assert_eq!(missing(&plan, &done), "a: y; b: x, y");
        let all = vec![
            ("a".to_string(), vec![row("x"), row("y")]),
            ("b".to_string(), vec![row("y"), row("x")]),
        ];
        assert_eq!(missing(&plan, &all), "nothing");
    }
}
