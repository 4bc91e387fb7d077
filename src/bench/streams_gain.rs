//! What `--streams N` measured, judged: each round's aggregate rate, each stream's, both ends'
//! CPU over all sessions, the gain over the row's single stream with its range, and the line
//! that says whether one core or the whole CPU binds. Pure: the rounds come from
//! `bench::streams`, the tables from `report::streams`.

use super::model::{Gain, ResultRow, Streams, Verdict};
use super::verdict::CPU_SATURATED;
use crate::stats;
use crate::sysinfo::MachineInfo;

/// One round of N concurrent transfers.
#[derive(Debug, Clone, Default)]
pub struct Round {
    pub bytes: u64,
    pub wall_s: f64,
    /// Each stream's rate, MiB/s, in stream order.
    pub streams_mib_s: Vec<f64>,
    pub client_cpu_s: Option<f64>,
    pub server_cpu_s: Option<f64>,
    /// The whole server's busy share during the round, % of one core.
    pub server_total_pct: Option<f64>,
}

const MIB: f64 = 1024.0 * 1024.0;

/// The rounds summarised against `row`, its single stream.
pub fn summarise(row: &ResultRow, count: u32, bytes_per_stream: u64, rounds: &[Round]) -> Streams {
    let rates: Vec<f64> = rounds
        .iter()
        .map(|r| r.bytes as f64 / MIB / r.wall_s.max(1e-9))
        .collect();
    let wall: f64 = rounds.iter().map(|r| r.wall_s).sum();
    let pooled = |f: fn(&Round) -> Option<f64>| {
        let cpu: Option<f64> = rounds.iter().map(f).sum();
        cpu.filter(|_| !rounds.is_empty() && wall > 0.0)
            .map(|c| c / wall * 100.0)
    };
    let per_stream = (0..count as usize)
        .filter_map(|i| {
            let one: Vec<f64> = rounds
                .iter()
                .filter_map(|r| r.streams_mib_s.get(i).copied())
                .collect();
            stats::median(&one)
        })
        .collect();
    let totals: Vec<f64> = rounds.iter().filter_map(|r| r.server_total_pct).collect();
    let mut s = Streams {
        count,
        bytes_per_stream,
        median_mib_s: stats::median(&rates),
        min_mib_s: stats::min(&rates),
        max_mib_s: stats::max(&rates),
        samples: rates,
        sample_seconds: rounds.iter().map(|r| r.wall_s).collect(),
        per_stream_mib_s: per_stream,
        client_cpu_pct: pooled(|r| r.client_cpu_s),
        server_cpu_pct: pooled(|r| r.server_cpu_s),
        server_total_cpu_pct: stats::median(&totals),
        ..Streams::default()
    };
    s.gain = gain(row, &s);
    s
}

/// The aggregate's gain over the single stream, None when either lacks figures.
pub fn gain(row: &ResultRow, s: &Streams) -> Option<Gain> {
    let (one, one_lo, one_hi) = (row.median_mib_s?, row.min_mib_s?, row.max_mib_s?);
    let (n, n_lo, n_hi) = (s.median_mib_s?, s.min_mib_s?, s.max_mib_s?);
    (one > 0.0 && one_lo > 0.0 && one_hi > 0.0).then(|| Gain {
        median: n / one,
        min: n_lo / one_hi,
        max: n_hi / one_lo,
        significant: n_lo > one_hi,
    })
}

/// The ends' CPU as the note weighs it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ends<'a> {
    pub client: Option<&'a MachineInfo>,
    pub client_quota_cores: Option<f64>,
    pub server: Option<&'a MachineInfo>,
    pub server_quota_cores: Option<f64>,
    /// Both ends on one machine: their CPU adds up on its cores.
    pub same_machine: bool,
}

impl<'a> Ends<'a> {
    /// The ends as the report records them.
    pub fn of(
        client: &'a MachineInfo,
        client_quota_cores: Option<f64>,
        server: &'a super::model::ServerInfo,
    ) -> Self {
        Self {
            client: Some(client),
            client_quota_cores,
            server: Some(&server.machine),
            server_quota_cores: server.cpu_quota_cores,
            same_machine: server.same_machine == Some(true),
        }
    }
}

/// Each row's streams note: which side's CPU binds and whether N streams help.
pub fn annotate(rows: &mut [ResultRow], ends: Ends) {
    for r in rows.iter_mut() {
        let note = match &r.streams {
            Some(s) if s.error.is_none() => note(r, s, ends),
            _ => None,
        };
        if let Some(s) = r.streams.as_mut() {
            s.note = note;
        }
    }
}

/// `server-cpu: one of 2 cores busy per stream; 2 streams: ×1.8 (1.6–2.0)`, or why N streams
/// gain nothing.
pub fn note(row: &ResultRow, s: &Streams, ends: Ends) -> Option<String> {
    let g = s.gain?;
    let times = format!(
        "{} streams: ×{:.1} ({:.1}–{:.1})",
        s.count, g.median, g.min, g.max
    );
    let side = Side::of(row, ends);
    let label = row.verdict.map_or("unclear".to_string(), |v| v.to_string());
    if g.significant {
        let per = side.map(|d| d.per_stream(ends)).unwrap_or_default();
        return Some(match per {
            Some(p) => format!("{label}: {p}; {times}"),
            None => format!("{label}: {times}"),
        });
    }
    // The end whose whole CPU the N streams fill, whatever bound the single stream.
    let full = [Side::Server, Side::Client, Side::Machine]
        .into_iter()
        .filter(|d| *d != Side::Machine || ends.same_machine)
        .find_map(|d| Some((d, d.whole_busy(s, ends)?)));
    let outcome = if g.max < 1.0 {
        "slower than one beyond the spread"
    } else {
        "within noise: no gain"
    };
    Some(match full {
        Some((d, whole)) => format!("{}: {whole}; {times}, {outcome}", d.verdict()),
        None => format!(
            "{label}: {times}, {outcome}, and no CPU is full: what binds is not a core (the \
             path, or other load on the machine)"
        ),
    })
}

/// The end whose CPU a note speaks of.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Client,
    Server,
    /// Both ends on one machine.
    Machine,
}

impl Side {
    /// The end the single stream's verdict names; None when no CPU bound it.
    fn of(row: &ResultRow, ends: Ends) -> Option<Self> {
        match row.verdict? {
            Verdict::ServerCpu => Some(Side::Server),
            Verdict::ClientCpu => Some(Side::Client),
            Verdict::CpuShared if ends.same_machine => Some(Side::Machine),
            _ => None,
        }
    }

    /// The verdict that names this end's CPU.
    fn verdict(self) -> Verdict {
        match self {
            Side::Client => Verdict::ClientCpu,
            Side::Server => Verdict::ServerCpu,
            Side::Machine => Verdict::CpuShared,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
            Side::Machine => "machine",
        }
    }

    /// The cores this end may use: its online cores, fewer under a quota.
    fn cores(self, ends: Ends) -> Option<f64> {
        let (m, q) = match self {
            Side::Client | Side::Machine => (ends.client, ends.client_quota_cores),
            Side::Server => (ends.server, ends.server_quota_cores),
        };
        let cores = m.and_then(|m| m.cores).map(f64::from);
        match (cores, q) {
            (Some(c), Some(q)) => Some(c.min(q)),
            (c, q) => c.or(q),
        }
    }

    /// `one of 2 cores busy per stream`.
    fn per_stream(self, ends: Ends) -> Option<String> {
        let cores = self.cores(ends)?;
        Some(format!(
            "one of {} busy per stream",
            cores_text(cores, self, ends)
        ))
    }

    /// `the server's whole CPU is busy (196% of 200%)` when this end's CPU at N streams is at
    /// its cap, else None.
    fn whole_busy(self, s: &Streams, ends: Ends) -> Option<String> {
        let cap = self.cores(ends)? * 100.0;
        let used = match self {
            Side::Client => s.client_cpu_pct?,
            Side::Server => s.server_cpu_pct?,
            Side::Machine => s.client_cpu_pct? + s.server_cpu_pct?,
        };
        (used >= CPU_SATURATED * cap).then(|| {
            let whose = match self {
                Side::Machine => "this machine's".to_string(),
                other => format!("the {}'s", other.name()),
            };
            format!(
                "{whose} whole CPU is busy ({used:.0}% of {}%{})",
                cap.round(),
                quota_text(self, ends)
            )
        })
    }
}

/// `2 cores`, or `a 1.0-core quota` when a quota is what limits.
fn cores_text(cores: f64, side: Side, ends: Ends) -> String {
    let quota = match side {
        Side::Server => ends.server_quota_cores,
        _ => ends.client_quota_cores,
    };
    match quota {
        Some(q) if (q - cores).abs() < 1e-9 => format!("a {q:.1}-core quota"),
        _ => format!("{cores:.0} cores"),
    }
}

/// `, a 1.0-core quota` when a quota is this end's cap.
fn quota_text(side: Side, ends: Ends) -> String {
    let quota = match side {
        Side::Server => ends.server_quota_cores,
        _ => ends.client_quota_cores,
    };
    let cores = side.cores(ends);
    match (quota, cores) {
        (Some(q), Some(c)) if (q - c).abs() < 1e-9 => format!(": a {q:.1}-core quota"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::Direction;

    fn row(verdict: Verdict, rates: &[f64]) -> ResultRow {
        let mut r = ResultRow::failed("openssh", "x", None, Direction::Upload, String::new());
        r.error = None;
        r.samples = rates.to_vec();
        r.median_mib_s = stats::median(rates);
        r.min_mib_s = stats::min(rates);
        r.max_mib_s = stats::max(rates);
        r.verdict = Some(verdict);
        r
    }

    fn round(bytes_mib: f64, wall: f64, server_cpu_s: f64) -> Round {
        Round {
            bytes: (bytes_mib * MIB) as u64,
            wall_s: wall,
            streams_mib_s: vec![bytes_mib / 2.0 / wall; 2],
            client_cpu_s: Some(0.5 * wall),
            server_cpu_s: Some(server_cpu_s),
            server_total_pct: None,
        }
    }

    fn machine(cores: u32) -> MachineInfo {
        MachineInfo {
            cores: Some(cores),
            ..MachineInfo::default()
        }
    }

    #[test]
    fn a_gain_beyond_the_spread_names_one_core_per_stream() {
        let one = row(Verdict::ServerCpu, &[20.0, 21.0, 22.0]);
        let rounds = [round(38.0, 1.0, 1.9), round(37.0, 1.0, 1.9)];
        let s = summarise(&one, 2, 19 << 20, &rounds);
        assert_eq!(s.samples, vec![38.0, 37.0]);
        assert_eq!(s.per_stream_mib_s, vec![18.75, 18.75]);
        assert!((s.server_cpu_pct.unwrap() - 190.0).abs() < 1e-9);
        let g = s.gain.unwrap();
        assert!(g.significant);
        assert!((g.median - 37.5 / 21.0).abs() < 1e-9);
        let server = machine(2);
        let ends = Ends {
            server: Some(&server),
            ..Ends::default()
        };
        assert_eq!(
            note(&one, &s, ends).unwrap(),
            "server-cpu: one of 2 cores busy per stream; 2 streams: ×1.8 (1.7–1.9)"
        );
    }

    #[test]
    fn no_gain_under_a_quota_says_the_whole_cpu_is_busy() {
        let one = row(Verdict::ServerCpu, &[20.0, 21.0, 22.0]);
        let rounds = [round(21.0, 1.0, 0.98), round(20.5, 1.0, 0.97)];
        let s = summarise(&one, 2, 10 << 20, &rounds);
        assert!(!s.gain.unwrap().significant);
        let server = machine(2);
        let ends = Ends {
            server: Some(&server),
            server_quota_cores: Some(1.0),
            ..Ends::default()
        };
        let n = note(&one, &s, ends).unwrap();
        assert!(
            n.starts_with("server-cpu: the server's whole CPU is busy (98% of 100%: a 1.0-core quota); 2 streams: ×1.0"),
            "{n}"
        );
        assert!(n.ends_with("within noise: no gain"), "{n}");
        // No CPU full: neither end is what binds.
        let idle = [round(21.0, 1.0, 0.3), round(20.5, 1.0, 0.3)];
        let s = summarise(&one, 2, 10 << 20, &idle);
        assert!(note(&one, &s, ends).unwrap().contains("no CPU is full"));
    }
}
