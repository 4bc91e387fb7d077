//! Which stage bounds the end-to-end figure, and what would help by how much. Pure: reads the
//! measured rows, ceilings, CPU shares and storage facts; measures nothing.

use super::model::{CpuShare, Row, Stage, StageCeiling, StorageInfo, Suggestion, Verdict};
use super::rsync::Variant;
use super::sampler::{QUOTA_GROUP, THROTTLED_GROUP};

/// A stage is "the bound" when the pipeline reaches this share of what it does alone.
const NEAR_CEILING: f64 = 0.8;
/// A single process group at this % of one core is a saturated thread.
const SATURATED_PCT: f64 = 85.0;
/// A cgroup throttled in this % of its quota's enforcement periods or more wanted more CPU
/// than its quota gives: a pipeline that stalls between periods (each end waiting on the
/// other) can be held by its quota while using well under it on average.
const THROTTLED_PCT: f64 = 50.0;

pub struct Input<'a> {
    pub rows: &'a [Row],
    pub ceilings: &'a [StageCeiling],
    pub storage: &'a StorageInfo,
    /// The cipher ssh would pick by default; the verdict is about that configuration.
    pub default_cipher: Option<&'a str>,
    pub cores: Option<u32>,
    pub same_machine: bool,
}

fn median(rows: &[Row], cipher: &str, variant: Variant) -> Option<f64> {
    rows.iter()
        .find(|r| r.cipher == cipher && r.variant == variant)
        .and_then(|r| r.median_mib_s)
}

fn ceiling(c: &[StageCeiling], stage: Stage, cipher: Option<&str>) -> Option<f64> {
    c.iter()
        .find(|s| s.stage == stage && (cipher.is_none() || s.cipher.as_deref() == cipher))
        .and_then(|s| s.median_mib_s)
}

fn stage_of(group: &str) -> &'static str {
    match group {
        "ssh" | "sshd" => "ssh",
        "rsync-sender" | "rsync-receiver" => "rsync",
        "kcryptd" | "dmcrypt_write" | "irq" => "dm-crypt",
        _ => "other",
    }
}

fn suggestion(
    change: String,
    expected: Option<f64>,
    base: f64,
    basis: &str,
    why: String,
) -> Suggestion {
    Suggestion {
        change,
        expected_mib_s: expected.map(|e| (e * 10.0).round() / 10.0),
        gain_pct: expected.map(|e| ((e / base - 1.0) * 1000.0).round() / 10.0),
        basis: basis.into(),
        why,
    }
}

pub fn decide(i: &Input) -> Verdict {
    let Some(base) = baseline(i) else {
        return Verdict {
            cipher: None,
            variant: None,
            end_to_end_mib_s: None,
            bound_by: "unclear".into(),
            reason: "no rsync run succeeded".into(),
            suggestions: Vec::new(),
        };
    };
    let e = base.median_mib_s.unwrap_or(0.0);
    let stages = StageCeilings::of(i, base);
    let dm_share: f64 = share(&base.cpu, "kcryptd") + share(&base.cpu, "dmcrypt_write");
    let (bound, reason) = bound(i, base, &stages, dm_share);
    let mut sug = cipher_suggestions(i, base);
    sug.extend(rsync_suggestions(i.rows, &base.cipher));
    if let Some(name) = &i.storage.dm_name {
        let disk_bound = matches!(bound.as_str(), "disk" | "dm-crypt") || dm_share >= 30.0;
        if disk_bound {
            sug.extend(luks_suggestions(
                i.storage,
                name,
                stages.next_after_disk(),
                e,
                dm_share,
            ));
        }
    }
    rank(&mut sug);
    Verdict {
        cipher: Some(base.cipher.clone()),
        variant: Some(base.variant),
        end_to_end_mib_s: Some(e),
        bound_by: bound,
        reason,
        suggestions: sug,
    }
}

/// Suggestions by expected gain, largest first; those without a figure last.
fn rank(sug: &mut [Suggestion]) {
    sug.sort_by(|a, b| {
        b.gain_pct
            .unwrap_or(f64::MIN)
            .total_cmp(&a.gain_pct.unwrap_or(f64::MIN))
    });
}

/// `--jobs`: parallel transfer among the ranked changes when N jobs of a cipher beat its one
/// rsync beyond the spread, counted from the verdict's figure.
pub fn add_jobs(v: &mut Verdict, rows: &[Row], jobs: Option<&super::model::JobsSection>) {
    let base = rows
        .iter()
        .find(|r| Some(&r.cipher) == v.cipher.as_ref() && Some(r.variant) == v.variant);
    if let (Some(base), Some(e)) = (base, v.end_to_end_mib_s) {
        v.suggestions
            .extend(super::jobs_gain::suggestions(jobs, base, e));
        rank(&mut v.suggestions);
    }
}

/// The row the verdict is about: the default cipher's whole-file row, else the first measured
/// whole-file row, else the first measured one.
fn baseline<'a>(i: &Input<'a>) -> Option<&'a Row> {
    let measured = |r: &&Row| r.median_mib_s.is_some();
    let whole = |r: &&Row| r.variant == Variant::WholeFile;
    i.rows
        .iter()
        .filter(whole)
        .filter(measured)
        .find(|r| Some(r.cipher.as_str()) == i.default_cipher)
        .or_else(|| i.rows.iter().filter(whole).find(measured))
        .or_else(|| i.rows.iter().find(measured))
}

/// The stage ceilings that bear on the baseline row: ssh with its cipher, disk, rsync alone.
struct StageCeilings {
    /// End-to-end MiB/s of the baseline.
    e: f64,
    ssh: Option<f64>,
    disk: Option<f64>,
    rsync: Option<f64>,
}

impl StageCeilings {
    fn of(i: &Input, base: &Row) -> Self {
        Self {
            e: base.median_mib_s.unwrap_or(0.0),
            ssh: ceiling(i.ceilings, Stage::Ssh, Some(&base.cipher)),
            disk: ceiling(i.ceilings, Stage::Disk, None),
            rsync: ceiling(i.ceilings, Stage::RsyncLocal, None),
        }
    }

    /// The measured ones, by stage name.
    fn known(&self) -> Vec<(&'static str, f64)> {
        [
            ("ssh", self.ssh),
            ("disk", self.disk),
            ("rsync", self.rsync),
        ]
        .into_iter()
        .filter_map(|(s, c)| Some((s, c?)))
        .collect()
    }

    /// `ssh 50.0 (80%), disk …`: each ceiling and the share of it the run reached.
    fn listing(&self) -> String {
        let listing = self
            .known()
            .iter()
            .map(|(s, c)| format!("{s} {c:.1} ({:.0}%)", self.e / c * 100.0))
            .collect::<Vec<_>>()
            .join(", ");
        if listing.is_empty() {
            "not measured (--no-ceilings)".to_string()
        } else {
            listing
        }
    }

    /// The stage whose ceiling the run comes nearest, with the share reached.
    fn nearest(&self) -> Option<(&'static str, f64)> {
        self.known()
            .into_iter()
            .map(|(s, c)| (s, self.e / c))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// What a faster disk would run into next: the lower of the ssh and rsync ceilings.
    fn next_after_disk(&self) -> Option<f64> {
        [self.ssh, self.rsync]
            .into_iter()
            .flatten()
            .min_by(f64::total_cmp)
    }
}

/// The bound and why: a stage near its ceiling, else a CPU quota, else a saturated thread,
/// else all CPUs of one side busy, else unclear.
fn bound(i: &Input, base: &Row, stages: &StageCeilings, dm_share: f64) -> (String, String) {
    let e = stages.e;
    let listing = stages.listing();
    let hot = base
        .cpu
        .iter()
        .filter(|s| {
            !s.group.starts_with("total-")
                && !matches!(
                    s.group.as_str(),
                    "kworker" | "ksoftirqd" | "sampler" | QUOTA_GROUP | THROTTLED_GROUP
                )
        })
        .max_by(|a, b| a.pct.total_cmp(&b.pct));
    let quota = quota_bound(&base.cpu);
    match (stages.nearest(), hot) {
        (Some((s, r)), _) if r >= NEAR_CEILING => {
            let s = if s == "disk" && i.storage.dm_name.is_some() && dm_share >= 30.0 {
                "dm-crypt"
            } else {
                s
            };
            // A stage at its ceiling on a side held by its quota: the quota is why.
            let held = quota
                .as_ref()
                .map(|(_, why)| format!(" ({why})"))
                .unwrap_or_default();
            (
                s.to_string(),
                format!(
                    "{e:.1} MiB/s end to end reaches {:.0}% of the {s} stage alone{held}; stage ceilings MiB/s: {listing}",
                    r * 100.0
                ),
            )
        }
        _ if quota.is_some() => {
            let (stage, why) = quota.expect("checked");
            (stage, format!("{why}; stage ceilings MiB/s: {listing}"))
        }
        (_, Some(h)) if h.pct >= SATURATED_PCT => (
            stage_of(&h.group).to_string(),
            format!(
                "{} ({}) uses {:.0}% of one core: a single-threaded stage is saturated; stage ceilings MiB/s: {listing}",
                h.group, h.side, h.pct
            ),
        ),
        _ => busy_cpus(i, base, &listing),
    }
}

/// No stage near its ceiling and no saturated thread: all CPUs of one side busy, or unclear.
fn busy_cpus(i: &Input, base: &Row, listing: &str) -> (String, String) {
    let total = |side: &str| -> f64 {
        base.cpu
            .iter()
            .filter(|s| {
                s.side == side && s.group.starts_with("total-") && s.group != "total-iowait"
            })
            .map(|s| s.pct)
            .sum()
    };
    let cap = i.cores.unwrap_or(1) as f64 * 100.0 * 0.9;
    if total("server") >= cap {
        let who = if i.same_machine { "cpu" } else { "server-cpu" };
        (who.into(), format!("all CPUs of the server are busy ({:.0}% of one core in total); stage ceilings MiB/s: {listing}", total("server")))
    } else if total("client") >= cap {
        ("client-cpu".into(), format!("all CPUs of the client are busy ({:.0}% of one core in total); stage ceilings MiB/s: {listing}", total("client")))
    } else {
        ("unclear".into(), format!(
            "no stage is within {:.0}% of its ceiling and no thread saturates a core: the stages wait on each other (latency, small files); stage ceilings MiB/s: {listing}",
            NEAR_CEILING * 100.0
        ))
    }
}

/// Every other cipher whose whole-file row ran more than 5% faster than the baseline.
fn cipher_suggestions(i: &Input, base: &Row) -> Vec<Suggestion> {
    let e = base.median_mib_s.unwrap_or(0.0);
    i.rows
        .iter()
        .filter(|r| r.variant == Variant::WholeFile && r.cipher != base.cipher)
        .filter_map(|r| {
            let m = r.median_mib_s.filter(|m| *m > e * 1.05)?;
            Some(suggestion(
                format!(
                    "ssh cipher {} (ssh -c {0}, or `Ciphers ^{0}` in ssh_config)",
                    r.cipher
                ),
                Some(m),
                e,
                "measured",
                format!(
                    "rsync with it reached {m:.1} MiB/s against {e:.1} with {}",
                    base.cipher
                ),
            ))
        })
        .collect()
}

/// rsync options, from the baseline cipher's variants: `--whole-file`, md5, `-z` or not.
fn rsync_suggestions(rows: &[Row], cipher: &str) -> Vec<Suggestion> {
    let mut sug = Vec::new();
    let wf = median(rows, cipher, Variant::WholeFile);
    let delta = median(rows, cipher, Variant::Delta);
    if let (Some(w), Some(d)) = (wf, delta) {
        if w > d * 1.05 {
            sug.push(suggestion(
                "--whole-file when re-syncing changed files over a fast link".into(),
                Some(w),
                d,
                "measured",
                format!("the delta algorithm on an existing destination ran at {d:.1} MiB/s, a plain copy at {w:.1}"),
            ));
        }
    }
    if let (Some(d), Some(m)) = (delta, median(rows, cipher, Variant::DeltaMd5)) {
        if m > d * 1.05 {
            sug.push(suggestion(
                "--checksum-choice=md5".into(),
                Some(m),
                d,
                "measured",
                format!(
                    "delta with md5 ran at {m:.1} MiB/s, with the negotiated checksum at {d:.1}"
                ),
            ));
        }
    }
    if let (Some(w), Some(z)) = (wf, median(rows, cipher, Variant::Compress)) {
        if w > z * 1.05 {
            sug.push(suggestion(
                "drop -z (and set Compression=no) for data that does not compress".into(),
                Some(w),
                z,
                "measured",
                format!("with -z {z:.1} MiB/s, without {w:.1} on incompressible data"),
            ));
        } else if z > w * 1.05 {
            sug.push(suggestion(
                "-z".into(),
                Some(z),
                w,
                "measured",
                format!("with -z {z:.1} MiB/s, without {w:.1}"),
            ));
        }
    }
    sug
}

/// For a run bound by the dm-crypt mapping `name`: its workqueues, its sector size, its
/// cipher. `next` caps the gain (the next stage's ceiling).
fn luks_suggestions(
    storage: &StorageInfo,
    name: &str,
    next: Option<f64>,
    e: f64,
    dm_share: f64,
) -> Vec<Suggestion> {
    let mut sug = Vec::new();
    if !storage
        .crypt_flags
        .iter()
        .any(|f| f == "no_write_workqueue")
    {
        sug.push(suggestion(
            format!("cryptsetup refresh --perf-no_read_workqueue --perf-no_write_workqueue --persistent {name}"),
            next,
            e,
            "upper-bound",
            format!("dm-crypt threads use {dm_share:.0}% of one core; without the workqueues the crypto runs inline (kernel >= 5.9); gain capped by the next stage's ceiling"),
        ));
    }
    if storage.sector_size.unwrap_or(512) < 4096 {
        sug.push(suggestion(
            format!("4096-byte dm-crypt sectors (cryptsetup reencrypt --sector-size 4096 {name})"),
            next,
            e,
            "upper-bound",
            "8x fewer crypto requests per byte than 512-byte sectors; gain capped by the next stage's ceiling".into(),
        ));
    }
    sug.push(suggestion(
        format!(
            "another LUKS cipher than {} (compare `cryptsetup benchmark` on that host)",
            storage.crypt_cipher.as_deref().unwrap_or("the current one")
        ),
        None,
        e,
        "not-measured",
        "the disk-encryption stage is the bound; which cipher is faster depends on the host's crypto engine".into(),
    ));
    sug
}

/// The processes of the run a cgroup's CPU quota holds (kernel threads such as kcryptd are
/// in no user's group); the sampler's session shares the quota but is never the bound.
const QUOTA_HELD: &[&str] = &["sshd", "rsync-receiver", "ssh", "rsync-sender"];

/// A side under a CPU quota (a board-like host, a container) is saturated at its quota: its
/// processes of the run together near it, where none of them comes near a whole core. Returns
/// the stage of the one that uses the most, and why.
fn quota_bound(cpu: &[CpuShare]) -> Option<(String, String)> {
    ["server", "client"].into_iter().find_map(|side| {
        let q = cpu
            .iter()
            .find(|s| s.side == side && s.group == QUOTA_GROUP)?
            .pct;
        let held: Vec<&CpuShare> = cpu
            .iter()
            .filter(|s| s.side == side && QUOTA_HELD.contains(&s.group.as_str()))
            .collect();
        let sampler = share_on(cpu, side, "sampler");
        let used: f64 = held.iter().map(|s| s.pct).sum::<f64>() + sampler;
        let throttled = cpu
            .iter()
            .find(|s| s.side == side && s.group == THROTTLED_GROUP)
            .map(|s| s.pct);
        let saturated = used >= q * SATURATED_PCT / 100.0;
        if q <= 0.0 || !(saturated || throttled.is_some_and(|t| t >= THROTTLED_PCT)) {
            return None;
        }
        let h = held.iter().max_by(|a, b| a.pct.total_cmp(&b.pct))?;
        let throttling = throttled
            .map(|t| format!(", throttled in {t:.0}% of its periods"))
            .unwrap_or_default();
        Some((
            stage_of(&h.group).to_string(),
            format!(
                "the {side}'s processes of the run use {used:.0}% of one core (the sampler's {sampler:.0}% among them), {:.0}% of their {q:.0}% CPU quota{throttling}, {} the most ({:.0}%): the quota is the limit",
                used / q * 100.0,
                h.group,
                h.pct
            ),
        ))
    })
}

fn share_on(cpu: &[CpuShare], side: &str, group: &str) -> f64 {
    cpu.iter()
        .filter(|s| s.side == side && s.group == group)
        .map(|s| s.pct)
        .sum()
}

fn share(cpu: &[CpuShare], group: &str) -> f64 {
    cpu.iter().filter(|s| s.group == group).map(|s| s.pct).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cipher: &str, variant: &str, m: f64, cpu: &[(&str, &str, f64)]) -> Row {
        Row {
            cipher: cipher.into(),
            variant: serde_json::from_value(serde_json::Value::from(variant))
                .expect("a report word"),
            rsync_flags: vec![],
            bytes: 1,
            samples: vec![m],
            flush_s: vec![],
            median_mib_s: Some(m),
            min_mib_s: Some(m),
            max_mib_s: Some(m),
            wire_bytes: None,
            literal_bytes: None,
            cpu: cpu
                .iter()
                .map(|(s, g, p)| CpuShare {
                    side: s.to_string(),
                    group: g.to_string(),
                    pct: *p,
                })
                .collect(),
            error: None,
        }
    }

    fn ceil(stage: &str, cipher: Option<&str>, m: f64) -> StageCeiling {
        let stage = serde_json::from_value(serde_json::Value::from(stage)).expect("a stage");
        super::super::stages::ceiling(stage, cipher, vec![m], String::new())
    }

    #[test]
    fn seed_case_luks_bound_with_ranked_fixes() {
        // The seed: ~8 MB/s, kcryptd at 58% and rsync at 29% of a core, crypto engine irq.
        let rows = [
            row(
                "aes128-ctr",
                "whole-file",
                7.4,
                &[
                    ("server", "kcryptd", 58.0),
                    ("server", "rsync-receiver", 29.0),
                    ("server", "irq", 30.0),
                ],
            ),
            row("aes128-ctr", "delta", 5.0, &[]),
            row("chacha20-poly1305@openssh.com", "whole-file", 7.6, &[]),
        ];
        let ceilings = [
            ceil("ssh", Some("aes128-ctr"), 40.0),
            ceil("disk", None, 8.0),
            ceil("rsync-local", None, 60.0),
        ];
        let storage = StorageInfo {
            dm_name: Some("data".into()),
            sector_size: Some(512),
            ..Default::default()
        };
        let v = decide(&Input {
            rows: &rows,
            ceilings: &ceilings,
            storage: &storage,
            default_cipher: Some("aes128-ctr"),
            cores: Some(1),
            same_machine: false,
        });
        assert_eq!(v.bound_by, "dm-crypt");
        assert_eq!(v.cipher.as_deref(), Some("aes128-ctr"));
        let changes: Vec<&str> = v.suggestions.iter().map(|s| s.change.as_str()).collect();
        assert!(
            changes[0].contains("no_write_workqueue") || changes[0].contains("4096"),
            "{changes:?}"
        );
        assert!(changes.iter().any(|c| c.contains("--whole-file")));
        assert!(
            !changes.iter().any(|c| c.contains("chacha")),
            "a 3% gain is noise"
        );
        assert_eq!(v.suggestions[0].expected_mib_s, Some(40.0));
    }

    /// A board-like server held to a fifth of a core: sshd and the receiving rsync together
    /// at its quota are the bound, though neither comes near a whole core; without the quota
    /// the same figures say nothing is saturated.
    #[test]
    fn a_server_at_its_cpu_quota_is_the_bound() {
        let cpu = [
            ("server", "sshd", 14.0),
            ("server", "rsync-receiver", 1.5),
            ("server", "sampler", 3.0),
            ("server", "kcryptd", 30.0),
            ("server", QUOTA_GROUP, 20.0),
            ("client", "ssh", 30.0),
        ];
        let decide_on = |cpu: &[(&str, &str, f64)]| {
            let rows = [row("3des-cbc", "whole-file", 4.0, cpu)];
            decide(&Input {
                rows: &rows,
                ceilings: &[],
                storage: &StorageInfo::default(),
                default_cipher: Some("3des-cbc"),
                cores: Some(2),
                same_machine: false,
            })
        };
        let v = decide_on(&cpu);
        assert_eq!(v.bound_by, "ssh", "{}", v.reason);
        assert!(
            v.reason.contains("92% of their 20% CPU quota"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("sshd the most"), "{}", v.reason);
        // The ssh stage at its ceiling on the held server: the reason names the quota too.
        let rows = [row("3des-cbc", "whole-file", 4.0, &cpu)];
        let v = decide(&Input {
            rows: &rows,
            ceilings: &[ceil("ssh", Some("3des-cbc"), 4.1)],
            storage: &StorageInfo::default(),
            default_cipher: Some("3des-cbc"),
            cores: Some(2),
            same_machine: false,
        });
        assert_eq!(v.bound_by, "ssh", "{}", v.reason);
        assert!(
            v.reason.contains("of the ssh stage alone (the server's"),
            "{}",
            v.reason
        );
        let v = decide_on(&cpu[..4]);
        assert_eq!(v.bound_by, "unclear", "{}", v.reason);
        // Under its quota by more than the saturation margin: not the bound...
        let under = [("server", "sshd", 10.0), ("server", QUOTA_GROUP, 20.0)];
        let v = decide_on(&under);
        assert_eq!(v.bound_by, "unclear", "{}", v.reason);
        // ...unless the group was throttled in most periods: it wanted more.
        let v = decide_on(&[under[0], under[1], ("server", THROTTLED_GROUP, 70.0)]);
        assert_eq!(v.bound_by, "ssh", "{}", v.reason);
        assert!(
            v.reason.contains("throttled in 70% of its periods"),
            "{}",
            v.reason
        );
        // A limit and a throttled share are no process: never the busiest one.
        let v = decide_on(&[
            ("server", QUOTA_GROUP, 90.0),
            ("server", THROTTLED_GROUP, 95.0),
        ]);
        assert_eq!(v.bound_by, "unclear", "{}", v.reason);
    }

    #[test]
    fn ssh_bound_suggests_the_faster_cipher() {
        let rows = [
            row("aes256-cbc", "whole-file", 90.0, &[("client", "ssh", 97.0)]),
            row("aes128-gcm@openssh.com", "whole-file", 150.0, &[]),
        ];
        let ceilings = [
            ceil("ssh", Some("aes256-cbc"), 100.0),
            ceil("disk", None, 900.0),
        ];
        let v = decide(&Input {
            rows: &rows,
            ceilings: &ceilings,
            storage: &StorageInfo::default(),
            default_cipher: Some("aes256-cbc"),
            cores: Some(2),
            same_machine: true,
        });
        assert_eq!(v.bound_by, "ssh");
        assert!(v.suggestions[0].change.contains("aes128-gcm"));
        assert_eq!(v.suggestions[0].gain_pct, Some(66.7));
    }
}
