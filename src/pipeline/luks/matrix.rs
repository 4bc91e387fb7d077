//! The end-to-end cells: every kept setting's volume under every cipher, cut to the plan
//! (`budget.rs`) and to `--max-time` as cells finish, the estimate said as they do, each
//! copy checked byte for byte, and what a signal or the budget left out.

use super::agent::Agent;
use super::run::{map, round1, round2, set_dm, tag, time_left};
use super::verify::{compare, mark_differing};
use super::{budget, copy, predict};
use crate::bench::stats;
use crate::pipeline::model::{AloneStage, LuksSetting, LuksTiming, Row};
use crate::pipeline::options::Options;
use crate::pipeline::setup::Setup;
use crate::pipeline::MIB;
use crate::process::{check_interrupted, interrupted};
use anyhow::Result;
use std::time::Instant;

/// What the matrix needs of the stages before it.
pub struct Inputs<'a> {
    pub alone: &'a [AloneStage],
    pub ciphers: &'a [String],
    /// The cores the model shares out.
    pub free: f64,
    /// The source's SHA-256 per file.
    pub want: &'a [(String, String)],
}

/// The end-to-end cells, and what they left out.
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
pub fn matrix(
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
