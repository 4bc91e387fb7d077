//! What a row of each kind is (its identity) and what figure it carries, and how a run names
//! itself when no `--label` is given.

use super::model::Figure;
use crate::report::load::Loaded;

pub fn key_columns(r: &Loaded) -> &'static [&'static str] {
    match r {
        Loaded::Bench(_) => &["engine", "cipher", "mac", "direction"],
        Loaded::Speed(_) => &["kind", "algorithm", "backend"],
        Loaded::Storage(_) => &["layer", "cipher", "sector", "perf", "test"],
        Loaded::Pipeline(_) => &["cipher", "variant"],
        Loaded::Probe(_) => &["kind", "name"],
        Loaded::FleetError(_) => &["host"],
    }
}

/// Every row of a report: its identity and its figure (none when it failed).
pub fn rows(r: &Loaded) -> Vec<(Vec<String>, Option<Figure>)> {
    match r {
        Loaded::Bench(b) => b
            .results
            .iter()
            .map(|x| {
                (
                    vec![
                        x.engine.clone(),
                        x.cipher.clone(),
                        x.mac.clone().unwrap_or_else(|| "(aead)".into()),
                        x.direction.to_string(),
                    ],
                    Figure::from_samples(&x.samples).filter(|_| x.error.is_none()),
                )
            })
            .collect(),
        Loaded::Speed(s) => s
            .rows
            .iter()
            .map(|x| {
                (
                    vec![
                        x.kind.to_string(),
                        crate::report::speed::cells::what(x),
                        x.backend.clone(),
                    ],
                    x.stats
                        .as_ref()
                        .and_then(|st| Figure::from_samples(&st.samples_mib_s)),
                )
            })
            .collect(),
        Loaded::Storage(s) => s
            .matrix
            .iter()
            .flat_map(|m| {
                m.cells.iter().flat_map(move |c| {
                    m.tests.iter().map(move |t| {
                        let key = vec![
                            format!("{:?}", c.layer).to_lowercase(),
                            match (&c.cipher, c.key_bits) {
                                (Some(ci), Some(k)) => format!("{ci} {k}-bit"),
                                _ => c.label(),
                            },
                            c.sector_size.map_or("-".into(), |s| s.to_string()),
                            c.perf.map_or("-".into(), |p| p.label().to_string()),
                            t.label.clone(),
                        ];
                        let fig = c
                            .result(t.test)
                            .filter(|r| r.error.is_none())
                            .and_then(|r| Figure::from_samples(&r.samples_mib_s));
                        (key, fig)
                    })
                })
            })
            .collect(),
        Loaded::Pipeline(p) => p
            .rows
            .iter()
            .map(|x| {
                (
                    vec![x.cipher.clone(), x.variant.to_string()],
                    Figure::from_samples(&x.samples).filter(|_| x.error.is_none()),
                )
            })
            .collect(),
        Loaded::Probe(_) => Vec::new(),
        Loaded::FleetError(e) => vec![(vec![e.host.clone()], None)],
    }
}

/// What tells runs apart, per run: host, kernel, CPU quota, date. Only the parts that differ
/// between the runs are kept (two runs of one host differ by kernel or date, not by host); the
/// file name when nothing differs.
pub fn labels(reports: &[(String, Loaded)]) -> Vec<String> {
    let parts: Vec<Vec<String>> = reports.iter().map(|(_, r)| parts(r)).collect();
    let n = parts.iter().map(|p| p.len()).max().unwrap_or(0);
    let differs: Vec<bool> = (0..n)
        .map(|i| parts.iter().any(|p| p.get(i) != parts[0].get(i)))
        .collect();
    reports
        .iter()
        .zip(&parts)
        .map(|((file, _), p)| {
            let kept: Vec<&str> = p
                .iter()
                .enumerate()
                .filter(|(i, _)| differs[*i])
                .map(|(_, s)| s.as_str())
                .collect();
            if kept.is_empty() {
                std::path::Path::new(file)
                    .file_stem()
                    .map_or(file.clone(), |s| s.to_string_lossy().into_owned())
            } else {
                kept.join(" ")
            }
        })
        .collect()
}

fn parts(r: &Loaded) -> Vec<String> {
    let kernel = |k: &Option<String>| format!("kernel {}", k.as_deref().unwrap_or("?"));
    let quota = |q: Option<f64>| q.map_or("no CPU quota".into(), |q| format!("CPU quota {q:.2}"));
    // Minutes are enough to tell runs apart; the seconds and zone only add width.
    let date = |s: &str| s.get(..16).unwrap_or(s).replace('T', " ");
    match r {
        Loaded::Bench(b) => vec![
            b.host.clone(),
            kernel(&b.server.machine.kernel),
            quota(b.client.cpu_quota_cores),
            date(&b.started),
        ],
        Loaded::Speed(s) => vec![
            s.machine.cpu_model.clone().unwrap_or_default(),
            kernel(&s.machine.kernel),
            date(&s.started),
        ],
        Loaded::Storage(s) => vec![
            s.machine.cpu_model.clone().unwrap_or_default(),
            kernel(&s.machine.kernel),
            date(&s.started),
        ],
        Loaded::Pipeline(p) => vec![p.destination.clone(), date(&p.started)],
        Loaded::Probe(p) => vec![p.probe.host.clone(), p.probe.banner.clone()],
        Loaded::FleetError(e) => vec![e.host.clone()],
    }
}
