//! The pipeline page: end-to-end MiB/s per cipher × variant with the stage ceilings as lines,
//! where the CPU went as stacked bars per row (the same stage groups as the table), and the
//! verdict with its suggestions; the `--jobs` and `--luks` tables as the text report draws them.

use super::shell::{esc, list, page};
use super::svg::{self, Bar, Group, Line, Stack};
use crate::pipeline::model::{LuksSection, PipelineReport};
use crate::report::pipeline::{share, STAGES};

pub fn pipeline(report: &PipelineReport) -> String {
    let mut body = format!(
        "<h1>sshtune pipeline: {}</h1>\n<p class=\"meta\">started {} · rsync {} · dataset {} ({:.1} MiB in {} files){}</p>\n",
        esc(&report.destination),
        esc(&report.started),
        esc(report.settings.rsync_version.as_deref().unwrap_or("?")),
        esc(&report.dataset.kind),
        report.dataset.bytes as f64 / 1048576.0,
        report.dataset.files,
        if report.same_machine { " · both ends on this machine" } else { "" }
    );
    let [client, server] = crate::report::machine::both(&report.client, &report.server);
    body.push_str(&format!(
        "<p class=\"meta\">{} · {}</p>\n",
        esc(&client),
        esc(&server)
    ));
    let groups: Vec<Group> = report
        .rows
        .iter()
        .map(|r| {
            let label = format!("{} {}", r.cipher, r.variant);
            let bar = r.median_mib_s.map(|m| Bar {
                value: m,
                min: r.min_mib_s,
                max: r.max_mib_s,
                class: "run1".into(),
                note: String::new(),
                data: ("data-row".into(), label.clone()),
                title: format!("{m:.1} MiB/s end to end"),
                strong: false,
            });
            Group::single(label, bar, r.error.as_deref())
        })
        .collect();
    let lines: Vec<Line> = report
        .ceilings
        .iter()
        .filter_map(|c| {
            Some(Line {
                value: c.median_mib_s?,
                label: match &c.cipher {
                    Some(ci) => format!("{} {ci}", c.stage),
                    None => c.stage.to_string(),
                },
            })
        })
        .collect();
    body.push_str(&svg::bars(
        "End to end, MiB/s of dataset (dashed: each stage alone)",
        "MiB/s",
        &groups,
        &lines,
    ));
    let names: Vec<&str> = STAGES.iter().map(|(n, _, _)| *n).collect();
    let stacks: Vec<Stack> = report
        .rows
        .iter()
        .filter(|r| r.error.is_none())
        .map(|r| Stack {
            label: format!("{} {}", r.cipher, r.variant),
            segments: STAGES
                .iter()
                .map(|(n, side, groups)| {
                    (n.to_string(), share(&r.cpu, side, groups).unwrap_or(0.0))
                })
                .collect(),
            data: ("data-cpu".into(), format!("{} {}", r.cipher, r.variant)),
        })
        .collect();
    body.push_str(&svg::stacked(
        "CPU per stage, % of one core (client: rsync sender, ssh; server: sshd, rsync receiver, dm-crypt, irq, iowait)",
        "%",
        &names,
        &stacks,
    ));
    body.push_str(&verdict_and_how(report));
    if let Some(c) = crate::report::pipeline_jobs::cells(report) {
        body.push_str(&jobs(c));
    }
    if let Some(l) = &report.luks {
        body.push_str(&luks(l));
    }
    page(&format!("sshtune pipeline: {}", report.destination), &body)
}

/// The verdict with its suggestions, then how the figures were obtained.
fn verdict_and_how(report: &PipelineReport) -> String {
    let mut body = String::new();
    let ceilings: Vec<String> = report
        .ceilings
        .iter()
        .map(|c| {
            format!(
                "Stage ceiling {}{}: {} — {}",
                c.stage,
                c.cipher
                    .as_deref()
                    .map(|x| format!(" ({x})"))
                    .unwrap_or_default(),
                match (&c.error, c.median_mib_s, c.min_mib_s, c.max_mib_s) {
                    (Some(e), _, _, _) => format!("error: {e}"),
                    (None, Some(m), Some(lo), Some(hi)) =>
                        format!("{m:.1} MiB/s ({lo:.1}–{hi:.1})"),
                    _ => "n/a".into(),
                },
                c.method
            )
        })
        .collect();
    let v = &report.verdict;
    body.push_str(&format!(
        "<h2>Verdict</h2>\n<p><b>Bound by {}</b> ({} {}, {} MiB/s): {}</p>\n",
        esc(&v.bound_by),
        esc(v.cipher.as_deref().unwrap_or("-")),
        esc(v.variant.map_or("-", |v| v.as_str())),
        v.end_to_end_mib_s.map_or("?".into(), |m| format!("{m:.1}")),
        esc(&v.reason)
    ));
    let suggestions: Vec<String> = v
        .suggestions
        .iter()
        .map(|s| {
            format!(
                "{}{}: {}",
                s.change,
                match (s.expected_mib_s, s.gain_pct) {
                    (Some(e), Some(g)) => format!(" → {e:.1} MiB/s ({g:+.0}%, {})", s.basis),
                    _ => String::new(),
                },
                s.why
            )
        })
        .collect();
    body.push_str(&list("how", &suggestions));
    body.push_str("<h2>How these figures were obtained</h2>\n");
    let mut how = vec![format!(
        "{} timed runs per row; MiB/s = dataset bytes over the time from rsync's first progress line to the end of the destination's flush after rsync exits (median, whiskers min–max); CPU sampled every {} ms, averaged over the row's runs.",
        report.settings.repeat, report.settings.interval_ms
    )];
    how.extend(ceilings);
    body.push_str(&list("how", &how));
    body.push_str(&list("how warn", &report.warnings));
    body
}

/// `--jobs`: one rsync and N jobs side by side, as the text report draws them.
fn jobs(c: crate::report::pipeline_jobs::Cells) -> String {
    let mut body = format!("<h2>{}</h2>\n", esc(&c.title));
    if !c.rows.is_empty() {
        body.push_str(&table(&c.head, &c.rows));
    }
    body.push_str(&list("how", &c.lines));
    body
}

/// A plain table of text cells.
fn table(head: &[String], rows: &[Vec<String>]) -> String {
    let mut body = String::from("<table>\n<tr>");
    for h in head {
        body.push_str(&format!("<th>{}</th>", esc(h)));
    }
    body.push_str("</tr>\n");
    for r in rows {
        body.push_str("<tr>");
        for c in r {
            body.push_str(&format!("<td>{}</td>", esc(c)));
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</table>\n");
    body
}

/// The `--luks` matrix: the text report's tables (the model's error per cell a column of
/// the matrix) and its summary lines (what was left out, the time, the recommendation).
fn luks(l: &LuksSection) -> String {
    let mut body = String::from("<h2>SSH cipher × LUKS setting</h2>\n");
    for (title, head, rows) in crate::report::pipeline::luks_tables(l) {
        body.push_str(&format!("<h3>{}</h3>\n", esc(&title)));
        body.push_str(&table(&head, &rows));
    }
    body.push_str(&list("how", &crate::report::pipeline::luks_summary(l)));
    body
}
