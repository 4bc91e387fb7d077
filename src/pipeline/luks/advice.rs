//! The recommendation for both ends: the fastest measured cell, against today's combination
//! (ssh's default cipher onto the destination's own setting, else onto the reference), with
//! the lines that get there — the client's `Ciphers ^…`, an sshd_config drop-in, and the
//! cryptsetup command or the re-encryption it would take. Pure.
//!
//! The SSH lines are `sshtune config`'s: its secure policy and its emitter, fed the SSH-only
//! stage's bench report with each cipher's figures replaced by its end-to-end cells on the
//! recommended setting. So the drop-in is checked against the server's OpenSSH release and
//! ordered by what the whole copy reached, not by SSH alone.

use super::settings;
use crate::bench::model::{BenchReport, Direction, Directions};
use crate::config::emit::{self, Emitted, Meta};
use crate::config::policy::{self, Policy};
use crate::pipeline::model::{LuksAdvice, LuksCell, LuksSetting, StorageInfo};
use anyhow::{anyhow, Result};

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
    bench: Option<&BenchReport>,
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
    let lines = bench
        .ok_or_else(|| anyhow!("no SSH-only stage ran"))
        .and_then(|b| policy_lines(cells, &best.0.setting, b));
    let (client_line, sshd_dropin) = match lines {
        Ok(e) => (
            client_ciphers(&e.client).unwrap_or(format!("Ciphers ^{cipher}")),
            e.server,
        ),
        Err(why) => (
            format!("Ciphers ^{cipher}"),
            format!(
                "# /etc/ssh/sshd_config.d/50-sshtune.conf: no policy-checked list ({why:#}); the \
                 client's order picks the cipher, the server only has to allow it\n\
                 Ciphers +{cipher}"
            ),
        ),
    };
    Some(LuksAdvice {
        client_line,
        sshd_dropin,
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

/// `sshtune config`'s drop-in and client block for the ciphers measured end to end on
/// `setting`: the bench report keeps only their upload rows, each carrying its cell's samples.
fn policy_lines(cells: &[LuksCell], setting: &str, bench: &BenchReport) -> Result<Emitted> {
    let mut report = bench.clone();
    report.results.retain_mut(|r| {
        let cell = cells
            .iter()
            .find(|c| c.setting == setting && c.row.cipher == r.cipher && r.error.is_none());
        match cell.filter(|_| r.direction == Direction::Upload) {
            Some(c) if c.row.median_mib_s.is_some() => {
                r.samples = c.row.samples.clone();
                r.median_mib_s = c.row.median_mib_s;
                r.min_mib_s = c.row.min_mib_s;
                r.max_mib_s = c.row.max_mib_s;
                true
            }
            _ => false,
        }
    });
    let target = policy::target_version(&report).ok_or_else(|| {
        anyhow!(
            "the server's OpenSSH release is unknown (banner {})",
            report.server.banner.as_deref().unwrap_or("none")
        )
    })?;
    let sel = policy::select(&report, Policy::Secure, target, Directions::Upload);
    let meta = Meta {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        client_host: report
            .host
            .rsplit('@')
            .next()
            .unwrap_or(&report.host)
            .to_string(),
        client_version: report
            .client
            .ssh_version
            .as_deref()
            .and_then(ciphers::OpenSshVersion::parse),
        figures: format!(
            "figures: rsync over ssh onto the scratch LUKS setting {setting}, end to end, this run"
        ),
    };
    emit::emit(&sel, &report, &meta)
}

/// The `Ciphers` line of an emitted client block, unindented.
fn client_ciphers(block: &str) -> Option<String> {
    block
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("Ciphers "))
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::model::Row;

    fn cell(cipher: &str, setting: &str, mib_s: f64) -> LuksCell {
        LuksCell {
            setting: setting.into(),
            row: Row {
                cipher: cipher.into(),
                variant: "whole-file".into(),
                rsync_flags: Vec::new(),
                bytes: 8 << 20,
                samples: vec![mib_s * 0.95, mib_s, mib_s * 1.05],
                flush_s: Vec::new(),
                median_mib_s: Some(mib_s),
                min_mib_s: Some(mib_s * 0.95),
                max_mib_s: Some(mib_s * 1.05),
                wire_bytes: None,
                literal_bytes: None,
                cpu: Vec::new(),
                error: None,
            },
            bound_by: "ssh".into(),
            reason: String::new(),
            predicted_mib_s: None,
            error_pct: None,
        }
    }

    #[test]
    fn the_dropin_is_configs_policy_over_the_end_to_end_order() {
        // SSH alone ranked aes128-gcm first on this OpenSSH 9.2 server; end to end onto the
        // faster setting chacha20-poly1305 won, and 3des-cbc (legacy) is never advised.
        let bench: BenchReport = serde_json::from_str(include_str!(
            "../../../tests/fixtures/config/bench-openssh-9.2.json"
        ))
        .unwrap();
        let storage = StorageInfo::default();
        let list = settings::candidates(&storage, "");
        let (slow, fast) = (&list[0].name, &list[1].name);
        let cells = vec![
            cell("aes128-gcm@openssh.com", slow, 20.0),
            cell("chacha20-poly1305@openssh.com", slow, 19.0),
            cell("aes128-gcm@openssh.com", fast, 30.0),
            cell("chacha20-poly1305@openssh.com", fast, 33.0),
            cell("3des-cbc", fast, 40.0),
        ];
        let a = recommend(
            &cells,
            &list,
            &storage,
            Some("aes128-gcm@openssh.com"),
            Some(&bench),
        )
        .unwrap();
        assert_eq!(a.cipher, "chacha20-poly1305@openssh.com");
        assert_eq!(&a.setting, fast);
        // The client only puts the fastest first, as `sshtune config` does.
        assert_eq!(a.client_line, "Ciphers ^chacha20-poly1305@openssh.com");
        let line = a
            .sshd_dropin
            .lines()
            .find(|l| l.starts_with("Ciphers "))
            .expect("a Ciphers line");
        assert_eq!(
            line, "Ciphers chacha20-poly1305@openssh.com,aes128-gcm@openssh.com",
            "{}",
            a.sshd_dropin
        );
        assert!(a.sshd_dropin.contains(fast), "{}", a.sshd_dropin);

        // Without the SSH-only stage there is no release to check against: the lines say so.
        let a = recommend(&cells, &list, &storage, None, None).unwrap();
        assert_eq!(a.client_line, "Ciphers ^chacha20-poly1305@openssh.com");
        assert!(
            a.sshd_dropin.contains("no SSH-only stage ran"),
            "{}",
            a.sshd_dropin
        );
    }
}
