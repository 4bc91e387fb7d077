//! The recommendation for both ends: the fastest measured cell, against today's combination
//! (ssh's default cipher onto the destination's own setting, else onto the reference), with
//! the lines that get there — the client's `Ciphers ^…`, an sshd_config drop-in, and the
//! cryptsetup command or the re-encryption it would take. Pure.

use super::settings;
use crate::pipeline::model::{LuksAdvice, LuksCell, LuksSetting, StorageInfo};

/// Only the safe ciphers are ever recommended: the ones the catalog grades ok (as bench and
/// config do); a legacy cipher can be measured but is not advised.
fn safe(cipher: &str) -> bool {
    ciphers::cipher(cipher).is_some_and(|c| c.grade == ciphers::Grade::Ok)
}

pub fn recommend(
    cells: &[LuksCell],
    list: &[LuksSetting],
    storage: &StorageInfo,
    default_cipher: Option<&str>,
) -> Option<LuksAdvice> {
    let best = cells
        .iter()
        .filter(|c| safe(&c.row.cipher))
        .filter_map(|c| Some((c, c.row.median_mib_s?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let today_setting = list
        .iter()
        .find(|s| s.current)
        .or_else(|| list.iter().find(|s| s.name == "xts256"))
        .or_else(|| list.first());
    let today = today_setting.and_then(|t| {
        cells
            .iter()
            .filter(|c| c.setting == t.name)
            .find(|c| Some(c.row.cipher.as_str()) == default_cipher)
            .or_else(|| cells.iter().find(|c| c.setting == t.name))
            .and_then(|c| Some((c, c.row.median_mib_s?)))
    });
    let to = list.iter().find(|s| s.name == best.0.setting)?;
    let (luks_command, luks_note) = match today_setting {
        Some(from) => {
            let device = storage
                .dm_device
                .as_deref()
                .and_then(super::volume::device_bytes);
            let name = storage.dm_name.as_deref().unwrap_or("NAME");
            let (cmd, note) = settings::change(from, to, name, device, to.dm_crypt_mib_s);
            let note = if from.current {
                note
            } else {
                format!("the destination has no dm-crypt mapping of its own; for a new volume: {}; {note}", settings::describe(to))
            };
            (cmd.filter(|_| from.current), note)
        }
        None => (None, settings::describe(to)),
    };
    let cipher = best.0.row.cipher.clone();
    Some(LuksAdvice {
        client_line: format!("Ciphers ^{cipher}"),
        sshd_dropin: format!(
            "# /etc/ssh/sshd_config.d/50-sshtune.conf: the client's order picks the cipher, the \
             server only has to allow it (`sshtune config` writes a policy-checked list)\n\
             Ciphers +{cipher}"
        ),
        setting: best.0.setting.clone(),
        mib_s: best.1,
        today_cipher: today.map(|t| t.0.row.cipher.clone()),
        today_setting: today.map(|t| t.0.setting.clone()),
        today_mib_s: today.map(|t| t.1),
        gain_pct: today.map(|t| ((best.1 / t.1 - 1.0) * 1000.0).round() / 10.0),
        cipher,
        luks_command,
        luks_note,
    })
}
