//! A comparison in every format. Table and Markdown show one line per row: its identity, each
//! run's median (min–max), and each later run's change against the first; CSV has one line per
//! row and run; JSON is the `Comparison` itself.

use super::cells::{cells, header, legend};
use super::model::Comparison;
use crate::report::export::Format;
use crate::report::md_table::{markdown_table, push_lines, Align};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

pub fn render(c: &Comparison, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json => serde_json::to_string_pretty(c)? + "\n",
        Format::Csv => csv(c)?,
        Format::Table => table(c),
        Format::Markdown => markdown(c),
        Format::Html => crate::report::html::compare::comparison(c),
    })
}

/// The terminal table: names without `@openssh.com` (the suffix is most of a name's width and
/// would make words longer than a narrow terminal's columns), a key column with one value in
/// every row said once above the table instead, cipher and MAC in one cell (`cipher+mac`, which
/// wraps after the `+`), every word whole (`terminal::keep_words`), the legend wrapped at
/// spaces.
fn table(c: &Comparison) -> String {
    let keys = c.key_columns.len();
    let mut head = header(c);
    let mut rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            let mut row = cells(c, r);
            for cell in row.iter_mut().take(keys) {
                *cell = cell.replace("@openssh.com", "");
            }
            row
        })
        .collect();
    let fixed = drop_constant_keys(keys, &mut head, &mut rows);
    join_cipher_and_mac(&mut head, &mut rows);
    let mut out = format!(
        "sshtune report: {} runs of {} compared\n",
        c.runs.len(),
        c.kind
    );
    if !fixed.is_empty() {
        out.push_str(&format!("Every row: {}.\n", fixed.join(", ")));
    }
    let groups = by_engine(&mut head, rows);
    let pairs = head.iter().position(|h| h == PAIR);
    for (title, group) in groups {
        if let Some(title) = title {
            out.push_str(&format!("{title}:\n"));
        }
        out.push_str(&format!("{}\n", fitted(&head, group, pairs)));
    }
    if c.rows
        .iter()
        .any(|r| r.key.iter().any(|k| k.contains("@openssh.com")))
    {
        out.push_str(
            "Names without their @openssh.com suffix (JSON and CSV use the full names).\n",
        );
    }
    for l in legend(c) {
        out.push_str(&crate::report::terminal::wrap(&l));
        out.push('\n');
    }
    out
}

/// Removes the key columns (the first `keys`) whose value is the same in every row of several,
/// returning them as `name value` to say once.
fn drop_constant_keys(
    keys: usize,
    head: &mut Vec<String>,
    rows: &mut [Vec<String>],
) -> Vec<String> {
    if rows.len() < 2 {
        return Vec::new();
    }
    let constant: Vec<usize> = (0..keys)
        .filter(|&i| rows.iter().all(|r| r[i] == rows[0][i]))
        .collect();
    let said = constant
        .iter()
        .map(|&i| format!("{} {}", head[i], rows[0][i]))
        .collect();
    for &i in constant.iter().rev() {
        head.remove(i);
        for r in rows.iter_mut() {
            r.remove(i);
        }
    }
    said
}

/// Rows of several engines as one table per engine (titled `engine X`), which saves the
/// engine column's width; otherwise one untitled group.
fn by_engine(
    head: &mut Vec<String>,
    rows: Vec<Vec<String>>,
) -> Vec<(Option<String>, Vec<Vec<String>>)> {
    if head.first().map(String::as_str) != Some("engine") {
        return vec![(None, rows)];
    }
    head.remove(0);
    let mut groups: Vec<(Option<String>, Vec<Vec<String>>)> = Vec::new();
    for mut r in rows {
        let title = Some(format!("engine {}", r.remove(0)));
        match groups.iter_mut().find(|(t, _)| *t == title) {
            Some((_, g)) => g.push(r),
            None => groups.push((title, vec![r])),
        }
    }
    groups
}

/// The table of `rows`; when words would not fit on one line, the MAC of a `cipher+mac` cell
/// (column `pairs`) goes under its cipher.
fn fitted(head: &[String], mut rows: Vec<Vec<String>>, pairs: Option<usize>) -> Table {
    let (t, kept) = build(head, &rows);
    match (kept.fits, pairs) {
        (false, Some(i)) => {
            for r in &mut rows {
                r[i] = r[i].replace('+', "+\n");
            }
            build(head, &rows).0
        }
        _ => t,
    }
}

fn build(head: &[String], rows: &[Vec<String>]) -> (Table, crate::report::terminal::Kept) {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(head);
    crate::report::terminal::fit(&mut t);
    for row in rows {
        t.add_row(row);
    }
    let kept = crate::report::terminal::keep_words(&mut t, &[]);
    (t, kept)
}

/// The header of the column `join_cipher_and_mac` makes.
const PAIR: &str = "cipher+mac";

/// `cipher` and `mac` columns as one `cipher+mac` column; an AEAD cipher is its name alone.
fn join_cipher_and_mac(head: &mut Vec<String>, rows: &mut [Vec<String>]) {
    let at = |name: &str| head.iter().position(|h| h == name);
    let (Some(ci), Some(mi)) = (at("cipher"), at("mac")) else {
        return;
    };
    for r in rows.iter_mut() {
        let mac = r.remove(mi);
        if mac != "(aead)" && !mac.is_empty() {
            r[ci] = format!("{}+{mac}", r[ci]);
        }
    }
    head.remove(mi);
    head[ci - usize::from(mi < ci)] = PAIR.into();
}

fn markdown(c: &Comparison) -> String {
    let h = header(c);
    let rows: Vec<Vec<String>> = c.rows.iter().map(|r| cells(c, r)).collect();
    let mut out = markdown_table(&h, &rows, |i| {
        if i < c.key_columns.len() || h[i] == "note" {
            Align::Left
        } else {
            Align::Right
        }
    });
    out.push('\n');
    push_lines(&mut out, legend(c));
    out
}

fn csv(c: &Comparison) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut h = c.key_columns.clone();
    h.extend(
        [
            "run",
            "median_mib_s",
            "min_mib_s",
            "max_mib_s",
            "change_pct",
            "significant",
        ]
        .map(String::from),
    );
    w.write_record(&h)?;
    let f = crate::report::cells::csv_figure;
    for r in &c.rows {
        for (i, run) in c.runs.iter().enumerate() {
            let fig = r.figures[i].as_ref();
            let ch = r.changes[i].as_ref();
            let mut rec = r.key.clone();
            rec.extend([
                run.label.clone(),
                f(fig.map(|x| x.median_mib_s)),
                f(fig.map(|x| x.min_mib_s)),
                f(fig.map(|x| x.max_mib_s)),
                f(ch.map(|x| x.pct)),
                ch.map(|x| x.significant.to_string()).unwrap_or_default(),
            ]);
            w.write_record(&rec)?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
