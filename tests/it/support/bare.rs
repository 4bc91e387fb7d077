//! A bare server's PATH: a directory of links to the few tools a plain NAS-like shell has
//! (sh, coreutils, sed, grep) and, optionally, some raw-TCP receivers, handed to the test sshd
//! as its sessions' PATH. `sshtune` is never in it, so bench must do without its own sink.
//! The receivers can be swapped between runs of one server, so one namespace and one sshd
//! serve several methods.

use std::path::{Path, PathBuf};

/// What every bench script needs on the server.
const BASE: &[&str] = &[
    "sh", "cat", "head", "wc", "sed", "cut", "tr", "getconf", "uname", "nproc", "grep", "mktemp",
    "rm", "sleep", "dd",
];

/// Receivers a test may put on the server, by the id bench records (`ceiling.receiver`).
pub const RECEIVERS: &[(&str, &str)] = &[
    ("iperf3", "iperf3"),
    ("socat", "socat"),
    ("nc-openbsd", "nc.openbsd"),
    ("python3", "python3"),
    ("bash-dev-tcp", "bash"),
];

pub struct BarePath {
    dir: tempfile::TempDir,
}

/// The system's copy first: a version manager's shim on the test's PATH (pyenv) would need
/// that manager on the server's PATH too.
fn which(prog: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["/usr/bin", "/bin"]
        .iter()
        .map(PathBuf::from)
        .chain(std::env::split_paths(&path))
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

impl BarePath {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("sshtune-bare-path-")
            .tempdir()
            .expect("tempdir");
        for tool in BASE {
            let target = which(tool).unwrap_or_else(|| panic!("{tool} not found on this machine"));
            std::os::unix::fs::symlink(target, dir.path().join(tool)).expect("symlink");
        }
        Self { dir }
    }

    /// The directory, for `SetEnv PATH=`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Whether this machine has the receiver `id`.
    pub fn available(id: &str) -> bool {
        RECEIVERS
            .iter()
            .find(|(i, _)| *i == id)
            .and_then(|(_, prog)| which(prog))
            .is_some()
    }

    /// Leaves exactly receiver `id` on the PATH (none for `None`).
    pub fn only(&self, id: Option<&str>) {
        for (rid, prog) in RECEIVERS {
            let name = match *prog {
                "nc.openbsd" => "nc",
                p => p,
            };
            let link = self.dir.path().join(name);
            let _ = std::fs::remove_file(&link);
            if Some(*rid) == id {
                let target = which(prog).unwrap_or_else(|| panic!("{prog} not found"));
                std::os::unix::fs::symlink(target, &link).expect("symlink");
            }
        }
    }
}
