//! The LUKS settings a `--luks` run can compare: the destination's own one, and the seed's axes
//! that change the data path (key size, a second accelerated cipher, sector size, the
//! workqueue and CPU-affinity flags). Pure: the names, their cryptsetup options, and the
//! command that turns one setting into another on the user's mapping.

use crate::pipeline::model::{LuksSetting, StorageInfo};
use crate::storage::crypto;
use anyhow::{bail, Result};

/// The reference every axis varies from one at a time: what `cryptsetup luksFormat` gives
/// by default on current distributions.
const REF_CIPHER: &str = "aes-xts-plain64";

/// dm-crypt's optional flags this run can set, each as `cryptsetup --perf-<flag>` takes it.
pub const FLAGS: &[&str] = &["no_read_workqueue", "no_write_workqueue", "same_cpu_crypt"];

/// Second ciphers worth a row when the kernel has a fast (not generic C) driver for them.
const SECOND: &[(&str, u32)] = &[
    ("aes-cbc-essiv:sha256", 256),
    ("xchacha12,aes-adiantum-plain64", 256),
    ("serpent-xts-plain64", 512),
    ("twofish-xts-plain64", 512),
];

fn setting(name: &str, cipher: &str, key_bits: u32, sector: u32, flags: &[&str]) -> LuksSetting {
    LuksSetting {
        name: name.into(),
        cipher: cipher.into(),
        key_bits,
        sector_size: sector,
        flags: flags.iter().map(|f| f.to_string()).collect(),
        current: false,
        dm_crypt_mib_s: None,
        dm_cpu_s_per_mib: None,
        writer_cpu_s: None,
        trimmed: None,
        predicted_best_mib_s: None,
        error: None,
    }
}

/// Every candidate, in the order they run: the destination's setting first (when its
/// mapping was found and `dmsetup table` could be read), then the reference and its axes.
/// `proc_crypto` is `/proc/crypto`, for the second cipher.
pub fn candidates(storage: &StorageInfo, proc_crypto: &str) -> Vec<LuksSetting> {
    let mut out = Vec::new();
    if let Some(c) = &storage.crypt_cipher {
        let mut s = setting(
            "current",
            c,
            storage.crypt_key_bits.unwrap_or(256),
            storage.sector_size.unwrap_or(512),
            &[],
        );
        s.flags = storage
            .crypt_flags
            .iter()
            .filter(|f| FLAGS.contains(&f.as_str()))
            .cloned()
            .collect();
        s.current = true;
        out.push(s);
    }
    out.push(setting("xts256", REF_CIPHER, 256, 512, &[]));
    out.push(setting("xts512", REF_CIPHER, 512, 512, &[]));
    let algs = crate::sysinfo::proc_crypto::parse(proc_crypto);
    if let Some((c, bits)) = SECOND.iter().find(|(c, _)| {
        let ch = crypto::choose(c, &algs);
        ch.driver.is_some() && ch.class != crypto::DriverClass::Generic
    }) {
        out.push(setting("second", c, *bits, 512, &[]));
    }
    out.push(setting("xts256-4k", REF_CIPHER, 256, 4096, &[]));
    out.push(setting(
        "xts256-nowq",
        REF_CIPHER,
        256,
        512,
        &["no_read_workqueue", "no_write_workqueue"],
    ));
    out.push(setting(
        "xts256-samecpu",
        REF_CIPHER,
        256,
        512,
        &["same_cpu_crypt"],
    ));
    out
}

/// Keeps the settings `names` asks for (in the order given); unknown names are an error
/// listing the known ones.
pub fn select(all: Vec<LuksSetting>, names: &[String]) -> Result<Vec<LuksSetting>> {
    if names.is_empty() {
        return Ok(all);
    }
    let mut out = Vec::new();
    for n in names {
        match all.iter().find(|s| &s.name == n) {
            Some(s) => out.push(s.clone()),
            None => bail!(
                "--luks-settings: no setting {n} here (known: {})",
                all.iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    Ok(out)
}

/// `cryptsetup open` options for the flags.
pub fn perf_args(s: &LuksSetting) -> Vec<String> {
    s.flags.iter().map(|f| format!("--perf-{f}")).collect()
}

/// One line describing the setting, e.g. `aes-xts-plain64 256-bit, 4096-byte sectors`.
pub fn describe(s: &LuksSetting) -> String {
    let mut d = format!(
        "{} {}-bit, {}-byte sectors",
        s.cipher, s.key_bits, s.sector_size
    );
    if !s.flags.is_empty() {
        d.push_str(&format!(", {}", s.flags.join("+")));
    }
    d
}

/// How the user's mapping `name` (setting `from`) becomes `to`: flags alone change with
/// `cryptsetup refresh` (no data rewritten); a cipher, key size or sector size needs the
/// whole device re-encrypted. Returns (command, note).
pub fn change(
    from: &LuksSetting,
    to: &LuksSetting,
    name: &str,
    device_bytes: Option<u64>,
    rate_mib_s: Option<f64>,
) -> (Option<String>, String) {
    let same_data_path = from.cipher == to.cipher
        && from.key_bits == to.key_bits
        && from.sector_size == to.sector_size;
    if same_data_path {
        if from.flags == to.flags {
            return (None, "the LUKS setting stays as it is".into());
        }
        let mut cmd = String::from("cryptsetup refresh");
        for f in &to.flags {
            cmd.push_str(&format!(" --perf-{f}"));
        }
        cmd.push_str(&format!(" --persistent {name}"));
        let note = if to.flags.is_empty() {
            "refresh without --perf options clears the flags; \
             --persistent stores them in the LUKS2 header"
                .to_string()
        } else {
            "no data is rewritten; --persistent stores the flags in the LUKS2 header".to_string()
        };
        return (Some(cmd), note);
    }
    let estimate = match (device_bytes, rate_mib_s) {
        (Some(b), Some(r)) if r > 0.0 => {
            // Re-encryption reads and writes every sector: at least size / write rate.
            let s = b as f64 / 1048576.0 / r;
            format!(
                ", at least {} for its {:.1} GiB at the measured {r:.0} MiB/s dm-crypt write rate \
                 (it also reads every sector)",
                human_secs(s),
                b as f64 / 1073741824.0
            )
        }
        _ => String::new(),
    };
    (
        None,
        format!(
            "{} needs the data re-encrypted: cryptsetup reencrypt --cipher {} --key-size {} \
             --sector-size {} (offline, with a backup){estimate}",
            describe(to),
            to.cipher,
            to.key_bits,
            to.sector_size
        ),
    )
}

fn human_secs(s: f64) -> String {
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 60.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_vary_one_axis_and_select_checks_names() {
        let st = StorageInfo {
            crypt_cipher: Some("aes-xts-plain64".into()),
            sector_size: Some(4096),
            crypt_flags: vec!["allow_discards".into(), "same_cpu_crypt".into()],
            ..Default::default()
        };
        let all = candidates(&st, "");
        assert_eq!(all[0].name, "current");
        assert_eq!(all[0].flags, vec!["same_cpu_crypt".to_string()]);
        assert!(
            all.iter().all(|s| s.name != "second"),
            "no /proc/crypto, no second"
        );
        let picked = select(all.clone(), &["xts256-4k".into(), "xts256".into()]).unwrap();
        assert_eq!(picked[0].sector_size, 4096);
        assert!(select(all, &["nope".into()])
            .unwrap_err()
            .to_string()
            .contains("xts256"));
    }

    #[test]
    fn flags_refresh_and_data_path_reencrypt() {
        let a = setting("a", REF_CIPHER, 256, 512, &[]);
        let b = setting(
            "b",
            REF_CIPHER,
            256,
            512,
            &["no_read_workqueue", "no_write_workqueue"],
        );
        let (cmd, _) = change(&a, &b, "data", None, None);
        assert_eq!(
            cmd.unwrap(),
            "cryptsetup refresh --perf-no_read_workqueue --perf-no_write_workqueue --persistent data"
        );
        let c = setting("c", REF_CIPHER, 256, 4096, &[]);
        let (cmd, note) = change(&a, &c, "data", Some(10 << 30), Some(100.0));
        assert!(cmd.is_none());
        assert!(
            note.contains("reencrypt") && note.contains("2 min"),
            "{note}"
        );
    }
}
