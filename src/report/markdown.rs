use super::cells::{lines, pair, rate_cell, verdict_cell};
use super::export::Exporter;
use super::footer::footer;
use super::md_table::{markdown_table, push_lines, Align};
use crate::bench::model::BenchReport;

pub struct Markdown;

impl Exporter<BenchReport> for Markdown {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String> {
        let unit = super::rate_unit::current();
        let u = unit.label();
        let header = [
            "engine".to_string(),
            "cipher".into(),
            "grade".into(),
            "mac".into(),
            format!("up {u}"),
            format!("down {u}"),
            "client CPU %".into(),
            "server CPU %".into(),
            "verdict".into(),
        ];
        let rows: Vec<Vec<String>> = lines(report)
            .into_iter()
            .map(|l| {
                vec![
                    l.engine.to_string(),
                    l.cipher.to_string(),
                    l.grade.to_string(),
                    l.mac.unwrap_or("(aead)").to_string(),
                    rate_cell(l.up, unit),
                    rate_cell(l.down, unit),
                    pair(&l, |r| r.client_cpu_pct),
                    pair(&l, |r| r.server_cpu_pct),
                    verdict_cell(&l),
                ]
            })
            .collect();
        let mut out = markdown_table(&header, &rows, |i| {
            if (4..8).contains(&i) {
                Align::Right
            } else {
                Align::Left
            }
        });
        if let Some(streams) = super::streams::markdown(report, unit) {
            out.push_str(&streams);
        }
        out.push('\n');
        let machines = super::machine::both(&report.client.machine, &report.server.machine);
        push_lines(&mut out, machines);
        push_lines(&mut out, super::cells::legends(true));
        push_lines(&mut out, footer(report, unit));
        Ok(out)
    }
}
