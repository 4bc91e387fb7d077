//! The sshd-config parser against real configs and the real binaries: byte-exact round trips,
//! edits that touch one line, and effective values that agree with `sshd -T` and `ssh -G`.

use crate::support;

use super::scratch::Scratch;
use sshd_config::catalog::default_ciphers;
use sshd_config::{ConfigSet, Document, Edit, Flavor, LineKind};
use sshtune::config::sshd::Sshd;
use std::path::Path;
use std::process::Command;
use support::{fixture, fixture_text};

const FIXTURES: &[&str] = &[
    "debian-sshd_config",
    "odd-sshd_config",
    "crlf-sshd_config",
    "user-ssh_config",
];

fn v92() -> ciphers::OpenSshVersion {
    ciphers::OpenSshVersion::new(9, 2)
}

fn sshd() -> Sshd {
    Sshd::find(None).expect("sshd installed (scripts/setup installs openssh-server)")
}

fn sshd_value(dump: &[(String, String)], key: &str) -> Vec<String> {
    let (_, v) = dump.iter().find(|(k, _)| k == key).expect("key in sshd -T");
    v.split(',').map(String::from).collect()
}

#[test]
fn fixtures_round_trip_byte_for_byte() {
    let _lock = support::shared();
    for name in FIXTURES {
        let text = fixture_text(&format!("config/{name}"));
        let doc = Document::parse(&text);
        assert_eq!(doc.render(), text, "{name}");
        let invalid: Vec<_> = doc.invalid_lines().collect();
        assert!(invalid.is_empty(), "{name}: {invalid:?}");
    }
}

#[test]
fn editing_ciphers_changes_exactly_one_line() {
    let _lock = support::shared();
    for name in ["debian-sshd_config", "odd-sshd_config", "crlf-sshd_config"] {
        let text = fixture_text(&format!("config/{name}"));
        let mut doc = Document::parse(&text);
        let before: Vec<String> = doc.lines.iter().map(|l| l.raw.clone()).collect();
        let edit = doc.set_global(Flavor::Sshd, "Ciphers", &["^aes128-gcm@openssh.com".into()]);
        let after: Vec<String> = doc.lines.iter().map(|l| l.raw.clone()).collect();
        match edit {
            Edit::Replaced(i) => {
                assert_eq!(before.len(), after.len(), "{name}");
                for (j, (b, a)) in before.iter().zip(&after).enumerate() {
                    if j != i {
                        assert_eq!(b, a, "{name} line {j}");
                    }
                }
                assert_ne!(before[i], after[i]);
            }
            Edit::Inserted(i) => {
                assert_eq!(before.len() + 1, after.len(), "{name}");
                assert_eq!(before[..i], after[..i], "{name}");
                assert_eq!(before[i..], after[i + 1..], "{name}");
            }
        }
        let set = ConfigSet::from_text(
            Path::new(name),
            &doc.render(),
            Flavor::Sshd,
            Path::new("/nonexistent"),
        )
        .unwrap();
        assert_eq!(
            set.effective("ciphers").unwrap().value,
            "^aes128-gcm@openssh.com"
        );
    }
    // The hand-edited file keeps its spelling, separator and trailing comment.
    let text = fixture_text("config/odd-sshd_config");
    let mut doc = Document::parse(&text);
    doc.set_global(Flavor::Sshd, "Ciphers", &["aes128-ctr".into()]);
    assert!(doc
        .render()
        .contains("\nciphers = aes128-ctr   # set by hand in 2024\n"));
}

/// Rewrites a fixture's Include to point into the scratch dir and adds the scratch host key,
/// using the crate's own edit (which must not disturb anything else).
fn hermetic(text: &str, s: &Scratch) -> String {
    let mut doc = Document::parse(text);
    let pattern = format!("{}/*.conf", s.path("conf.d").display());
    doc.set_global(Flavor::Sshd, "Include", &[pattern]);
    doc.set_global(Flavor::Sshd, "HostKey", &[s.key.display().to_string()]);
    doc.render()
}

#[test]
fn effective_values_agree_with_sshd_t() {
    let _lock = support::shared();
    let s = Scratch::new();
    std::fs::create_dir(s.path("conf.d")).unwrap();
    let sshd = sshd();
    // Defaults for lists the catalog does not describe come from sshd itself.
    let base = s.path("base");
    std::fs::write(&base, format!("HostKey {}\n", s.key.display())).unwrap();
    let defaults = sshd.dump(&base).unwrap();
    let kex_default = sshd_value(&defaults, "kexalgorithms");
    let mac_default = sshd_value(&defaults, "macs");
    let cipher_default = default_ciphers(v92());
    assert_eq!(
        sshd_value(&defaults, "ciphers"),
        cipher_default,
        "catalog defaults = sshd 9.2's"
    );

    for name in ["debian-sshd_config", "odd-sshd_config"] {
        for dropin in [None, Some("Ciphers ^aes256-ctr,3des-cbc\n")] {
            let conf_d = s.path("conf.d");
            let _ = std::fs::remove_file(conf_d.join("10-test.conf"));
            if let Some(text) = dropin {
                std::fs::write(conf_d.join("10-test.conf"), text).unwrap();
            }
            let text = fixture_text(&format!("config/{name}"));
            let main = s.path("sshd_config");
            std::fs::write(&main, hermetic(&text, &s)).unwrap();
            let dump = sshd.dump(&main).unwrap();
            let set = ConfigSet::load(&main, Flavor::Sshd, Path::new("/etc/ssh")).unwrap();
            for (kw, default) in [
                ("Ciphers", cipher_default.clone()),
                ("MACs", mac_default.iter().map(String::as_str).collect()),
                (
                    "KexAlgorithms",
                    kex_default.iter().map(String::as_str).collect(),
                ),
            ] {
                let ours = match set.effective(kw) {
                    Some(setting) => setting.list(&default),
                    None => default.iter().map(|s| s.to_string()).collect(),
                };
                assert_eq!(
                    ours,
                    sshd_value(&dump, &kw.to_ascii_lowercase()),
                    "{name} with drop-in {dropin:?}: {kw}"
                );
            }
            if dropin.is_some() {
                let winner = set.effective("Ciphers").unwrap();
                assert!(
                    winner.origin.path.ends_with("10-test.conf"),
                    "{:?}",
                    winner.origin
                );
            }
        }
    }
}

#[test]
fn a_match_block_in_an_included_file_ends_with_that_file() {
    let _lock = support::shared();
    let s = Scratch::new();
    let main = s.main_config("", "conf.d", "Ciphers aes128-ctr\n");
    std::fs::write(
        s.path("conf.d/10-match.conf"),
        "Match User nobody\n    AllowTcpForwarding no\n",
    )
    .unwrap();
    // sshd would refuse Ciphers inside a Match: accepting it proves the block ended.
    let sshd = sshd();
    assert!(sshd.test(&main).unwrap().passed);
    assert_eq!(sshd.effective_ciphers(&main).unwrap(), ["aes128-ctr"]);
    let set = ConfigSet::load(&main, Flavor::Sshd, Path::new("/etc/ssh")).unwrap();
    let e = set.effective("ciphers").unwrap();
    assert_eq!((e.value.as_str(), e.origin.line), ("aes128-ctr", 3));
    let occ = set.occurrences("AllowTcpForwarding");
    assert!(matches!(&occ[0].section, sshd_config::Section::Match(c) if c[1] == "nobody"));
}

#[test]
fn ssh_config_host_blocks_agree_with_ssh_g() {
    let _lock = support::shared();
    let path = fixture("config/user-ssh_config");
    let text = fixture_text("config/user-ssh_config");
    let s = Scratch::new();
    let set = ConfigSet::from_text(&path, &text, Flavor::Ssh, s.dir.path()).unwrap();
    for host in ["backup", "nas.lan", "printer.lan", "elsewhere"] {
        let out = Command::new("ssh")
            .args(["-G", "-F"])
            .arg(&path)
            .arg(host)
            .output()
            .expect("ssh runs");
        let stdout = support::ok(&out);
        let theirs = stdout
            .lines()
            .find_map(|l| l.strip_prefix("ciphers "))
            .expect("ssh -G prints ciphers");
        let ours = set
            .effective_for_host("Ciphers", host)
            .map(|s| s.list(&default_ciphers(v92())))
            .unwrap();
        assert_eq!(ours.join(","), theirs, "{host}");
    }
    // The directive lines are all recognised, none dropped as invalid.
    let doc = Document::parse(&text);
    assert!(doc
        .lines
        .iter()
        .all(|l| !matches!(l.kind, LineKind::Invalid(_))));
}
