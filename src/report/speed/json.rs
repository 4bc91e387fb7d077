use super::Exporter;
use crate::speed::model::SpeedReport;

pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &SpeedReport) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(report)? + "\n")
    }
}
