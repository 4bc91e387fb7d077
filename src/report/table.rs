use super::{footer, lines, pair, rate_cell, verdict_cell, Exporter};
use crate::bench::model::BenchReport;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table as Ct};

pub struct Table;

impl Exporter for Table {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String> {
        let lines = lines(report);
        let multi_engine = lines.iter().any(|l| l.engine != lines[0].engine);
        let mut t = Ct::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic);
        let mut header = vec![
            "cipher",
            "grade",
            "mac",
            "up MiB/s",
            "down MiB/s",
            "client CPU %",
            "server CPU %",
            "verdict",
        ];
        if multi_engine {
            header.insert(0, "engine");
        }
        t.set_header(header);
        for l in &lines {
            let mut row = vec![
                l.cipher.to_string(),
                l.grade.to_string(),
                l.mac.unwrap_or("(aead)").to_string(),
                rate_cell(l.up),
                rate_cell(l.down),
                pair(l, |r| r.client_cpu_pct),
                pair(l, |r| r.server_cpu_pct),
                verdict_cell(l),
            ];
            if multi_engine {
                row.insert(0, l.engine.to_string());
            }
            t.add_row(row);
        }
        let mut out = format!(
            "sshtune bench: {} ({})\n{t}\n",
            report.host,
            report
                .server
                .banner
                .as_deref()
                .unwrap_or("server banner unknown")
        );
        for f in footer(report) {
            out.push_str(&f);
            out.push('\n');
        }
        Ok(out)
    }
}
