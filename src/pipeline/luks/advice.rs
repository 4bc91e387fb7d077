//! The recommendation for both ends, against today's combination (ssh's default cipher onto
//! the destination's own setting, else onto the reference): the cheapest change the
//! measurement supports (`split.rs`: a LUKS change only when clearly faster than the best
//! cipher change on today's setting, else "keep today's setting"), with the lines that get
//! there — the client's `Ciphers ^…`, an sshd_config drop-in, and the
//! cryptsetup command or the re-encryption it would take.
//!
//! The SSH lines are `sshtune config`'s: its secure policy and its emitter, fed a bench report
//! whose rows are the end-to-end cells of the recommended setting and whose server is the one
//! the pipeline probed. So the drop-in is checked against the server's OpenSSH release and
//! ordered by what the whole copy reached, not by SSH alone. Pure: the caller brings the
//! client's `ssh -V` release with the server (`SshSide`).

use super::{settings, split};
use crate::bench::model::{BenchReport, ClientInfo, Direction, Directions, ServerInfo};
use crate::bench::{EngineKind, Options, ResultRow};
use crate::config::emit::{self, Emitted, Meta};
use crate::config::policy::{self, Policy};
use crate::pipeline::model::{LuksAdvice, LuksCell, LuksSetting, StorageInfo};
use anyhow::{anyhow, Result};

pub fn recommend(
    cells: &[LuksCell],
    list: &[LuksSetting],
    storage: &StorageInfo,
    device: Option<u64>,
    default_cipher: Option<&str>,
    ssh: &SshSide,
) -> Option<LuksAdvice> {
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
    let split = split::split(
        cells,
        today_setting.map(|t| t.name.as_str()),
        today.map(|t| t.0),
    );
    let change = split.luks_change();
    let chosen = change
        .or(split.cipher_only.as_ref())
        .or(split.both.as_ref())?;
    let to = list.iter().find(|s| s.name == chosen.setting)?;
    let (luks_command, luks_note) = match today_setting {
        Some(from) if change.is_none() && from.name == to.name => {
            let mut note = split.keep_note();
            if !from.current {
                note.push_str(&format!(
                    "; the destination has no dm-crypt mapping of its own; for a new volume: {}",
                    settings::describe(from)
                ));
            }
            (None, note)
        }
        Some(from) => {
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
    let cipher = chosen.cipher.clone();
    let lines = policy_lines(cells, &chosen.setting, ssh);
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
    let mib_s = chosen.median_mib_s;
    Some(LuksAdvice {
        client_line,
        sshd_dropin,
        setting: chosen.setting.clone(),
        mib_s,
        today_cipher: today.map(|t| t.0.row.cipher.clone()),
        today_setting: today.map(|t| t.0.setting.clone()),
        today_mib_s: today.map(|t| t.1),
        gain_pct: today.map(|t| ((mib_s / t.1 - 1.0) * 1000.0).round() / 10.0),
        cipher,
        luks_command,
        luks_note,
        luks_change: Some(change.is_some()),
        cipher_only: split.cipher_only.clone(),
        luks_only: split.luks_only.clone(),
        both: split.both.clone(),
    })
}

/// What the SSH lines are checked against: the server as the pipeline's probe saw it, the
/// local `ssh -V` line (the client block's release), the name the client reaches it by, and
/// when the run started (the drop-in's header says so).
pub struct SshSide<'a> {
    pub server: &'a ServerInfo,
    pub client_version: Option<&'a str>,
    pub host: &'a str,
    pub started: &'a str,
}

/// `sshtune config`'s drop-in and client block for the ciphers measured end to end on
/// `setting`: a bench report whose upload rows are those cells, with the probed server.
fn policy_lines(cells: &[LuksCell], setting: &str, ssh: &SshSide) -> Result<Emitted> {
    let results = cells
        .iter()
        .filter(|c| c.setting == setting && c.row.error.is_none())
        .filter(|c| c.row.median_mib_s.is_some())
        .map(|c| {
            let mut r = ResultRow::failed(
                EngineKind::Openssh.as_str(),
                &c.row.cipher,
                None,
                Direction::Upload,
                String::new(),
            );
            r.error = None;
            r.bytes = c.row.bytes;
            r.samples = c.row.samples.clone();
            r.median_mib_s = c.row.median_mib_s;
            r.min_mib_s = c.row.min_mib_s;
            r.max_mib_s = c.row.max_mib_s;
            r
        })
        .collect();
    let report = BenchReport {
        schema: crate::bench::model::SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started: ssh.started.into(),
        host: ssh.host.into(),
        embedded: false,
        client: ClientInfo {
            ssh_version: ssh.client_version.map(String::from),
            ..Default::default()
        },
        server: ssh.server.clone(),
        settings: crate::bench::suite::settings(&Options::new(None, vec![EngineKind::Openssh])),
        ceiling: None,
        results,
        warnings: Vec::new(),
        ranking: Vec::new(),
        path_rtt_ms: None,
        ssh_args: Default::default(),
    };
    let target = policy::target_version(&report).ok_or_else(|| {
        anyhow!(
            "the server's OpenSSH release is unknown (banner {})",
            report.server.banner.as_deref().unwrap_or("none")
        )
    })?;
    let sel = policy::select(&report, Policy::Secure, target, Directions::Upload);
    let meta = Meta {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        client_host: ssh.host.into(),
        client_version: report
            .client
            .ssh_version
            .as_deref()
            .and_then(ciphers::OpenSshVersion::parse),
        figures: format!(
            "figures: rsync over ssh onto the scratch LUKS setting {setting}, end to end (sshtune pipeline --luks)"
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
                variant: crate::pipeline::rsync::Variant::WholeFile,
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
        let ssh = SshSide {
            server: &bench.server,
            client_version: bench.client.ssh_version.as_deref(),
            host: "nas",
            started: "2026-12-01T09:00:00+00:00",
        };
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
            None,
            Some("aes128-gcm@openssh.com"),
            &ssh,
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

        assert_eq!(a.luks_change, Some(true));
        assert_eq!(
            a.cipher_only.as_ref().map(|o| o.setting.as_str()),
            Some(slow.as_str())
        );

        // A server whose release the probe could not tell (not OpenSSH): no list to check,
        // and the lines say so.
        let other = ServerInfo {
            banner: Some("SSH-2.0-dropbear_2022.83".into()),
            ..Default::default()
        };
        let ssh = SshSide {
            server: &other,
            ..ssh
        };
        let a = recommend(&cells, &list, &storage, None, None, &ssh).unwrap();
        assert_eq!(a.client_line, "Ciphers ^chacha20-poly1305@openssh.com");
        assert!(
            a.sshd_dropin
                .contains("release is unknown (banner SSH-2.0-dropbear"),
            "{}",
            a.sshd_dropin
        );
    }

    fn cell_with(cipher: &str, setting: &str, samples: &[f64]) -> LuksCell {
        let mut c = cell(cipher, setting, 0.0);
        c.row.samples = samples.to_vec();
        c.row.median_mib_s = crate::stats::median(samples);
        c.row.min_mib_s = crate::stats::min(samples);
        c.row.max_mib_s = crate::stats::max(samples);
        c
    }

    /// The board's bench report, a storage without a LUKS volume, and the settings offered
    /// for it, among them `xts256`.
    fn board() -> (BenchReport, StorageInfo, Vec<LuksSetting>) {
        let bench: BenchReport = serde_json::from_str(include_str!(
            "../../../tests/fixtures/config/bench-openssh-9.2.json"
        ))
        .unwrap();
        let storage = StorageInfo::default();
        let list = settings::candidates(&storage, "");
        assert!(list.iter().any(|s| s.name == "xts256"));
        (bench, storage, list)
    }

    fn ssh_for(bench: &BenchReport) -> SshSide<'_> {
        SshSide {
            server: &bench.server,
            client_version: bench.client.ssh_version.as_deref(),
            host: "board",
            started: "2026-12-01T09:00:00+00:00",
        }
    }

    #[test]
    fn overlapping_samples_keep_todays_luks_setting() {
        // The board: aes128-gcm onto xts256-4k read 3.6 (3.5–3.6), but aes128-gcm
        // onto today's xts256 read 3.5 (2.9–3.7): the gain is the cipher's alone.
        let (bench, storage, list) = board();
        let today = "xts256".to_string();
        let other = list.iter().find(|s| s.name != today).unwrap().name.clone();
        let chacha = "chacha20-poly1305@openssh.com";
        let gcm = "aes128-gcm@openssh.com";
        let cells = vec![
            cell_with(chacha, &today, &[3.0, 3.1, 3.2]),
            cell_with(gcm, &today, &[2.9, 3.5, 3.7]),
            cell_with(chacha, &other, &[3.1, 3.2, 3.3]),
            cell_with(gcm, &other, &[3.5, 3.6, 3.6]),
        ];
        let a = recommend(
            &cells,
            &list,
            &storage,
            None,
            Some(chacha),
            &ssh_for(&bench),
        )
        .unwrap();
        assert_eq!(a.setting, today);
        assert_eq!(a.luks_change, Some(false));
        assert_eq!(a.luks_command, None);
        assert!(
            a.luks_note
                .starts_with("no measured gain from the LUKS change: keep today's setting"),
            "{}",
            a.luks_note
        );
        assert!(a.luks_note.contains("--repeat 6"), "{}", a.luks_note);
        // The three parts, each with its own figures.
        // On today's setting aes128-gcm (2.9–3.7) ties with chacha20-poly1305 (3.0–3.2):
        // the tier's fixed preference picks, not the higher median.
        assert_eq!(a.cipher_only.as_ref().unwrap().cipher, chacha);
        let luks_only = a.luks_only.as_ref().unwrap();
        assert_eq!(
            (luks_only.cipher.as_str(), luks_only.setting.as_str()),
            (chacha, other.as_str())
        );
        let both = a.both.as_ref().unwrap();
        assert_eq!(
            (both.cipher.as_str(), both.setting.as_str()),
            (gcm, other.as_str())
        );
        assert_eq!(a.gain_pct, Some(0.0));
    }

    #[test]
    fn the_cipher_inside_a_tier_is_the_fixed_preference_not_the_noise() {
        // Three overlapping ciphers on one setting: whichever median is highest, the line
        // starts with the same one.
        let (bench, storage, list) = board();
        let only = "xts256".to_string();
        let pick = |a: &[f64], b: &[f64], c: &[f64]| {
            let cells = vec![
                cell_with("aes128-ctr", &only, a),
                cell_with("aes128-gcm@openssh.com", &only, b),
                cell_with("chacha20-poly1305@openssh.com", &only, c),
            ];
            recommend(&cells, &list, &storage, None, None, &ssh_for(&bench)).unwrap()
        };
        let one = pick(&[3.3, 3.5, 3.6], &[3.1, 3.3, 3.4], &[3.0, 3.2, 3.4]);
        let two = pick(&[3.0, 3.2, 3.4], &[3.1, 3.3, 3.4], &[3.3, 3.5, 3.6]);
        assert_eq!(one.cipher, two.cipher);
        assert_eq!(one.client_line, two.client_line);
        assert_eq!(one.client_line, format!("Ciphers ^{}", one.cipher));
    }
}
