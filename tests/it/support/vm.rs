//! Running a command inside a throwaway VM (`scripts/vm-run`): the real kernel features this
//! machine may lack (device-mapper, loop devices) are tested there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// The repository root (where `scripts/vm-run` lives).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Why the VM cannot run here, or `None` when it can. Tests that need it print this and fail
/// (not skip) unless `SSHTUNE_SKIP_VM=1` is set, so CI never passes silently without the VM.
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

/// Returns true when the test should go on; otherwise explains why and either skips (with
/// `SSHTUNE_SKIP_VM=1`) or panics.
pub fn require() -> bool {
    match unavailable() {
        None => true,
        Some(why) if std::env::var_os("SSHTUNE_SKIP_VM").is_some() => {
            eprintln!("skipping VM test: {why} (SSHTUNE_SKIP_VM is set)");
            false
        }
        Some(why) => panic!("{why}; set SSHTUNE_SKIP_VM=1 to skip VM tests deliberately"),
    }
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
