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
}

pub fn judge(e: &Evidence) -> (Verdict, String) {
    if let Some(ceiling) = e.ceiling_mib_s.filter(|c| *c > 0.0) {
        let ratio = e.mib_s / ceiling;
        if ratio >= NETWORK_NEAR {
            return (
                Verdict::Network,
                format!(
                    "{:.1} MiB/s is {:.0}% of the {:.1} MiB/s raw-TCP ceiling",
                    e.mib_s,
                    ratio * 100.0,
                    ceiling
                ),
            );
        }
    }
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
    let c_sat = cu.is_some_and(|u| u >= CPU_SATURATED);
    let s_sat = su.is_some_and(|u| u >= CPU_SATURATED);
    match (c_sat, s_sat) {
        (true, false) => (Verdict::ClientCpu, format!("{client}; {server}; {ceiling}")),
        (false, true) => (Verdict::ServerCpu, format!("{server}; {client}; {ceiling}")),
        (true, true) => {
            let (c, s) = (cu.unwrap_or(0.0), su.unwrap_or(0.0));
            if c - s >= BOTH_SATURATED_MARGIN {
                (
                    Verdict::ClientCpu,
                    format!("{client} (higher); {server}; {ceiling}"),
                )
            } else if s - c >= BOTH_SATURATED_MARGIN {
                (
                    Verdict::ServerCpu,
                    format!("{server} (higher); {client}; {ceiling}"),
                )
            } else {
                (
                    Verdict::Unclear,
                    format!("both ends saturated ({client}; {server}); {ceiling}"),
                )
            }
        }
        (false, false) => (
            Verdict::Unclear,
            format!(
                "no resource saturated: {client}; {server}; {ceiling} \
                 (latency/window, disk or a shared CPU may be the limit)"
            ),
        ),
    }
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
        }
    }

    #[test]
    fn network_when_near_the_ceiling() {
        let e = Evidence {
            ceiling_mib_s: Some(110.0),
            ..ev()
        };
        assert_eq!(judge(&e).0, Verdict::Network);
        let e = Evidence {
            ceiling_mib_s: Some(1000.0),
            ..ev()
        };
        assert_eq!(judge(&e).0, Verdict::Unclear);
    }

    #[test]
    fn quota_counts_as_the_cap() {
        let e = Evidence {
            server_cpu_pct: Some(19.0),
            server_cap_pct: 20.0,
            ..ev()
        };
        let (v, why) = judge(&e);
        assert_eq!(v, Verdict::ServerCpu);
        assert!(why.contains("20% quota"), "{why}");
    }

    #[test]
    fn client_saturated() {
        let e = Evidence {
            client_cpu_pct: Some(99.0),
            ..ev()
        };
        assert_eq!(judge(&e).0, Verdict::ClientCpu);
    }

    #[test]
    fn both_saturated_needs_a_margin() {
        let e = Evidence {
            client_cpu_pct: Some(97.0),
            server_cpu_pct: Some(95.0),
            ..ev()
        };
        assert_eq!(judge(&e).0, Verdict::Unclear);
        let e = Evidence {
            client_cpu_pct: Some(99.0),
            server_cpu_pct: Some(86.0),
            ..ev()
        };
        assert_eq!(judge(&e).0, Verdict::ClientCpu);
    }

    #[test]
    fn unknown_server_cpu_is_never_server_cpu() {
        let e = Evidence {
            server_cpu_pct: None,
            ..ev()
        };
        let (v, why) = judge(&e);
        assert_eq!(v, Verdict::Unclear);
        assert!(why.contains("server CPU unknown"));
    }
}
