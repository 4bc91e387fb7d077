//! Leftovers of a run that was killed too hard to clean up (SIGKILL, power loss): mappings,
//! their mounts, loop devices and work directories whose owning process is gone.
//!
//! The pipeline's helper (`pipeline::luks::agent`) removes the same leftovers on a
//! destination without sshtune, in shell, by the same rules: a mapping `sshtune-<pid>-…`, a
//! loop device whose backing file lies directly in a work directory, and a work directory
//! `sshtune-storage-<pid>…` (a symlink to one included: the link is removed, not what it
//! points to), each only when `<pid>` is all digits and `/proc/<pid>` does not exist.

use super::cleanup::{undo, Resource};
use super::dmcrypt::{loops, mapping_owner, mappings, pid_alive, workdir_owner};
use std::path::{Path, PathBuf};

/// Removes what dead runs left; returns one line per removed (or stuck) item.
pub fn clean(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let dead_dir = |name: &str| workdir_owner(name).is_some_and(|p| !pid_alive(p));
    let dead_mapping = |name: &str| mapping_owner(name).is_some_and(|p| !pid_alive(p));
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mount_of = |pred: &dyn Fn(&str, &str) -> bool| -> Vec<PathBuf> {
        mounts
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                let (src, dst) = (it.next()?, it.next()?);
                pred(src, dst).then(|| PathBuf::from(dst))
            })
            .collect()
    };
    for (name, dm) in mappings() {
        if !dead_mapping(&name) {
            continue;
        }
        let mapper = format!("/dev/mapper/{name}");
        let devnode = format!("/dev/{dm}");
        for m in mount_of(&|src, _| src == mapper || src == devnode) {
            report(&mut out, &Resource::Mount(m));
        }
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
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let p = e.path();
            // Directories only, as the helper's `[ -d ]`: a link to one counts (and only the
            // link goes), a file of that name is not a run's.
            if dead_dir(&n) && p.is_dir() {
                for m in mount_of(&|_, dst| Path::new(dst).starts_with(&p)) {
                    report(&mut out, &Resource::Mount(m));
                }
                report(&mut out, &Resource::Dir(p));
            }
        }
    }
    out
}

fn report(out: &mut Vec<String>, r: &Resource) {
    match undo(r) {
        Ok(()) => out.push(format!("removed stale {r}")),
        Err(e) => out.push(format!("could not remove stale {r}: {e}")),
    }
}
