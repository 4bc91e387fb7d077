//! The server's persistent host key: created once in the user's state directory so clients
//! can pin it in known_hosts, like sshd's /etc/ssh keys.

use crate::transport::hostkey::Ed25519Key;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// `$XDG_STATE_HOME/sshtune` or `~/.local/state/sshtune`.
pub fn state_dir() -> Result<PathBuf> {
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d).join("sshtune"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("neither XDG_STATE_HOME nor HOME is set: pass --host-key")?;
    Ok(PathBuf::from(home).join(".local/state/sshtune"))
}

/// Loads the key at `path`, creating it (and its directory, mode 0700) on first use.
/// Returns the key and whether it was just created.
pub fn load_or_create(path: &Path) -> Result<(Ed25519Key, bool)> {
    if path.exists() {
        return Ok((Ed25519Key::load(path)?, false));
    }
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    let key = Ed25519Key::generate()?;
    key.save(path, "sshtune-serve-host-key")?;
    Ok((key, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_once_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state/host_ed25519");
        let (a, created) = load_or_create(&p).unwrap();
        assert!(created);
        let (b, created) = load_or_create(&p).unwrap();
        assert!(!created);
        assert_eq!(a.public_blob(), b.public_blob());
    }
}
