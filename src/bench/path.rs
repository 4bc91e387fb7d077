//! The path inference applied to a finished bench: rows left `unclear` with nothing saturated,
//! when no ceiling could be had, are grouped per engine and direction and handed to the
//! pure rule in `bench::verdict::infer_path`.

use super::model::{self, Direction, ResultRow, Verdict};
use super::verdict::{self, PathRow, Rule};

/// Rewrites the verdict of rows the path rule explains. `window` gives each engine's channel
/// window; the quotas are the caps the CPU figures are compared with.
pub fn infer(
    rows: &mut [ResultRow],
    ceiling: Option<&model::Ceiling>,
    rtt_s: Option<f64>,
    window: impl Fn(&str) -> Option<u64>,
    client_quota: Option<f64>,
    server_quota: Option<f64>,
) {
    let cap = |q: Option<f64>| {
        q.map_or(100.0, |q| (q * 100.0).min(100.0))
            .clamp(1.0, 100.0)
    };
    let (ccap, scap) = (cap(client_quota), cap(server_quota));
    // Downloads fall back to the upload ceiling, so any usable ceiling covers both.
    if ceiling.and_then(model::Ceiling::judges_network).is_some() {
        return;
    }
    let mut groups: Vec<(String, Direction)> = Vec::new();
    for r in rows.iter() {
        let key = (r.engine.clone(), r.direction);
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    for (engine, direction) in groups {
        let idx: Vec<usize> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.engine == engine
                    && r.direction == direction
                    && r.error.is_none()
                    && r.verdict_rule.as_deref() == Some(Rule::NoSaturation.as_str())
            })
            .map(|(i, _)| i)
            .collect();
        let facts: Vec<PathRow> = idx
            .iter()
            .filter_map(|&i| {
                let r = &rows[i];
                Some(PathRow {
                    cipher: r.cipher.clone(),
                    median: r.median_mib_s?,
                    min: r.min_mib_s?,
                    max: r.max_mib_s?,
                    client_util: r.client_cpu_pct.map(|c| c / ccap),
                    server_util: r.server_cpu_pct.map(|s| s / scap),
                })
            })
            .collect();
        if facts.len() != idx.len() {
            continue;
        }
        if let Some(why) = verdict::infer_path(&facts, rtt_s, window(&engine)) {
            for i in idx {
                rows[i].verdict = Some(Verdict::Path);
                rows[i].verdict_reason = Some(why.clone());
                rows[i].verdict_rule = Some(Rule::PathInference.as_str().to_string());
            }
        }
    }
}
