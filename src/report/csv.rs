use super::export::Exporter;
use crate::bench::model::BenchReport;

pub struct Csv;

impl Exporter<BenchReport> for Csv {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "engine",
            "cipher",
            "mac",
            "grade",
            "direction",
            "bytes",
            "samples_mib_s",
            "median_mib_s",
            "min_mib_s",
            "max_mib_s",
            "client_cpu_pct",
            "server_cpu_pct",
            "server_total_cpu_pct",
            "verdict",
            "error",
        ])?;
        let f = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        for r in &report.results {
            let samples: Vec<String> = r.samples.iter().map(|s| format!("{s:.3}")).collect();
            w.write_record([
                r.engine.clone(),
                r.cipher.clone(),
                r.mac.clone().unwrap_or_default(),
                r.grade.clone().unwrap_or_default(),
                r.direction.to_string(),
                r.bytes.to_string(),
                samples.join(";"),
                f(r.median_mib_s),
                f(r.min_mib_s),
                f(r.max_mib_s),
                f(r.client_cpu_pct),
                f(r.server_cpu_pct),
                f(r.server_total_cpu_pct),
                r.verdict.map(|v| v.to_string()).unwrap_or_default(),
                r.error.clone().unwrap_or_default(),
            ])?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}
