//! Several bench reports of one host pooled into one for the decision (`config --from a.json
//! b.json …`). Something that lasts a whole run (where the scheduler placed ssh and sshd, the
//! machine's other load) moves every figure of that run alike, so one run's ranges can be
//! narrower than the host's real variation. Pooling treats each run as one visit: a row's
//! samples are the union of its samples in every run, so its range covers what differed
//! between runs, and two ciphers are told apart only when they stay apart across runs.
//!
//! A row is matched by engine, cipher, MAC and direction; a row missing from some runs keeps
//! the samples it has. Verdicts survive only where every run agrees (the link binds the pool
//! only when it bound every run). The first report supplies everything that is not a sample:
//! host facts, settings, the ceiling.

use crate::bench::model::{BenchReport, ResultRow};
use crate::bench::ranking;
use crate::stats;
use anyhow::{bail, Result};

/// One report from `reports` (named for errors by `names`), refusing reports of different
/// hosts or servers.
pub fn pool(mut reports: Vec<BenchReport>, names: &[String]) -> Result<BenchReport> {
    if reports.len() < 2 {
        return reports.pop().ok_or_else(|| anyhow::anyhow!("no report"));
    }
    let mut base = reports.remove(0);
    for (report, name) in reports.into_iter().zip(names.iter().skip(1)) {
        same_host(&base, &report, &names[0], name)?;
        for row in report.results {
            merge_row(&mut base.results, row);
        }
        for w in report.warnings {
            if !base.warnings.contains(&w) {
                base.warnings.push(w);
            }
        }
    }
    base.warnings.push(format!(
        "pooled {} runs ({}): each row's samples are those of every run",
        names.len(),
        names.join(", ")
    ));
    base.ranking = ranking::rank(&base.results);
    Ok(base)
}

/// Runs of different destinations or different servers behind one name are not one host.
fn same_host(a: &BenchReport, b: &BenchReport, an: &str, bn: &str) -> Result<()> {
    let differs = |what: &str, x: &str, y: &str| -> Result<()> {
        if x != y {
            bail!("{an} and {bn} measured different {what} ({x:?} against {y:?}): pool runs of one host only");
        }
        Ok(())
    };
    differs("hosts", &a.host, &b.host)?;
    let banner = |r: &BenchReport| r.server.banner.clone().unwrap_or_default();
    differs("servers", &banner(a), &banner(b))?;
    let cpu = |r: &BenchReport| r.server.machine.cpu_model.clone().unwrap_or_default();
    differs("server CPUs", &cpu(a), &cpu(b))
}

fn merge_row(rows: &mut Vec<ResultRow>, row: ResultRow) {
    let same = |r: &&mut ResultRow| {
        r.engine == row.engine
            && r.cipher == row.cipher
            && r.mac == row.mac
            && r.direction == row.direction
    };
    let Some(into) = rows.iter_mut().find(same) else {
        rows.push(row);
        return;
    };
    if into.verdict != row.verdict {
        into.verdict = None;
        into.verdict_reason = Some("the pooled runs disagree on the limit".into());
        into.verdict_rule = None;
    }
    if into.error.is_none() && row.samples.is_empty() {
        into.error = row.error;
    }
    into.samples.extend(row.samples);
    into.sample_seconds.extend(row.sample_seconds);
    into.median_mib_s = stats::median(&into.samples);
    into.min_mib_s = stats::min(&into.samples);
    into.max_mib_s = stats::max(&into.samples);
    if into.samples.is_empty() {
        return;
    }
    if into.error.is_some() {
        into.error = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::Verdict;

    fn report(rows: &[(&str, &[f64])]) -> BenchReport {
        let mut r: BenchReport =
            serde_json::from_str(include_str!("../../examples/reports/bench.json")).unwrap();
        r.results.truncate(1);
        let template = r.results.pop().unwrap();
        r.results = rows
            .iter()
            .map(|(c, s)| ResultRow {
                cipher: c.to_string(),
                samples: s.to_vec(),
                verdict: Some(Verdict::Network),
                ..template.clone()
            })
            .collect();
        r
    }

    #[test]
    fn samples_are_unioned_and_order_decided_across_runs() {
        let a = report(&[("x", &[10.0, 11.0]), ("y", &[5.0, 6.0])]);
        let b = report(&[("x", &[7.0, 8.0]), ("y", &[7.5, 9.0])]);
        let p = pool(vec![a, b], &["a".into(), "b".into()]).unwrap();
        let x = &p.results[0];
        assert_eq!(x.samples, vec![10.0, 11.0, 7.0, 8.0]);
        assert_eq!((x.min_mib_s, x.max_mib_s), (Some(7.0), Some(11.0)));
        assert_eq!(x.median_mib_s, Some(9.0));
        // apart in run a, overlapping once pooled: one tier
        let r = &p.ranking[0];
        assert_eq!(r.entries.len(), 2);
        assert!(!r.significant);
        assert_eq!(x.verdict, Some(Verdict::Network));
    }

    #[test]
    fn different_hosts_are_refused() {
        let a = report(&[("x", &[1.0])]);
        let mut b = report(&[("x", &[1.0])]);
        b.host = "other".into();
        let e = pool(vec![a, b], &["a.json".into(), "b.json".into()]).unwrap_err();
        assert!(e.to_string().contains("different hosts"), "{e}");
    }
}
