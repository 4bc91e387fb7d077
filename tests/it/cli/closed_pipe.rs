//! A reader that stops early (`sshtune report run.json | head -1`) is not an error: every command
//! whose stdout is a pipe closed before it writes exits 0, and nothing about the pipe (no panic,
//! no error line) reaches stderr. What a command says on stderr by design (`config`'s summary)
//! may stay.

use crate::support::{repo_root, sshtune, SSHTUNE};
use std::process::{Command, Stdio};

fn example(name: &str) -> String {
    repo_root()
        .join("examples/reports")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs `args` with stdout a pipe whose reading end is closed before the child writes.
fn into_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    let mut child = sshtune()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sshtune starts");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("sshtune ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_quiet(args: &[&str]) {
    let (code, err) = into_closed_pipe(args);
    assert_eq!(code, Some(0), "{args:?}: status {code:?}, stderr {err}");
    assert_no_complaint(&format!("{args:?}"), &err);
}

fn assert_no_complaint(what: &str, stderr: &str) {
    for word in ["panicked", "Broken pipe", "sshtune:", "error"] {
        assert!(
            !stderr.contains(word),
            "{what} wrote {word:?} to stderr: {stderr}"
        );
    }
}

#[test]
fn reports_of_every_kind_and_format() {
    let _lock = crate::support::shared();
    for file in ["bench.json", "pipeline.json", "speed.json", "storage.json"] {
        for format in ["table", "json", "markdown", "csv", "html"] {
            let path = example(file);
            let (code, err) = into_closed_pipe(&["report", &path, "--format", format]);
            if code == Some(2) {
                // A format this kind of report does not have: a usage error, not a pipe one.
                assert!(!err.contains("Broken pipe"), "{file} {format}: {err}");
                continue;
            }
            assert_eq!(code, Some(0), "{file} {format}: status {code:?}, {err}");
            assert_no_complaint(&format!("{file} {format}"), &err);
        }
    }
}

#[test]
fn config_speed_and_help() {
    let _lock = crate::support::shared();
    assert_quiet(&["config", "--from", &example("bench.json")]);
    assert_quiet(&[
        "speed",
        "--rows",
        "cipher",
        "--ciphers",
        "aes128-ctr",
        "--min-time",
        "0.01",
        "--samples",
        "3",
        "--no-reference",
    ]);
    assert_quiet(&["--help"]);
    for cmd in [
        "bench", "probe", "serve", "config", "speed", "pipeline", "storage", "report", "generate",
    ] {
        assert_quiet(&[cmd, "--help"]);
    }
}

#[test]
fn generate_listing_its_files() {
    let _lock = crate::support::shared();
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_string_lossy().into_owned();
    assert_quiet(&["generate", "man", &d]);
}

#[test]
fn the_shell_sees_success() {
    let _lock = crate::support::shared();
    // What a user types: the pipeline's status is sshtune's under pipefail.
    let path = example("bench.json");
    let out = Command::new("bash")
        .args(["-o", "pipefail", "-c"])
        .arg(format!(
            "{SSHTUNE:?} report {path:?} --format json | head -c 1 >/dev/null"
        ))
        .output()
        .expect("bash runs");
    crate::support::ok(&out);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
