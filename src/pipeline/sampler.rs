//! Where the CPU goes while rsync runs, on both ends, every ~200 ms.
//!
//! Both sides produce the same text (`@T uptime`, the `cpu` line of /proc/stat, `@D` dm
//! counters, every `/proc/PID/stat`, `@E`): remotely a shell loop prints it through one extra
//! ssh session, locally we read the same files. One parser and one classifier serve both, so
//! the two columns of the breakdown mean the same thing.

use std::collections::HashMap;

pub use crate::bench::verdict::Side;

/// The groups that belong to this end of the pipeline. On loopback both samplers see every
/// process; reporting each group on one side only keeps them from being counted twice.
/// `sampler` is the measurement's own load (the remote loop and its session; this process on
/// the client): never charged to a stage, but under a CPU quota it uses part of the quota.
pub fn groups(side: Side) -> &'static [&'static str] {
    match side {
        Side::Client => &["rsync-sender", "ssh", "sampler"],
        Side::Server => &[
            "sshd",
            "rsync-receiver",
            "kcryptd",
            "dmcrypt_write",
            "irq",
            "ksoftirqd",
            "kworker",
            "sampler",
        ],
    }
}

/// Not a process group: the CPU quota of this side's processes of the run, % of one core,
/// reported beside them when there is one.
pub const QUOTA_GROUP: &str = "cpu-quota";
/// Not a process group either: the % of the quota's enforcement periods in which this side's
/// group was throttled (it wanted more than its quota).
pub const THROTTLED_GROUP: &str = "cpu-throttled";

pub const TOTALS: &[&str] = &[
    "total-user",
    "total-system",
    "total-softirq",
    "total-iowait",
];

#[derive(Debug, Clone, PartialEq)]
pub struct Proc {
    pub pid: u32,
    pub ppid: u32,
    pub comm: String,
    /// utime + stime, clock ticks.
    pub ticks: u64,
    pub starttime: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub uptime: f64,
    /// user nice system idle iowait irq softirq steal ... (ticks)
    pub cpu: Vec<u64>,
    /// dm device → sectors written.
    pub dm_written: HashMap<String, u64>,
    pub procs: HashMap<u32, Proc>,
    /// Processes whose command line names this run's directory (`@R`, remote side only):
    /// the rsync receiver among any other rsync or sshd on a shared server.
    pub marked: Vec<u32>,
    /// The CPU quota of this side's processes (`@Q`, the tightest of the lines: a group and
    /// those above it).
    pub quota: Option<Quota>,
}

/// A cgroup's CPU quota and its enforcement counters (`cpu.stat`), when they were read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quota {
    pub cores: f64,
    pub periods: Option<u64>,
    pub throttled: Option<u64>,
}

/// One `/proc/PID/stat` line; the comm may hold spaces and parentheses, so split at the last `)`.
pub fn parse_stat(line: &str) -> Option<Proc> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    let comm = line[open + 1..close].to_string();
    let f: Vec<&str> = line[close + 1..].split_whitespace().collect();
    // f[0] = state (field 3); utime/stime are fields 14/15, starttime 22.
    let n = |i: usize| f.get(i - 3).and_then(|v| v.parse::<u64>().ok());
    Some(Proc {
        pid,
        ppid: n(4)? as u32,
        comm,
        ticks: n(14)? + n(15)?,
        starttime: n(22)?,
    })
}

/// Parses one block (without the `@E`).
pub fn parse_block(text: &str) -> Snapshot {
    let mut s = Snapshot::default();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("@T ") {
            s.uptime = v.trim().parse().unwrap_or(0.0);
        } else if let Some(v) = line.strip_prefix("cpu ") {
            s.cpu = v
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
        } else if let Some(v) = line.strip_prefix("@D ") {
            let w: Vec<&str> = v.split_whitespace().collect();
            // /sys/block/X/stat: field 7 (index 6 after the name) = sectors written.
            if let (Some(name), Some(sectors)) = (w.first(), w.get(7).and_then(|x| x.parse().ok()))
            {
                s.dm_written.insert(name.to_string(), sectors);
            }
        } else if let Some(v) = line.strip_prefix("@R") {
            // `/proc/PID/cmdline` paths from the remote loop, bare pids from the local one.
            s.marked = v
                .split_whitespace()
                .filter_map(|x| {
                    let pid = x
                        .strip_prefix("/proc/")
                        .map_or(x, |r| r.split('/').next().unwrap_or(""));
                    pid.parse().ok()
                })
                .collect();
        } else if let Some(v) = line.strip_prefix("@Q ") {
            // A group and the groups above it, unlimited ones among them: the tightest holds.
            if let Some(q) = parse_quota(v) {
                if s.quota.is_none_or(|m| q.cores < m.cores) {
                    s.quota = Some(q);
                }
            }
        } else if let Some(p) = parse_stat(line) {
            s.procs.insert(p.pid, p);
        }
    }
    s
}

/// `QUOTA PERIOD [PERIODS THROTTLED]`, the first two in microseconds as cgroups write them;
/// None when unlimited (`-1`, `max`) or unreadable.
fn parse_quota(v: &str) -> Option<Quota> {
    let w: Vec<&str> = v.split_whitespace().collect();
    let (q, p): (f64, f64) = (w.first()?.parse().ok()?, w.get(1)?.parse().ok()?);
    let count = |i: usize| w.get(i).and_then(|x| x.parse().ok());
    (q > 0.0 && p > 0.0).then(|| Quota {
        cores: q / p,
        periods: count(2),
        throttled: count(3),
    })
}

/// Pids the classifier needs to know: our own rsync (client) and the sampler's own session
/// (server), whose CPU must not be charged to the pipeline.
#[derive(Debug, Clone, Default)]
pub struct Known {
    pub sender: Option<u32>,
    /// The sampler's own processes.
    pub exclude: Vec<u32>,
    /// Processes whose children are the sampler's too (what the remote loop starts once, at
    /// its start: `getconf` and the subshell that finds its cgroups).
    pub exclude_children_of: Vec<u32>,
    /// Processes of this run found by their command line (see `Snapshot::marked`).
    pub marked: Vec<u32>,
}

fn ancestors(procs: &HashMap<u32, Proc>, pid: u32) -> impl Iterator<Item = &Proc> {
    let mut cur = procs.get(&pid).map(|p| p.ppid);
    std::iter::from_fn(move || {
        let p = procs.get(&cur?)?;
        cur = (p.ppid > 1).then_some(p.ppid);
        Some(p)
    })
    .take(16)
}

/// The group a process is charged to, or None when it belongs to nobody we report.
pub fn classify(p: &Proc, procs: &HashMap<u32, Proc>, known: &Known) -> &'static str {
    let c = p.comm.as_str();
    if known.exclude.contains(&p.pid) || known.exclude_children_of.contains(&p.ppid) {
        return "sampler";
    }
    if c.contains("kcryptd") {
        return "kcryptd";
    }
    if c.starts_with("dmcrypt_write") {
        return "dmcrypt_write";
    }
    if c.starts_with("irq/") {
        return "irq";
    }
    if c.starts_with("ksoftirqd") {
        return "ksoftirqd";
    }
    if c.starts_with("kworker") {
        return "kworker";
    }
    let ours = |pid: u32| {
        known
            .sender
            .is_some_and(|s| pid == s || ancestors(procs, pid).any(|a| a.pid == s))
    };
    if c == "rsync" {
        if ours(p.pid) {
            return "rsync-sender";
        }
        if known.marked.contains(&p.pid)
            || ancestors(procs, p.pid).any(|a| known.marked.contains(&a.pid))
        {
            return "rsync-receiver";
        }
        return "other";
    }
    if c == "ssh" && ours(p.pid) {
        return "ssh";
    }
    // Only the session that carries this run's rsync: a shared server has other sessions.
    if c.starts_with("sshd")
        && known
            .marked
            .iter()
            .any(|m| ancestors(procs, *m).any(|a| a.pid == p.pid))
    {
        return "sshd";
    }
    "other"
}

/// The group of a process's ticks between two snapshots. A kworker is named after the last
/// workqueue it served (`kworker/u4:3-kcryptd/254:0`), and after finishing dm-crypt work it
/// may take other work before the next snapshot, renamed (`-events_unbound`): a worker that
/// was a kcryptd worker at either end is charged to kcryptd. In a VM, 3 of the 4 workers that
/// encrypted a 16 MiB write had changed name by the time `sync` returned.
fn group_between(
    old: &Proc,
    new: &Proc,
    procs: &HashMap<u32, Proc>,
    known: &Known,
) -> &'static str {
    match classify(new, procs, known) {
        "kworker" if old.comm.contains("kcryptd") => "kcryptd",
        g => g,
    }
}

/// What changed between two snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    pub seconds: f64,
    /// CPU per group and the `total-*` figures, % of one core.
    pub cpu: Vec<(String, f64)>,
    pub dm_write_bytes_s: Option<f64>,
}

/// CPU per group between two snapshots, % of one core, plus the totals.
pub fn delta(
    a: &Snapshot,
    b: &Snapshot,
    tck: f64,
    known: &Known,
    dm: Option<&str>,
) -> Option<Delta> {
    let dt = b.uptime - a.uptime;
    if dt <= 0.0 {
        return None;
    }
    let pct = |ticks: u64| ticks as f64 / tck / dt * 100.0;
    let known = &Known {
        marked: b.marked.clone(),
        ..known.clone()
    };
    let mut groups: HashMap<&'static str, u64> = HashMap::new();
    for p in b.procs.values() {
        let Some(old) = a.procs.get(&p.pid).filter(|o| o.starttime == p.starttime) else {
            continue;
        };
        let d = p.ticks.saturating_sub(old.ticks);
        if d > 0 {
            *groups
                .entry(group_between(old, p, &b.procs, known))
                .or_default() += d;
        }
    }
    let mut out: Vec<(String, f64)> = groups
        .into_iter()
        .map(|(g, t)| (g.to_string(), pct(t)))
        .collect();
    if let Some(q) = b.quota {
        out.push((QUOTA_GROUP.into(), q.cores * 100.0));
        // The share of enforcement periods in which the group ran out of its quota.
        let counts = |q: Quota| q.periods.zip(q.throttled);
        if let (Some((p0, t0)), Some((p1, t1))) = (a.quota.and_then(counts), counts(q)) {
            if p1 > p0 && t1 >= t0 {
                out.push((
                    THROTTLED_GROUP.into(),
                    (t1 - t0) as f64 / (p1 - p0) as f64 * 100.0,
                ));
            }
        }
    }
    if a.cpu.len() >= 7 && b.cpu.len() >= 7 {
        let d = |i: usize| b.cpu[i].saturating_sub(a.cpu[i]);
        out.push(("total-user".into(), pct(d(0) + d(1))));
        out.push(("total-system".into(), pct(d(2))));
        out.push(("total-softirq".into(), pct(d(5) + d(6))));
        out.push(("total-iowait".into(), pct(d(4))));
    }
    out.sort_by(|x, y| x.0.cmp(&y.0));
    let written = |s: &Snapshot| -> Option<u64> {
        match dm {
            Some(name) => s.dm_written.get(name).copied(),
            None if s.dm_written.is_empty() => None,
            None => Some(s.dm_written.values().sum()),
        }
    };
    let dm_rate = written(a)
        .zip(written(b))
        .map(|(x, y)| y.saturating_sub(x) as f64 * 512.0 / dt);
    Some(Delta {
        seconds: dt,
        cpu: out,
        dm_write_bytes_s: dm_rate,
    })
}

/// Reads the local machine in the same format the remote loop prints.
pub fn local_block() -> String {
    let mut s = String::new();
    let up = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
    s.push_str(&format!(
        "@T {}\n",
        up.split_whitespace().next().unwrap_or("0")
    ));
    if let Some(l) = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|t| t.lines().next().map(String::from))
    {
        s.push_str(&l);
        s.push('\n');
    }
    if let Ok(rd) = std::fs::read_dir("/sys/block") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("dm-") {
                if let Ok(st) = std::fs::read_to_string(e.path().join("stat")) {
                    s.push_str(&format!("@D {name} {}\n", st.trim()));
                }
            }
        }
    }
    if let Some(q) = crate::cgroup::quota_cores("self") {
        s.push_str(&format!("@Q {:.0} 1000000\n", q * 1e6));
    }
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let name = e.file_name();
            if name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
                if let Ok(st) = std::fs::read_to_string(e.path().join("stat")) {
                    s.push_str(st.trim_end());
                    s.push('\n');
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK_A: &str = "@T 100.00\ncpu  100 0 50 1000 5 0 2 0 0 0\n\
        @D dm-0 10 0 80 0 5 0 40 0 0 0 0\n@R 601\n\
        1 (systemd) S 0 1 1 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1 0 0\n\
        500 (sshd) S 1 500 500 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 50 0 0\n\
        600 (sshd: root@notty) S 500 600 600 0 -1 0 0 0 0 0 10 10 0 0 20 0 1 0 60 0 0\n\
        601 (rsync) S 600 601 601 0 -1 0 0 0 0 0 10 10 0 0 20 0 1 0 61 0 0\n\
        700 (kworker/u2:1+kcryptd/253:0) R 2 0 0 0 -1 0 0 0 0 0 0 10 0 0 20 0 1 0 70 0 0\n\
        800 (rsync) S 1 800 800 0 -1 0 0 0 0 0 10 0 0 0 20 0 1 0 80 0 0\n\
        801 (ssh) S 800 800 800 0 -1 0 0 0 0 0 10 0 0 0 20 0 1 0 81 0 0\n\
        900 (odd ) name) S 1 900 900 0 -1 0 0 0 0 0 1 0 0 0 20 0 1 0 90 0 0\n\
        950 (sshd) S 500 950 950 0 -1 0 0 0 0 0 1 0 0 0 20 0 1 0 95 0 0\n\
        951 (rsync) S 950 951 951 0 -1 0 0 0 0 0 1 0 0 0 20 0 1 0 96 0 0\n";

    fn later() -> String {
        BLOCK_A
            .replace("@T 100.00", "@T 101.00")
            .replace("cpu  100 0 50 1000 5 0 2", "cpu  150 0 100 1050 10 0 12")
            .replace("@D dm-0 10 0 80 0 5 0 40", "@D dm-0 10 0 80 0 5 0 2088")
            .replace(
                "(sshd: root@notty) S 500 600 600 0 -1 0 0 0 0 0 10 10",
                "(sshd: root@notty) S 500 600 600 0 -1 0 0 0 0 0 40 20",
            )
            .replace(
                "601 (rsync) S 600 601 601 0 -1 0 0 0 0 0 10 10",
                "601 (rsync) S 600 601 601 0 -1 0 0 0 0 0 20 10",
            )
            .replace("R 2 0 0 0 -1 0 0 0 0 0 0 10", "R 2 0 0 0 -1 0 0 0 0 0 0 60")
            .replace(
                "800 (rsync) S 1 800 800 0 -1 0 0 0 0 0 10 0",
                "800 (rsync) S 1 800 800 0 -1 0 0 0 0 0 15 0",
            )
            .replace(
                "801 (ssh) S 800 800 800 0 -1 0 0 0 0 0 10 0",
                "801 (ssh) S 800 800 800 0 -1 0 0 0 0 0 30 0",
            )
            // Another user's session on the same server: not ours.
            .replace(
                "950 (sshd) S 500 950 950 0 -1 0 0 0 0 0 1 0",
                "950 (sshd) S 500 950 950 0 -1 0 0 0 0 0 90 0",
            )
            .replace(
                "951 (rsync) S 950 951 951 0 -1 0 0 0 0 0 1 0",
                "951 (rsync) S 950 951 951 0 -1 0 0 0 0 0 90 0",
            )
    }

    #[test]
    fn parses_odd_comms() {
        let s = parse_block(BLOCK_A);
        assert_eq!(s.procs[&900].comm, "odd ) name");
        assert_eq!(s.procs[&700].ticks, 10);
        assert_eq!(s.dm_written["dm-0"], 40);
        assert_eq!(s.cpu[0], 100);
    }

    #[test]
    fn charges_each_group() {
        let a = parse_block(BLOCK_A);
        let b = parse_block(&later());
        let known = Known {
            sender: Some(800),
            exclude: vec![],
            exclude_children_of: vec![],
            marked: vec![],
        };
        let Delta {
            seconds,
            cpu,
            dm_write_bytes_s: dm,
        } = delta(&a, &b, 100.0, &known, Some("dm-0")).unwrap();
        assert_eq!(seconds, 1.0);
        let g = |n: &str| cpu.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(g("sshd"), Some(40.0));
        assert_eq!(g("rsync-receiver"), Some(10.0));
        assert_eq!(g("kcryptd"), Some(50.0));
        assert_eq!(g("rsync-sender"), Some(5.0));
        assert_eq!(g("ssh"), Some(20.0));
        assert_eq!(g("total-user"), Some(50.0));
        assert_eq!(g("other"), Some(178.0));
        assert_eq!(g("total-softirq"), Some(10.0));
        assert_eq!(dm, Some(2048.0 * 512.0));
    }

    /// A worker that served kcryptd at the first snapshot and other work at the second is
    /// charged to kcryptd; one that never served it stays a plain kworker.
    #[test]
    fn a_renamed_kcryptd_worker_still_counts_as_kcryptd() {
        let extra =
            "710 (kworker/u2:2-kcryptd/253:0) I 2 0 0 0 -1 0 0 0 0 0 0 10 0 0 20 0 1 0 71 0 0\n\
            720 (kworker/u2:3-events) I 2 0 0 0 -1 0 0 0 0 0 0 10 0 0 20 0 1 0 72 0 0\n";
        let a = parse_block(&format!("{BLOCK_A}{extra}"));
        let b = parse_block(&format!(
            "{}{}",
            later(),
            extra
                .replace(
                    "(kworker/u2:2-kcryptd/253:0) I 2 0 0 0 -1 0 0 0 0 0 0 10",
                    "(kworker/u2:2-events_unbound) I 2 0 0 0 -1 0 0 0 0 0 0 30"
                )
                .replace(
                    "(kworker/u2:3-events) I 2 0 0 0 -1 0 0 0 0 0 0 10",
                    "(kworker/u2:3-events) I 2 0 0 0 -1 0 0 0 0 0 0 15"
                )
        ));
        let d = delta(&a, &b, 100.0, &Known::default(), None).unwrap();
        let g = |n: &str| d.cpu.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(g("kcryptd"), Some(70.0));
        assert_eq!(g("kworker"), Some(5.0));
    }

    #[test]
    fn a_quota_is_reported_beside_the_groups() {
        let q = |line: &str| {
            parse_block(&format!("{BLOCK_A}{line}"))
                .quota
                .map(|q| q.cores)
        };
        assert_eq!(q("@Q 4000 20000\n"), Some(0.2));
        assert_eq!(q("@Q -1 100000\n"), None);
        assert_eq!(q("@Q max 100000\n"), None);
        assert_eq!(q("@Q -1 100000\n@Q 50000 100000\n"), Some(0.5));
        assert_eq!(
            q("@Q 80000 100000\n@Q 50000 100000\n@Q max 100000\n"),
            Some(0.5)
        );
        assert_eq!(q(""), None);
        let a = parse_block(BLOCK_A);
        let b = parse_block(&format!("{}@Q 4000 20000\n", later()));
        let d = delta(&a, &b, 100.0, &Known::default(), None).unwrap();
        assert_eq!(g_of(&d, QUOTA_GROUP), Some(20.0));
        assert_eq!(g_of(&d, THROTTLED_GROUP), None);
        // With cpu.stat's counts at both ends: throttled in 30 of the 50 periods between.
        let a = parse_block(&format!("{BLOCK_A}@Q 4000 20000 100 10\n"));
        let b = parse_block(&format!("{}@Q 4000 20000 150 40\n", later()));
        let d = delta(&a, &b, 100.0, &Known::default(), None).unwrap();
        assert_eq!(g_of(&d, THROTTLED_GROUP), Some(60.0));
        let d = delta(&a, &parse_block(&later()), 100.0, &Known::default(), None).unwrap();
        assert_eq!(g_of(&d, QUOTA_GROUP), None);
    }

    fn g_of(d: &Delta, n: &str) -> Option<f64> {
        d.cpu.iter().find(|(k, _)| k == n).map(|(_, v)| *v)
    }

    #[test]
    fn local_block_parses() {
        let s = parse_block(&local_block());
        assert!(s.uptime > 0.0);
        assert!(s.procs.contains_key(&std::process::id()));
    }
}
