//! The terminal table. It fits 120 columns (the terminal's width when stdout is one): names
//! without `@openssh.com`, the MAC joined to its cipher, rates
//! as `median (min–max)` with whole numbers for the spread above 100 MiB/s, CPU as
//! `upload/download` per end, the verdict without its reason (that is `--explain`), and a
//! failed row's error cut short (the JSON and `--explain` keep it whole). No word is split:
//! on a narrow terminal the CPU columns go first, then the grade, then names break after `+`.

use super::cells::{lines, pair, verdict_cell};
use super::export::Exporter;
use super::footer::footer;
use super::rate_unit::RateUnit;
use crate::bench::model::{BenchReport, ResultRow};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, Table as Ct};

/// Longest error shown in a cell.
const ERROR_CHARS: usize = 48;

pub struct Table;

/// Columns hidden first when the table would split a word otherwise: the CPU pair, then the
/// grade (counted without the engine column; see `build`).
const EXPENDABLE: [usize; 3] = [4, 5, 1];

impl Exporter<BenchReport> for Table {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String> {
        let lines = lines(report);
        let (mut t, mut kept) = build(&lines, false);
        if !kept.fits {
            // Even without the expendable columns a cipher+MAC name is too wide: break names
            // after the `+`.
            (t, kept) = build(&lines, true);
        }
        let grade_shown = !kept
            .hidden
            .contains(&(EXPENDABLE[2] + engine_column(&lines)));
        let mut out = format!(
            "sshtune bench: {} ({})\n",
            report.host,
            report
                .server
                .banner
                .as_deref()
                .unwrap_or("server banner unknown")
        );
        for l in super::machine::both(&report.client.machine, &report.server.machine) {
            out.push_str(&l);
            out.push('\n');
        }
        out.push_str(&format!("{t}\n"));
        let unit = super::rate_unit::current();
        if let Some(streams) = super::streams::table(report, unit) {
            out.push_str(&streams);
        }
        let mut notes = vec![
            "Names without their @openssh.com suffix (JSON and config use the full names)."
                .to_string(),
        ];
        notes.extend(super::cells::legends(grade_shown));
        notes.extend(footer(report, unit));
        notes.extend(stopped_note(report));
        for f in notes {
            out.push_str(&f);
            out.push('\n');
        }
        Ok(out)
    }
}

/// 1 when the table has an engine column (a run of both engines), else 0.
fn engine_column(lines: &[super::cells::Line]) -> usize {
    usize::from(lines.iter().any(|l| l.engine != lines[0].engine))
}

/// The table of `lines`, with names broken after `+` when `split_names`, and what
/// `keep_words` hid to keep words whole.
fn build(lines: &[super::cells::Line], split_names: bool) -> (Ct, super::terminal::Kept) {
    let multi_engine = engine_column(lines) == 1;
    let mut t = Ct::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    super::terminal::fit(&mut t);
    let unit = super::rate_unit::current();
    let mut header = vec![
        "cipher(+mac)".to_string(),
        "grade".into(),
        format!("up {}", unit.label()),
        format!("down {}", unit.label()),
        "client %".into(),
        "server %".into(),
        "verdict".into(),
    ];
    if multi_engine {
        header.insert(0, "engine".into());
    }
    t.set_header(header.clone());
    for l in lines {
        let name = match l.mac {
            Some(m) if split_names => format!("{}+\n{}", bare(l.cipher), bare(m)),
            Some(m) => format!("{}+{}", bare(l.cipher), bare(m)),
            None => bare(l.cipher).to_string(),
        };
        let mut row = vec![
            Cell::new(name),
            super::terminal::grade_cell(l.grade),
            Cell::new(rate(l.up, unit)),
            Cell::new(rate(l.down, unit)),
            Cell::new(pair(l, |r| r.client_cpu_pct)),
            Cell::new(pair(l, |r| r.server_cpu_pct)),
            Cell::new(short(&verdict_cell(l))),
        ];
        if multi_engine {
            row.insert(0, Cell::new(l.engine));
        }
        t.add_row(row);
    }
    let expendable = EXPENDABLE.map(|i| i + engine_column(lines));
    let kept = super::terminal::keep_words(&mut t, &expendable);
    (t, kept)
}

/// What the † on a figure means: sampling of that row stopped early, with how many samples
/// and why (as the JSON's `samples` and `stopped` say).
fn stopped_note(report: &BenchReport) -> Option<String> {
    let mut kinds: Vec<(usize, &str, usize)> = Vec::new();
    for r in report.results.iter() {
        let Some(why) = r.stopped.as_deref() else {
            continue;
        };
        match kinds
            .iter_mut()
            .find(|k| k.0 == r.samples.len() && k.1 == why)
        {
            Some(k) => k.2 += 1,
            None => kinds.push((r.samples.len(), why, 1)),
        }
    }
    (!kinds.is_empty()).then(|| {
        let parts: Vec<String> = kinds
            .iter()
            .map(|(n, why, rows)| format!("samples: {n}, stopped: {why} ({rows} rows)"))
            .collect();
        format!("† stopped early: {}.", parts.join("; "))
    })
}

/// `362.5 (331–379)` in `unit`; one decimal for the spread below 100.
fn rate(r: Option<&ResultRow>, unit: RateUnit) -> String {
    let n = |v: f64| {
        if v >= 100.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    match r {
        None => "-".into(),
        Some(r) => match (r.median_mib_s, r.min_mib_s, r.max_mib_s) {
            (Some(m), Some(lo), Some(hi)) => {
                let (m, lo, hi) = (unit.of(m), unit.of(lo), unit.of(hi));
                let mark = if r.stopped.is_some() { "†" } else { "" };
                format!("{m:.1} ({}–{}){mark}", n(lo), n(hi))
            }
            _ => "n/a".into(),
        },
    }
}

/// `aes128-gcm` for `aes128-gcm@openssh.com`: the suffix is most of the width of the
/// cipher column and tells a reader nothing the name does not.
fn bare(name: &str) -> &str {
    name.strip_suffix("@openssh.com").unwrap_or(name)
}

fn short(s: &str) -> String {
    if s.chars().count() <= ERROR_CHARS {
        s.to_string()
    } else {
        let cut: String = s.chars().take(ERROR_CHARS - 1).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_a_both_engine_run_fits_120_columns() {
        let text = include_str!("../../tests/fixtures/config/bench-both-engines.json");
        let report: BenchReport = serde_json::from_str(text).unwrap();
        let out = Table.render(&report).unwrap();
        let table: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(['┌', '│', '╞', '├', '└']))
            .collect();
        assert!(table.len() > 4, "{out}");
        for line in table {
            assert!(
                line.chars().count() <= crate::report::TABLE_WIDTH as usize,
                "{line}"
            );
        }
    }
}
