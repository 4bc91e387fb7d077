//! Fixtures shared by the integration tests. Each area adds its own submodule file here.

pub mod lock;
pub mod native;
pub mod source;

pub use lock::{exclusive, shared};

use std::process::{Command, Output};

/// The `sshtune` binary built for this test run.
pub fn sshtune() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sshtune"))
}

/// Runs a command and returns its output, failing the test with stderr if it cannot start.
pub fn output(cmd: &mut Command) -> Output {
    cmd.output().expect("command starts")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh unencrypted ed25519 key pair at `path` (and `path.pub`), made by ssh-keygen.
pub fn keygen(path: &std::path::Path) -> std::path::PathBuf {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen runs");
    assert!(st.success(), "ssh-keygen failed for {}", path.display());
    path.to_path_buf()
}

pub fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

pub mod bare;
pub mod cgroup;
pub mod netns;
pub mod pipeline;
pub mod procs;
pub mod scenario;
pub mod vm;
