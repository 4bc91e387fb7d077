//! The `--luks` section of the report, once the samplers have stopped: the CPU per cell,
//! each cell's bound (the verdict code), the model against the measurements with the error
//! per cell, and the recommendation.

use super::costs::{costs, free_cores};
use super::run::Measured;
use super::step::tag;
use super::{advice, predict};
use crate::pipeline::model::{
    AloneStage, LuksCell, LuksSection, LuksSetting, Row, Stage, StageCeiling, StorageInfo,
};
use crate::pipeline::recording::{self, Interval};
use crate::pipeline::{stages, verdict};

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
    let ciphers: Vec<String> = m
        .alone
        .iter()
        .filter(|a| a.setting.is_none())
        .filter_map(|a| a.cipher.clone())
        .collect();
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
    let model_max_error_pct = crate::stats::max(&errors);
    let model_median_error_pct = crate::stats::median(&errors).map(|e| (e * 10.0).round() / 10.0);
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
    let ssh = predict::ssh_stage(alone, &row.cipher, &st.name);
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
