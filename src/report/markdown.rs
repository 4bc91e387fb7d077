use super::cells::{lines, pair, rate_cell, verdict_cell};
use super::export::Exporter;
use super::footer::footer;
use crate::bench::model::BenchReport;

pub struct Markdown;

impl Exporter<BenchReport> for Markdown {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String> {
        let unit = super::rate_unit::current();
        let u = unit.label();
        let mut out = format!(
            "| engine | cipher | grade | mac | up {u} | down {u} | client CPU % | server CPU % | verdict |\n\
             |---|---|---|---|---:|---:|---:|---:|---|\n",
        );
        for l in lines(report) {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                l.engine,
                l.cipher,
                l.grade,
                l.mac.unwrap_or("(aead)"),
                rate_cell(l.up, unit),
                rate_cell(l.down, unit),
                pair(&l, |r| r.client_cpu_pct),
                pair(&l, |r| r.server_cpu_pct),
                verdict_cell(&l).replace('|', "\\|"),
            ));
        }
        out.push('\n');
        for l in super::machine::both(&report.client.machine, &report.server.machine) {
            out.push_str(&format!("{l}  \n"));
        }
        for f in super::cells::legends(true)
            .into_iter()
            .chain(footer(report, unit))
        {
            out.push_str(&format!("{f}  \n"));
        }
        Ok(out)
    }
}
