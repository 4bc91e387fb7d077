//! The speed page: per kind of row (cipher, MAC, pair) a bar per algorithm and backend, the
//! `openssl speed` figure of the same primitive drawn beside it in grey, the ratio as a note.

use super::shell::{esc, grade_class, list, page};
use super::svg::{self, Bar, Group};
use crate::report::speed::cells::{backend_cell, footer, what};
use crate::speed::model::{RowKind, SpeedReport};

pub fn speed(report: &SpeedReport) -> String {
    let mut body = format!(
        "<h1>sshtune speed: {}</h1>\n<p class=\"meta\">started {} · {} · kernel {}</p>\n",
        esc(report
            .machine
            .cpu_model
            .as_deref()
            .unwrap_or("CPU model unknown")),
        esc(&report.started),
        esc(&crate::report::machine::line(&report.machine)),
        esc(report.machine.kernel.as_deref().unwrap_or("?"))
    );
    body.push_str("<p class=\"legend\"><span><i style=\"background:#43a047\"></i>ours, grade ok</span><span><i style=\"background:#fb8c00\"></i>weak</span><span><i style=\"background:#e53935\"></i>broken</span><span><i style=\"background:#90a4ae\"></i><code>openssl speed</code>, same primitive</span><span>whiskers: min–max</span></p>\n");
    for kind in [RowKind::Cipher, RowKind::Mac, RowKind::Pair] {
        let groups: Vec<Group> = report
            .rows
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| {
                let label = format!("{} ({})", what(r), backend_cell(r));
                let Some(s) = &r.stats else {
                    return Group {
                        label,
                        bars: Vec::new(),
                        error: Some(r.error.clone().unwrap_or_else(|| "no figure".into())),
                    };
                };
                let mut bars = vec![Bar {
                    value: s.median_mib_s,
                    min: Some(s.min_mib_s),
                    max: Some(s.max_mib_s),
                    class: grade_class(Some(&r.grade)).into(),
                    note: r
                        .ratio
                        .map_or(String::new(), |x| format!("{x:.2}× openssl")),
                    data: ("data-row".into(), label.clone()),
                    title: format!("{:.1} MiB/s per CPU-second", s.median_mib_s),
                    strong: false,
                }];
                if let Some(x) = &r.reference {
                    bars.push(Bar {
                        value: x.stats.median_mib_s,
                        min: Some(x.stats.min_mib_s),
                        max: Some(x.stats.max_mib_s),
                        class: "ref".into(),
                        note: String::new(),
                        data: ("data-ref".into(), label.clone()),
                        title: x.command.clone(),
                        strong: false,
                    });
                }
                Group {
                    label,
                    bars,
                    error: None,
                }
            })
            .collect();
        if !groups.is_empty() {
            body.push_str(&svg::bars(
                &format!("{kind} rows: MiB/s per CPU-second of one thread"),
                "MiB/s",
                &groups,
                &[],
            ));
        }
    }
    body.push_str("<h2>How these figures were obtained</h2>\n");
    let mut how = vec![format!("Clock: {}.", report.settings.clock)];
    how.extend(
        footer(report, crate::report::rate_unit::RateUnit::MibS)
            .into_iter()
            .filter(|l| !l.starts_with("warning:")),
    );
    body.push_str(&list("how", &how));
    body.push_str(&list("how warn", &report.warnings));
    page("sshtune speed", &body)
}
