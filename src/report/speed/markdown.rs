use super::cells::{footer, header, row};
use crate::report::export::Exporter;
use crate::report::md_table::{markdown_table, push_lines, Align};
use crate::speed::model::SpeedReport;

pub struct Markdown;

impl Exporter<SpeedReport> for Markdown {
    fn render(&self, report: &SpeedReport) -> anyhow::Result<String> {
        let unit = crate::report::rate_unit::current();
        let rows: Vec<Vec<String>> = report.rows.iter().map(|r| row(r, unit)).collect();
        let mut out = markdown_table(&header(unit), &rows, |i| {
            if i >= 4 {
                Align::Right
            } else {
                Align::Left
            }
        });
        out.push('\n');
        out.push_str(&format!(
            "{}  \n",
            crate::report::machine::line(&report.machine)
        ));
        push_lines(&mut out, footer(report, unit));
        Ok(out)
    }
}
