//! What each stage costs in CPU, from the samplers' intervals: the baseline (the load with
//! only the samplers running), and each stage alone and each dm-crypt pass net of it. Pure:
//! the measuring is in `run.rs`, the model in `predict.rs`.

use super::alone::ssh_phase;
use crate::pipeline::model::{AloneStage, LuksSetting};
use crate::pipeline::recording::Interval;
use crate::pipeline::sampler::Side;
use crate::pipeline::MIB;

/// The phase the baseline is sampled in, and how long.
pub const BASELINE_PHASE: &str = "luks-baseline";
pub const BASELINE_S: f64 = 1.5;

/// One side's whole-machine CPU over a phase's intervals: (core-seconds of user + system +
/// irq/softirq, seconds sampled).
fn phase_cpu(intervals: &[Interval], prefix: &str, side: Side) -> Option<(f64, f64)> {
    let mine: Vec<&Interval> = intervals
        .iter()
        .filter(|i| i.side == side)
        .filter(|i| i.phase.as_deref().is_some_and(|p| p.starts_with(prefix)))
        .collect();
    (!mine.is_empty()).then(|| {
        mine.iter().fold((0.0, 0.0), |(cs, secs), i| {
            let pct: f64 = i
                .cpu
                .iter()
                .filter(|(g, _)| {
                    ["total-user", "total-system", "total-softirq"].contains(&g.as_str())
                })
                .map(|(_, v)| v)
                .sum();
            (cs + pct / 100.0 * i.seconds, secs + i.seconds)
        })
    })
}

/// dm-crypt's own threads (`kcryptd`, `dmcrypt_write`, and the workers that served them) over
/// a phase, core-seconds: the destination's sampler, or either one's when both ends are one
/// machine (each sees every thread). `None` when no interval of the phase carries them.
fn dm_threads_cpu(intervals: &[Interval], prefix: &str, same_machine: bool) -> Option<f64> {
    let of = |side: Side| -> Option<f64> {
        let mut seen = false;
        let cs = intervals
            .iter()
            .filter(|i| i.side == side)
            .filter(|i| i.phase.as_deref().is_some_and(|p| p.starts_with(prefix)))
            .flat_map(|i| i.cpu.iter().map(move |g| (g, i.seconds)))
            .filter(|((g, _), _)| DM_THREADS.contains(&g.as_str()))
            .map(|((_, pct), secs)| {
                seen = true;
                pct / 100.0 * secs
            })
            .sum::<f64>();
        seen.then_some(cs)
    };
    match (
        of(Side::Server),
        same_machine.then(|| of(Side::Client)).flatten(),
    ) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The sampler's groups of dm-crypt's kernel threads.
const DM_THREADS: &[&str] = &["kcryptd", "dmcrypt_write"];

/// Each side's load with only the samplers running, in cores (0 where it was not sampled).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Baseline {
    client: f64,
    server: f64,
}

impl Baseline {
    fn of(intervals: &[Interval]) -> Self {
        let cores = |side| {
            phase_cpu(intervals, BASELINE_PHASE, side)
                .filter(|(_, secs)| *secs > 0.0)
                .map_or(0.0, |(cs, secs)| cs / secs)
        };
        Self {
            client: cores(Side::Client),
            server: cores(Side::Server),
        }
    }

    fn side(&self, side: Side) -> f64 {
        match side {
            Side::Client => self.client,
            Side::Server => self.server,
        }
    }

    /// The load on the destination, where the model shares out the cores: either
    /// sampler's when both ends are one machine (each sees all of it).
    pub fn destination(&self, same_machine: bool) -> f64 {
        if same_machine {
            self.client.max(self.server)
        } else {
            self.server
        }
    }
}

/// The cores the stages can share: the destination's, less its baseline load (at least
/// half a core, so a busy sampler cannot make the model divide by nothing).
pub fn free_cores(cores: f64, baseline: f64) -> f64 {
    (cores.max(1.0) - baseline).max(0.5)
}

/// Whole-machine CPU time of a phase beyond the baseline, core-seconds: both ends summed,
/// or the larger less the one machine's baseline when they are the same machine (each
/// sampler sees all of it).
fn core_seconds(
    intervals: &[Interval],
    prefix: &str,
    same_machine: bool,
    base: Baseline,
) -> Option<f64> {
    let side = |side: Side| phase_cpu(intervals, prefix, side);
    let net = |(cs, secs): (f64, f64), load: f64| (cs - load * secs).max(0.0);
    match (side(Side::Client), side(Side::Server)) {
        (Some(a), Some(b)) if same_machine => {
            Some(net(if a.0 >= b.0 { a } else { b }, base.destination(true)))
        }
        (Some(a), Some(b)) => Some(net(a, base.client) + net(b, base.server)),
        (Some(a), None) => Some(net(a, base.side(Side::Client))),
        (None, Some(b)) => Some(net(b, base.side(Side::Server))),
        (None, None) => None,
    }
}

/// Fills in the CPU cost per MiB (core-seconds over the MiB moved, beyond the baseline) of
/// each stage alone and each dm-crypt pass, and returns the baseline. The baseline is taken
/// off each stage alone once, so a model summing three stages does not carry it three times.
/// A pass's cost is dm-crypt's own threads' (`DM_THREADS`), which carry nothing of the
/// baseline nor of the writer's copy into the page cache (in a cell that copy is rsync's
/// receiver's, already in rsync-local); when the samplers saw none of those threads, the
/// whole machine's beyond the baseline and the writer's own CPU.
pub fn costs(
    alone: &mut [AloneStage],
    list: &mut [LuksSetting],
    iv: &[Interval],
    same: bool,
    bytes: u64,
    pass_bytes: u64,
) -> Baseline {
    let base = Baseline::of(iv);
    let per_mib = |cs: Option<f64>, b: u64| -> Option<f64> {
        let cs = cs?.max(0.0);
        (b > 0).then(|| (cs / (b as f64 / MIB) * 10000.0).round() / 10000.0)
    };
    for a in alone.iter_mut().filter(|a| a.mib_s.is_some()) {
        let cs = match &a.cipher {
            Some(c) => core_seconds(iv, &ssh_phase(c, a.setting.as_deref()), same, base),
            None => core_seconds(iv, "luks-alone:rsync-local", same, base),
        };
        a.cpu_s_per_mib = per_mib(cs, a.bytes.unwrap_or(bytes));
    }
    for st in list.iter_mut().filter(|s| s.dm_crypt_mib_s.is_some()) {
        let phase = format!("luks-pass:{}", st.name);
        let cs = dm_threads_cpu(iv, &phase, same)
            .filter(|cs| *cs > 0.0)
            .or_else(|| {
                core_seconds(iv, &phase, same, base).map(|cs| cs - st.writer_cpu_s.unwrap_or(0.0))
            });
        st.dm_cpu_s_per_mib = per_mib(cs, pass_bytes);
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::model::StorageInfo;
    use std::time::Instant;

    fn interval(side: Side, phase: &str, total_pct: f64, seconds: f64) -> Interval {
        Interval {
            side,
            end: Instant::now(),
            seconds,
            phase: Some(phase.into()),
            cpu: vec![
                ("total-user".into(), total_pct / 2.0),
                ("total-system".into(), total_pct / 2.0),
                // A process group: inside the totals, never added to them.
                ("rsync-sender".into(), 10.0),
            ],
            dm_write_bytes_s: None,
        }
    }

    #[test]
    fn costs_are_net_of_the_baseline_and_of_the_passs_own_copy() {
        // One machine: 40% of a core idle with the samplers; ssh alone at 140% for 2 s over
        // 10 MiB; a pass at 100% for 1 s over 16 MiB whose writer spent 0.2 s copying.
        let iv = vec![
            interval(Side::Server, BASELINE_PHASE, 40.0, 1.5),
            interval(Side::Client, BASELINE_PHASE, 30.0, 1.5),
            interval(Side::Server, "luks-alone:ssh:a", 140.0, 2.0),
            interval(Side::Client, "luks-alone:ssh:a", 140.0, 2.0),
            interval(Side::Server, "luks-pass:x", 100.0, 1.0),
        ];
        let mut alone = vec![AloneStage {
            stage: crate::pipeline::model::Stage::Ssh,
            cipher: Some("a".into()),
            setting: None,
            bytes: Some(10 << 20),
            mib_s: Some(5.0),
            cpu_s_per_mib: None,
            method: String::new(),
            error: None,
        }];
        let mut list = super::super::settings::candidates(&StorageInfo::default(), "");
        list.truncate(1);
        list[0].name = "x".into();
        list[0].dm_crypt_mib_s = Some(16.0);
        list[0].writer_cpu_s = Some(0.2);
        let base = costs(&mut alone, &mut list, &iv, true, 10 << 20, 16 << 20).destination(true);
        assert!(
            (base - 0.4).abs() < 1e-9,
            "the larger side's baseline: {base}"
        );
        // (2.8 − 0.4 × 2) core-seconds over 10 MiB: one machine, one baseline.
        assert_eq!(alone[0].cpu_s_per_mib, Some(0.2));
        // No dm-crypt thread sampled: (1.0 − 0.4 × 1 − 0.2) over 16 MiB.
        assert_eq!(list[0].dm_cpu_s_per_mib, Some(0.025));
        assert!((free_cores(2.0, base) - 1.6).abs() < 1e-9);
        assert_eq!(free_cores(1.0, 0.9), 0.5);
        // Nothing sampled in the baseline: nothing taken off.
        assert_eq!(Baseline::of(&iv[2..]), Baseline::default());
    }

    #[test]
    fn a_pass_costs_what_dm_crypts_own_threads_took() {
        // The machine at 150% (samplers, writer, flusher and all) for 2 s; kcryptd at 40% and
        // dmcrypt_write at 10% of a core: 1.0 core-second over 16 MiB, nothing else counted.
        let mut pass = interval(Side::Server, "luks-pass:x", 150.0, 2.0);
        pass.cpu.push(("kcryptd".into(), 40.0));
        pass.cpu.push(("dmcrypt_write".into(), 10.0));
        let iv = vec![interval(Side::Server, BASELINE_PHASE, 40.0, 1.5), pass];
        let mut list = super::super::settings::candidates(&StorageInfo::default(), "");
        list.truncate(1);
        list[0].name = "x".into();
        list[0].dm_crypt_mib_s = Some(8.0);
        list[0].writer_cpu_s = Some(0.5);
        costs(&mut [], &mut list, &iv, false, 0, 16 << 20);
        assert_eq!(list[0].dm_cpu_s_per_mib, Some(0.0625));
        assert_eq!(dm_threads_cpu(&iv, "luks-pass:x", true), Some(1.0));
        assert_eq!(dm_threads_cpu(&iv, "luks-pass:y", true), None);
    }
}
