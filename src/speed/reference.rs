//! The reference column: `openssl speed` of the same primitive, run in the same invocation.

use super::model::{OpensslInfo, Reference, Stats};
use super::subject::PACKET_BYTES;
use crate::process;
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::process::Command;

/// The `openssl` program, if it runs.
pub fn probe() -> OpensslInfo {
    match process::run_capture(Command::new("openssl").arg("version")) {
        Ok(v) => OpensslInfo {
            available: true,
            version: Some(v.trim().to_string()),
            note: None,
        },
        Err(e) => OpensslInfo {
            available: false,
            version: None,
            note: Some(format!(
                "openssl is not installed or does not run ({e:#}): no reference column"
            )),
        },
    }
}

/// What to ask `openssl speed` for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `-evp NAME`, with the legacy provider loaded when `legacy`.
    Evp { name: String, legacy: bool },
    /// `-hmac DIGEST`.
    Hmac(String),
}

impl Primitive {
    fn args(&self, seconds: u32) -> Vec<String> {
        let mut a = vec!["speed".to_string(), "-mr".into()];
        match self {
            Primitive::Evp { name, legacy } => {
                if *legacy {
                    a.extend(["-provider", "legacy", "-provider", "default"].map(String::from));
                }
                a.extend(["-evp".into(), name.clone()]);
            }
            Primitive::Hmac(d) => a.extend(["-hmac".into(), d.clone()]),
        }
        a.extend([
            "-bytes".into(),
            PACKET_BYTES.to_string(),
            "-seconds".into(),
            seconds.to_string(),
        ]);
        a
    }
}

/// Bytes per second from `-mr` output: the `+F:<n>:<name>:<bytes/s>` line (one size asked).
pub fn parse_mr(out: &str) -> Option<f64> {
    out.lines()
        .find(|l| l.starts_with("+F:"))
        .and_then(|l| l.rsplit(':').next())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0)
}

/// Runs each primitive at most once per invocation (two backends share one reference) and
/// keeps failures as notes, so one missing algorithm does not end the run.
#[derive(Default)]
pub struct References {
    done: HashMap<Primitive, std::result::Result<Reference, String>>,
}

impl References {
    pub fn get(
        &mut self,
        p: &Primitive,
        min_time: f64,
        samples: u32,
    ) -> std::result::Result<Reference, String> {
        if let Some(r) = self.done.get(p) {
            return r.clone();
        }
        let r = measure(p, min_time, samples).map_err(|e| format!("{e:#}"));
        self.done.insert(p.clone(), r.clone());
        r
    }
}

fn measure(p: &Primitive, min_time: f64, samples: u32) -> Result<Reference> {
    // `openssl speed` takes whole seconds only.
    let seconds = min_time.ceil().max(1.0) as u32;
    let args = p.args(seconds);
    let mut mib = Vec::new();
    for _ in 0..samples {
        process::check_interrupted()?;
        let out = process::run_capture(Command::new("openssl").args(&args))?;
        match parse_mr(&out) {
            Some(bps) => mib.push(bps / (1024.0 * 1024.0)),
            None => bail!("no result line in `openssl {}` output", args.join(" ")),
        }
    }
    let stats = Stats::from_samples(mib).context("no samples")?;
    Ok(Reference {
        command: format!("openssl {}", args.join(" ")),
        stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_machine_readable_output() {
        let out = "+DT:AES-128-CTR:1:32768\n+R:96651:AES-128-CTR:0.380000\n+H:32768\n+F:25:AES-128-CTR:8334368336.84\n";
        assert_eq!(parse_mr(out), Some(8334368336.84));
        assert_eq!(parse_mr("+H:32768\n"), None);
    }

    #[test]
    fn legacy_primitives_load_the_legacy_provider() {
        let p = Primitive::Evp {
            name: "bf-cbc".into(),
            legacy: true,
        };
        let a = p.args(1).join(" ");
        assert_eq!(
            a,
            "speed -mr -provider legacy -provider default -evp bf-cbc -bytes 32768 -seconds 1"
        );
    }
}
