//! A dm-crypt pass per setting through ext4 on its scratch volume, and the trimming of the
//! settings the model says cannot change the result.

use super::agent::Agent;
use super::costs::{costs, free_cores};
use super::run::{map, round1, set_dm, time_left};
use super::{predict, settings};
use crate::bench::stats;
use crate::pipeline::model::{AloneStage, LuksSetting, LuksTiming};
use crate::pipeline::setup::Setup;
use crate::process::check_interrupted;
use anyhow::Result;
use std::time::Instant;

/// A dm-crypt pass per setting, each through ext4 on a fresh volume. Returns the seconds
/// each volume took to make ready and remove (the fixed cost every setting pays again in
/// the matrix). Settings `--max-time` leaves no room for are taken out of `list`.
pub fn passes(
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
pub fn trim(
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
