//! `pipeline --jobs N` beside one rsync: a table under the pipeline table, terminal and
//! Markdown (cipher, one rsync, N jobs, the gain, each job's rate, both ends' CPU one → all
//! jobs), the line per cipher saying whether N jobs pay, and the command that copies that way;
//! the page draws the same `cells`.
//! Figures only as `pipeline::jobs_gain` made them.

use super::md_table::{markdown_table, Align};
use crate::pipeline::model::{CpuShare, PipelineReport, Row};
use crate::pipeline::model::{JobsRow, JobsSection};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

/// The groups summed into a side's CPU: the run's own processes on that end.
const CLIENT: &[&str] = &["rsync-sender", "ssh"];
const SERVER: &[&str] = &["sshd", "rsync-receiver"];

/// The CPU of `groups` on `side`, % of one core; None when the row has none of them.
fn sum(cpu: &[CpuShare], side: &str, groups: &[&str]) -> Option<f64> {
    let mine = cpu
        .iter()
        .filter(|s| s.side == side && groups.contains(&s.group.as_str()));
    mine.map(|s| s.pct).reduce(|a, b| a + b)
}

/// The title, header, rows and the lines under the table (every format draws these).
pub(crate) struct Cells {
    pub title: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub lines: Vec<String>,
}

/// The `--jobs` part's [`Cells`], None without `--jobs`.
pub(crate) fn cells(report: &PipelineReport) -> Option<Cells> {
    let s = report.jobs.as_ref()?;
    let n = s.count;
    let mut lines = Vec::new();
    if let Some(r) = &s.reason {
        lines.push(format!("--jobs {}: {r}.", s.asked));
    }
    if s.rows.is_empty() {
        if n < 2 {
            lines.push("One job: nothing to compare.".into());
        }
        return Some(Cells {
            title: title(s),
            head: Vec::new(),
            rows: Vec::new(),
            lines,
        });
    }
    lines.push(legend(s, report.settings.repeat));
    let head = vec![
        "cipher".to_string(),
        "variant".into(),
        "1 rsync MiB/s".into(),
        format!("{n} jobs MiB/s"),
        "gain".into(),
        "each job MiB/s".into(),
        "client %".into(),
        "server %".into(),
    ];
    let mut rows = Vec::new();
    for j in &s.rows {
        let one = report
            .rows
            .iter()
            .find(|r| r.cipher == j.cipher && r.variant == j.variant);
        rows.push(row(j, one));
        if let Some(note) = &j.note {
            lines.push(format!("{}: {note}", j.cipher));
        }
    }
    if let Some(j) = s.rows.first() {
        lines.push(format!("To copy this way ({}): `{}`", j.cipher, j.command));
    }
    Some(Cells {
        title: title(s),
        head,
        rows,
        lines,
    })
}

fn title(s: &JobsSection) -> String {
    let parts: Vec<String> = s
        .parts
        .iter()
        .map(|p| {
            let s = if p.files == 1 { "" } else { "s" };
            format!("{} file{s} {:.1} MiB", p.files, p.bytes as f64 / 1048576.0)
        })
        .collect();
    if parts.is_empty() {
        format!("Parallel rsync (--jobs {})", s.asked)
    } else {
        format!(
            "Parallel rsync: {} jobs at once over disjoint parts of the data ({})",
            s.count,
            parts.join("; ")
        )
    }
}

fn legend(s: &JobsSection, repeat: u32) -> String {
    format!(
        "{n} jobs: all bytes over the time from the first job's first progress line to the \
         last job's exit plus the flush, median (min–max) of {repeat} runs; gain: ÷ one \
         rsync, the range from the samples' extremes; each job: its part over its own time; \
         CPU: one rsync → all {n} jobs, % of one core (client rsync+ssh, server sshd+rsync).",
        n = s.count
    )
}

fn row(j: &JobsRow, one: Option<&Row>) -> Vec<String> {
    let rate = |m: Option<f64>, lo: Option<f64>, hi: Option<f64>| match (m, lo, hi) {
        (Some(m), Some(lo), Some(hi)) => format!("{m:.1} ({lo:.1}–{hi:.1})"),
        _ => "n/a".into(),
    };
    let cpu = |groups: &[&str], side: &str| {
        let pct =
            |cpu: &[CpuShare]| sum(cpu, side, groups).map_or("?".into(), |p| format!("{p:.0}"));
        format!(
            "{}→{}",
            one.map_or("?".into(), |r| pct(&r.cpu)),
            pct(&j.cpu)
        )
    };
    vec![
        j.cipher.clone(),
        j.variant.to_string(),
        one.map_or("n/a".into(), |r| {
            rate(r.median_mib_s, r.min_mib_s, r.max_mib_s)
        }),
        match &j.error {
            Some(e) => format!("error: {e}"),
            None => rate(j.median_mib_s, j.min_mib_s, j.max_mib_s),
        },
        j.gain.map_or("-".into(), |g| {
            format!("×{:.1} ({:.1}–{:.1})", g.median, g.min, g.max)
        }),
        if j.per_job_mib_s.is_empty() {
            "-".into()
        } else {
            j.per_job_mib_s
                .iter()
                .map(|m| format!("{m:.1}"))
                .collect::<Vec<_>>()
                .join(" + ")
        },
        cpu(CLIENT, "client"),
        cpu(SERVER, "server"),
    ]
}

/// The terminal table and its lines, or None without `--jobs`.
pub(crate) fn table(report: &PipelineReport) -> Option<String> {
    let c = cells(report)?;
    let mut out = format!("\n{}\n", c.title);
    if !c.rows.is_empty() {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_header(c.head);
        super::terminal::fit(&mut t);
        for r in c.rows {
            t.add_row(r);
        }
        super::terminal::keep_words(&mut t, &[5, 6, 7]);
        out.push_str(&format!("{t}\n"));
    }
    for l in c.lines {
        out.push_str(&l);
        out.push('\n');
    }
    Some(out)
}

/// The same in Markdown, or None without `--jobs`.
pub(crate) fn markdown(report: &PipelineReport) -> Option<String> {
    let c = cells(report)?;
    let mut out = format!("\n### {}\n\n", c.title);
    if !c.rows.is_empty() {
        out.push_str(&markdown_table(&c.head, &c.rows, |i| {
            if i >= 2 {
                Align::Right
            } else {
                Align::Left
            }
        }));
        out.push('\n');
    }
    for l in c.lines {
        out.push_str(&format!("- {l}\n"));
    }
    Some(out)
}
