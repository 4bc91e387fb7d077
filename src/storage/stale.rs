//! Leftovers of a run that was killed too hard to clean up (SIGKILL, power loss): mappings,
//! their mounts, loop devices and work directories whose owning process is gone.

use super::cleanup::{undo, Resource};
use super::dmcrypt::{loops, mappings, owner_pid, pid_alive, PREFIX};
use std::path::{Path, PathBuf};

/// Work directories are `sshtune-storage-<pid>-<random>` in the chosen directory.
pub const WORKDIR_PREFIX: &str = "sshtune-storage-";

/// Removes what dead runs left; returns one line per removed (or stuck) item.
pub fn clean(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let dead = |name: &str| owner_pid(name).is_some_and(|p| !pid_alive(p));
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
        if !name.starts_with(PREFIX) || !dead(&name) {
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
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| n.starts_with(WORKDIR_PREFIX));
        if in_workdir.is_some_and(|n| dead(&n)) {
            report(&mut out, &Resource::Loop(dev));
        }
    }
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(WORKDIR_PREFIX) && dead(&n) {
                let p = e.path();
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
