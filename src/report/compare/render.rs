//! A comparison in every format. Table and Markdown show one line per row: its identity, each
//! run's median (min–max), and each later run's change against the first; CSV has one line per
//! row and run; JSON is the `Comparison` itself.

use super::cells::{cells, header, legend};
use super::model::Comparison;
use crate::report::export::Format;
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
/// would make words longer than a narrow terminal's columns), every word whole
/// (`terminal::keep_words`), the legend wrapped at spaces.
fn table(c: &Comparison) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(header(c));
    crate::report::terminal::fit(&mut t);
    let keys = c.key_columns.len();
    for r in &c.rows {
        let mut row = cells(c, r);
        for cell in row.iter_mut().take(keys) {
            *cell = cell.replace("@openssh.com", "");
        }
        t.add_row(row);
    }
    crate::report::terminal::keep_words(&mut t, &[]);
    let mut out = format!(
        "sshtune report: {} runs of {} compared\n{t}\n",
        c.runs.len(),
        c.kind
    );
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

fn markdown(c: &Comparison) -> String {
    let h = header(c);
    let mut out = format!("| {} |\n|", h.join(" | "));
    for (i, name) in h.iter().enumerate() {
        out.push_str(if i < c.key_columns.len() || name == "note" {
            "---|"
        } else {
            "---:|"
        });
    }
    out.push('\n');
    for r in &c.rows {
        let v: Vec<String> = cells(c, r).iter().map(|x| x.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", v.join(" | ")));
    }
    out.push('\n');
    for l in legend(c) {
        out.push_str(&format!("{l}  \n"));
    }
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
    let f = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
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
