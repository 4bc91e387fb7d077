//! Presentation of bench results. Every format renders the same `BenchReport`; none of them
//! computes anything new. `load` reads saved reports of every kind back, `compare` puts runs
//! side by side, `html` draws every kind as a self-contained page.

pub mod compare;
mod csv;
pub mod fleet;
pub mod html;
mod json;
pub mod load;
pub mod machine;
mod markdown;
pub mod outputs;
pub mod pipeline;
pub mod ranking;
pub mod rate_unit;
pub mod render;
pub mod speed;
pub mod storage;
mod table;
pub mod terminal;

use crate::bench::model::{BenchReport, Direction, EngineKind, ResultRow};
use clap::ValueEnum;
use rate_unit::RateUnit;

/// Terminal tables fit this many columns when stdout is not a terminal (a terminal gives its
/// own width).
pub const TABLE_WIDTH: u16 = 120;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
    /// One self-contained page with inline SVG charts.
    Html,
}

pub trait Exporter {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String>;
}

pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(table::Table),
        Format::Json => Box::new(json::Json),
        Format::Csv => Box::new(csv::Csv),
        Format::Markdown => Box::new(markdown::Markdown),
        Format::Html => Box::new(HtmlPage),
    }
}

struct HtmlPage;

impl Exporter for HtmlPage {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String> {
        Ok(html::bench(report))
    }
}

/// One line of the human-readable tables: a cipher (+MAC, engine) with both directions.
pub(crate) struct Line<'a> {
    pub engine: &'a str,
    pub cipher: &'a str,
    pub mac: Option<&'a str>,
    pub grade: &'a str,
    pub up: Option<&'a ResultRow>,
    pub down: Option<&'a ResultRow>,
}

pub(crate) fn lines(report: &BenchReport) -> Vec<Line<'_>> {
    let mut out: Vec<Line> = Vec::new();
    for r in &report.results {
        let pos = out.iter().position(|l| {
            l.engine == r.engine && l.cipher == r.cipher && l.mac == r.mac.as_deref()
        });
        let i = match pos {
            Some(i) => i,
            None => {
                out.push(Line {
                    engine: &r.engine,
                    cipher: &r.cipher,
                    mac: r.mac.as_deref(),
                    grade: r.grade.as_deref().unwrap_or("?"),
                    up: None,
                    down: None,
                });
                out.len() - 1
            }
        };
        match r.direction {
            Direction::Upload => out[i].up = Some(r),
            Direction::Download => out[i].down = Some(r),
        }
    }
    out
}

/// What a grade means, where grades are printed.
pub const GRADE_LEGEND: &str = "grade: ok = recommended; weak = allowed with a warning (a 64-bit \
     or SHA-1 MAC, CBC, a Terrapin exposure); broken = measured, never recommended; a cipher+MAC \
     pair takes the weaker grade of the two.";

/// What each verdict means, where verdicts are printed.
pub const VERDICT_LEGEND: &str = "verdict: what bounds the row: client-cpu or server-cpu (that \
     end's core or quota is saturated), cpu (shared) (both ends on one machine whose cores are \
     busy), network (near the raw-TCP ceiling), path (the link or the SSH window), unclear (no \
     limit reached; --explain shows the figures).";

/// The legends under a bench table: grades (when the grade column is shown) and verdicts.
pub(crate) fn legends(grade_shown: bool) -> Vec<String> {
    let mut out = Vec::new();
    if grade_shown {
        out.push(GRADE_LEGEND.to_string());
    }
    out.push(VERDICT_LEGEND.to_string());
    out
}

/// `327.1 (320.4–331.0)` in `unit`, or the error.
pub(crate) fn rate_cell(r: Option<&ResultRow>, unit: RateUnit) -> String {
    match r {
        None => "-".into(),
        Some(r) => match (r.median_mib_s, r.min_mib_s, r.max_mib_s) {
            (Some(m), Some(lo), Some(hi)) => {
                format!("{:.1} ({:.1}–{:.1})", unit.of(m), unit.of(lo), unit.of(hi))
            }
            _ => "n/a".into(),
        },
    }
}

pub(crate) fn pct(v: Option<f64>) -> String {
    v.map_or("?".into(), |v| format!("{v:.0}"))
}

/// `up/down` pair of a per-direction figure.
pub(crate) fn pair(l: &Line, f: impl Fn(&ResultRow) -> Option<f64>) -> String {
    // "-" for a direction not run, "?" for one run without a CPU figure.
    let one = |r: Option<&ResultRow>| r.map_or("-".to_string(), |r| pct(f(r)));
    format!("{}/{}", one(l.up), one(l.down))
}

pub(crate) fn verdict_cell(l: &Line) -> String {
    let one = |r: Option<&ResultRow>| match r {
        None => "-".to_string(),
        Some(r) => match (&r.verdict, &r.error) {
            (_, Some(e)) => format!("error: {e}"),
            (Some(v), None) => v.to_string(),
            (None, None) => "-".into(),
        },
    };
    let (u, d) = (one(l.up), one(l.down));
    if u == d {
        u
    } else {
        format!("{u} / {d}")
    }
}

/// Evidence lines behind each verdict (`--explain`): the figures the rule in
/// `bench::verdict` looked at, each next to the threshold it was compared with.
pub fn explain(report: &BenchReport) -> String {
    use crate::bench::verdict::{CPU_SATURATED, NETWORK_NEAR};
    let mut out = format!(
        "Evidence behind each verdict (CPU saturated at >= {:.0}% of its cap; network at >= {:.0}% of the ceiling):\n",
        CPU_SATURATED * 100.0,
        NETWORK_NEAR * 100.0
    );
    for l in machine::both(&report.client.machine, &report.server.machine) {
        out.push_str(&format!("  {l}\n"));
    }
    let cap = |q: Option<f64>| q.map_or(100.0, |q| (q * 100.0).min(100.0));
    let cpu = |name: &str, used: Option<f64>, quota: Option<f64>| {
        let c = cap(quota);
        let of = match quota {
            Some(_) if c < 100.0 => format!("a {c:.0}% quota"),
            _ => "one core (no quota)".to_string(),
        };
        match used {
            Some(u) => format!(
                "{name} CPU {u:.0}% of {of}: {:.0}% of its cap{}",
                u / c * 100.0,
                if u / c >= CPU_SATURATED {
                    ", saturated"
                } else {
                    ""
                }
            ),
            None => format!("{name} CPU unknown (cap {of})"),
        }
    };
    for r in &report.results {
        out.push_str(&format!("  {} {} {}: ", r.engine, r.cipher, r.direction));
        match (&r.verdict, &r.error) {
            (_, Some(e)) => {
                out.push_str(&format!("error: {e}\n"));
                continue;
            }
            (Some(v), None) => out.push_str(&format!("{v}\n")),
            (None, None) => out.push_str("no verdict\n"),
        }
        if let (Some(m), Some(lo), Some(hi)) = (r.median_mib_s, r.min_mib_s, r.max_mib_s) {
            out.push_str(&format!(
                "      throughput {m:.1} MiB/s, median of {} ({lo:.1}–{hi:.1})\n",
                r.samples.len()
            ));
        }
        out.push_str(&format!(
            "      {}\n",
            cpu("client", r.client_cpu_pct, report.client.cpu_quota_cores)
        ));
        out.push_str(&format!(
            "      {}\n",
            cpu("server", r.server_cpu_pct, report.server.cpu_quota_cores)
        ));
        if let Some(o) = &r.transport_overhead {
            out.push_str(&format!(
                "      transport overhead {:.2}×: sender {:.0} MiB per CPU-second, sealing alone {:.0}\n",
                o.ratio, o.sender_mib_per_cpu_s, o.seal_mib_per_cpu_s
            ));
            if let (Some(u), Some(rate)) = (o.user_ratio, o.sender_user_mib_per_cpu_s) {
                out.push_str(&format!(
                    "      in user space alone {u:.2}× ({rate:.0} MiB per user CPU-second; the rest is the kernel's)\n"
                ));
            }
            if let (Some(b), Some(k)) = (o.beyond_socket_ratio, o.socket_mib_per_cpu_s) {
                out.push_str(&format!(
                    "      beyond sealing plus a plain loopback socket's send {b:.2}× (the socket alone {k:.0} MiB per CPU-second)\n"
                ));
            }
        }
        match (&report.ceiling, r.median_mib_s) {
            (Some(c), Some(m)) if c.mib_s > 0.0 => {
                // The direction's own ceiling when it was measured; else the one figure.
                let own = c.direction(r.direction);
                let mib_s = own.map_or(c.mib_s, |d| d.mib_s);
                out.push_str(&format!(
                    "      ceiling {mib_s:.1} MiB/s ({}{}): ratio {:.2}\n",
                    c.method,
                    match (&c.receiver, own) {
                        (Some(rc), Some(_)) => format!("; receiver {rc}, {} run", r.direction),
                        (Some(rc), None) => format!("; receiver {rc}, upload run used"),
                        (None, _) => String::new(),
                    },
                    m / mib_s
                ));
                if let Some(d) = own.or_else(|| c.direction(Direction::Upload)) {
                    let p = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.0}%"));
                    out.push_str(&format!(
                        "      during the ceiling: client CPU {}, server receiver CPU {}, server \
                         machine busy {}: {}\n",
                        p(d.client_cpu_pct),
                        p(d.server_cpu_pct),
                        p(d.server_busy_pct),
                        match &d.cpu_bound {
                            Some(side) => format!("CPU-bound ({side}), not taken as the network"),
                            None => "no CPU bound".to_string(),
                        }
                    ));
                }
                if let Some(rtt) = c.rtt_ms.or(report.path_rtt_ms).filter(|r| *r > 0.0) {
                    let w = crate::bench::window::limit_mib_s(
                        crate::bench::window::OPENSSH_CHANNEL_WINDOW,
                        rtt / 1000.0,
                    );
                    out.push_str(&format!(
                        "      window: OpenSSH's 2 MiB channel window / {rtt:.2} ms RTT allows {w:.1} MiB/s: ratio {:.2}\n",
                        m / w
                    ));
                }
            }
            (_, m) => {
                out.push_str("      ceiling unknown: ratio unknown\n");
                if let (Some(rtt), Some(m)) = (report.path_rtt_ms.filter(|r| *r > 0.0), m) {
                    let w = crate::bench::window::limit_mib_s(
                        crate::bench::window::OPENSSH_CHANNEL_WINDOW,
                        rtt / 1000.0,
                    );
                    out.push_str(&format!(
                        "      window: 2 MiB / {rtt:.2} ms RTT (TCP connect to the ssh port) allows {w:.1} MiB/s: ratio {:.2}\n",
                        m / w
                    ));
                }
            }
        }
        if report.server.same_machine == Some(true) {
            if let (Some(c), Some(s), Some(n)) = (
                r.client_cpu_pct,
                r.server_cpu_pct,
                report.client.machine.cores,
            ) {
                out.push_str(&format!(
                    "      one machine, {n} cores: client + server CPU = {:.0}% of {}% (shared at >= {:.0}%); whole machine busy {}\n",
                    c + s,
                    n * 100,
                    CPU_SATURATED * 100.0,
                    r.server_total_cpu_pct.map_or("?".to_string(), |b| format!("{b:.0}%"))
                ));
            }
        }
        if let Some(line) = crate::bench::cpu_note::aes_line(
            &r.cipher,
            &report.client.machine,
            &report.server.machine,
        ) {
            out.push_str(&format!("      {line}\n"));
        }
        if let Some(rule) = &r.verdict_rule {
            out.push_str(&format!("      rule: {rule} decided\n"));
        }
        if let Some(why) = &r.verdict_reason {
            out.push_str(&format!("      reason: {why}\n"));
        }
    }
    out
}

/// Everything under the table: how the figures were obtained, the rankings, the engine ratios
/// and the warnings.
pub(crate) fn footer(report: &BenchReport, unit: RateUnit) -> Vec<String> {
    let mut out = how(report, unit);
    out.extend(ranking::lines(report, unit));
    out.extend(engine_ratios(&report.results));
    out.extend(report.warnings.iter().map(|w| warning(report, w)));
    out
}

/// How the figures were obtained: samples (as many as the rows actually have), warm-up, the
/// ceiling.
pub(crate) fn how(report: &BenchReport, unit: RateUnit) -> Vec<String> {
    let mut out = vec![format!(
        "{}: median (min–max) of {} after {} warm-up; CPU: % of one core, upload/download.",
        unit.label(),
        sample_counts(&report.results),
        report.settings.warmup.max(1)
    )];
    match &report.ceiling {
        Some(c) => out.push(format!(
            "Raw-TCP ceiling: {:.1} {} ({}).",
            unit.of(c.mib_s),
            unit.label(),
            c.method
        )),
        None => {
            out.push("Raw-TCP ceiling: not measured, so no row can be called network-bound.".into())
        }
    }
    out
}

/// `5 samples per direction`, or `2–3 samples per row and direction` when rows differ: the
/// counts of the rows that have figures.
fn sample_counts(results: &[ResultRow]) -> String {
    let counts = results
        .iter()
        .filter(|r| r.median_mib_s.is_some())
        .map(|r| r.samples.len());
    match (counts.clone().min(), counts.max()) {
        (Some(lo), Some(hi)) if lo == hi => {
            format!(
                "{lo} sample{} per direction",
                if lo == 1 { "" } else { "s" }
            )
        }
        (Some(lo), Some(hi)) => format!("{lo}–{hi} samples per row and direction"),
        _ => "the samples (no row has figures)".to_string(),
    }
}

/// A warning as it applies to this run: an adaptive run already sized its samples, so the
/// advice to use the adaptive default becomes the one that does apply.
fn warning(report: &BenchReport, w: &str) -> String {
    const ADVICE: &str = "; use a larger --size or the adaptive default";
    match w.strip_suffix(ADVICE) {
        Some(head) if report.settings.fixed_size_bytes.is_none() => {
            format!("warning: {head}; --thorough takes longer samples")
        }
        _ => format!("warning: {w}"),
    }
}

/// The native ÷ OpenSSH line, when one run measured both engines.
pub(crate) fn ratios(report: &BenchReport) -> Vec<String> {
    engine_ratios(&report.results)
}

/// Native engine ÷ OpenSSH engine per cipher and direction, when one run measured both: the
/// reference sits next to the figure, taken minutes apart at most.
fn engine_ratios(results: &[ResultRow]) -> Vec<String> {
    let median = |engine: &str, cipher: &str, mac: &Option<String>, d: Direction| {
        results
            .iter()
            .find(|r| r.engine == engine && r.cipher == cipher && &r.mac == mac && r.direction == d)
            .and_then(|r| r.median_mib_s)
    };
    let mut parts = Vec::new();
    let mut seen = Vec::new();
    let (native, openssh) = (EngineKind::Native.as_str(), EngineKind::Openssh.as_str());
    for r in results.iter().filter(|r| r.engine == native) {
        if seen.contains(&(&r.cipher, &r.mac)) {
            continue;
        }
        seen.push((&r.cipher, &r.mac));
        let ratio = |d| {
            Some(median(native, &r.cipher, &r.mac, d)? / median(openssh, &r.cipher, &r.mac, d)?)
        };
        let (up, down) = (ratio(Direction::Upload), ratio(Direction::Download));
        if up.is_none() && down.is_none() {
            continue;
        }
        let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2}×"));
        parts.push(format!("{} {}/{}", r.cipher, f(up), f(down)));
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "native ÷ openssh engine, same run (up/down medians): {}.",
        parts.join(", ")
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(engine: &str, cipher: &str, d: Direction, median: Option<f64>) -> ResultRow {
        let mut r = ResultRow::failed(engine, cipher, None, d, String::new());
        r.error = None;
        r.median_mib_s = median;
        r
    }

    fn sampled(n: usize) -> ResultRow {
        let mut r = row("openssh", "a", Direction::Upload, Some(1.0));
        r.samples = vec![1.0; n];
        r
    }

    #[test]
    fn the_footer_counts_the_samples_the_rows_have() {
        assert_eq!(
            sample_counts(&[sampled(3), sampled(3)]),
            "3 samples per direction"
        );
        assert_eq!(
            sample_counts(&[sampled(2), sampled(3), sampled(2)]),
            "2–3 samples per row and direction"
        );
        // A failed row has no figures and no say.
        let failed = row("openssh", "b", Direction::Upload, None);
        assert_eq!(
            sample_counts(&[sampled(1), failed]),
            "1 sample per direction"
        );
    }

    #[test]
    fn native_over_openssh_per_cipher_and_direction() {
        let rows = vec![
            row("openssh", "a", Direction::Upload, Some(100.0)),
            row("openssh", "a", Direction::Download, Some(200.0)),
            row("native", "a", Direction::Upload, Some(250.0)),
            row("native", "a", Direction::Download, Some(300.0)),
            // Only one engine measured it, or the OpenSSH row failed: no ratio.
            row("native", "arcfour", Direction::Upload, Some(90.0)),
            row("openssh", "b", Direction::Upload, None),
            row("native", "b", Direction::Upload, Some(80.0)),
        ];
        assert_eq!(
            engine_ratios(&rows),
            ["native ÷ openssh engine, same run (up/down medians): a 2.50×/1.50×."]
        );
        assert!(engine_ratios(&rows[..2]).is_empty());
    }
}
