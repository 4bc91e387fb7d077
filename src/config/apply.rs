//! Installing a drop-in so that sshd's config is never left in a state sshd rejects: check
//! the config before, write the drop-in atomically after backing up what was there, check the
//! whole config with `sshd -t`, and put the old state back if sshd says no.

use super::sshd::Sshd;
use crate::exit::PolicyFailure;
use anyhow::{bail, Context, Result};
use sshd_config::{ConfigSet, Flavor, Origin};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// sshd resolves relative `Include` paths against its configuration directory, whatever
/// `-f` says.
pub const SSHD_CONFIG_DIR: &str = "/etc/ssh";

#[derive(Debug, Clone)]
pub struct Applied {
    /// Copy of the file that was replaced, if there was one.
    pub backup: Option<PathBuf>,
    /// sshd's effective Ciphers after the change.
    pub effective: Vec<String>,
    /// When another line decides Ciphers before the drop-in (first value wins), where it is.
    pub shadowed_by: Option<Origin>,
}

/// Writes `content` to `dropin` as part of the sshd configuration `main`.
pub fn apply(sshd: &Sshd, main: &Path, dropin: &Path, content: &str) -> Result<Applied> {
    let before = sshd.test(main)?;
    if !before.passed {
        bail!(
            "{} is already rejected by sshd before any change ({}); fix it first, nothing was written",
            main.display(),
            one_line(&before.message)
        );
    }
    let written = Written::write(dropin, content)?;
    let restore = |why: String| written.undo(why, false);

    let set = match ConfigSet::load(main, Flavor::Sshd, Path::new(SSHD_CONFIG_DIR)) {
        Ok(s) => s,
        Err(e) => return Err(restore(format!("reading {}: {e}", main.display()))),
    };
    let canonical = std::fs::canonicalize(dropin).unwrap_or_else(|_| dropin.to_path_buf());
    let included = set
        .paths()
        .any(|p| std::fs::canonicalize(p).is_ok_and(|p| p == canonical));
    if !included {
        return Err(restore(format!(
            "{} does not Include {} (no Include pattern matches it), so sshd would ignore it",
            main.display(),
            dropin.display()
        )));
    }
    let after = match sshd.test(main) {
        Ok(v) => v,
        Err(e) => return Err(restore(format!("running sshd -t: {e:#}"))),
    };
    // Ctrl-C between writing and judging: leave things as they were.
    if crate::process::interrupted() {
        return Err(restore("stopped before sshd's verdict counted".into())
            .context(crate::process::Interrupted));
    }
    if !after.passed {
        return Err(written.undo(
            format!(
                "sshd -t rejects the config with the drop-in: {}",
                one_line(&after.message)
            ),
            true,
        ));
    }
    let effective = sshd.effective_ciphers(main)?;
    let shadowed_by = set
        .effective("Ciphers")
        .map(|s| s.origin)
        .filter(|o| std::fs::canonicalize(&o.path).map_or(true, |p| p != canonical));
    Ok(Applied {
        backup: written.backup,
        effective,
        shadowed_by,
    })
}

/// A drop-in written over what was there, with what it takes to put that back.
struct Written<'a> {
    dropin: &'a Path,
    /// The replaced file's bytes, `None` when there was none.
    previous: Option<Vec<u8>>,
    /// Copy of the replaced file beside it.
    backup: Option<PathBuf>,
}

impl<'a> Written<'a> {
    /// Backs up an existing `dropin` beside it (timestamped), then writes `content`.
    fn write(dropin: &'a Path, content: &str) -> Result<Self> {
        let dir = dropin
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.is_dir() {
            bail!("{}: directory does not exist", dir.display());
        }
        let backup = if dropin.exists() {
            let stamp = chrono::Local::now().format("%Y%m%dT%H%M%S");
            let name = format!(
                "{}.sshtune-backup-{stamp}",
                dropin
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            );
            let b = dir.join(name);
            std::fs::copy(dropin, &b)
                .with_context(|| format!("backing up {} to {}", dropin.display(), b.display()))?;
            Some(b)
        } else {
            None
        };
        let previous = match &backup {
            Some(b) => Some(std::fs::read(b)?),
            None => None,
        };
        write_atomic(dropin, content.as_bytes())?;
        Ok(Self {
            dropin,
            previous,
            backup,
        })
    }

    /// Undoes the write. `verdict`: the reason is sshd's own "no", which, cleanly rolled
    /// back, is a policy failure (exit status 3) rather than a failure to run.
    fn undo(&self, why: String, verdict: bool) -> anyhow::Error {
        let dropin = self.dropin;
        let undo = match &self.previous {
            Some(bytes) => write_atomic(dropin, bytes),
            None => std::fs::remove_file(dropin)
                .with_context(|| format!("removing {}", dropin.display())),
        };
        match undo {
            Ok(()) => {
                // The restored file is the backup's twin; keeping both would only confuse.
                if let Some(b) = &self.backup {
                    let _ = std::fs::remove_file(b);
                }
                let msg = format!("{why}; rolled back, {} is as it was", dropin.display());
                if verdict {
                    PolicyFailure(msg).into()
                } else {
                    anyhow::anyhow!(msg)
                }
            }
            Err(e) => anyhow::anyhow!(
                "{why}; ROLLBACK FAILED ({e:#}): restore {} from {} by hand",
                dropin.display(),
                self.backup
                    .as_ref()
                    .map(|b| b.display().to_string())
                    .unwrap_or_else(|| "(none: delete it)".into())
            ),
        }
    }
}

/// Same-directory temp file, fsync, rename: readers see the old file or the new one, never
/// half of either.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".sshtune-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644))?;
    tmp.persist(path)
        .with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

pub(crate) fn one_line(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if lines.is_empty() {
        "(sshd printed nothing)".into()
    } else {
        lines.join(" / ")
    }
}

/// How to make a running sshd read the new config; reloading stays the user's decision.
pub fn reload_hint() -> &'static str {
    "reload sshd to use it: systemctl reload ssh (Debian/Ubuntu), systemctl reload sshd \
     (Fedora/Arch), or kill -HUP $(cat /run/sshd.pid)"
}
