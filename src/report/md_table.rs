//! Markdown tables for every report kind, drawn by comfy-table's `ASCII_MARKDOWN` preset.
//!
//! The preset draws the pipes and the header rule; it has no notion of Markdown's column
//! alignment, so the rule under the header gets its `:` here for the columns that hold
//! numbers (`|------:|`), and a `|` inside a cell is escaped (`\|`) so it does not split the
//! cell. Nothing is wrapped: a Markdown row is one line whatever its length.

use comfy_table::{presets::ASCII_MARKDOWN, CellAlignment, ContentArrangement, Table};

/// How a column lines up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Align {
    Left,
    Right,
}

/// Lines under a table (legends, notes), each ended by Markdown's hard break (two spaces) so
/// that they show one a line.
pub fn push_lines<S: std::fmt::Display>(out: &mut String, lines: impl IntoIterator<Item = S>) {
    for l in lines {
        out.push_str(&format!("{l}  \n"));
    }
}

/// One Markdown table: the header, the rows (cells as shown), each column's alignment
/// (`align(i)` for column `i`). Ends with a newline.
pub fn markdown_table<S: AsRef<str>>(
    header: &[S],
    rows: &[Vec<String>],
    align: impl Fn(usize) -> Align,
) -> String {
    let escape = |s: &str| s.replace('|', "\\|");
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().map(|h| escape(h.as_ref())));
    for r in rows {
        t.add_row(r.iter().map(|c| escape(c)));
    }
    for (i, column) in t.column_iter_mut().enumerate() {
        if align(i) == Align::Right {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut lines: Vec<String> = t.lines().collect();
    if let Some(rule) = lines.get_mut(1) {
        *rule = aligned_rule(rule, &align);
    }
    lines.join("\n") + "\n"
}

/// `|---|---|` with the last `-` of each right-aligned column turned into `:`.
fn aligned_rule(rule: &str, align: &impl Fn(usize) -> Align) -> String {
    let cells: Vec<&str> = rule.trim_matches('|').split('|').collect();
    let marked: Vec<String> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| match align(i) {
            Align::Right if c.len() > 1 => format!("{}:", &c[..c.len() - 1]),
            _ => (*c).to_string(),
        })
        .collect();
    format!("|{}|", marked.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_marks_right_columns_and_cells_escape_pipes() {
        let rows = vec![vec!["a|b".to_string(), "1.5".to_string()]];
        let md = markdown_table(&["name", "rate"], &rows, |i| {
            if i == 1 {
                Align::Right
            } else {
                Align::Left
            }
        });
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 3, "{md}");
        assert!(lines[0].starts_with("| name"), "{md}");
        assert!(
            lines[1].starts_with("|-") && lines[1].ends_with(":|"),
            "{md}"
        );
        assert!(!lines[1].trim_end_matches(":|").contains(':'), "{md}");
        assert!(lines[2].contains("a\\|b"), "{md}");
    }
}
