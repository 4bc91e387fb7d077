//! Running a command inside a throwaway VM (`scripts/vm-run`): the real kernel features this
//! machine may lack (device-mapper, loop devices) are tested there.

use super::repo_root;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// Why the VM cannot run here, or `None` when it can.
pub fn unavailable() -> Option<String> {
    if !super::is_root() {
        return Some("VM tests need root (loop devices and device-mapper inside the VM)".into());
    }
    let has = |p: &str| sshtune::process::find_program(p).is_some();
    if !has("vng") {
        return Some("vng (virtme-ng) not installed: pip install -r tests/requirements.txt".into());
    }
    if !has("qemu-system-x86_64") {
        return Some("qemu-system-x86_64 not installed: apt-get install qemu-system-x86".into());
    }
    let kernels = std::fs::read_dir("/boot")
        .map(|d| {
            d.filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().starts_with("vmlinuz-"))
        })
        .unwrap_or(false);
    if !kernels {
        return Some("no kernel in /boot: apt-get install linux-image-amd64".into());
    }
    None
}

/// Whether a VM test may go on; without the VM it skips outside CI and fails with `CI` set
/// (`support::require`).
pub fn require() -> bool {
    super::require(unavailable())
}

/// Options of one VM run.
pub struct Vm {
    pub timeout: Duration,
    pub memory: String,
    pub rwdirs: Vec<PathBuf>,
}

impl Default for Vm {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            memory: "1G".into(),
            rwdirs: Vec::new(),
        }
    }
}

/// What happened inside: the command's exit code (None: VM failed or timed out) and console.
pub struct VmOutput {
    pub code: Option<i32>,
    pub output: Output,
}

impl VmOutput {
    pub fn console(&self) -> String {
        format!(
            "{}{}",
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }
}

impl Vm {
    /// Writable directory shared with the VM (the rest of the host filesystem is read-only
    /// inside, and VM writes elsewhere vanish with it).
    pub fn rwdir(mut self, dir: &Path) -> Self {
        self.rwdirs.push(dir.to_path_buf());
        self
    }

    /// Runs `shell_command` as root inside the VM; vm-run's own failures (125: no VM, 124:
    /// timeout) are reported as `code: None`.
    pub fn run(&self, shell_command: &str) -> VmOutput {
        let mut cmd = Command::new(repo_root().join("scripts/vm-run"));
        cmd.arg("--timeout")
            .arg(self.timeout.as_secs().to_string())
            .arg("--memory")
            .arg(&self.memory);
        for d in &self.rwdirs {
            cmd.arg("--rwdir").arg(d);
        }
        cmd.arg("--").arg(shell_command).current_dir(repo_root());
        let output = cmd.output().expect("scripts/vm-run starts");
        let code = match output.status.code() {
            Some(124) | Some(125) | None => None,
            Some(c) => Some(c),
        };
        VmOutput { code, output }
    }
}
