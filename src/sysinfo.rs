//! Facts about the local machine that belong next to every measurement: the CPU, its cores,
//! the kernel, and the CPU features the SSH ciphers depend on (`crypto_features`), which decide
//! whether AES runs in hardware or in software there.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MachineInfo {
    pub cpu_model: Option<String>,
    pub cores: Option<u32>,
    pub kernel: Option<String>,
    /// `uname -m`: `x86_64`, `aarch64`, ... Null when unknown (and in older reports).
    #[serde(default)]
    pub arch: Option<String>,
    /// The crypto features of `CRYPTO_FEATURES` for `arch`, each present or not; empty for an
    /// architecture none are known for; null when the CPU's flags cannot be read (and in
    /// older reports).
    #[serde(default)]
    pub cpu_features: Option<BTreeMap<String, bool>>,
}

/// The CPU features the SSH ciphers' fast paths depend on, per architecture, as the kernel
/// names them in `/proc/cpuinfo` (`flags` on x86, `Features` on ARM): AES rounds and the
/// carry-less multiply GCM's GHASH uses (x86 `aes`/`pclmulqdq`, their 256-bit forms `vaes`/
/// `vpclmulqdq`; ARMv8 `aes`/`pmull`), the vector units ChaCha20 runs on (`avx2`, `ssse3`,
/// which also carries the constant-time vector-permute AES libcrypto uses without `aes`),
/// and SHA-256 (`sha_ni`, `sha2`) for the hmac-sha2 MACs. 32-bit ARM kernels on ARMv8
/// cores report the same names.
pub const CRYPTO_FEATURES: &[(&str, &[&str])] = &[
    (
        "x86",
        &[
            "aes",
            "pclmulqdq",
            "vaes",
            "vpclmulqdq",
            "avx2",
            "sha_ni",
            "ssse3",
        ],
    ),
    ("arm", &["aes", "pmull", "sha2"]),
];

/// The family of `CRYPTO_FEATURES` an architecture belongs to, None for one none are known for.
fn family(arch: &str) -> Option<&'static [&'static str]> {
    let key = match arch {
        "x86_64" | "amd64" | "i386" | "i486" | "i586" | "i686" | "x86" => "x86",
        a if a == "aarch64" || a == "arm64" || a.starts_with("arm") => "arm",
        _ => return None,
    };
    CRYPTO_FEATURES
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, f)| *f)
}

/// Which of the known crypto features `flags` (the whitespace-separated `flags`/`Features`
/// list) has, for `arch`: None when the architecture is unknown, or is one with known
/// features but no flags were read; an empty map for an architecture none are known for.
pub fn crypto_features(arch: Option<&str>, flags: &str) -> Option<BTreeMap<String, bool>> {
    let arch = arch.filter(|a| !a.trim().is_empty())?;
    let Some(known) = family(arch.trim()) else {
        return Some(BTreeMap::new());
    };
    let have: Vec<&str> = flags.split_whitespace().collect();
    (!have.is_empty()).then(|| {
        known
            .iter()
            .map(|f| (f.to_string(), have.contains(f)))
            .collect()
    })
}

impl MachineInfo {
    /// Whether the CPU has AES instructions: None when its features are unknown, or when its
    /// architecture has none this catalog knows of.
    pub fn has_aes(&self) -> Option<bool> {
        self.cpu_features.as_ref()?.get("aes").copied()
    }

    /// The known crypto features in catalog order, each with whether it is present.
    pub fn features_in_order(&self) -> Vec<(&'static str, bool)> {
        let (Some(arch), Some(have)) = (self.arch.as_deref(), &self.cpu_features) else {
            return Vec::new();
        };
        family(arch)
            .unwrap_or_default()
            .iter()
            .filter_map(|f| Some((*f, *have.get(*f)?)))
            .collect()
    }
}

pub fn local() -> MachineInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let arch = nix::sys::utsname::uname()
        .ok()
        .map(|u| u.machine().to_string_lossy().into_owned());
    MachineInfo {
        cpu_model: cpu_model(&cpuinfo),
        cores: std::thread::available_parallelism()
            .ok()
            .map(|n| n.get() as u32),
        kernel: nix::sys::utsname::uname()
            .ok()
            .map(|u| u.release().to_string_lossy().into_owned()),
        cpu_features: crypto_features(arch.as_deref(), &cpu_flags(&cpuinfo)),
        arch,
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

/// The first `flags` (x86) or `Features` (ARM) line of `/proc/cpuinfo`, empty when none.
pub fn cpu_flags(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "flags" | "Features").then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// This kernel's boot id, None when unreadable: one boot id is one running kernel and so one
/// set of CPUs, whatever address reaches it (containers and network namespaces share it, a
/// VM or a board behind a port forward does not). Machine ids are no substitute: a VM that
/// boots the host's root filesystem has the host's.
pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
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

/// The CPU a task last ran on: field 39 of its `/proc/PID/stat` (or `/proc/PID/task/TID/stat`)
/// line, counted after the command name like `stat_ticks`.
pub fn stat_cpu(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(36)?.parse().ok()
}

/// The CPU a process (or, with `/task/TID`, a thread) last ran on, `stat_cpu` of its file.
pub fn last_cpu(path: &str) -> Option<u32> {
    stat_cpu(&std::fs::read_to_string(path).ok()?)
}

/// utime + stime + cutime + cstime (ticks): a process and the children it has reaped.
pub fn stat_ticks_with_children(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .filter_map(|v| v.parse().ok())
        .collect();
    (f.len() == 4).then(|| f.iter().sum())
}

/// This machine's busy ticks so far, all cores: the aggregate `/proc/stat` line without idle
/// and iowait (guest time is already inside user and nice).
pub fn machine_busy_ticks() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    busy_ticks(text.lines().next()?)
}

/// `machine_busy_ticks` of one `cpu  user nice system idle iowait irq softirq steal …` line.
pub fn busy_ticks(line: &str) -> Option<u64> {
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    (f.len() >= 4).then(|| {
        f.iter()
            .enumerate()
            .filter(|(i, _)| *i != 3 && *i != 4)
            .map(|(_, v)| v)
            .sum()
    })
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

/// `/proc/crypto`: the kernel's crypto algorithms and the driver behind each.
pub mod proc_crypto {
    use serde::{Deserialize, Serialize};

    /// One `/proc/crypto` block (blank-line separated `key : value` lines).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Algorithm {
        pub name: String,
        pub driver: String,
        pub module: String,
        pub priority: i64,
        pub kind: String,
    }

    /// Every block that names an algorithm and its driver, in the file's order.
    pub fn parse(text: &str) -> Vec<Algorithm> {
        let mut out = Vec::new();
        for block in text.split("\n\n") {
            let get = |k: &str| {
                block.lines().find_map(|l| {
                    let (key, v) = l.split_once(':')?;
                    (key.trim() == k).then(|| v.trim().to_string())
                })
            };
            let (Some(name), Some(driver)) = (get("name"), get("driver")) else {
                continue;
            };
            out.push(Algorithm {
                name,
                driver,
                module: get("module").unwrap_or_default(),
                priority: get("priority").and_then(|p| p.parse().ok()).unwrap_or(0),
                kind: get("type").unwrap_or_default(),
            });
        }
        out
    }

    /// The highest-priority entry of each algorithm name (the first of equals), in the order
    /// the names first appear: the driver the kernel hands out for that name.
    pub fn best_per_name(algs: Vec<Algorithm>) -> Vec<Algorithm> {
        let mut best: Vec<Algorithm> = Vec::new();
        for a in algs {
            match best.iter_mut().find(|b| b.name == a.name) {
                Some(b) if b.priority < a.priority => *b = a,
                Some(_) => {}
                None => best.push(a),
            }
        }
        best
    }
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
    fn last_cpu_and_busy_ticks_from_proc_lines() {
        let mut line = String::from("42 (a) b) R");
        for i in 4..=52 {
            line.push_str(&format!(" {i}"));
        }
        // Fields are numbered from 1; the value written is the field's own number.
        assert_eq!(stat_cpu(&line), Some(39));
        assert_eq!(stat_ticks_with_children(&line), Some(14 + 15 + 16 + 17));
        assert_eq!(busy_ticks("cpu  10 1 5 900 7 2 3 4 0 0"), Some(25));
        assert_eq!(busy_ticks("cpu x"), None);
        let own = last_cpu("/proc/self/stat").unwrap();
        assert!(own < 4096);
        assert!(machine_busy_ticks().is_some());
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
    fn crypto_features_per_architecture() {
        let x86 = "fpu sse2 pclmulqdq ssse3 avx2 sha_ni";
        let f = crypto_features(Some("x86_64"), x86).unwrap();
        assert_eq!(f.get("aes"), Some(&false));
        assert_eq!(f.get("pclmulqdq"), Some(&true));
        assert_eq!(f.len(), 7);
        let m = MachineInfo {
            arch: Some("x86_64".into()),
            cpu_features: Some(f),
            ..MachineInfo::default()
        };
        assert_eq!(m.has_aes(), Some(false));
        assert_eq!(m.features_in_order()[0], ("aes", false));
        // A Cortex-A72 (Raspberry Pi 4) lists no aes/pmull; an A55 with the extensions does.
        let pi = crypto_features(Some("aarch64"), "fp asimd evtstrm crc32 cpuid").unwrap();
        assert_eq!(pi.values().filter(|v| **v).count(), 0);
        let a55 = crypto_features(Some("aarch64"), "fp asimd aes pmull sha1 sha2").unwrap();
        assert!(a55.values().all(|v| *v));
        // Known architecture, flags unreadable: unknown, not "none".
        assert_eq!(crypto_features(Some("x86_64"), ""), None);
        assert_eq!(crypto_features(None, x86), None);
        // No features known for the architecture: an empty map.
        assert_eq!(
            crypto_features(Some("riscv64"), "rv64imafdc"),
            Some(BTreeMap::new())
        );
        assert_eq!(
            cpu_flags("processor: 0\nFeatures\t: fp aes\n").as_str(),
            "fp aes"
        );
    }

    #[test]
    fn cpu_models() {
        assert_eq!(cpu_model("model name\t: Xeon\n").as_deref(), Some("Xeon"));
        assert_eq!(
            cpu_model("Hardware\t: Marvell Armada 380\n").as_deref(),
            Some("Marvell Armada 380")
        );
    }

    #[test]
    fn proc_crypto_keeps_the_highest_priority_driver_per_name() {
        let text = "name : aes\ndriver : aes-generic\npriority : 100\n\n\
                    name : sha256\ndriver : sha256-generic\npriority : 100\n\n\
                    name : aes\ndriver : aes-aesni\npriority : 300\n\n\
                    name : aes\ndriver : aes-other\npriority : 300\n\n\
                    name : no-driver\n";
        let algs = proc_crypto::parse(text);
        assert_eq!(algs.len(), 4);
        let best: Vec<_> = proc_crypto::best_per_name(algs)
            .into_iter()
            .map(|a| (a.name, a.driver))
            .collect();
        assert_eq!(
            best,
            [
                ("aes".into(), "aes-aesni".into()),
                ("sha256".into(), "sha256-generic".into())
            ]
        );
    }
}
