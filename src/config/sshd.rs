//! The real `sshd` as the judge: `sshd -t` (does it accept this config?) and `sshd -T` (what
//! does it make of it?). Its answer beats ours wherever it is installed.

use crate::process::{find_program, last_line};
use anyhow::{bail, Context, Result};
use ciphers::OpenSshVersion;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

const INSTALL_HINT: &str = "sshd not found: install the OpenSSH server (Debian/Ubuntu: apt-get \
    install openssh-server) or pass --sshd PATH";

/// sshd run as root insists on its privilege-separation directory even for `-t`. How many of
/// our checks currently rely on it, and whether we created it (and so must remove it).
static PRIVSEP: Mutex<(usize, bool)> = Mutex::new((0, false));
const PRIVSEP_DIR: &str = "/run/sshd";

/// What `sshd -t` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub passed: bool,
    /// sshd's own words (stderr), empty when it had nothing to say.
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Sshd {
    pub path: PathBuf,
}

impl Sshd {
    pub fn find(explicit: Option<&Path>) -> Result<Self> {
        let path = match explicit {
            Some(p) if p.is_file() => p.to_path_buf(),
            Some(p) => bail!("--sshd {}: no such file", p.display()),
            None => find_program("sshd").context(INSTALL_HINT)?,
        };
        Ok(Self { path })
    }

    /// The release of this sshd (`sshd -V`, which prints the version and exits), if it says.
    pub fn version(&self) -> Option<OpenSshVersion> {
        let out = Command::new(&self.path)
            .arg("-V")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        OpenSshVersion::parse(&text)
    }

    /// `sshd -t -f config`: does sshd accept the whole configuration?
    pub fn test(&self, config: &Path) -> Result<Verdict> {
        let out = self.run_on("-t", config)?;
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Ok(Verdict {
            passed: out.status.success(),
            message: stderr,
        })
    }

    /// `sshd -T -f config`: the effective settings, as `keyword value` pairs (keywords lower case).
    pub fn dump(&self, config: &Path) -> Result<Vec<(String, String)>> {
        let out = self.run_on("-T", config)?;
        if !out.status.success() {
            bail!(
                "sshd -T -f {} failed: {}",
                config.display(),
                last_line(&String::from_utf8_lossy(&out.stderr))
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    /// `sshd MODE -f config` (`-t` or `-T`), with sshd's privilege-separation directory held.
    fn run_on(&self, mode: &str, config: &Path) -> Result<std::process::Output> {
        let _privsep = PrivsepGuard::acquire()?;
        Command::new(&self.path)
            .arg(mode)
            .arg("-f")
            .arg(config)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {} {mode}", self.path.display()))
    }

    /// The effective `Ciphers` list sshd derives from `config`.
    pub fn effective_ciphers(&self, config: &Path) -> Result<Vec<String>> {
        let dump = self.dump(config)?;
        let (_, v) = dump
            .iter()
            .find(|(k, _)| k == "ciphers")
            .context("sshd -T printed no ciphers line")?;
        Ok(v.split(',').map(String::from).collect())
    }

    /// Checks a drop-in on its own: a throwaway main config with a temporary host key that
    /// includes it, so the verdict does not depend on (or touch) the system's config.
    pub fn check_dropin(&self, dropin: &str) -> Result<DropinCheck> {
        let dir = tempfile::Builder::new()
            .prefix("sshtune-check-")
            .tempdir()
            .context("creating a temporary directory for sshd -t")?;
        let key = dir.path().join("host_ed25519");
        crate::process::run_capture(
            Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "sshtune-check", "-f"])
                .arg(&key),
        )
        .context("generating a temporary host key with ssh-keygen")?;
        let conf_d = dir.path().join("sshd_config.d");
        std::fs::create_dir(&conf_d)?;
        std::fs::write(conf_d.join("50-sshtune.conf"), dropin)?;
        let main = dir.path().join("sshd_config");
        std::fs::write(
            &main,
            format!(
                "# temporary config for sshtune config --check\nHostKey {}\nInclude {}/*.conf\n",
                key.display(),
                conf_d.display()
            ),
        )?;
        let verdict = self.test(&main)?;
        let effective = if verdict.passed {
            Some(self.effective_ciphers(&main)?)
        } else {
            None
        };
        Ok(DropinCheck { verdict, effective })
    }
}

#[derive(Debug, Clone)]
pub struct DropinCheck {
    pub verdict: Verdict,
    /// sshd's effective Ciphers with the drop-in, when it passed.
    pub effective: Option<Vec<String>>,
}

struct PrivsepGuard;

impl PrivsepGuard {
    fn acquire() -> Result<Option<Self>> {
        if !nix::unistd::geteuid().is_root() {
            return Ok(None);
        }
        let mut state = PRIVSEP.lock().unwrap_or_else(|e| e.into_inner());
        if state.0 == 0 && !Path::new(PRIVSEP_DIR).is_dir() {
            std::fs::create_dir_all(PRIVSEP_DIR).with_context(|| {
                format!("creating sshd's privilege separation directory {PRIVSEP_DIR}")
            })?;
            state.1 = true;
        }
        state.0 += 1;
        Ok(Some(Self))
    }
}

impl Drop for PrivsepGuard {
    fn drop(&mut self) {
        let mut state = PRIVSEP.lock().unwrap_or_else(|e| e.into_inner());
        state.0 -= 1;
        if state.0 == 0 && state.1 {
            let _ = std::fs::remove_dir(PRIVSEP_DIR);
            state.1 = false;
        }
    }
}
