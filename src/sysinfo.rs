//! Facts about the local machine that belong next to every measurement.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MachineInfo {
    pub cpu_model: Option<String>,
    pub cores: Option<u32>,
    pub kernel: Option<String>,
}

pub fn local() -> MachineInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    MachineInfo {
        cpu_model: cpu_model(&cpuinfo),
        cores: std::thread::available_parallelism()
            .ok()
            .map(|n| n.get() as u32),
        kernel: nix::sys::utsname::uname()
            .ok()
            .map(|u| u.release().to_string_lossy().into_owned()),
    }
}

/// x86 says `model name`, many ARM kernels only `Hardware` or `Processor`.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "Processor", "cpu model"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
}

/// CPU seconds (user + system) a process has used so far, from `/proc/PID/stat`.
pub fn process_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = stat_ticks(&stat)?;
    Some(ticks as f64 / clock_ticks() as f64)
}

/// utime + stime from a `/proc/PID/stat` line; the command name may contain spaces and
/// parentheses, so fields are counted after the last `)`.
pub fn stat_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// CPU time (user + system) the calling thread has used so far. Per thread, not per process:
/// a measurement on one thread must not count the threads beside it (the in-process server
/// the native bench embeds, a `serve` session's neighbours).
pub fn thread_cpu() -> Option<CpuTime> {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_THREAD).ok()?;
    let d = |tv: nix::sys::time::TimeVal| {
        std::time::Duration::from_micros(tv.tv_sec() as u64 * 1_000_000 + tv.tv_usec() as u64)
    };
    Some(CpuTime {
        user: d(u.user_time()),
        system: d(u.system_time()),
    })
}

/// `thread_cpu` as seconds.
pub fn thread_cpu_seconds() -> Option<f64> {
    thread_cpu().map(|c| c.seconds())
}

/// CPU time split as the kernel reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    pub user: std::time::Duration,
    pub system: std::time::Duration,
}

impl CpuTime {
    pub fn seconds(&self) -> f64 {
        (self.user + self.system).as_secs_f64()
    }
}

pub fn clock_ticks() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .map(|v| v as u64)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_comm() {
        let line = "42 (a) b (c) R 1 42 42 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 1 0 1 1 1";
        assert_eq!(stat_ticks(line), Some(12));
    }

    #[test]
    fn thread_cpu_counts_this_threads_work() {
        let a = thread_cpu().unwrap();
        let mut x = 0u64;
        while thread_cpu().unwrap().seconds() - a.seconds() < 0.02 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0 && thread_cpu_seconds().unwrap() >= a.seconds());
    }

    #[test]
    fn cpu_models() {
        assert_eq!(cpu_model("model name\t: Xeon\n").as_deref(), Some("Xeon"));
        assert_eq!(
            cpu_model("Hardware\t: Marvell Armada 380\n").as_deref(),
            Some("Marvell Armada 380")
        );
    }
}
