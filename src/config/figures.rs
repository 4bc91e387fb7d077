//! Which engine's rows describe the target. A report of both engines holds measurements of
//! two different systems: the OpenSSH pair (the real `ssh` and `sshd`, the very programs an
//! sshd_config drop-in and an ssh_config block configure) and sshtune's own client and
//! server. Their orders can disagree (the native pair's AES-CTR outruns its ChaCha20 while
//! OpenSSH's does not), so the config is ranked by the OpenSSH rows alone. Native rows
//! describe a target only when that target runs `sshtune serve`.

use crate::bench::model::BenchReport;
use anyhow::{bail, Result};

use crate::bench::EngineKind;

pub const OPENSSH: &str = EngineKind::Openssh.as_str();
pub const NATIVE: &str = EngineKind::Native.as_str();

/// The rows the config is computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figures {
    pub engine: &'static str,
    /// Rows of other engines in the report, left out.
    pub ignored: usize,
}

impl Figures {
    /// One header line saying whose figures these are.
    pub fn describe(&self) -> String {
        let whose = match self.engine {
            OPENSSH => "the OpenSSH engine's (the real ssh and sshd)",
            _ => "the native engine's (sshtune's own client against `sshtune serve`)",
        };
        let mut s = format!("figures: {whose} rows");
        if self.ignored > 0 {
            let other = if self.engine == OPENSSH {
                "native-engine"
            } else {
                "other-engine"
            };
            s.push_str(&format!(
                "; the report's {} {other} rows are not used: they measure another SSH \
                 implementation than the target's",
                self.ignored
            ));
        }
        s
    }
}

/// Whether the measured server is `sshtune serve` (its identification string says so).
fn target_runs_sshtune(report: &BenchReport) -> bool {
    report
        .server
        .banner
        .as_deref()
        .is_some_and(|b| b.starts_with("SSH-2.0-sshtune"))
}

/// The engine whose rows describe the target, or why none does.
pub fn choose(report: &BenchReport) -> Result<Figures> {
    let count = |engine: &str| report.results.iter().filter(|r| r.engine == engine).count();
    let (openssh, native) = (count(OPENSSH), count(NATIVE));
    let other = report.results.len() - openssh - native;
    if openssh > 0 {
        return Ok(Figures {
            engine: OPENSSH,
            ignored: native + other,
        });
    }
    if native > 0 && target_runs_sshtune(report) {
        return Ok(Figures {
            engine: NATIVE,
            ignored: other,
        });
    }
    if native > 0 {
        bail!(
            "the report holds only native-engine rows: they measure sshtune's own SSH client, \
             not the ssh and sshd this config is for; measure with `sshtune bench --engine openssh`"
        );
    }
    bail!("the report has no result rows")
}

/// The report with only the chosen engine's rows (and rankings).
pub fn restrict(report: &BenchReport, figures: &Figures) -> BenchReport {
    let mut r = report.clone();
    r.results.retain(|row| row.engine == figures.engine);
    r.ranking.retain(|rank| rank.engine == figures.engine);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::fixture;

    #[test]
    fn a_report_of_both_engines_is_ranked_by_openssh() {
        let r = fixture("bench-both-engines.json");
        let f = choose(&r).unwrap();
        assert_eq!(f.engine, OPENSSH);
        assert!(f.ignored > 0);
        let only = restrict(&r, &f);
        assert!(!only.results.is_empty());
        assert!(only.results.iter().all(|row| row.engine == OPENSSH));
        assert!(f.describe().contains("native-engine rows are not used"));
    }

    #[test]
    fn native_rows_count_only_against_sshtune_serve() {
        let mut r = fixture("bench-both-engines.json");
        r.results.retain(|row| row.engine == NATIVE);
        let err = choose(&r).unwrap_err().to_string();
        assert!(err.contains("only native-engine rows"), "{err}");
        r.server.banner = Some("SSH-2.0-sshtune_0.1.0".into());
        assert_eq!(choose(&r).unwrap().engine, NATIVE);
        r.results.clear();
        assert!(choose(&r).is_err());
    }
}
