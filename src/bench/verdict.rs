//! Which resource bounds a transfer. Documented with its thresholds in docs/verdicts.md.
//!
//! The rule is conservative on purpose: a verdict needs a saturated resource as evidence, and
//! "unclear" with the reason is preferred to a guess that sends a user after the wrong fix.

use super::model::Verdict;

/// A process at or above this share of the CPU available to it is taken as saturated. `ssh`
/// and `sshd` do their crypto on one thread, so "available" is one core or the cgroup quota,
/// whichever is smaller. Below 100% because the clock also covers pipe waits and scheduling.
pub const CPU_SATURATED: f64 = 0.85;
/// Throughput at or above this share of the raw-TCP ceiling is taken as network-bound.
pub const NETWORK_NEAR: f64 = 0.85;
/// When both ends are saturated, one must lead by this many points of utilisation to be named.
pub const BOTH_SATURATED_MARGIN: f64 = 0.05;

/// Rows whose CPU stays below this share of its cap on both ends count as "neither end near
/// saturation" for the path inference: well clear of `CPU_SATURATED`, so a cipher that is
/// nearly CPU-bound cannot make two rows agree by coincidence.
pub const PATH_CPU_CLEAR: f64 = 0.70;
/// Rows agree when their medians lie within the widest row's own min–max range, or within this
/// share of their mean when every row is tighter than that (a link-bound rate hardly varies).
pub const PATH_AGREE_FLOOR: f64 = 0.05;
/// A row whose samples spread wider than this share of its median is too imprecise to agree
/// with anything: on a machine busy with other work every rate wobbles, and wide ranges
/// overlap whatever limits them.
pub const PATH_MAX_SPREAD: f64 = 0.20;

/// One end of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// Which rule of docs/verdicts.md decided (`verdict_rule` in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Throughput near the raw-TCP ceiling, and the ceiling run was not CPU-bound.
    Ceiling,
    /// Both ends on one machine, their CPU adding up to its cores.
    SharedCpu,
    /// One end saturated.
    OneSide,
    /// Both saturated, one leads by the margin.
    BothMargin,
    /// Both saturated, neither leads.
    BothTie,
    /// Nothing saturated (and no other rule applied).
    NoSaturation,
    /// Ciphers agree while no CPU is near saturation: link or window (`infer_path`).
    PathInference,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Ceiling => "ceiling",
            Rule::SharedCpu => "shared-cpu",
            Rule::OneSide => "one-side-saturated",
            Rule::BothMargin => "both-saturated-margin",
            Rule::BothTie => "both-saturated-tie",
            Rule::NoSaturation => "no-saturation",
            Rule::PathInference => "path-inference",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    pub mib_s: f64,
    /// % of one core.
    pub client_cpu_pct: Option<f64>,
    /// CPU available to the client process, % of one core (100 unless a quota is lower).
    pub client_cap_pct: f64,
    pub server_cpu_pct: Option<f64>,
    pub server_cap_pct: f64,
    pub ceiling_mib_s: Option<f64>,
    /// The ceiling run was itself bound by this end's CPU: reaching it proves nothing about
    /// the network.
    pub ceiling_cpu_bound: Option<Side>,
    /// Both ends run on one machine with this many cores (same boot id, or loopback).
    pub shared_cores: Option<f64>,
    /// That machine's whole busy CPU during the transfer, % of one core (all processes).
    pub machine_busy_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub reason: String,
    pub rule: Rule,
}

fn j(verdict: Verdict, rule: Rule, reason: String) -> Judgement {
    Judgement {
        verdict,
        reason,
        rule,
    }
}

/// Whether a raw-TCP ceiling run was CPU-bound, and on which end: the sending or receiving
/// processes at `CPU_SATURATED` of their cap. The busier end is named when both are. The
/// server machine's overall busy share is recorded beside it but not used: unrelated work on
/// the server would make every ceiling look CPU-bound.
pub fn ceiling_cpu_bound(
    client_pct: Option<f64>,
    client_cap_pct: f64,
    server_pct: Option<f64>,
    server_cap_pct: f64,
) -> Option<Side> {
    let c = client_pct.map_or(0.0, |u| u / client_cap_pct.clamp(1.0, 100.0));
    let s = server_pct.map_or(0.0, |u| u / server_cap_pct.clamp(1.0, 100.0));
    match (c >= CPU_SATURATED, s >= CPU_SATURATED) {
        (false, false) => None,
        (true, false) => Some(Side::Client),
        (false, true) => Some(Side::Server),
        (true, true) if c >= s => Some(Side::Client),
        (true, true) => Some(Side::Server),
    }
}

pub fn judge(e: &Evidence) -> Judgement {
    let note = match ceiling_rule(e) {
        Ok(note) => note,
        Err(network) => return network,
    };
    let util = |used: Option<f64>, cap: f64| used.map(|u| u / cap.clamp(1.0, 100.0));
    let cu = util(e.client_cpu_pct, e.client_cap_pct);
    let su = util(e.server_cpu_pct, e.server_cap_pct);
    let describe = |name: &str, used: Option<f64>, cap: f64| match used {
        Some(u) if cap < 100.0 => format!("{name} CPU {u:.0}% of a {cap:.0}% quota"),
        Some(u) => format!("{name} CPU {u:.0}% of one core"),
        None => format!("{name} CPU unknown"),
    };
    let client = describe("client", e.client_cpu_pct, e.client_cap_pct);
    let server = describe("server", e.server_cpu_pct, e.server_cap_pct);
    let ceiling = match e.ceiling_mib_s {
        Some(c) => format!("{:.0}% of the {c:.1} MiB/s ceiling", e.mib_s / c * 100.0),
        None => "raw-TCP ceiling unknown".to_string(),
    };
    if let Some(shared) = shared_cpu(e, &ceiling, &note) {
        return shared;
    }
    let c_sat = cu.is_some_and(|u| u >= CPU_SATURATED);
    let s_sat = su.is_some_and(|u| u >= CPU_SATURATED);
    match (c_sat, s_sat) {
        (true, false) => j(
            Verdict::ClientCpu,
            Rule::OneSide,
            format!("{client}; {server}; {ceiling}{note}"),
        ),
        (false, true) => j(
            Verdict::ServerCpu,
            Rule::OneSide,
            format!("{server}; {client}; {ceiling}{note}"),
        ),
        (true, true) => {
            let (c, s) = (cu.unwrap_or(0.0), su.unwrap_or(0.0));
            if c - s >= BOTH_SATURATED_MARGIN {
                j(
                    Verdict::ClientCpu,
                    Rule::BothMargin,
                    format!("{client} (higher); {server}; {ceiling}{note}"),
                )
            } else if s - c >= BOTH_SATURATED_MARGIN {
                j(
                    Verdict::ServerCpu,
                    Rule::BothMargin,
                    format!("{server} (higher); {client}; {ceiling}{note}"),
                )
            } else {
                j(
                    Verdict::Unclear,
                    Rule::BothTie,
                    format!("both ends saturated ({client}; {server}); {ceiling}{note}"),
                )
            }
        }
        (false, false) => {
            let busy = match (e.shared_cores, e.machine_busy_pct) {
                (Some(n), Some(b)) if b >= CPU_SATURATED * n * 100.0 => format!(
                    "; the machine both ends share was {b:.0}% busy of {:.0}%: other work \
                     takes the CPU",
                    n * 100.0
                ),
                _ => String::new(),
            };
            j(
                Verdict::Unclear,
                Rule::NoSaturation,
                format!(
                    "no resource saturated: {client}; {server}; {ceiling}{note}{busy} \
                     (latency/window, disk or a shared CPU may be the limit)"
                ),
            )
        }
    }
}

/// The ceiling rule: `Err` with the network verdict when the row reached the raw-TCP ceiling,
/// else the note a CPU-bound ceiling adds to every other reason.
fn ceiling_rule(e: &Evidence) -> Result<String, Judgement> {
    let mut note = String::new();
    if let Some(ceiling) = e.ceiling_mib_s.filter(|c| *c > 0.0) {
        let ratio = e.mib_s / ceiling;
        if ratio >= NETWORK_NEAR {
            match e.ceiling_cpu_bound {
                None => {
                    return Err(j(
                        Verdict::Network,
                        Rule::Ceiling,
                        format!(
                            "{:.1} MiB/s is {:.0}% of the {:.1} MiB/s raw-TCP ceiling",
                            e.mib_s,
                            ratio * 100.0,
                            ceiling
                        ),
                    ))
                }
                Some(side) => {
                    note = format!(
                        "; {:.0}% of a raw-TCP ceiling that was itself bound by the {} CPU, \
                         so not evidence of the network",
                        ratio * 100.0,
                        side.as_str()
                    )
                }
            }
        }
    }
    Ok(note)
}

/// The shared-CPU rule: both ends on one machine, together near all its cores.
fn shared_cpu(e: &Evidence, ceiling: &str, note: &str) -> Option<Judgement> {
    if let (Some(cores), Some(c), Some(s)) = (e.shared_cores, e.client_cpu_pct, e.server_cpu_pct) {
        let all = cores * 100.0;
        if cores >= 1.0 && c + s >= CPU_SATURATED * all && e.mib_s > 0.0 {
            let (costly, more, less) = if c >= s {
                ("client", c, s)
            } else {
                ("server", s, c)
            };
            // CPU-seconds per GiB moved: % of a core ÷ MiB/s × 1024 / 100.
            let per_gib = |pct: f64| pct / e.mib_s * 10.24;
            return Some(j(
                Verdict::CpuShared,
                Rule::SharedCpu,
                format!(
                    "client and server share one machine's {cores:.0} cores and use \
                     {c:.0}% + {s:.0}% = {:.0}% of {all:.0}%; the {costly} costs more per \
                     byte ({:.2} vs {:.2} CPU-s/GiB); {ceiling}{note}",
                    c + s,
                    per_gib(more),
                    per_gib(less)
                ),
            ));
        }
    }
    None
}

/// What the path inference needs of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct PathRow {
    pub cipher: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Utilisation of each end: CPU ÷ cap (None: unknown).
    pub client_util: Option<f64>,
    pub server_util: Option<f64>,
}

/// Inference when no ceiling could be had: rows of one engine and direction whose ciphers
/// differ but whose rates agree within their spread, while neither end is near saturation,
/// are bound by the path. With an RTT the window and the link are told apart: at
/// ≥ `WINDOW_NEAR` of `window / RTT` the SSH window, else the link. Returns the reason for
/// every row (the same one) or None when the rule does not apply.
pub fn infer_path(
    rows: &[PathRow],
    rtt_s: Option<f64>,
    window_bytes: Option<u64>,
) -> Option<String> {
    use super::window::{is_window_bound, limit_mib_s, WINDOW_NEAR};
    let mut ciphers: Vec<&str> = rows.iter().map(|r| r.cipher.as_str()).collect();
    ciphers.sort_unstable();
    ciphers.dedup();
    if ciphers.len() < 2 {
        return None;
    }
    let clear = |u: Option<f64>| u.is_some_and(|u| u < PATH_CPU_CLEAR);
    if !rows
        .iter()
        .all(|r| clear(r.client_util) && clear(r.server_util))
    {
        return None;
    }
    if !rows
        .iter()
        .all(|r| r.median > 0.0 && (r.max - r.min) / r.median <= PATH_MAX_SPREAD)
    {
        return None;
    }
    let lo = rows.iter().map(|r| r.median).fold(f64::INFINITY, f64::min);
    let hi = rows.iter().map(|r| r.median).fold(0.0, f64::max);
    let mean = rows.iter().map(|r| r.median).sum::<f64>() / rows.len() as f64;
    let widest = rows.iter().map(|r| r.max - r.min).fold(0.0, f64::max);
    let allowed = widest.max(PATH_AGREE_FLOOR * mean);
    if hi - lo > allowed || mean <= 0.0 {
        return None;
    }
    let max_util = rows
        .iter()
        .flat_map(|r| [r.client_util, r.server_util])
        .flatten()
        .fold(0.0, f64::max);
    let mut why = format!(
        "path: {} ciphers agree at {lo:.1}–{hi:.1} MiB/s (within {allowed:.2} MiB/s, the \
         widest spread or {:.0}% of the mean) while neither end passes {:.0}% of its CPU \
         (highest {:.0}%): the cipher is not the limit",
        ciphers.len(),
        PATH_AGREE_FLOOR * 100.0,
        PATH_CPU_CLEAR * 100.0,
        max_util * 100.0
    );
    match (rtt_s.filter(|r| *r > 0.0), window_bytes) {
        (Some(rtt), Some(w)) => {
            let limit = limit_mib_s(w, rtt);
            let share = mean / limit * 100.0;
            if is_window_bound(mean, w, rtt) {
                why.push_str(&format!(
                    "; the SSH window: {:.0} KiB / {:.2} ms RTT allows {limit:.1} MiB/s and \
                     the rows reach {share:.0}% of it (>= {:.0}%)",
                    w as f64 / 1024.0,
                    rtt * 1000.0,
                    WINDOW_NEAR * 100.0
                ));
            } else {
                why.push_str(&format!(
                    "; the link (or what shapes it), not the SSH window: {:.0} KiB / {:.2} ms \
                     RTT allows {limit:.1} MiB/s and the rows reach only {share:.0}% of it",
                    w as f64 / 1024.0,
                    rtt * 1000.0
                ));
            }
        }
        _ => why.push_str("; link or SSH window (RTT unknown, so not told apart)"),
    }
    Some(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev() -> Evidence {
        Evidence {
            mib_s: 100.0,
            client_cpu_pct: Some(40.0),
            client_cap_pct: 100.0,
            server_cpu_pct: Some(40.0),
            server_cap_pct: 100.0,
            ceiling_mib_s: None,
            ceiling_cpu_bound: None,
            shared_cores: None,
            machine_busy_pct: None,
        }
    }

    #[test]
    fn network_when_near_the_ceiling() {
        let e = Evidence {
            ceiling_mib_s: Some(110.0),
            ..ev()
        };
        assert_eq!(judge(&e).verdict, Verdict::Network);
        let e = Evidence {
            ceiling_mib_s: Some(1000.0),
            ..ev()
        };
        assert_eq!(judge(&e).verdict, Verdict::Unclear);
    }

    #[test]
    fn quota_counts_as_the_cap() {
        let e = Evidence {
            server_cpu_pct: Some(19.0),
            server_cap_pct: 20.0,
            ..ev()
        };
        let Judgement {
            verdict: v,
            reason: why,
            ..
        } = judge(&e);
        assert_eq!(v, Verdict::ServerCpu);
        assert!(why.contains("20% quota"), "{why}");
    }

    #[test]
    fn client_saturated() {
        let e = Evidence {
            client_cpu_pct: Some(99.0),
            ..ev()
        };
        assert_eq!(judge(&e).verdict, Verdict::ClientCpu);
    }

    #[test]
    fn both_saturated_needs_a_margin() {
        let e = Evidence {
            client_cpu_pct: Some(97.0),
            server_cpu_pct: Some(95.0),
            ..ev()
        };
        assert_eq!(judge(&e).verdict, Verdict::Unclear);
        let e = Evidence {
            client_cpu_pct: Some(99.0),
            server_cpu_pct: Some(86.0),
            ..ev()
        };
        assert_eq!(judge(&e).verdict, Verdict::ClientCpu);
    }

    #[test]
    fn unknown_server_cpu_is_never_server_cpu() {
        let e = Evidence {
            server_cpu_pct: None,
            ..ev()
        };
        let Judgement {
            verdict: v,
            reason: why,
            ..
        } = judge(&e);
        assert_eq!(v, Verdict::Unclear);
        assert!(why.contains("server CPU unknown"));
    }

    #[test]
    fn a_cpu_bound_ceiling_is_not_the_network() {
        // The slow board: 30 MiB/s against a 35 MiB/s raw-TCP ceiling that the board's CPU set.
        let e = Evidence {
            mib_s: 30.0,
            client_cpu_pct: Some(97.0),
            ceiling_mib_s: Some(35.0),
            ceiling_cpu_bound: Some(Side::Client),
            ..ev()
        };
        let jd = judge(&e);
        assert_eq!(jd.verdict, Verdict::ClientCpu, "{}", jd.reason);
        assert!(
            jd.reason.contains("itself bound by the client CPU"),
            "{}",
            jd.reason
        );
        let e = Evidence {
            ceiling_cpu_bound: None,
            ..e
        };
        assert_eq!(judge(&e).verdict, Verdict::Network);
        // Nothing saturated in the row itself: unclear, and says why the ceiling did not count.
        let e = Evidence {
            client_cpu_pct: Some(40.0),
            ceiling_cpu_bound: Some(Side::Server),
            ..e
        };
        let jd = judge(&e);
        assert_eq!(jd.verdict, Verdict::Unclear);
        assert!(
            jd.reason.contains("server CPU, so not evidence"),
            "{}",
            jd.reason
        );
    }

    #[test]
    fn ceiling_cpu_bound_names_the_busier_end() {
        assert_eq!(
            ceiling_cpu_bound(Some(98.0), 100.0, Some(10.0), 100.0),
            Some(Side::Client)
        );
        assert_eq!(
            ceiling_cpu_bound(Some(10.0), 100.0, Some(19.0), 20.0),
            Some(Side::Server)
        );
        assert_eq!(
            ceiling_cpu_bound(Some(90.0), 100.0, Some(19.0), 20.0),
            Some(Side::Server)
        );
        assert_eq!(ceiling_cpu_bound(Some(10.0), 100.0, None, 100.0), None);
        assert_eq!(ceiling_cpu_bound(None, 100.0, None, 100.0), None);
    }

    #[test]
    fn shared_cpu_names_the_costlier_side() {
        let e = Evidence {
            mib_s: 300.0,
            client_cpu_pct: Some(99.0),
            server_cpu_pct: Some(80.0),
            shared_cores: Some(2.0),
            ..ev()
        };
        let jd = judge(&e);
        assert_eq!(jd.verdict, Verdict::CpuShared, "{}", jd.reason);
        assert_eq!(jd.rule, Rule::SharedCpu);
        assert!(
            jd.reason.contains("the client costs more per byte"),
            "{}",
            jd.reason
        );
        // Same machine with room to spare: the single-side rule decides.
        let e = Evidence {
            server_cpu_pct: Some(30.0),
            ..e
        };
        assert_eq!(judge(&e).verdict, Verdict::ClientCpu);
        // Different machines: never shared.
        let e = Evidence {
            server_cpu_pct: Some(95.0),
            shared_cores: None,
            ..e
        };
        assert_eq!(judge(&e).rule, Rule::BothTie);
    }

    fn prow(cipher: &str, median: f64, spread: f64, util: f64) -> PathRow {
        PathRow {
            cipher: cipher.into(),
            median,
            min: median - spread / 2.0,
            max: median + spread / 2.0,
            client_util: Some(util),
            server_util: Some(util),
        }
    }

    #[test]
    fn path_when_ciphers_agree_and_no_cpu_is_busy() {
        use crate::bench::window::OPENSSH_CHANNEL_WINDOW as W;
        // The tbf case: 11.4 MiB/s for every cipher, CPUs at a few %, RTT 0.1 ms.
        let rows = [
            prow("aes128-ctr", 11.40, 0.05, 0.05),
            prow("aes128-gcm", 11.43, 0.04, 0.04),
        ];
        let why = infer_path(&rows, Some(0.0001), Some(W)).expect("path");
        assert!(why.contains("the link"), "{why}");
        // A 200 ms path where 2 MiB / RTT = 10 MiB/s: the window.
        let rows = [prow("a", 9.5, 0.2, 0.05), prow("b", 9.6, 0.2, 0.05)];
        let why = infer_path(&rows, Some(0.2), Some(W)).expect("path");
        assert!(why.contains("the SSH window"), "{why}");
        assert!(infer_path(&rows, None, Some(W))
            .unwrap()
            .contains("RTT unknown"));
    }

    #[test]
    fn no_path_without_agreement_busy_cpu_or_a_second_cipher() {
        // Rates 20% apart with tight samples: the cipher matters.
        let rows = [prow("a", 100.0, 1.0, 0.3), prow("b", 80.0, 1.0, 0.3)];
        assert_eq!(infer_path(&rows, None, None), None);
        // One end near saturation.
        let rows = [prow("a", 100.0, 1.0, 0.75), prow("b", 100.5, 1.0, 0.3)];
        assert_eq!(infer_path(&rows, None, None), None);
        // Unknown server CPU cannot be called clear.
        let mut r = prow("b", 100.5, 1.0, 0.3);
        r.server_util = None;
        assert_eq!(
            infer_path(&[prow("a", 100.0, 1.0, 0.3), r], None, None),
            None
        );
        // One cipher (two MACs): nothing to compare.
        assert_eq!(
            infer_path(
                &[prow("a", 100.0, 1.0, 0.1), prow("a", 100.0, 1.0, 0.1)],
                None,
                None
            ),
            None
        );
        // Wide samples make a 10% gap agreement.
        let rows = [prow("a", 100.0, 12.0, 0.3), prow("b", 90.0, 12.0, 0.3)];
        assert!(infer_path(&rows, None, None).is_some());
        // Too wide (a busy machine): nothing can be concluded.
        let rows = [prow("a", 135.0, 90.0, 0.3), prow("b", 130.0, 30.0, 0.3)];
        assert_eq!(infer_path(&rows, None, None), None);
    }

    #[test]
    fn a_shared_machine_busy_with_other_work_is_named() {
        let e = Evidence {
            client_cpu_pct: Some(15.0),
            server_cpu_pct: Some(20.0),
            shared_cores: Some(2.0),
            machine_busy_pct: Some(196.0),
            ..ev()
        };
        let jd = judge(&e);
        assert_eq!(jd.verdict, Verdict::Unclear);
        assert!(jd.reason.contains("196% busy of 200%"), "{}", jd.reason);
    }
}
