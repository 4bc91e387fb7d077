//! Bad input for `sshtune pipeline`: one clear line, a non-zero exit, nothing left behind.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::pipeline::{files, kill_sshd_and_sessions, leftovers};
use support::{is_root, output, sshtune, stderr};

struct Work {
    _dir: tempfile::TempDir,
    tmp: PathBuf,
    dest: PathBuf,
}

fn work() -> Work {
    let d = tempfile::tempdir().unwrap();
    let tmp = d.path().join("tmp");
    let dest = d.path().join("dest");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::create_dir(&dest).unwrap();
    Work { tmp, dest, _dir: d }
}

/// Runs the pipeline expecting failure; returns the error line.
fn fails(w: &Work, dest: &Path, extra: &[&str]) -> String {
    let o = output(
        sshtune()
            .env("TMPDIR", &w.tmp)
            .arg("pipeline")
            .arg(dest)
            .args([
                "--no-ceilings",
                "--repeat",
                "1",
                "-q",
                "--ciphers",
                "aes128-ctr",
            ])
            .args(extra),
    );
    assert!(!o.status.success(), "expected a failure");
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("sshtune: "), "{err}");
    assert!(
        leftovers(&w.tmp).is_empty(),
        "temp files left: {:?}",
        leftovers(&w.tmp)
    );
    err
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, opts: &str) -> Self {
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(at)
            .status()
            .unwrap();
        assert!(st.success(), "mount tmpfs failed");
        Tmpfs(at.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn missing_destination_is_named() {
    let _lock = support::shared();
    let w = work();
    let err = fails(&w, &w.dest.join("nope"), &["--size", "1M"]);
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn read_only_destination_is_refused() {
    let _lock = support::shared();
    assert!(is_root(), "mounting a read-only tmpfs needs root");
    let w = work();
    let _m = Tmpfs::mount(&w.dest, "ro,size=1m");
    let err = fails(&w, &w.dest, &["--size", "1M"]);
    assert!(
        err.contains("not writable") && err.contains("Read-only"),
        "{err}"
    );
}

#[test]
fn full_destination_is_detected_before_writing() {
    let _lock = support::shared();
    assert!(is_root(), "mounting a tmpfs needs root");
    let w = work();
    let _m = Tmpfs::mount(&w.dest, "size=1m");
    let err = fails(&w, &w.dest, &["--size", "8M"]);
    assert!(err.contains("full"), "{err}");
    assert!(
        files(&w.dest).is_empty(),
        "the run directory was not removed"
    );
}

#[test]
fn rsync_missing_on_the_remote_side() {
    let _lock = support::shared();
    let w = work();
    let err = fails(
        &w,
        &w.dest,
        &["--size", "1M", "--rsync-path", "/nonexistent/bin/rsync"],
    );
    assert!(err.contains("rsync") && err.contains("missing"), "{err}");
    assert!(files(&w.dest).is_empty());
}

#[test]
fn connection_dropped_mid_run_is_one_line_and_local_files_go() {
    let _lock = support::shared();
    let w = work();
    let server = sshtune::embedded::EmbeddedSshd::start("").unwrap();
    let dest = format!("{}:{}", server.target.destination, w.dest.display());
    let mut child = sshtune()
        .env("TMPDIR", &w.tmp)
        .arg("pipeline")
        .arg(&dest)
        .args(&server.target.options)
        .args([
            "--no-ceilings",
            "--repeat",
            "20",
            "--variants",
            "whole-file",
            "--size",
            "256M",
        ])
        .args(["--ciphers", "aes128-ctr", "--format", "json"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(err));
    // After the first timed run the next one starts at once: kill the server in the middle.
    for line in lines.by_ref() {
        let line = line.unwrap();
        if line.contains("whole-file#1:") {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    kill_sshd_and_sessions(server.dir());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert!(!status.success());
    let last = rest.last().cloned().unwrap_or_default();
    let errors: Vec<&String> = rest.iter().filter(|l| l.starts_with("sshtune:")).collect();
    assert_eq!(errors.len(), 1, "{rest:?}");
    eprintln!("error line: {last}");
    assert!(
        last.contains("connection") || last.contains("lost"),
        "{last}"
    );
    assert!(
        leftovers(&w.tmp).is_empty(),
        "temp files left: {:?}",
        leftovers(&w.tmp)
    );
    drop(server);
}

#[test]
fn a_misspelt_cipher_or_bad_output_is_refused_before_anything_runs() {
    let _lock = support::shared();
    let w = work();
    let dest = format!("no-such-host.invalid:{}", w.dest.display());
    let o = output(sshtune().env("TMPDIR", &w.tmp).args([
        "pipeline",
        &dest,
        "-q",
        "--ciphers",
        "aes128-ctx",
    ]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("did you mean aes128-ctr?"),
        "{}",
        stderr(&o)
    );
    let bad = w.dest.join("missing/report.json");
    let err = fails(&w, Path::new(&dest), &["--output", bad.to_str().unwrap()]);
    assert!(err.contains("--output"), "{err}");
    assert!(files(&w.dest).is_empty());
}

#[test]
fn luks_refuses_a_remote_destination_before_connecting() {
    let _lock = support::shared();
    let w = work();
    // `.invalid` never resolves: the refusal must come before any ssh is started.
    let err = fails(
        &w,
        Path::new("nohost.invalid:/srv/x"),
        &["--size", "1M", "--luks"],
    );
    assert!(
        err.contains("--luks needs a destination directory on this machine"),
        "{err}"
    );
}

#[test]
fn luks_loop_file_too_big_for_the_destination_is_refused_before_measuring() {
    let _lock = support::shared();
    assert!(is_root(), "mounting a tmpfs needs root");
    let w = work();
    // 8 MiB of data fits in 48 MiB, but its loop file (8 × 1.25 + 64 MiB) is more than half.
    let _m = Tmpfs::mount(&w.dest, "size=48m");
    let err = fails(&w, &w.dest, &["--size", "8M", "--luks"]);
    assert!(
        err.contains("--luks needs") && err.contains("loop file"),
        "{err}"
    );
    assert!(
        files(&w.dest).is_empty(),
        "the run directory was not removed"
    );
}
