//! CPU quotas from cgroups (v1 `cpu.cfs_quota_us`, v2 `cpu.max`): a process limited to 20% of
//! a core is saturated at 20%, and verdicts must know that.

use std::path::Path;

/// CPU available to `pid` in cores, when a quota on its own cgroup limits it.
pub fn quota_cores(pid: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    quota_from(&text, Path::new("/sys/fs/cgroup"))
}

fn quota_from(cgroup: &str, root: &Path) -> Option<f64> {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    let mut v2 = None;
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctl, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if ctl.split(',').any(|c| c == "cpu") {
            let dir = root.join("cpu").join(rel);
            let q: f64 = read(dir.join("cpu.cfs_quota_us"))?.trim().parse().ok()?;
            let p: f64 = read(dir.join("cpu.cfs_period_us"))?.trim().parse().ok()?;
            return (q > 0.0 && p > 0.0).then(|| q / p);
        }
        if ctl.is_empty() {
            v2 = read(root.join(rel).join("cpu.max"));
        }
    }
    let v2 = v2?;
    let (q, p) = v2.trim().split_once(' ')?;
    let (q, p): (f64, f64) = (q.parse().ok()?, p.parse().ok()?);
    (q > 0.0 && p > 0.0).then(|| q / p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v2() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path().join("cpu/box");
        std::fs::create_dir_all(&g).unwrap();
        std::fs::write(g.join("cpu.cfs_quota_us"), "20000\n").unwrap();
        std::fs::write(g.join("cpu.cfs_period_us"), "100000\n").unwrap();
        assert_eq!(quota_from("4:cpu,cpuacct:/box\n", dir.path()), Some(0.2));
        std::fs::write(g.join("cpu.cfs_quota_us"), "-1\n").unwrap();
        assert_eq!(quota_from("4:cpu,cpuacct:/box\n", dir.path()), None);
        let v2 = dir.path().join("u");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(v2.join("cpu.max"), "50000 100000\n").unwrap();
        assert_eq!(quota_from("0::/u\n", dir.path()), Some(0.5));
        std::fs::write(v2.join("cpu.max"), "max 100000\n").unwrap();
        assert_eq!(quota_from("0::/u\n", dir.path()), None);
    }
}
