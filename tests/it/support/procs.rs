//! Processes as the fault tests look at them: a server's session processes found by parentage,
//! the one doing a transfer's work found by its command line, and everything left in a network
//! namespace listed by the kernel (`ip netns pids`), not by a name we guessed.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

/// Every process's id.
pub fn all() -> Vec<u32> {
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The command line's words, None once the process is gone (or a zombie, or a kernel
/// thread: they have none).
pub fn cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let words: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    (!words.is_empty()).then_some(words)
}

pub fn ppid(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `pid`'s ancestors, its parent first, up to (not including) `top` or init.
pub fn ancestors(pid: u32, top: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut cur = ppid(pid);
    while let Some(p) = cur.filter(|&p| p > 1 && p != top) {
        out.push(p);
        cur = ppid(p);
    }
    out
}

/// The listening sshd of an `EmbeddedSshd` (the process whose command line names its
/// directory).
pub fn sshd_listener(server_dir: &Path) -> u32 {
    let needle = server_dir.display().to_string();
    all()
        .into_iter()
        .find(|&p| cmdline(p).is_some_and(|c| c.iter().any(|w| w.contains(&needle))))
        .expect("the embedded sshd is running")
}

/// The first process under `root` whose command line `matches`, polled every 10 ms until
/// `within` has passed.
pub fn wait_for_descendant(
    root: u32,
    within: Duration,
    matches: impl Fn(&[String]) -> bool,
) -> Option<u32> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let found = sshtune::process::descendants(root as i32)
            .into_iter()
            .map(|p| p as u32)
            .find(|&p| cmdline(p).is_some_and(|c| matches(&c)));
        if found.is_some() {
            return found;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// Every process in network namespace `ns` with its command line, as the kernel lists them.
pub fn in_netns(ns: &str) -> Vec<(u32, String)> {
    let out = std::process::Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .expect("ip netns pids runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter_map(|p| Some((p, cmdline(p)?.join(" "))))
        .collect()
}

/// Waits up to `within` until namespace `ns` holds only the processes `keep` accepts; returns
/// what else is still there (empty when it emptied in time).
pub fn netns_settles(ns: &str, within: Duration, keep: impl Fn(u32) -> bool) -> Vec<String> {
    let deadline = Instant::now() + within;
    loop {
        let left: Vec<String> = in_netns(ns)
            .into_iter()
            .filter(|(p, _)| !keep(*p))
            .map(|(p, c)| format!("{p} {c}"))
            .collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The processes holding a listening TCP socket in network namespace `ns`, as `ss` lists them.
pub fn listening_in(ns: &str) -> Vec<u32> {
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "ss", "-Hltnp"])
        .output()
        .expect("ss runs");
    let mut pids: Vec<u32> = String::from_utf8_lossy(&out.stdout)
        .split("pid=")
        .skip(1)
        .filter_map(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// Mounts a tmpfs with `options` (`size=1m`, `ro,size=1m`) on `at`, for as long as the guard
/// lives.
pub fn mount_tmpfs(at: &std::path::Path, options: &str) -> Unmount {
    let st = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(at)
        .status()
        .unwrap();
    assert!(st.success(), "mount tmpfs -o {options} on {}", at.display());
    Unmount(at.to_path_buf())
}

/// Unmounts its path when dropped (also when the test panics).
pub struct Unmount(pub std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}
