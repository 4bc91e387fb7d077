//! Reading saved reports back. The `schema` field names the kind and its version; a file is
//! parsed as the kind it says it is, so an error points at the field that is wrong instead of
//! at "no variant matched". A newer version than this build reads is refused rather than
//! half-read: its fields may mean something this code does not know.

use crate::bench::model::BenchReport;
use crate::exit::UsageError;
use crate::pipeline::model::PipelineReport;
use crate::probe::model::ProbeReport;
use crate::speed::model::SpeedReport;
use crate::storage::model::StorageReport;
use anyhow::{Context, Result};
use std::path::Path;

/// The schemas `sshtune report` reads, in the order the error message lists them.
pub const READS: &[&str] = &[
    crate::bench::model::SCHEMA,
    crate::speed::model::SCHEMA,
    crate::storage::model::SCHEMA,
    crate::pipeline::model::SCHEMA,
    crate::probe::model::SCHEMA,
];

/// The file the fleet's Ansible role writes for a host it could not measure.
pub const FLEET_ERROR: &str = "sshtune.fleet-error/1";

/// A host whose run failed, as the Ansible bench role records it.
#[derive(Debug, Clone, serde::Deserialize, PartialEq)]
pub struct FleetError {
    pub host: String,
    /// The task that failed.
    #[serde(default)]
    pub step: Option<String>,
    #[serde(default)]
    pub error: String,
}

/// One saved report of any kind.
#[derive(Debug, Clone)]
pub enum Loaded {
    Bench(Box<BenchReport>),
    Speed(Box<SpeedReport>),
    Storage(Box<StorageReport>),
    Pipeline(Box<PipelineReport>),
    /// Rendered again, never compared: an offer has no figure to compare.
    Probe(Box<ProbeReport>),
    /// Not a report: a host the fleet could not measure (only listed in a fleet table).
    FleetError(Box<FleetError>),
}

impl Loaded {
    /// `bench`, `speed`, `storage`, `pipeline` or `probe`: reports of one kind compare with each
    /// other (probe reports excepted).
    pub fn kind(&self) -> &'static str {
        match self {
            Loaded::Bench(_) => "bench",
            Loaded::Speed(_) => "speed",
            Loaded::Storage(_) => "storage",
            Loaded::Pipeline(_) => "pipeline",
            Loaded::Probe(_) => "probe",
            Loaded::FleetError(_) => "failed-run",
        }
    }
}

/// Reads one file (`-` is standard input).
pub fn load(path: &Path) -> Result<Loaded> {
    let name = path.display().to_string();
    let text = if name == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {name}"))?
    };
    parse(&text).with_context(|| name.clone())
}

/// Parses the text of a saved report, dispatching on its `schema`.
pub fn parse(text: &str) -> Result<Loaded> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| UsageError(format!("not a JSON report ({e}); {}", reads())))?;
    let schema = value
        .get("schema")
        .and_then(|s| s.as_str())
        .ok_or_else(|| UsageError(format!("no \"schema\" field; {}", reads())))?
        .to_string();
    let loaded = match schema.as_str() {
        s if s == crate::bench::model::SCHEMA => {
            let mut report: Box<BenchReport> = serde_json::from_value(value)?;
            regrade(&mut report);
            Loaded::Bench(report)
        }
        s if s == crate::speed::model::SCHEMA => Loaded::Speed(serde_json::from_value(value)?),
        s if s == crate::storage::model::SCHEMA => Loaded::Storage(serde_json::from_value(value)?),
        s if s == crate::pipeline::model::SCHEMA => {
            Loaded::Pipeline(serde_json::from_value(value)?)
        }
        s if s == crate::probe::model::SCHEMA => Loaded::Probe(serde_json::from_value(value)?),
        FLEET_ERROR => Loaded::FleetError(serde_json::from_value(value)?),
        other => return Err(UsageError(unknown(other)).into()),
    };
    Ok(loaded)
}

/// Grades a saved report's rows as today's catalog does (`ciphers::grade_of`), so a report
/// written before a pair took its weaker grade reads the same as a fresh run and `probe`.
/// Names the catalog does not know keep the grade they carry.
fn regrade(report: &mut BenchReport) {
    for r in &mut report.results {
        if let Some(g) = ciphers::grade_of(&r.cipher, r.mac.as_deref()) {
            r.grade = Some(g.to_string());
        }
    }
}

fn reads() -> String {
    format!("this sshtune reads {}", READS.join(", "))
}

/// The message for a schema this build does not read: a newer version of a known kind says
/// so (upgrade sshtune), anything else is named as found.
fn unknown(found: &str) -> String {
    let newer = READS.iter().find_map(|known| {
        let (kind, v) = known.rsplit_once('/')?;
        let (fkind, fv) = found.rsplit_once('/')?;
        let (v, fv): (u32, u32) = (v.parse().ok()?, fv.parse().ok()?);
        (kind == fkind && fv > v).then_some(*known)
    });
    match newer {
        Some(known) => format!(
            "schema {found:?} is newer than this sshtune reads ({known}); use a newer \
             sshtune ({})",
            reads()
        ),
        None => format!("schema {found:?} is not a sshtune report; {}", reads()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_newer_schemas_are_usage_errors_naming_what_is_read() {
        for (text, says) in [
            (r#"{"schema":"sshtune.bench/2"}"#, "newer than this sshtune"),
            (r#"{"schema":"sshtune.ping/1"}"#, "is not a sshtune report"),
            (r#"{"results":[]}"#, "no \"schema\" field"),
            ("not json", "not a JSON report"),
        ] {
            let e = parse(text).unwrap_err();
            let msg = format!("{e:#}");
            assert!(msg.contains(says), "{msg}");
            assert!(msg.contains("sshtune.storage/1"), "{msg}");
            assert_eq!(crate::exit::code_for(&e), crate::exit::USAGE, "{msg}");
        }
    }
}
