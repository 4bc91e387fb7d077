//! Bad input for `sshtune pipeline`: one clear line, a non-zero exit, nothing left behind.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::pipeline::{assert_no_leftovers, control_masters, files, kill_sshd_and_sessions};
use support::{output, sshtune, stderr};

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

/// `sshtune pipeline DEST --no-ceilings --ciphers aes128-ctr`, temp files in the test's own
/// directory.
fn pipeline(w: &Work, dest: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = support::pipeline::command(sshtune(), &w.tmp, dest);
    c.args(["--no-ceilings", "--ciphers", "aes128-ctr"]);
    c
}

/// Runs the pipeline expecting failure; returns the error line.
fn fails(w: &Work, dest: &Path, extra: &[&str]) -> String {
    let o = output(pipeline(w, dest).args(["--repeat", "1", "-q"]).args(extra));
    assert!(!o.status.success(), "expected a failure");
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("sshtune: "), "{err}");
    assert_no_leftovers(&w.tmp);
    err
}

/// Starts a long run (20 copies with aes128-ctr) into `dest`, calls `stop` with its pid 300 ms
/// after the first timed copy, and returns the exit status and the stderr lines after that copy's.
fn stopped_mid_run(
    w: &Work,
    dest: &str,
    extra: &[&str],
    stop: impl FnOnce(u32),
) -> (std::process::ExitStatus, Vec<String>) {
    let mut child = pipeline(w, dest)
        .args(["--repeat", "20", "--variants", "whole-file"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(err));
    for line in lines.by_ref() {
        if line.unwrap().contains("whole-file#1:") {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    stop(child.id());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    (child.wait().unwrap(), rest)
}

#[test]
fn missing_destination_is_named() {
    let _lock = support::shared();
    let w = work();
    let err = fails(&w, &w.dest.join("nope"), &["--size", "1M"]);
    assert!(err.contains("does not exist"), "{err}");
}

/// A destination on a read-only tmpfs, and one on a tmpfs too small for the run: each refused
/// in one line before anything is written.
#[test]
fn read_only_and_full_destinations_are_refused_before_writing() {
    let Some(_lock) = support::shared_as_root("mounting a tmpfs needs root") else {
        return;
    };
    for (mount, size, says) in [
        ("ro,size=1m", "1M", &["not writable", "Read-only"][..]),
        ("size=1m", "8M", &["full"][..]),
    ] {
        let w = work();
        let _m = support::procs::mount_tmpfs(&w.dest, mount);
        let err = fails(&w, &w.dest, &["--size", size]);
        assert!(says.iter().all(|s| err.contains(s)), "{mount}: {err}");
        assert!(
            files(&w.dest).is_empty(),
            "{mount}: the run directory was not removed"
        );
    }
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
    let mut extra: Vec<&str> = server.target.options.iter().map(String::as_str).collect();
    extra.extend(["--size", "256M", "--format", "json"]);
    // After the first timed run the next one starts at once: kill the server in the middle.
    let (status, rest) =
        stopped_mid_run(&w, &dest, &extra, |_| kill_sshd_and_sessions(server.dir()));
    assert!(!status.success());
    let last = rest.last().cloned().unwrap_or_default();
    let errors: Vec<&String> = rest.iter().filter(|l| l.starts_with("sshtune:")).collect();
    assert_eq!(errors.len(), 1, "{rest:?}");
    eprintln!("error line: {last}");
    assert!(
        last.contains("connection") || last.contains("lost"),
        "{last}"
    );
    assert_no_leftovers(&w.tmp);
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

/// `HOST:DIR --luks` on a host whose kernel has no device-mapper (this one): the helper on
/// the destination refuses in one line, after removing what a killed run left there — a
/// work directory whose owner is gone, with a loop device still attached to its file. A
/// destination directory that does not exist is refused as without `--luks`.
#[test]
fn luks_on_a_host_without_device_mapper_is_refused_after_removing_a_killed_runs_leftovers() {
    let Some(_lock) = support::shared_as_root("loop devices need root") else {
        return;
    };
    let w = work();
    let dead = (4_000_000..4_194_304)
        .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        .unwrap();
    let killed = w.dest.join(format!("sshtune-storage-{dead}-killed"));
    std::fs::create_dir(&killed).unwrap();
    let img = killed.join("luks.img");
    std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
    let lo = output(Command::new("losetup").args(["--find", "--show"]).arg(&img));
    assert!(lo.status.success(), "losetup: {}", stderr(&lo));
    let server = sshtune::embedded::EmbeddedSshd::start("").unwrap();
    let dest = format!("{}:{}", server.target.destination, w.dest.display());
    let mut extra: Vec<&str> = server.target.options.iter().map(String::as_str).collect();
    extra.extend(["--size", "1M", "--luks"]);
    let err = fails(&w, Path::new(&dest), &extra);
    assert!(err.contains("--luks needs device-mapper"), "{err}");
    let attached = output(Command::new("losetup").arg("-j").arg(&img));
    let attached = String::from_utf8_lossy(&attached.stdout).into_owned();
    if !attached.trim().is_empty() {
        // Leave the machine as it was, then fail.
        let dev = String::from_utf8_lossy(&lo.stdout).trim().to_string();
        let _ = Command::new("losetup").args(["-d", &dev]).status();
        panic!("the killed run's loop device is still attached: {attached}");
    }
    assert!(
        files(&w.dest).is_empty() && !killed.exists(),
        "left in the destination: {:?}",
        files(&w.dest)
    );
    // A directory that is not there is named as the run without --luks names it.
    let missing = w.dest.join("not-there");
    let dest = format!("{}:{}", server.target.destination, missing.display());
    let err = fails(&w, Path::new(&dest), &extra);
    let said = format!("destination directory {} does not exist", missing.display());
    assert!(err.contains(&said), "{err}");
    drop(server);
}

/// Ctrl-C during a copy to a local directory: the run directory is removed through the
/// embedded server, which the signal must not have stopped first, and the exit is 130.
#[test]
fn ctrl_c_mid_run_removes_the_run_directory_through_the_embedded_server() {
    let _lock = support::shared();
    let w = work();
    let dest = w.dest.display().to_string();
    let (status, rest) = stopped_mid_run(&w, &dest, &["--size", "64M"], |pid| {
        let pid = nix::unistd::Pid::from_raw(pid as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    });
    assert_eq!(status.code(), Some(130), "{rest:?}");
    let last = rest.last().cloned().unwrap_or_default();
    assert!(
        last.contains("interrupted") && !last.contains("could not"),
        "{rest:?}"
    );
    assert!(files(&w.dest).is_empty(), "left: {:?}", files(&w.dest));
    // The control master (socket under the run's TMPDIR) went with the clean-up it carried.
    assert_eq!(control_masters(&w.tmp), Vec::<String>::new());
    assert_no_leftovers(&w.tmp);
}
