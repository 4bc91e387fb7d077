//! The model of a cell: each stage measured alone gives a rate (MiB/s) and a CPU cost
//! (core-seconds per MiB beyond the baseline load; dm-crypt's from its own threads). With
//! the samplers running, as they do in every measured run, the stages take turns rather
//! than overlap: a cell's time per MiB is the sum of its stages' times per MiB alone (ssh,
//! rsync-local, the dm-crypt pass) — unless the cores cannot even run that, then the summed
//! CPU cost divided by the free cores is the limit. A stage and a cell are timed over the
//! same kind of window, to the end of the session (a copy ends when rsync and its ssh exit;
//! SSH alone when its ssh exits). Measured on a 2-vCPU virtual machine without acceleration
//! (docs/measurements.md, "Why a cell ran below its slowest stage"): without samplers a
//! cell took its slowest stage's time (0.96–1.08×); beside them it took 1.13–1.51× its
//! slowest stage and 0.81–1.09× the sum of its stages, all measured beside them. The
//! slowest stage's time is never above the sum, so it is not a term of its own. Pure: used
//! to check the model against the cells measured, to trim settings before the end-to-end
//! runs, and to rank trimmed ones.

use crate::pipeline::model::{AloneStage, LuksSetting, Stage};

/// A setting predicted within this share of the reference's best cell cannot change the
/// result beyond the noise of one run; one predicted that much slower cannot be the best.
pub const TRIM_MARGIN: f64 = 0.05;

/// One stage alone: its rate, MiB/s, and its CPU cost, core-seconds per MiB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageFigure {
    pub mib_s: f64,
    pub cpu_s_per_mib: f64,
}

/// Seconds per MiB of stages that take turns on `cores` free cores: the sum of their times
/// alone, or their summed CPU over the cores when that is longer.
pub fn seconds_per_mib(stages: &[StageFigure], cores: f64) -> f64 {
    let turns: f64 = stages.iter().map(|f| 1.0 / f.mib_s.max(1e-9)).sum();
    let cpu: f64 = stages.iter().map(|f| f.cpu_s_per_mib).sum::<f64>() / cores.max(1e-9);
    turns.max(cpu)
}

/// Predicted MiB/s of `cipher` onto `setting`; `None` when a stage was not measured. `cores`
/// are those the stages can share: the destination's, less the load it carries anyway (the
/// stages' costs are measured net of that load).
pub fn cell(alone: &[AloneStage], cipher: &str, setting: &LuksSetting, cores: f64) -> Option<f64> {
    let ssh = ssh_stage(alone, cipher, &setting.name)?;
    let rsync = alone.iter().find(|a| a.stage == Stage::RsyncLocal)?;
    let figure = |mib_s: Option<f64>, cpu_s_per_mib: Option<f64>| {
        Some(StageFigure {
            mib_s: mib_s.filter(|r| *r > 0.0)?,
            cpu_s_per_mib: cpu_s_per_mib?,
        })
    };
    let stages = [
        figure(ssh.mib_s, ssh.cpu_s_per_mib)?,
        figure(rsync.mib_s, rsync.cpu_s_per_mib)?,
        figure(setting.dm_crypt_mib_s, setting.dm_cpu_s_per_mib)?,
    ];
    let t = seconds_per_mib(&stages, cores.max(1.0));
    (t > 0.0).then(|| round1(1.0 / t))
}

/// SSH alone with `cipher` for `setting`'s cells: the one measured beside them when it
/// measured, else the one before the matrix.
pub fn ssh_stage<'a>(
    alone: &'a [AloneStage],
    cipher: &str,
    setting: &str,
) -> Option<&'a AloneStage> {
    let ssh = |a: &&AloneStage| a.stage == Stage::Ssh && a.cipher.as_deref() == Some(cipher);
    alone
        .iter()
        .filter(ssh)
        .find(|a| {
            a.setting.as_deref() == Some(setting) && a.mib_s.is_some() && a.cpu_s_per_mib.is_some()
        })
        .or_else(|| alone.iter().filter(ssh).find(|a| a.setting.is_none()))
}

/// The best predicted cell of `setting` over `ciphers`.
pub fn best(alone: &[AloneStage], ciphers: &[String], s: &LuksSetting, cores: f64) -> Option<f64> {
    ciphers
        .iter()
        .filter_map(|c| cell(alone, c, s, cores))
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

/// Marks the settings not worth an end-to-end run, with the reason; the reference
/// (`reference`, an index) and the destination's own setting always run. Without a
/// prediction for a setting (a stage not measured) it runs too.
pub fn trim(
    settings: &mut [LuksSetting],
    reference: usize,
    alone: &[AloneStage],
    ciphers: &[String],
    cores: f64,
) {
    let Some(base) = settings
        .get(reference)
        .and_then(|r| best(alone, ciphers, r, cores))
    else {
        return;
    };
    let ref_name = settings[reference].name.clone();
    for (i, s) in settings.iter_mut().enumerate() {
        let p = best(alone, ciphers, s, cores);
        s.predicted_best_mib_s = p;
        if i == reference || s.current || s.error.is_some() {
            continue;
        }
        let Some(p) = p else { continue };
        let ratio = p / base;
        if ratio < 1.0 - TRIM_MARGIN {
            s.trimmed = Some(format!(
                "predicted {p:.1} MiB/s at best, {:.0}% below {ref_name} ({base:.1}): its dm-crypt pass ({:.1} MiB/s) adds the most time per MiB",
                (1.0 - ratio) * 100.0,
                s.dm_crypt_mib_s.unwrap_or(0.0)
            ));
        } else if ratio <= 1.0 + TRIM_MARGIN {
            s.trimmed = Some(format!(
                "predicted {p:.1} MiB/s at best, within {:.0}% of {ref_name} ({base:.1}): its dm-crypt pass is a small part of the copy's time, so it cannot change the result",
                TRIM_MARGIN * 100.0
            ));
        }
    }
}

/// (predicted − measured) / measured, %.
pub fn error_pct(predicted: f64, measured: f64) -> f64 {
    round1((predicted / measured - 1.0) * 100.0)
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(stage: &str, cipher: Option<&str>, r: f64, c: f64) -> AloneStage {
        AloneStage {
            bytes: None,
            stage: serde_json::from_value(serde_json::Value::from(stage)).expect("a report word"),
            cipher: cipher.map(String::from),
            setting: None,
            mib_s: Some(r),
            cpu_s_per_mib: Some(c),
            method: String::new(),
            error: None,
        }
    }

    fn luks(name: &str, r: f64, c: f64) -> LuksSetting {
        LuksSetting {
            name: name.into(),
            cipher: "aes-xts-plain64".into(),
            key_bits: 256,
            sector_size: 512,
            flags: Vec::new(),
            current: false,
            dm_crypt_mib_s: Some(r),
            dm_cpu_s_per_mib: Some(c),
            writer_cpu_s: None,
            trimmed: None,
            predicted_best_mib_s: None,
            error: None,
        }
    }

    #[test]
    fn the_stages_times_add_up_unless_the_cores_are_fewer() {
        let alone = [
            stage("ssh", Some("a"), 100.0, 0.001),
            stage("rsync-local", None, 400.0, 0.001),
        ];
        // 1/100 + 1/400 + 1/80 = 0.025 s/MiB: 40 MiB/s, not the slowest stage's 80.
        assert_eq!(cell(&alone, "a", &luks("x", 80.0, 0.001), 2.0), Some(40.0));
        // One core, costs 0.001 + 0.001 + 0.048 = 0.05 s/MiB: 20 MiB/s from CPU.
        assert_eq!(cell(&alone, "a", &luks("x", 80.0, 0.048), 1.0), Some(20.0));
        // Half a core free counts as one in the division.
        assert_eq!(cell(&alone, "a", &luks("x", 80.0, 0.048), 0.5), Some(20.0));
        assert_eq!(cell(&alone, "b", &luks("x", 80.0, 0.008), 1.0), None);
        // A stage with no rate predicts nothing.
        assert_eq!(cell(&alone, "a", &luks("x", 0.0, 0.008), 1.0), None);
    }

    #[test]
    fn seconds_per_mib_is_the_longer_of_the_turns_and_the_cpu() {
        let f = |mib_s, cpu_s_per_mib| StageFigure {
            mib_s,
            cpu_s_per_mib,
        };
        // Turns 1/2 + 1/4 = 0.75 s/MiB; CPU (0.4 + 0.2) / 2 = 0.3.
        let t = seconds_per_mib(&[f(2.0, 0.4), f(4.0, 0.2)], 2.0);
        assert!((t - 0.75).abs() < 1e-12, "{t}");
        // CPU 0.6 over 0.5 cores = 1.2 s/MiB.
        let t = seconds_per_mib(&[f(2.0, 0.4), f(4.0, 0.2)], 0.5);
        assert!((t - 1.2).abs() < 1e-12, "{t}");
        assert_eq!(seconds_per_mib(&[], 2.0), 0.0);
    }

    #[test]
    fn trims_what_cannot_change_the_result() {
        let alone = [
            stage("ssh", Some("a"), 20.0, 0.001),
            stage("rsync-local", None, 400.0, 0.001),
        ];
        // ref 16.0 MiB/s, same 16.4 (within 5%), slow 11.7.
        let mut s = vec![
            luks("ref", 100.0, 0.001),
            luks("same", 120.0, 0.001),
            luks("slow", 30.0, 0.001),
        ];
        trim(&mut s, 0, &alone, &["a".into()], 4.0);
        assert!(s[0].trimmed.is_none());
        assert!(s[1].trimmed.as_deref().unwrap().contains("cannot change"));
        assert!(s[2].trimmed.as_deref().unwrap().contains("below ref"));
    }

    #[test]
    fn a_setting_takes_ssh_alone_measured_beside_its_cells() {
        let mut beside = stage("ssh", Some("a"), 2.0, 0.1);
        beside.setting = Some("x".into());
        let mut failed = stage("ssh", Some("a"), 9.0, 0.1);
        failed.setting = Some("y".into());
        failed.mib_s = None;
        let alone = vec![stage("ssh", Some("a"), 4.0, 0.1), beside, failed];
        assert_eq!(ssh_stage(&alone, "a", "x").and_then(|a| a.mib_s), Some(2.0));
        // Not measured beside its cells (or failed there): the figure before the matrix.
        assert_eq!(ssh_stage(&alone, "a", "y").and_then(|a| a.mib_s), Some(4.0));
        assert_eq!(ssh_stage(&alone, "a", "z").and_then(|a| a.mib_s), Some(4.0));
        assert!(ssh_stage(&alone, "b", "x").is_none());
    }
}
