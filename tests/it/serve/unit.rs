//! packaging/sshtune-serve.service's system-call filter against what serve really calls: the
//! real server under `strace -f`, a real `ssh` login and a native-engine bench through it
//! (key exchange, `stat`, the transfers), then every system call it made is
//! looked up in the sets the unit's `SystemCallFilter=` lines name, as systemd expands them
//! (`systemd-analyze syscall-filter`). A call the filter refuses would fail with EPERM inside
//! the unit: the server would not start or not serve. The exposure score itself is checked by
//! `.ci/run` (`systemd-analyze security --offline=yes`).

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use support::native::start_serve_under;

const UNIT: &str = "packaging/sshtune-serve.service";

#[test]
fn packaged_unit_allows_every_system_call_serve_makes() {
    for tool in ["strace", "systemd-analyze"] {
        if !support::require_program(tool, "scripts/setup installs it") {
            return;
        }
    }
    let _lock = support::shared();
    let (allowed, denied) = unit_filter(&support::repo_root().join(UNIT));
    assert!(allowed.contains("read") && denied.contains("setrlimit"));

    let trace = tempfile::NamedTempFile::new().unwrap();
    let prefix: Vec<String> = ["strace", "-f", "-qq", "-o"]
        .map(String::from)
        .into_iter()
        .chain([trace.path().display().to_string()])
        .collect();
    let mut serve = start_serve_under(&prefix, &[]);
    let out = serve.ssh().args(["127.0.0.1", "stat"]).output().unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("SSHTUNE-"),
        "ssh … stat: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let target = serve.target();
    let bench = support::output(
        support::sshtune()
            .args(["bench", &target.destination])
            .args(&target.options)
            .args(["--engine", "native", "--ciphers", "aes128-gcm@openssh.com"])
            .args(["--size", "2M", "--repeat", "1", "--warmup", "0"])
            .args(["--format", "json", "--quiet"]),
    );
    assert!(bench.status.success(), "{}", support::stderr(&bench));
    let report: serde_json::Value = serde_json::from_str(&support::stdout(&bench)).unwrap();
    assert!(report["results"][0]["error"].is_null(), "{report}");
    stop_traced(&mut serve.child);

    let made = syscalls(&std::fs::read_to_string(trace.path()).unwrap());
    eprintln!("serve made {} distinct system calls: {made:?}", made.len());
    assert!(
        made.contains("accept4") || made.contains("accept"),
        "{made:?}"
    );
    let refused: Vec<_> = made
        .iter()
        .filter(|c| !allowed.contains(*c) || denied.contains(*c))
        .collect();
    assert!(
        refused.is_empty(),
        "serve made system calls {UNIT}'s SystemCallFilter refuses: {refused:?}"
    );
}

/// The names the unit's `SystemCallFilter=` lines allow, and those a `~` line takes away.
fn unit_filter(unit: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(unit).unwrap();
    let (mut allowed, mut denied) = (BTreeSet::new(), BTreeSet::new());
    for value in text
        .lines()
        .filter_map(|l| l.strip_prefix("SystemCallFilter="))
    {
        let (set, names) = match value.strip_prefix('~') {
            Some(rest) => (&mut denied, rest),
            None => (&mut allowed, value),
        };
        for name in names.split_whitespace() {
            set.extend(expand(name));
        }
    }
    (allowed, denied)
}

/// A set (`@system-service`) as systemd expands it, nested sets included; a name is itself.
fn expand(name: &str) -> BTreeSet<String> {
    if !name.starts_with('@') {
        return BTreeSet::from([name.to_string()]);
    }
    let out = Command::new("systemd-analyze")
        .args(["syscall-filter", name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "systemd-analyze syscall-filter {name}"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .flat_map(expand)
        .collect()
}

/// Ends the traced server (SIGTERM to strace's child, the server) and waits for strace.
fn stop_traced(strace: &mut std::process::Child) {
    let children = format!("/proc/{0}/task/{0}/children", strace.id());
    let pid = std::fs::read_to_string(&children).unwrap_or_default();
    for p in pid.split_whitespace() {
        let p = nix::unistd::Pid::from_raw(p.parse().unwrap());
        let _ = nix::sys::signal::kill(p, nix::sys::signal::Signal::SIGTERM);
    }
    let _ = strace.wait();
}

/// The system-call names in `strace -f -o` output (`PID name(…`, `PID <... name resumed>`).
fn syscalls(trace: &str) -> BTreeSet<String> {
    trace
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest.trim_start()))
        .filter(|rest| !rest.starts_with("---") && !rest.starts_with("+++"))
        .filter_map(|rest| {
            let rest = rest.strip_prefix("<... ").unwrap_or(rest);
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}
