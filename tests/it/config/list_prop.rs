//! Property test: our evaluation of a generated `Ciphers` line (with `+`, `-`, `^` prefixes,
//! odd keyword casing and separators) and our catalog verdict agree with the real sshd.
//! Each case runs `sshd -T` once; the case count is bounded to keep the run short.

use crate::support;

use proptest::prelude::*;
use sshd_config::catalog::{accepted_ciphers, check_ciphers, default_ciphers};
use sshd_config::{ConfigSet, Flavor, ListSpec};
use sshtune::config::sshd::Sshd;
use std::path::{Path, PathBuf};

const CASES: u32 = 32;

fn v92() -> ciphers::OpenSshVersion {
    ciphers::OpenSshVersion::new(9, 2)
}

/// Names the generator draws from: what 9.2 accepts, what it removed, and one it never knew.
fn pool() -> Vec<&'static str> {
    let mut p = accepted_ciphers(v92());
    p.extend(["arcfour", "blowfish-cbc", "cast128-cbc", "not-a-cipher"]);
    p
}

/// Patterns only a `-` list may hold.
const PATTERNS: &[&str] = &[
    "aes*-ctr",
    "*-cbc",
    "aes???-gcm@openssh.com",
    "!aes256-ctr",
    "*poly*",
];

fn value() -> impl Strategy<Value = String> {
    let names = pool();
    let n = names.len();
    (
        prop::sample::select(vec!["", "+", "-", "^"]),
        prop::collection::vec(0..n, 1..5),
        prop::collection::vec(prop::sample::select(PATTERNS.to_vec()), 0..2),
    )
        .prop_map(move |(prefix, idx, pats)| {
            let mut items: Vec<String> = idx.iter().map(|&i| names[i].to_string()).collect();
            if prefix == "-" {
                items.extend(pats.iter().map(|p| p.to_string()));
            }
            format!("{prefix}{}", items.join(","))
        })
}

fn line() -> impl Strategy<Value = String> {
    (
        value(),
        prop::sample::select(vec!["Ciphers", "ciphers", "CIPHERS", "cIpHeRs"]),
        prop::sample::select(vec![" ", "=", " = ", "\t", "= "]),
        any::<bool>(),
    )
        .prop_map(|(v, kw, sep, quoted)| {
            if quoted {
                format!("{kw}{sep}\"{v}\"\n")
            } else {
                format!("{kw}{sep}{v}\n")
            }
        })
}

struct Rig {
    _dir: tempfile::TempDir,
    config: PathBuf,
    key: PathBuf,
    sshd: Sshd,
}

impl Rig {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let key = support::keygen(&dir.path().join("hk"));
        Self {
            config: dir.path().join("sshd_config"),
            _dir: dir,
            key,
            sshd: Sshd::find(None).expect("sshd installed (scripts/setup installs openssh-server)"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn list_syntax_matches_sshd_t(line in line()) {
        let _lock = support::shared();
        thread_local!(static RIG: Rig = Rig::new());
        RIG.with(|rig| {
            let text = format!("HostKey {}\n{line}", rig.key.display());
            std::fs::write(&rig.config, &text).unwrap();
            let set = ConfigSet::from_text(&rig.config, &text, Flavor::Sshd, Path::new("/etc/ssh")).unwrap();
            let setting = set.effective("Ciphers").expect("the generated line is global");
            let spec = ListSpec::parse(&setting.value);
            let verdict = rig.sshd.test(&rig.config).unwrap();
            match check_ciphers(&spec, v92()) {
                Err(bad) => {
                    prop_assert!(!verdict.passed, "catalog rejects {bad:?} but sshd accepts {line:?}");
                    prop_assert!(verdict.message.contains("Bad SSH2 cipher spec"), "{}", verdict.message);
                }
                Ok(()) => {
                    prop_assert!(verdict.passed, "catalog accepts {line:?}, sshd says {}", verdict.message);
                    let ours = setting.list(&default_ciphers(v92()));
                    // Removing every default leaves an empty proposal, which sshd handles by
                    // keeping its default; we do not emit such lines, so the case is set aside.
                    if !ours.is_empty() {
                        let theirs = rig.sshd.effective_ciphers(&rig.config).unwrap();
                        prop_assert_eq!(ours, theirs, "line {:?}", line);
                    }
                }
            }
            Ok(())
        })?;
    }
}
