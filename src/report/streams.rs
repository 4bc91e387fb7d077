//! `--streams N` beside one stream: a table under the bench table, terminal and Markdown
//! (cipher, direction, one stream, N streams, the gain, each stream's rate, both ends' CPU),
//! the line per row saying what binds, and the `--explain` lines. Figures only as `bench::streams_gain` made them.

use super::md_table::{markdown_table, Align};
use super::rate_unit::RateUnit;
use crate::bench::model::{BenchReport, ResultRow, Streams};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

/// The rows that were measured with several streams.
fn measured(report: &BenchReport) -> impl Iterator<Item = (&ResultRow, &Streams)> {
    report
        .results
        .iter()
        .filter_map(|r| Some((r, r.streams.as_ref()?)))
}

/// The table and its lines, or None when no row had streams.
pub fn table(report: &BenchReport, unit: RateUnit) -> Option<String> {
    let (count, head, rows, notes) = cells(report, unit)?;
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    super::terminal::fit(&mut t);
    t.set_header(head);
    for r in rows {
        t.add_row(r);
    }
    super::terminal::keep_words(&mut t, &[5, 6, 7]);
    let mut out = format!("\n{}\n{t}\n{}\n", title(count), legend(report, count));
    for n in notes {
        out.push_str(&n);
        out.push('\n');
    }
    Some(out)
}

/// The same in Markdown, or None when no row had streams.
pub fn markdown(report: &BenchReport, unit: RateUnit) -> Option<String> {
    let (count, head, rows, notes) = cells(report, unit)?;
    let table = markdown_table(&head, &rows, |i| {
        if i >= 2 {
            Align::Right
        } else {
            Align::Left
        }
    });
    let mut out = format!(
        "\n{}\n\n{table}\n{}  \n",
        title(count),
        legend(report, count)
    );
    super::md_table::push_lines(&mut out, notes);
    Some(out)
}

fn title(count: u32) -> String {
    format!(
        "Parallel streams: each row again as {count} transfers at once over {count} \
         connections (OpenSSH engine)"
    )
}

fn legend(report: &BenchReport, count: u32) -> String {
    format!(
        "{count} streams: all bytes over the time from the first start to the last end, median \
         (min–max) of {}; gain: ÷ one stream, the range from the samples' extremes; CPU: one \
         stream → all {count} sessions, % of one core.",
        rounds(report)
    )
}

/// The stream count, the header, one row of cells per measured row, and the lines of what
/// binds.
type Cells = (u32, Vec<String>, Vec<Vec<String>>, Vec<String>);

/// The table's [`Cells`], or None when no row had streams.
fn cells(report: &BenchReport, unit: RateUnit) -> Option<Cells> {
    let count = measured(report).next()?.1.count;
    let u = unit.label();
    let head = vec![
        "cipher(+mac)".to_string(),
        "direction".into(),
        format!("1 stream {u}"),
        format!("{count} streams {u}"),
        "gain".into(),
        format!("each stream {u}"),
        "client %".into(),
        "server %".into(),
    ];
    let rate = |m: Option<f64>, lo: Option<f64>, hi: Option<f64>| match (m, lo, hi) {
        (Some(m), Some(lo), Some(hi)) => {
            format!("{:.1} ({:.1}–{:.1})", unit.of(m), unit.of(lo), unit.of(hi))
        }
        _ => "n/a".into(),
    };
    let cpu = |one: Option<f64>, all: Option<f64>| {
        format!("{}→{}", super::cells::pct(one), super::cells::pct(all))
    };
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    for (r, s) in measured(report) {
        let name = match &r.mac {
            Some(m) => format!("{}+{}", bare(&r.cipher), bare(m)),
            None => bare(&r.cipher).to_string(),
        };
        rows.push(vec![
            name.clone(),
            r.direction.to_string(),
            rate(r.median_mib_s, r.min_mib_s, r.max_mib_s),
            match &s.error {
                Some(e) => format!("error: {}", short(e)),
                None => rate(s.median_mib_s, s.min_mib_s, s.max_mib_s),
            },
            gain(s),
            each(s, unit),
            cpu(r.client_cpu_pct, s.client_cpu_pct),
            cpu(r.server_cpu_pct, s.server_cpu_pct),
        ]);
        if let Some(n) = &s.note {
            notes.push(format!("{name} {}: {n}", r.direction));
        }
    }
    Some((count, head, rows, notes))
}

/// `×1.8 (1.6–2.0)`.
fn gain(s: &Streams) -> String {
    match s.gain {
        Some(g) => format!("×{:.1} ({:.1}–{:.1})", g.median, g.min, g.max),
        None => "-".into(),
    }
}

/// `12.1 + 11.9`.
fn each(s: &Streams, unit: RateUnit) -> String {
    let parts: Vec<String> = s
        .per_stream_mib_s
        .iter()
        .map(|m| format!("{:.1}", unit.of(*m)))
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" + ")
    }
}

/// `3 rounds`, or `3–5 rounds` when rows differ.
fn rounds(report: &BenchReport) -> String {
    let counts: Vec<usize> = measured(report).map(|(_, s)| s.samples.len()).collect();
    match (counts.iter().min(), counts.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!("{lo} rounds"),
        (Some(lo), Some(hi)) => format!("{lo}–{hi} rounds"),
        _ => "no rounds".into(),
    }
}

/// `--explain`'s lines for one row's streams.
pub fn explain(r: &ResultRow) -> String {
    let Some(s) = &r.streams else {
        return String::new();
    };
    if let Some(e) = &s.error {
        return format!("      {} streams: error: {e}\n", s.count);
    }
    let mut out = String::new();
    if let (Some(m), Some(lo), Some(hi)) = (s.median_mib_s, s.min_mib_s, s.max_mib_s) {
        out.push_str(&format!(
            "      {} streams: {m:.1} MiB/s together, median of {} rounds ({lo:.1}–{hi:.1}); \
             each stream {}; client CPU {} and server CPU {} over all sessions, server \
             machine busy {}\n",
            s.count,
            s.samples.len(),
            each(s, RateUnit::MibS),
            pct(s.client_cpu_pct),
            pct(s.server_cpu_pct),
            pct(s.server_total_cpu_pct),
        ));
    }
    if let Some(n) = &s.note {
        out.push_str(&format!("      streams: {n}\n"));
    }
    out
}

fn pct(v: Option<f64>) -> String {
    v.map_or("?".into(), |v| format!("{v:.0}%"))
}

fn bare(name: &str) -> &str {
    name.strip_suffix("@openssh.com").unwrap_or(name)
}

/// An error cut to fit a cell (the JSON and `--explain` keep it whole).
fn short(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(MAX - 1).collect::<String>())
    }
}
