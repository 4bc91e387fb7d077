use super::cells::{backend_cell, footer, rate_cell, ratio_cell, reference_cell, what};
use crate::report::export::Exporter;
use crate::report::md_table::{markdown_table, Align};
use crate::speed::model::SpeedReport;

pub struct Markdown;

impl Exporter<SpeedReport> for Markdown {
    fn render(&self, report: &SpeedReport) -> anyhow::Result<String> {
        let unit = crate::report::rate_unit::current();
        let u = unit.label();
        let header = [
            "kind".to_string(),
            "algorithm".into(),
            "grade".into(),
            "backend".into(),
            u.to_string(),
            format!("openssl speed {u}"),
            "ratio".into(),
        ];
        let rows: Vec<Vec<String>> = report
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.kind.to_string(),
                    what(r),
                    r.grade.to_string(),
                    backend_cell(r),
                    rate_cell(r, unit),
                    reference_cell(r, unit),
                    ratio_cell(r),
                ]
            })
            .collect();
        let mut out = markdown_table(&header, &rows, |i| {
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
        for f in footer(report, unit) {
            out.push_str(&format!("{f}  \n"));
        }
        Ok(out)
    }
}
