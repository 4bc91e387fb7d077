use super::cells::{backend_cell, footer, rate_cell, ratio_cell, reference_cell, what};
use crate::report::export::Exporter;
use crate::speed::model::SpeedReport;

pub struct Markdown;

impl Exporter<SpeedReport> for Markdown {
    fn render(&self, report: &SpeedReport) -> anyhow::Result<String> {
        let unit = crate::report::rate_unit::current();
        let u = unit.label();
        let mut out = format!(
            "| kind | algorithm | grade | backend | {u} | openssl speed {u} | ratio |\n\
             |---|---|---|---|---:|---:|---:|\n",
        );
        for r in &report.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                r.kind,
                what(r),
                r.grade,
                backend_cell(r),
                rate_cell(r, unit).replace('|', "\\|"),
                reference_cell(r, unit),
                ratio_cell(r),
            ));
        }
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
