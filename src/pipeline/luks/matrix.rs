//! The settings one after another, each on one volume made once (`volume.rs`): its dm-crypt
//! pass, then every cipher end to end into it, then the volume removed. The plan (`budget.rs`)
//! is made once the first setting's volume and pass are measured, cut to `--max-time` and
//! checked again as cells finish, the estimate said as they do; each copy is checked byte for
//! byte; a signal or the budget leaves out what did not run, and says so. Right before each
//! cell, SSH alone with its cipher is measured again, so the model predicts the cell from a
//! figure of the same minutes: under emulation or another tenant's load the machine's speed
//! drifts within a run, and one figure from before the matrix was up to 2.6× off by the end.

use super::agent::Agent;
use super::alone::{ssh_alone, window_s};
use super::step::{round2, tag, time_left};
use super::verify::{compare, mark_differing};
use super::volume::{self, Made};
use super::{budget, copy, predict};
use crate::pipeline::model::{AloneStage, LuksSetting, LuksTiming, Row};
use crate::pipeline::options::Options;
use crate::pipeline::setup::Setup;
use crate::pipeline::MIB;
use crate::process::{check_interrupted, interrupted};
use crate::stats;
use anyhow::Result;
use std::time::Instant;

/// What the matrix needs besides the settings and the stages alone.
pub struct Inputs<'a> {
    pub ciphers: &'a [String],
    /// The source's SHA-256 per file.
    pub want: &'a [(String, String)],
    /// The destination's cores, and the dm-crypt pass's bytes.
    pub cores: f64,
    pub pass_bytes: u64,
}

/// The end-to-end cells, and what they left out.
#[derive(Default)]
pub struct Matrix {
    pub cells: Vec<(String, Vec<Row>)>,
    pub partial: Option<String>,
    pub left_out: Vec<String>,
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

    /// Takes a setting's cells out of the plan's count and seconds.
    fn unplan(&mut self, c: &Ctx, setting: &str) {
        self.cells_total -= c.plan.ciphers.len();
        self.planned_total -= c
            .plan
            .ciphers
            .iter()
            .map(|x| c.cell_s(setting, x))
            .sum::<f64>();
    }

    /// `planned` seconds of plan, scaled by how the matrix has gone so far.
    fn scaled(&self, planned: f64) -> f64 {
        budget::remaining(planned, self.planned_done, self.measured_done)
    }
}

/// What the plan is made from: the stages alone, the settings (one not made yet is planned
/// with the first setting's pass), the cores the model shares out, the dataset's MiB.
struct Basis {
    alone: Vec<AloneStage>,
    settings: Vec<LuksSetting>,
    free: f64,
    mib: f64,
}

impl Basis {
    /// One copy's data time, from the model's prediction of the cell (the slowest stage
    /// alone when it has none).
    fn data_s(&self, setting: &str, cipher: &str) -> f64 {
        let Some(st) = self.settings.iter().find(|x| x.name == setting) else {
            return 0.0;
        };
        let rate = predict::cell(&self.alone, cipher, st, self.free).or_else(|| {
            self.alone
                .iter()
                .filter(|a| a.cipher.is_none() || a.cipher.as_deref() == Some(cipher))
                .filter_map(|a| a.mib_s)
                .chain(st.dm_crypt_mib_s)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))))
        });
        rate.filter(|r| *r > 0.0).map_or(0.0, |r| self.mib / r)
    }
}

/// What every setting's cells share: the plan, its fixed costs and data times, the source's
/// sums, the timing so far (for `--max-time`) and the progress against the plan.
struct Ctx<'a> {
    plan: budget::Plan,
    fixed: budget::Fixed,
    basis: Basis,
    want: &'a [(String, String)],
    timing: LuksTiming,
}

/// The plan and the progress against it.
struct Run<'a> {
    ctx: Ctx<'a>,
    tally: Tally,
}

impl Ctx<'_> {
    /// Planned seconds of one cell (all its copies).
    fn cell_s(&self, setting: &str, cipher: &str) -> f64 {
        self.fixed.alone_s
            + f64::from(self.plan.repeat) * (self.fixed.copy_s + self.basis.data_s(setting, cipher))
    }

    /// Planned seconds of a setting not made yet, up to its first cell.
    fn next_setting_s(&self, setting: &str, tally: &Tally) -> f64 {
        let first = self
            .plan
            .ciphers
            .first()
            .map_or(0.0, |c| self.cell_s(setting, c));
        tally.scaled(self.fixed.volume_s + first)
    }
}

/// Every setting in turn, cut to `--max-time`: its volume made and passed, its cells run
/// (unless trimmed or left out), the volume removed. A signal keeps the cells that finished;
/// one before the first cell is the error. Settings never made are taken out of `list`.
pub fn matrix(
    s: &Setup,
    agent: &mut Agent,
    list: &mut Vec<LuksSetting>,
    alone: &mut Vec<AloneStage>,
    inp: &Inputs,
    timing: &mut LuksTiming,
) -> Result<Matrix> {
    let start = Instant::now();
    let mut out = Matrix::default();
    let mut run: Option<Run> = None;
    let mut volumes = Vec::new();
    let mut made = 0;
    while made < list.len() {
        let i = made;
        if let Some(Run { ctx: c, tally }) = &run {
            if interrupted() {
                out.partial = Some(cut_short(&c.plan, &out.cells));
                break;
            }
            if !c.plan.settings.contains(&list[i].name) {
                list.remove(i);
                continue;
            }
            let next = c.next_setting_s(&list[i].name, tally);
            if time_left(s, &c.timing).is_some_and(|l| l < next) {
                out.left_out.push(late(&c.plan, &out.cells));
                break;
            }
        }
        made += 1;
        let m = match volume::open(s, agent, i, &mut list[i], inp.pass_bytes) {
            Ok(m) => m,
            Err(e) => return stopped(e, run.as_ref().map(|r| &r.ctx), out),
        };
        // The cores the model shares out, as of this setting's pass.
        let free = volume::trim(s, alone, list, i, (inp.cores, inp.pass_bytes), inp.ciphers);
        let Run { ctx: c, tally } = match run.as_mut() {
            Some(r) => {
                r.tally.planned_done += r.ctx.fixed.volume_s;
                r.tally.measured_done += m.ready_s + m.pass_s;
                r
            }
            None => run.insert(plan(s, list, alone, inp, free, m, timing)),
        };
        let st = &list[i];
        let planned = c.plan.settings.contains(&st.name);
        let runs = st.error.is_none() && st.trimmed.is_none() && planned;
        if planned && !runs {
            // Trimmed or failed after the plan counted its cells.
            tally.unplan(c, &st.name);
        }
        let ended = if runs {
            let (rows, ended) = setting_cells(s, agent, st, c, tally, alone);
            out.cells.push((st.name.clone(), rows));
            ended
        } else {
            Ok(())
        };
        let stop = match ended {
            Ok(()) => None,
            Err(e) if e.is::<OutOfTime>() => Some(false),
            Err(_) if interrupted() => Some(true),
            Err(e) => return Err(e),
        };
        if stop == Some(true) {
            out.partial = Some(cut_short(&c.plan, &out.cells));
            break;
        }
        // A setting that failed half-way may have nothing to close: the helper removes the
        // rest when it ends.
        match volume::close(s, agent, i) {
            Ok(u) => {
                tally.measured_done += u;
                if st.error.is_none() {
                    volumes.push(m.ready_s + u);
                }
            }
            Err(e) if st.error.is_none() => return Err(e),
            Err(_) => {}
        }
        if stop == Some(false) {
            out.left_out.push(late(&c.plan, &out.cells));
            break;
        }
    }
    list.truncate(made);
    timing.volume_s = stats::median(&volumes).map(round2);
    if let Some(r) = run {
        timing.estimate_s = r.ctx.timing.estimate_s;
        timing.copy_fixed_s = stats::median(&r.tally.copy_fixed).map(round2);
        out.left_out.splice(0..0, r.ctx.plan.left_out);
    }
    timing.matrix_s = Some((start.elapsed().as_secs_f64() * 10.0).round() / 10.0);
    Ok(out)
}

/// A volume that could not be made because of a signal: the cells so far as a partial
/// report, or the error when there are none.
fn stopped(e: anyhow::Error, ctx: Option<&Ctx>, mut out: Matrix) -> Result<Matrix> {
    match ctx {
        Some(c) if interrupted() && !out.cells.is_empty() => {
            out.partial = Some(cut_short(&c.plan, &out.cells));
            Ok(out)
        }
        _ => Err(e),
    }
}

/// The plan, once the first setting's volume is made (`first`) and the model has its
/// figures: the matrix cut to what `--max-time` leaves (everything without it), said with its
/// estimate. Settings not made yet are planned with the first one's pass; the first's volume
/// is already paid for.
fn plan<'a>(
    s: &Setup,
    list: &[LuksSetting],
    alone: &[AloneStage],
    inp: &Inputs<'a>,
    free: f64,
    first: Made,
    timing: &mut LuksTiming,
) -> Run<'a> {
    let fixed = budget::Fixed {
        volume_s: first.ready_s + first.pass_s,
        // Each copy logs in once (rsync's); the helper empties and flushes the volume.
        copy_s: timing.login_s.unwrap_or(0.0),
        alone_s: timing.login_s.unwrap_or(0.0)
            + stats::median(&alone.iter().filter_map(window_s).collect::<Vec<_>>()).unwrap_or(0.0),
    };
    let mut settings = list.to_vec();
    for st in settings.iter_mut().skip(1) {
        st.dm_crypt_mib_s = list[0].dm_crypt_mib_s;
        st.dm_cpu_s_per_mib = list[0].dm_cpu_s_per_mib;
    }
    let basis = Basis {
        alone: alone.to_vec(),
        settings,
        free,
        mib: s.dataset.bytes as f64 / MIB,
    };
    let names: Vec<String> = list
        .iter()
        .filter(|x| x.trimmed.is_none() && x.error.is_none())
        .map(|x| x.name.clone())
        .collect();
    let data_s = |st: &str, c: &str| basis.data_s(st, c);
    let budget_s = time_left(s, timing).map(|l| l + fixed.volume_s);
    let plan = budget::cut(&names, inp.ciphers, s.opts.repeat, budget_s, fixed, &data_s);
    let estimate_s = (plan.estimate_s - fixed.volume_s).max(0.0);
    timing.estimate_s = Some(estimate_s.round());
    (s.say)(&format!(
        "LUKS matrix: {} setting(s) × {} cipher(s) × {} copies, estimated {} (a volume and its pass {:.1} s, SSH alone again per cell {:.1} s, a copy's logins {:.1} s, its data from the model){}",
        plan.settings.len(),
        plan.ciphers.len(),
        plan.repeat,
        budget::clock(estimate_s),
        fixed.volume_s,
        fixed.alone_s,
        fixed.copy_s,
        if plan.left_out.is_empty() { String::new() } else { format!("; left out: {}", plan.left_out.join("; ")) }
    ));
    Run {
        tally: Tally {
            start: Instant::now(),
            planned_total: estimate_s,
            planned_done: 0.0,
            measured_done: 0.0,
            cells_done: 0,
            cells_total: plan.settings.len() * plan.ciphers.len(),
            copy_fixed: Vec::new(),
        },
        ctx: Ctx {
            plan,
            fixed,
            basis,
            want: inp.want,
            timing: timing.clone(),
        },
    }
}

/// One setting's cells (its volume mapped and mounted), with the plan's copies per cell: each
/// cipher's copy is compared with the source before the next cipher empties the volume (the
/// hook runs ahead of each cipher's cells), the last one after them. Before each cipher: the
/// estimate of what is left, and `OutOfTime` when its cells no longer fit `--max-time`. On a
/// signal the cells that finished stay (their copies unchecked past the last check).
fn setting_cells(
    s: &Setup,
    agent: &mut Agent,
    st: &LuksSetting,
    ctx: &Ctx,
    tally: &mut Tally,
    alone: &mut Vec<AloneStage>,
) -> (Vec<Row>, Result<()>) {
    (s.say)(&format!(
        "LUKS {}: rsync into ext4 on the scratch mapping",
        st.name
    ));
    let opts = Options {
        repeat: ctx.plan.repeat,
        ..s.opts.clone()
    };
    let s = &Setup { opts: &opts, ..*s };
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
            if time_left(s, &ctx.timing).is_some_and(|left| left < need) {
                return Err(OutOfTime.into());
            }
            let t = Instant::now();
            alone.push(ssh_alone(s, c, Some(&st.name), &mut Vec::new())?);
            // Planned in the cell's seconds (`cell_s`), timed outside its wall.
            tally.measured_done += t.elapsed().as_secs_f64();
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
