//! One setting's scratch volume, made once for all its measurements: luksFormat and open,
//! ext4 made and mounted, the dm-crypt pass through it, the trimming against the reference
//! (the first setting made), and after its cells, unmounted and closed.

use super::agent::Agent;
use super::costs::{costs, free_cores};
use super::step::{map, round1, set_dm};
use super::{predict, settings};
use crate::pipeline::model::{AloneStage, LuksSetting};
use crate::pipeline::setup::Setup;
use crate::process::check_interrupted;
use anyhow::Result;
use std::time::Instant;

/// Seconds a volume took to make and to pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct Made {
    /// luksFormat, open, mkfs and mount.
    pub ready_s: f64,
    /// The timed pass (a warmed first pass counts once).
    pub pass_s: f64,
}

/// Makes setting `st`'s volume as the helper's mapping `i`, mounts it and runs its dm-crypt
/// pass: `pass_bytes` through ext4 on the mapping, as the cells write (the filesystem's
/// journal and allocation are part of what the destination's storage costs per byte). A
/// setting that fails gets its error and no cells; `close` removes what it made. Fails only
/// on a signal.
///
/// The first setting (`i` 0) writes its pass once untimed: in three of four virtual-machine
/// runs the first pass read slowest (2.0, 4.2 and 1.4 MiB/s against 3.8–10.4 for the
/// others), its writer once spending 9 CPU-s on 16 MiB while the machine made room for it.
pub fn open(
    s: &Setup,
    agent: &mut Agent,
    i: usize,
    st: &mut LuksSetting,
    pass_bytes: u64,
) -> Result<Made> {
    check_interrupted()?;
    let phase = format!("luks-pass:{}", st.name);
    (s.say)(&format!(
        "LUKS {}: dm-crypt pass, {} MiB written into ext4 on {}",
        st.name,
        pass_bytes >> 20,
        settings::describe(st)
    ));
    let t = Instant::now();
    let mut made = Made::default();
    let r = map(agent, i, st).and_then(|dm| {
        agent.mount(i)?;
        made.ready_s = t.elapsed().as_secs_f64();
        set_dm(s, Some(dm));
        s.shared.set_phase(Some(phase));
        let p = Instant::now();
        let r = agent.pass(pass_bytes >> 20, i == 0);
        made.pass_s = p.elapsed().as_secs_f64() / if i == 0 { 2.0 } else { 1.0 };
        r
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
    Ok(made)
}

/// Unmounts and closes mapping `i`; the seconds it took.
pub fn close(s: &Setup, agent: &mut Agent, i: usize) -> Result<f64> {
    s.shared.set_phase(Some("between".into()));
    let u = Instant::now();
    agent.unmap(i)?;
    Ok(u.elapsed().as_secs_f64())
}

/// The CPU costs so far (the samplers keep running) of the stages alone and of the settings
/// made up to `i`, and setting `i` trimmed against the reference (setting 0) unless
/// `--no-trim`. Returns the cores the model shares out. `sizes`: the destination's cores
/// and the pass's bytes.
pub fn trim(
    s: &Setup,
    alone: &mut [AloneStage],
    list: &mut [LuksSetting],
    i: usize,
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
    let made = &mut list[..=i];
    let base = costs(alone, made, &so_far, same, s.dataset.bytes, pass_bytes);
    let free = free_cores(cores, base.destination(same));
    if s.opts.luks_trim && i > 0 {
        let mut pair = [made[0].clone(), made[i].clone()];
        predict::trim(&mut pair, 0, alone, ciphers, free);
        let [_, judged] = pair;
        let st = &mut made[i];
        st.trimmed = judged.trimmed;
        if let Some(why) = &st.trimmed {
            (s.say)(&format!("LUKS {}: trimmed, {why}", st.name));
        }
    }
    free
}
