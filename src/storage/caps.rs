//! What this machine allows: each missing piece rules out a layer of the storage run, and the
//! report says which.

use super::crypto::{self, DriverChoice};
use crate::process::find_program;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Capabilities {
    pub root: bool,
    /// `/dev/mapper/control` exists (the kernel has device-mapper).
    pub device_mapper: bool,
    /// The `crypt` target is loaded or loadable.
    pub crypt_target: bool,
    pub loop_devices: bool,
    /// The kernel crypto user API (AF_ALG sockets), which `cryptsetup benchmark` needs.
    pub af_alg: bool,
    pub tools: Vec<Tool>,
    /// Kernel driver per dm-crypt cipher the plan uses.
    pub drivers: Vec<DriverChoice>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub path: Option<String>,
}

/// Programs the matrix runs.
pub const TOOLS: &[&str] = &["cryptsetup", "fio", "mkfs.ext4", "losetup", "blkid"];

impl Capabilities {
    /// Loads `loop` and `dm_crypt` when we may (root), then looks. Modules that are missing
    /// simply stay missing; nothing here fails.
    pub fn detect(specs: &[String]) -> Self {
        let root = nix::unistd::geteuid().is_root();
        if root {
            for m in ["loop", "dm_crypt", "algif_skcipher"] {
                let _ = std::process::Command::new("modprobe")
                    .arg("-q")
                    .arg(m)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status();
            }
        }
        let device_mapper = Path::new("/dev/mapper/control").exists()
            || std::fs::read_to_string("/proc/misc")
                .is_ok_and(|m| m.lines().any(|l| l.ends_with(" device-mapper")));
        let crypt_target = device_mapper && crypt_target_present();
        let proc_crypto = std::fs::read_to_string("/proc/crypto").unwrap_or_default();
        let algs = crate::sysinfo::proc_crypto::parse(&proc_crypto);
        Self {
            root,
            device_mapper,
            crypt_target,
            loop_devices: Path::new("/dev/loop-control").exists(),
            af_alg: af_alg_available(),
            tools: TOOLS
                .iter()
                .map(|t| Tool {
                    name: t.to_string(),
                    path: find_program(t).map(|p| p.display().to_string()),
                })
                .collect(),
            drivers: specs.iter().map(|s| crypto::choose(s, &algs)).collect(),
        }
    }

    pub fn has_tool(&self, name: &str) -> bool {
        self.tools
            .iter()
            .any(|t| t.name == name && t.path.is_some())
    }

    /// Why the dm-crypt matrix cannot run here, one reason per missing piece.
    pub fn matrix_blockers(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.root {
            out.push(
                "not root: mapping devices, loop devices and dropping caches need root".into(),
            );
        }
        if !self.device_mapper {
            out.push(
                "no device-mapper (/dev/mapper/control missing): no dm-crypt mapping can be made, \
                 so the whole dm-crypt matrix and its baseline are ruled out"
                    .into(),
            );
        } else if !self.crypt_target {
            out.push("device-mapper has no crypt target (dm_crypt module missing)".into());
        }
        if !self.loop_devices {
            out.push("no loop devices (/dev/loop-control missing): a file cannot be the target; use --device".into());
        }
        for t in ["cryptsetup", "fio", "mkfs.ext4", "losetup"] {
            if !self.has_tool(t) {
                out.push(format!("{t} not found in PATH"));
            }
        }
        out
    }

    /// What the kernel-speed layer will be, in words.
    pub fn speed_blocker(&self) -> Option<String> {
        if !self.af_alg {
            Some(
                "no AF_ALG (kernel crypto user API): kernel cipher speed cannot be measured; \
                 showing userspace (OpenSSL) speed instead, which is not what dm-crypt gets"
                    .into(),
            )
        } else if !self.has_tool("cryptsetup") {
            Some("cryptsetup not found: kernel cipher speed cannot be measured".into())
        } else {
            None
        }
    }
}

fn crypt_target_present() -> bool {
    if Path::new("/sys/module/dm_crypt").exists() {
        return true;
    }
    // Built into the kernel: dmsetup lists it.
    crate::process::run_capture(std::process::Command::new("dmsetup").arg("targets"))
        .is_ok_and(|t| t.lines().any(|l| l.starts_with("crypt ")))
}

/// An AF_ALG socket can be created only when the kernel has the crypto user API.
fn af_alg_available() -> bool {
    use nix::sys::socket::{socket, AddressFamily, SockFlag, SockType};
    socket(
        AddressFamily::Alg,
        SockType::SeqPacket,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .is_ok()
}
