use super::export::Exporter;
use serde::Serialize;

/// Every kind of report as JSON, through its `Serialize`: the schema is the model's.
pub struct Json;

impl<R: Serialize> Exporter<R> for Json {
    fn render(&self, report: &R) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(report)? + "\n")
    }
}
