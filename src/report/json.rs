use super::Exporter;
use crate::bench::model::BenchReport;

pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(report)? + "\n")
    }
}
