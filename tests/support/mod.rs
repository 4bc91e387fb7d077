//! Fixtures shared by the integration tests. Each area adds its own submodule file here.
#![allow(dead_code)]

pub mod native;

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

pub fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

pub mod cgroup;
pub mod netns;
pub mod pipeline;
pub mod scenario;
pub mod vm;
