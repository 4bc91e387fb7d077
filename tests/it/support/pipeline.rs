//! Fixtures for the pipeline tests: datasets, tree comparison, a private TMPDIR to prove
//! nothing is left behind, and killing an embedded sshd with its sessions.

use sshtune::target::SshTarget;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The arguments that make a run one cell: aes128-ctr, whole-file, no ceilings measured.
pub const ONE_CELL: [&str; 5] = [
    "--no-ceilings",
    "--ciphers",
    "aes128-ctr",
    "--variants",
    "whole-file",
];

/// `sshtune pipeline DEST` with its temp files in `tmp`; `cmd` is sshtune, alone or under a
/// prefix (`ip netns exec`).
pub fn command(mut cmd: Command, tmp: &Path, dest: impl AsRef<OsStr>) -> Command {
    cmd.env("TMPDIR", tmp).arg("pipeline").arg(dest);
    cmd
}

/// `dir` on the server `target` reaches, as `pipeline` takes a destination: `HOST:DIR`.
pub fn remote_dir(target: &SshTarget, dir: &Path) -> String {
    format!("{}:{}", target.destination, dir.display())
}

/// A test's work directory: `src` holding a dataset of `make_source`, and `dest` and `tmp`
/// (the private TMPDIR) empty. Everything goes with `_dir`.
pub struct Dirs {
    pub src: PathBuf,
    pub dest: PathBuf,
    pub tmp: PathBuf,
    _dir: tempfile::TempDir,
}

pub fn dirs(big: usize) -> Dirs {
    let dir = tempfile::tempdir().unwrap();
    let d = Dirs {
        src: dir.path().join("src"),
        dest: dir.path().join("dest"),
        tmp: dir.path().join("tmp"),
        _dir: dir,
    };
    for p in [&d.dest, &d.tmp] {
        fs::create_dir(p).unwrap();
    }
    make_source(&d.src, big);
    d
}

/// A pipeline row's (or cell's row's) CPU share of `group` on `side`, % of one core; None
/// when the report has none.
pub fn cpu_pct(row: &serde_json::Value, side: &str, group: &str) -> Option<f64> {
    row["cpu"]
        .as_array()?
        .iter()
        .find(|c| c["side"] == side && c["group"] == group)
        .and_then(|c| c["pct"].as_f64())
}

/// Writes random files (one large, several small in a subdirectory) under `dir`.
pub fn make_source(dir: &Path, big: usize) {
    use rand::RngCore;
    let mut rng = rand::thread_rng();
    fs::create_dir_all(dir.join("sub")).unwrap();
    let mut buf = vec![0u8; big];
    rng.fill_bytes(&mut buf);
    fs::File::create(dir.join("big.bin"))
        .unwrap()
        .write_all(&buf)
        .unwrap();
    for i in 0..12 {
        let mut b = vec![0u8; 1000 + i * 4096];
        rng.fill_bytes(&mut b);
        fs::write(dir.join("sub").join(format!("f{i}.bin")), b).unwrap();
    }
}

/// Every regular file under `dir`, relative, sorted.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Asserts both trees hold the same files with the same bytes.
pub fn assert_same_tree(a: &Path, b: &Path) {
    let fa = files(a);
    assert_eq!(fa, files(b), "file lists differ");
    for f in &fa {
        assert!(
            fs::read(a.join(f)).unwrap() == fs::read(b.join(f)).unwrap(),
            "{} differs",
            f.display()
        );
    }
}

/// Every entry left in a directory (a private TMPDIR must be empty after a run).
pub fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Fails the test, naming them, when a run left anything in its private TMPDIR `tmp`.
#[track_caller]
pub fn assert_no_leftovers(tmp: &Path) {
    let left = leftovers(tmp);
    assert!(left.is_empty(), "temp files left: {left:?}");
}

fn ppid_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Kills the embedded sshd whose files live in `server_dir`, and every session it forked,
/// so established connections drop as when a server dies.
pub fn kill_sshd_and_sessions(server_dir: &Path) {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let needle = server_dir.display().to_string();
    let pids: Vec<u32> = fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    let listener = pids.iter().copied().find(|p| {
        fs::read(format!("/proc/{p}/cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(&needle))
            .unwrap_or(false)
    });
    let Some(listener) = listener else {
        panic!("embedded sshd not found")
    };
    let mut doomed = vec![listener];
    for &p in &pids {
        let mut cur = Some(p);
        for _ in 0..8 {
            match cur {
                Some(c) if c == listener => {
                    doomed.push(p);
                    break;
                }
                Some(c) if c > 1 => cur = ppid_of(c),
                _ => break,
            }
        }
    }
    for p in doomed {
        let _ = kill(Pid::from_raw(p as i32), Signal::SIGKILL);
    }
}

/// The ssh control masters still running whose socket lies under `tmp` (the run's TMPDIR):
/// their command lines. Read from /proc, so a master whatever its parent counts.
pub fn control_masters(tmp: &Path) -> Vec<String> {
    let needle = format!("ControlPath={}", tmp.display());
    let mut found = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(raw) = fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmdline.contains("ControlMaster=yes") && cmdline.contains(&needle) {
            found.push(cmdline);
        }
    }
    found
}
