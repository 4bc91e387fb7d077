//! The bench page: per engine and direction a bar chart fastest first (whiskers min–max,
//! colour by grade, verdict beside, raw-TCP ceiling as a line), the CPU of both ends per
//! cipher, the rankings, and how the figures were obtained.

use super::shell::{cipher_mac, esc, grade_class, grade_legend, list, page, table};
use super::svg::{self, Bar, Group, Line};
use crate::bench::model::{BenchReport, Direction, ResultRow};
use crate::report::cells::{lines, pair, rate_cell, verdict_cell};

pub fn bench(report: &BenchReport) -> String {
    let mut body = format!(
        "<h1>sshtune bench: {}</h1>\n<p class=\"meta\">{} · started {} · client {} · server {}{}</p>\n",
        esc(&report.host),
        esc(report.server.banner.as_deref().unwrap_or("server banner unknown")),
        esc(&report.started),
        esc(&machine(&report.client.machine, report.client.cpu_quota_cores)),
        esc(&machine(&report.server.machine, report.server.cpu_quota_cores)),
        if report.server.same_machine == Some(true) {
            " (same machine)"
        } else {
            ""
        }
    );
    body.push_str(grade_legend());
    let mut engines: Vec<&str> = Vec::new();
    for r in &report.results {
        if !engines.contains(&r.engine.as_str()) {
            engines.push(&r.engine);
        }
    }
    for engine in &engines {
        for d in [Direction::Upload, Direction::Download] {
            let rows: Vec<&ResultRow> = report
                .results
                .iter()
                .filter(|r| r.engine == *engine && r.direction == d)
                .collect();
            if rows.is_empty() {
                continue;
            }
            body.push_str(&throughput_chart(report, engine, d, rows));
        }
    }
    body.push_str("<h2>CPU per cipher</h2>\n<p class=\"legend\"><span><i style=\"background:#5c6bc0\"></i>client ssh</span><span><i style=\"background:#26a69a\"></i>server session</span><span>% of one core, median over the samples</span></p>\n");
    for engine in &engines {
        body.push_str(&cpu_chart(report, engine));
    }
    body.push_str("<h2>Results</h2>\n");
    let rows: Vec<Vec<String>> = lines(report)
        .iter()
        .map(|l| {
            vec![
                l.engine.to_string(),
                cipher_mac(l.cipher, l.mac),
                l.grade.to_string(),
                rate_cell(l.up, crate::report::rate_unit::RateUnit::MibS),
                rate_cell(l.down, crate::report::rate_unit::RateUnit::MibS),
                pair(l, |r| r.client_cpu_pct),
                pair(l, |r| r.server_cpu_pct),
                verdict_cell(l),
            ]
        })
        .collect();
    body.push_str(&table(
        &[
            "engine",
            "cipher",
            "grade",
            "up MiB/s",
            "down MiB/s",
            "client CPU % up/down",
            "server CPU % up/down",
            "verdict",
        ],
        &rows,
    ));
    body.push_str(&rankings(report));
    body.push_str("<h2>How these figures were obtained</h2>\n");
    let mut how = vec![match report.settings.fixed_size_bytes {
        Some(b) => format!(
            "Each sample moves {:.0} MiB through ssh; {} timed samples per cipher and direction after {} warm-up.",
            b as f64 / 1048576.0,
            report.settings.repeat,
            report.settings.warmup
        ),
        None => format!(
            "Transfers grow until one lasts at least {} s; {} timed samples per cipher and direction after {} warm-up.",
            report.settings.min_duration_s, report.settings.repeat, report.settings.warmup.max(1)
        ),
    }];
    how.extend(crate::report::footer::how(
        report,
        crate::report::rate_unit::RateUnit::MibS,
    ));
    how.extend(crate::report::footer::ratios(report));
    body.push_str(&list("how", &how));
    body.push_str(&list("how warn", &report.warnings));
    page(&format!("sshtune bench: {}", report.host), &body)
}

fn machine(m: &crate::sysinfo::MachineInfo, quota: Option<f64>) -> String {
    let mut s = format!(
        "{}, kernel {}",
        crate::report::machine::line(m),
        m.kernel.as_deref().unwrap_or("?")
    );
    if let Some(q) = quota.filter(|q| *q < m.cores.unwrap_or(u32::MAX) as f64) {
        s.push_str(&format!(", CPU quota {q:.2} cores"));
    }
    s
}

fn throughput_chart(
    report: &BenchReport,
    engine: &str,
    d: Direction,
    mut rows: Vec<&ResultRow>,
) -> String {
    // Fastest first; failed rows after the measured ones, as text.
    rows.sort_by(|a, b| {
        b.median_mib_s
            .unwrap_or(-1.0)
            .total_cmp(&a.median_mib_s.unwrap_or(-1.0))
    });
    let groups: Vec<Group> = rows
        .iter()
        .map(|r| {
            let label = cipher_mac(&r.cipher, r.mac.as_deref());
            let bar = r.median_mib_s.map(|m| Bar {
                value: m,
                min: r.min_mib_s,
                max: r.max_mib_s,
                class: grade_class(r.grade.as_deref()).into(),
                note: r.verdict.map(|v| v.to_string()).unwrap_or_default(),
                data: (
                    "data-row".into(),
                    format!(
                        "{} {} {}",
                        r.engine,
                        cipher_mac(&r.cipher, r.mac.as_deref()),
                        r.direction
                    ),
                ),
                title: format!(
                    "{} MiB/s, median of {} ({}); grade {}",
                    fmt1(m),
                    r.samples.len(),
                    r.samples
                        .iter()
                        .map(|s| fmt1(*s))
                        .collect::<Vec<_>>()
                        .join(", "),
                    r.grade.as_deref().unwrap_or("?")
                ),
                strong: false,
            });
            Group::single(label, bar, r.error.as_deref())
        })
        .collect();
    let mut lines = Vec::new();
    if let Some(c) = &report.ceiling {
        let v = c.direction(d).map_or(c.mib_s, |x| x.mib_s);
        if v > 0.0 {
            lines.push(Line {
                value: v,
                label: "raw TCP".into(),
            });
        }
    }
    svg::bars(
        &format!("{engine} engine, {d} (MiB/s)"),
        "MiB/s",
        &groups,
        &lines,
    )
}

fn cpu_chart(report: &BenchReport, engine: &str) -> String {
    let groups: Vec<Group> = report
        .results
        .iter()
        .filter(|r| r.engine == engine && r.error.is_none())
        .map(|r| {
            let name = format!(
                "{} {}",
                cipher_mac(&r.cipher, r.mac.as_deref()),
                r.direction
            );
            let bar = |side: &str, v: Option<f64>| Bar {
                value: v.unwrap_or(0.0),
                min: None,
                max: None,
                class: format!("cpu-{side}"),
                note: String::new(),
                data: ("data-cpu".into(), format!("{side} {name}")),
                title: format!(
                    "{side} CPU {}%",
                    v.map_or("?".into(), |v| format!("{v:.0}"))
                ),
                strong: false,
            };
            Group {
                label: name.clone(),
                bars: vec![
                    bar("client", r.client_cpu_pct),
                    bar("server", r.server_cpu_pct),
                ],
                error: None,
            }
        })
        .collect();
    if groups.is_empty() {
        return String::new();
    }
    svg::bars(
        &format!("{engine} engine: CPU, % of one core"),
        "%",
        &groups,
        &[],
    )
}

fn rankings(report: &BenchReport) -> String {
    let mut s = String::new();
    for r in report.ranking.iter().filter(|r| r.entries.len() > 1) {
        s.push_str(&format!(
            "<p><b>Ranking, {} {}</b>{}</p><ol>",
            esc(&r.engine),
            r.direction,
            if r.significant {
                String::new()
            } else {
                format!(" ({})", crate::report::ranking::TIE_LEGEND)
            }
        ));
        for (i, e) in r.entries.iter().enumerate() {
            let tie = i > 0 && crate::report::ranking::same_tier(&r.entries[i - 1], e);
            s.push_str(&format!(
                "<li value=\"{}\">{}{} {} MiB/s ({}–{})</li>",
                e.rank,
                if tie { "≈ " } else { "" },
                esc(&cipher_mac(&e.cipher, e.mac.as_deref())),
                fmt1(e.median_mib_s),
                fmt1(e.min_mib_s),
                fmt1(e.max_mib_s)
            ));
        }
        s.push_str("</ol>\n");
    }
    if s.is_empty() {
        s
    } else {
        format!("<h2>Rankings</h2>\n{s}")
    }
}

pub(crate) fn fmt1(v: f64) -> String {
    format!("{v:.1}")
}
