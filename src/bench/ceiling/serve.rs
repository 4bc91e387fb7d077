//! The raw-TCP ceiling `sshtune serve` measures itself (its `tcp-ceiling` built-in): the
//! server sends, so it is the download direction, and it reports its whole process's CPU over
//! each send, so a ceiling held down by the server's CPU quota is known as such.

use super::super::model::{Ceiling, CeilingDirection, Direction};
use super::super::verdict;
use crate::stats;

/// One raw-TCP run from an `sshtune serve` host.
#[derive(Debug, Clone, Copy)]
pub struct TcpRun {
    pub mib_s: f64,
    /// The whole server's CPU over the send, % of one core; None from a server that does not
    /// report it.
    pub server_cpu_pct: Option<f64>,
}

/// The ceiling from `sshtune serve`'s runs: the server sends, so it is the download direction
/// (upload rows are judged against it too), marked CPU-bound when the server's CPU reached
/// its cap (`server_quota_cores`, else one core) during the runs.
pub fn ceiling(runs: &[TcpRun], server_quota_cores: Option<f64>) -> Option<Ceiling> {
    let rates: Vec<f64> = runs.iter().map(|r| r.mib_s).collect();
    let cpu: Vec<f64> = runs.iter().filter_map(|r| r.server_cpu_pct).collect();
    let mib_s = stats::median(&rates)?;
    let server_cpu_pct = stats::median(&cpu);
    let cap = server_quota_cores.map_or(100.0, |q| (q * 100.0).min(100.0));
    let cpu_bound = verdict::ceiling_cpu_bound(None, 100.0, server_cpu_pct, cap);
    let bound = cpu_bound.map_or(String::new(), |s| {
        format!(", bound by the {} CPU", s.as_str())
    });
    Some(Ceiling {
        mib_s,
        method: format!("raw TCP to sshtune serve, median of {}{bound}", runs.len()),
        rtt_ms: None,
        receiver: Some("sshtune serve".into()),
        directions: vec![CeilingDirection {
            direction: Direction::Download,
            mib_s,
            min_mib_s: stats::min(&rates).unwrap_or(mib_s),
            max_mib_s: stats::max(&rates).unwrap_or(mib_s),
            runs: runs.len() as u32,
            client_cpu_pct: None,
            server_cpu_pct,
            server_busy_pct: None,
            cpu_bound: cpu_bound.map(|s| s.as_str().to_string()),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mib_s: f64, cpu: f64) -> TcpRun {
        TcpRun {
            mib_s,
            server_cpu_pct: Some(cpu),
        }
    }

    #[test]
    fn a_serve_ceiling_at_the_servers_quota_is_cpu_bound() {
        let runs = [run(199.0, 4.9), run(201.0, 5.0), run(150.0, 4.8)];
        let c = ceiling(&runs, Some(0.05)).unwrap();
        assert_eq!(c.mib_s, 199.0);
        let d = &c.directions[0];
        assert_eq!(d.direction, Direction::Download);
        assert_eq!((d.min_mib_s, d.max_mib_s, d.runs), (150.0, 201.0, 3));
        assert_eq!(d.cpu_bound.as_deref(), Some("server"));
        assert!(
            c.method.ends_with("bound by the server CPU"),
            "{}",
            c.method
        );
        // The same figures without a quota: a twentieth of a core is no bound.
        let free = ceiling(&runs, None).unwrap();
        assert_eq!(free.directions[0].cpu_bound, None);
        assert!(ceiling(&[], None).is_none());
    }
}
