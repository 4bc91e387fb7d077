//! A probe's report: what the server offered, each cipher and MAC graded by the catalog. The
//! command prints it and saves it; `sshtune report` reads it back and renders it again.

use super::ProbeResult;
use ciphers::Grade;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "sshtune.probe/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeReport {
    pub schema: String,
    #[serde(flatten)]
    pub probe: ProbeResult,
    /// Ciphers usable both ways, in the server's order.
    pub ciphers: Vec<Graded>,
    pub macs: Vec<Graded>,
}

/// One offered algorithm with its grade; no grade: not in the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Graded {
    pub name: String,
    pub grade: Option<Grade>,
    pub reason: Option<String>,
}

impl ProbeReport {
    pub fn new(probe: ProbeResult) -> Self {
        let ciphers = probe
            .ciphers()
            .into_iter()
            .map(|c| cipher(&probe, c))
            .collect();
        let macs = probe.macs().into_iter().map(mac).collect();
        Self {
            schema: SCHEMA.into(),
            probe,
            ciphers,
            macs,
        }
    }

    /// Every offered algorithm graded `threshold` or worse, as `name (grade)`.
    pub fn at_or_below(&self, threshold: Grade) -> Vec<String> {
        self.ciphers
            .iter()
            .chain(&self.macs)
            .filter_map(|r| {
                r.grade
                    .filter(|g| *g <= threshold)
                    .map(|g| format!("{} ({g})", r.name))
            })
            .collect()
    }
}

/// The catalog grade, lowered to `weak` for Terrapin-affected ciphers when the server lacks
/// strict KEX.
fn cipher(result: &ProbeResult, name: String) -> Graded {
    let (grade, reason) = match ciphers::cipher(&name) {
        None => (None, None),
        Some(spec) if spec.terrapin && !result.strict_kex && spec.grade == Grade::Ok => (
            Some(Grade::Weak),
            Some("Terrapin: server lacks strict KEX".to_string()),
        ),
        Some(spec) => (Some(spec.grade), Some(spec.reason.to_string())),
    };
    Graded {
        name,
        grade,
        reason,
    }
}

fn mac(name: String) -> Graded {
    let spec = ciphers::mac(&name);
    Graded {
        grade: spec.map(|s| s.grade),
        reason: spec.map(|s| s.reason.to_string()),
        name,
    }
}
