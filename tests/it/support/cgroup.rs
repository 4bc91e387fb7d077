//! A CPU-limited cgroup (v1 `cpu.cfs_quota_us`, or v2 `cpu.max` where only v2 exists): puts a
//! server or a client on "a board" whose CPU the test knows. Dropping it kills what is still
//! inside (only processes the test started there) and removes the group, also on panic.
//!
//! The group also gets the highest scheduling weight: the quota is then the only limit, as on
//! a board whose CPU is slow but not shared, even when other work loads this machine (a group
//! with the default weight and two busy processes can fall well short of its quota then).

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicU32 = AtomicU32::new(0);
/// 20 ms rather than the kernel's default 100 ms: a throttled group then waits at most ~19 ms
/// instead of ~95 ms for its next slice, which keeps short transfers from depending on where in
/// the period they start. The kernel's minimum quota is 1 ms, so quotas start at 5%.
const PERIOD_US: u32 = 20_000;

pub struct CpuQuota {
    dir: PathBuf,
    /// % of one core.
    pub pct: u32,
}

impl CpuQuota {
    pub fn new(pct: u32) -> Self {
        assert!((5..=100).contains(&pct), "quota {pct}% of one core");
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let name = format!("sshtune-test-{}-{n}", std::process::id());
        let v1 = PathBuf::from("/sys/fs/cgroup/cpu");
        let quota = PERIOD_US / 100 * pct;
        let dir = if v1.join("cpu.cfs_quota_us").exists() {
            let dir = v1.join(&name);
            fs::create_dir(&dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
            let g = Self { dir, pct };
            write(&g.dir.join("cpu.cfs_period_us"), &PERIOD_US.to_string());
            write(&g.dir.join("cpu.cfs_quota_us"), &quota.to_string());
            write(&g.dir.join("cpu.shares"), "262144");
            return g;
        } else {
            let root = PathBuf::from("/sys/fs/cgroup");
            assert!(
                root.join("cgroup.controllers").exists(),
                "no cgroup cpu controller mounted (v1 /sys/fs/cgroup/cpu or v2 /sys/fs/cgroup)"
            );
            let _ = fs::write(root.join("cgroup.subtree_control"), "+cpu");
            root.join(&name)
        };
        fs::create_dir(&dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
        let g = Self { dir, pct };
        write(&g.dir.join("cpu.max"), &format!("{quota} {PERIOD_US}"));
        write(&g.dir.join("cpu.weight"), "10000");
        g
    }

    pub fn cores(&self) -> f64 {
        f64::from(self.pct) / 100.0
    }

    /// Command prefix that moves itself into the group, then execs its arguments (so the pid a
    /// caller holds is the program's, and everything it forks stays inside).
    pub fn wrapper(&self) -> Vec<String> {
        let procs = self.dir.join("cgroup.procs");
        vec![
            "sh".into(),
            "-c".into(),
            format!("echo $$ > '{}' && exec \"$@\"", procs.display()),
            "sh".into(),
        ]
    }
}

fn write(path: &std::path::Path, value: &str) {
    fs::write(path, value).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

impl Drop for CpuQuota {
    fn drop(&mut self) {
        let procs = self.dir.join("cgroup.procs");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let pids: Vec<i32> = fs::read_to_string(&procs)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            if pids.is_empty() || Instant::now() >= deadline {
                break;
            }
            for pid in pids {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = fs::remove_dir(&self.dir);
    }
}
