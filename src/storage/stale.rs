//! Leftovers of a run that was killed too hard to clean up (SIGKILL, power loss): mappings,
//! their mounts, loop devices and work directories whose owning process is gone.
//!
//! The pipeline's helper (`pipeline::luks::agent`) removes the same leftovers on a
//! destination without sshtune, in shell, by the same rules: a mapping `sshtune-<pid>-…`, a
//! loop device whose backing file lies directly in a work directory, and a work directory
//! `sshtune-storage-<pid>…` (a symlink to one included: the link is removed, not what it
//! points to), each only when `<pid>` is all digits and `/proc/<pid>` does not exist.
//!
//! Mounts are found in the kernel's table (`mounts`), by the mapping's device number or by
//! a mount point inside the work directory's real path, never by asking a path in the
//! directory whether it is mounted: a user who can write there could make `mnt` a link to
//! any mount on the machine. A mount that will not come off (busy) is left with the
//! directory it is in, which is then not removed either: removing it would delete files
//! inside a mounted filesystem.

use super::cleanup::{undo, unmount, Resource};
use super::dmcrypt::{loops, mapping_owner, mappings, pid_alive, workdir_owner};
use super::mounts;
use std::path::{Path, PathBuf};

/// Removes what dead runs left; returns one line per removed (or stuck) item.
pub fn clean(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let dead_dir = |name: &str| workdir_owner(name).is_some_and(|p| !pid_alive(p));
    let dead_mapping = |name: &str| mapping_owner(name).is_some_and(|p| !pid_alive(p));
    for (name, dm) in mappings() {
        if !dead_mapping(&name) {
            continue;
        }
        let dev = std::fs::read_to_string(format!("/sys/block/{dm}/dev")).unwrap_or_default();
        unmount_all(&mut out, mounts::of_device(&mounts::table(), dev.trim()));
        report(&mut out, &Resource::Mapping(name));
    }
    for (dev, backing) in loops() {
        let in_workdir = Path::new(&backing)
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned());
        if in_workdir.is_some_and(|n| dead_dir(&n)) {
            report(&mut out, &Resource::Loop(dev));
        }
    }
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let n = e.file_name();
            let p = e.path();
            // Directories only, as the helper's `[ -d ]`: a link to one counts (and only the
            // link goes), a file of that name is not a run's.
            if !dead_dir(&n.to_string_lossy()) || !p.is_dir() {
                continue;
            }
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            if !link && !unmount_all(&mut out, mounts::under(&mounts::table(), &real.join(&n))) {
                continue;
            }
            report(&mut out, &Resource::Dir(p));
        }
    }
    out
}

/// Unmounts each of `points` in turn; stops at the first that stays, and says so.
fn unmount_all(out: &mut Vec<String>, points: Vec<PathBuf>) -> bool {
    for m in points {
        if let Err(e) = unmount(&m, false) {
            out.push(format!("could not remove stale mount {}: {e}", m.display()));
            return false;
        }
        out.push(format!("removed stale mount {}", m.display()));
    }
    true
}

fn report(out: &mut Vec<String>, r: &Resource) {
    match undo(r) {
        Ok(()) => out.push(format!("removed stale {r}")),
        Err(e) => out.push(format!("could not remove stale {r}: {e}")),
    }
}
