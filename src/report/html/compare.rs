//! The comparison page: per row, one bar per run (paired bars for two runs), each with its
//! whiskers, the change against the first run beside it.

use super::shell::{esc, list, page, table};
use super::svg::{self, Bar, Group};
use crate::report::compare::cells::{cells, header, legend};
use crate::report::compare::model::{change_cell, figure_cell, presence_note, Comparison};

pub fn comparison(c: &Comparison) -> String {
    let mut body = format!(
        "<h1>sshtune report: {} runs of {} compared</h1>\n<p class=\"legend\">",
        c.runs.len(),
        esc(&c.kind)
    );
    const COLOURS: [&str; 6] = [
        "#78909c", "#1e88e5", "#8e24aa", "#f4511e", "#00897b", "#6d4c41",
    ];
    for (i, r) in c.runs.iter().enumerate() {
        body.push_str(&format!(
            "<span><i style=\"background:{}\"></i>{}</span>",
            COLOURS[i % COLOURS.len()],
            esc(&r.label)
        ));
    }
    body.push_str("<span>whiskers: min–max of the samples</span></p>\n");
    let groups: Vec<Group> = c
        .rows
        .iter()
        .map(|r| {
            let name = r
                .key
                .iter()
                .filter(|k| !matches!(k.as_str(), "-" | "(aead)"))
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
            let bars: Vec<Bar> = r
                .figures
                .iter()
                .enumerate()
                .filter_map(|(i, f)| {
                    let f = f.as_ref()?;
                    Some(Bar {
                        value: f.median_mib_s,
                        min: Some(f.min_mib_s),
                        max: Some(f.max_mib_s),
                        class: format!("run{}", i % COLOURS.len()),
                        note: if i == 0 {
                            String::new()
                        } else {
                            change_cell(r.changes[i].as_ref())
                        },
                        data: ("data-row".into(), format!("{name} / {}", c.runs[i].label)),
                        title: format!("{}: {}", c.runs[i].label, figure_cell(Some(f))),
                        strong: r.changes[i].as_ref().is_some_and(|c| c.significant),
                    })
                })
                .collect();
            let note = presence_note(c, r);
            Group {
                label: name,
                bars,
                error: (r.present() == 0).then(|| note.clone()),
            }
        })
        .collect();
    body.push_str(&svg::bars("MiB/s per row and run", "MiB/s", &groups, &[]));
    let header = header(c);
    let header: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
    let rows: Vec<Vec<String>> = c.rows.iter().map(|r| cells(c, r)).collect();
    body.push_str(&table(&header, &rows));
    body.push_str("<h2>How to read this</h2>\n");
    body.push_str(&list("how", &legend(c)));
    page(&format!("sshtune report: {} compared", c.kind), &body)
}
