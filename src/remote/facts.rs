//! What the remote lines say, read into numbers: the server's `SSHTUNE-INFO` facts (`Info`,
//! its machine, whether it is this machine), and the counters a `READY` or `DONE` line carries.

use super::line::{info_line, Fields, Line};

/// Every `SSHTUNE-INFO` fact a server reported, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Info(Vec<(String, String)>);

impl Info {
    pub fn parse(text: &str) -> Self {
        Self(
            text.lines()
                .filter_map(info_line)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    /// The first value of `key`, None when absent or empty.
    pub fn get(&self, key: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    }
}

/// The server's machine from its `SSHTUNE-INFO` facts (`scripts::MACHINE_FACTS`, or `stat`).
pub fn machine(info: &Info) -> crate::sysinfo::MachineInfo {
    let arch = info.get("arch");
    crate::sysinfo::MachineInfo {
        cpu_model: info.get("cpu"),
        cores: info.get("cores").and_then(|c| c.parse().ok()),
        kernel: info.get("kernel"),
        cpu_features: crate::sysinfo::crypto_features(
            arch.as_deref(),
            &info.get("cpu_flags").unwrap_or_default(),
        ),
        arch,
    }
}

/// Whether the server is this machine, by the kernel's boot id (network namespaces and
/// containers share it; a VM or a board behind a port forward does not), None when either
/// side's cannot be read.
pub fn same_boot(info: &Info) -> Option<bool> {
    Some(info.get("boot_id")? == crate::sysinfo::boot_id()?)
}

/// Counters the remote side reports at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RemoteCounters {
    /// Session process utime+stime, ticks.
    pub proc_ticks: Option<u64>,
    /// Whole machine busy ticks (everything but idle and iowait) and total ticks.
    pub busy_ticks: Option<u64>,
}

impl RemoteCounters {
    pub fn parse(t: &Fields) -> Self {
        let proc_ticks = t.get("cpu").and_then(|v| {
            let mut it = v.split(',').map(|x| x.parse::<u64>());
            Some(it.next()?.ok()? + it.next()?.ok()?)
        });
        let busy_ticks = t.get("stat").and_then(|v| {
            let f: Vec<u64> = v.split(',').filter_map(|x| x.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal ...
            (f.len() >= 4).then(|| {
                f.iter()
                    .enumerate()
                    .filter(|(i, _)| *i != 3 && *i != 4)
                    .take(7)
                    .map(|(_, v)| v)
                    .sum()
            })
        });
        Self {
            proc_ticks,
            busy_ticks,
        }
    }
}

/// The READY line: where the session process is and what it may use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ready {
    pub comm: Option<String>,
    pub ticks_per_s: u64,
    pub counters: RemoteCounters,
    /// CPU the session process may use, in cores, when a cgroup quota limits it.
    pub quota_cores: Option<f64>,
}

impl Ready {
    pub fn parse(line: &str) -> Option<Self> {
        let Ok(Line::Ready(t)) = Line::parse(line) else {
            return None;
        };
        Some(Self {
            comm: t
                .get("comm")
                .map(|s| s.to_string())
                .filter(|s| !s.is_empty()),
            ticks_per_s: t.get("tck").and_then(|v| v.parse().ok()).unwrap_or(100),
            counters: RemoteCounters::parse(&t),
            quota_cores: t.get("quota").and_then(parse_quota),
        })
    }
}

/// `quota,period` (cgroup v1, -1 = none) or `max,period` / `quota,period` (cgroup v2).
pub fn parse_quota(q: &str) -> Option<f64> {
    let (a, b) = q.split_once(',')?;
    let quota: f64 = a.parse().ok()?;
    let period: f64 = b.parse().ok()?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_line() {
        let r = Ready::parse(
            "SSHTUNE-READY pid=12 comm=sshd tck=100 cpu=5,7 stat=10,0,20,500,3,1,2,0,0,0 quota=20000,100000",
        )
        .unwrap();
        assert_eq!(r.comm.as_deref(), Some("sshd"));
        assert_eq!(r.counters.proc_ticks, Some(12));
        assert_eq!(r.counters.busy_ticks, Some(10 + 20 + 1 + 2));
        assert_eq!(r.quota_cores, Some(0.2));
        let r =
            Ready::parse("SSHTUNE-READY pid=1 comm= tck=100 cpu= stat= quota=-1,100000").unwrap();
        assert_eq!(r.quota_cores, None);
        assert_eq!(r.counters.proc_ticks, None);
        assert_eq!(parse_quota("max,100000"), None);
    }

    #[test]
    fn info_facts() {
        let out = "motd\nSSHTUNE-OK\nSSHTUNE-INFO cores= 4 \nSSHTUNE-INFO kernel=\n";
        let i = Info::parse(out);
        assert_eq!(i.get("cores").as_deref(), Some("4"));
        assert_eq!(i.get("kernel"), None);
    }
}
