//! Many hosts, one table: for each host's bench report the best cipher under the `secure`
//! policy for its OpenSSH release (what `sshtune config` would put first), its MiB/s up and
//! down, the verdicts of that row, and the `Ciphers` line the host's drop-in gets. A host whose
//! run failed (the Ansible role's `sshtune.fleet-error/1` file) is listed with its error rather
//! than dropped, so a missing board is visible.

use super::export::Format;
use super::html::shell::{esc, list, page, table};
use super::load::{FleetError, Loaded};
use super::md_table::{markdown_table, push_lines, Align};
use crate::bench::model::{BenchReport, Direction, Directions};
use crate::config::{figures, policy};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde::Serialize;

pub const SCHEMA: &str = "sshtune.fleet/1";

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Host {
    pub host: String,
    pub file: String,
    /// The fastest cipher the policy keeps, with its MAC when it needs one.
    pub best: Option<String>,
    pub up_mib_s: Option<f64>,
    pub down_mib_s: Option<f64>,
    /// `upload / download` verdicts of that row (one word when they agree).
    pub verdict: Option<String>,
    /// The drop-in's `Ciphers` line, fastest first.
    pub ciphers_line: Option<String>,
    /// Why the host has no figure or no line (failed run, unknown release...).
    pub error: Option<String>,
}

impl Host {
    /// A host of `file` with no figure, line or error yet.
    fn new(host: &str, file: &str) -> Self {
        Self {
            host: host.to_string(),
            file: file.to_string(),
            best: None,
            up_mib_s: None,
            down_mib_s: None,
            verdict: None,
            ciphers_line: None,
            error: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Fleet {
    pub schema: String,
    pub policy: String,
    pub hosts: Vec<Host>,
}

/// Whether `reports` read as a fleet: only bench reports and failed runs, naming two or more
/// hosts (or any failed run). The same host twice is a before/after comparison instead.
pub fn is_fleet(reports: &[(String, Loaded)]) -> bool {
    let mut hosts: Vec<&str> = Vec::new();
    let mut failed = false;
    for (_, r) in reports {
        match r {
            Loaded::Bench(b) => hosts.push(&b.host),
            Loaded::FleetError(e) => {
                failed = true;
                hosts.push(&e.host)
            }
            _ => return false,
        }
    }
    let n = hosts.len();
    hosts.sort();
    hosts.dedup();
    failed || (hosts.len() == n && n > 1)
}

pub fn fleet(reports: &[(String, Loaded)]) -> Fleet {
    let hosts = reports
        .iter()
        .map(|(file, r)| match r {
            Loaded::Bench(b) => host(file, b),
            Loaded::FleetError(e) => failed(file, e),
            other => failed(
                file,
                &FleetError {
                    host: file.clone(),
                    step: None,
                    error: format!("a {} report, not a bench report", other.kind()),
                },
            ),
        })
        .collect();
    Fleet {
        schema: SCHEMA.into(),
        policy: policy::Policy::Secure.as_str().into(),
        hosts,
    }
}

fn failed(file: &str, e: &FleetError) -> Host {
    let error = match &e.step {
        Some(s) => format!("{s}: {}", e.error),
        None => e.error.clone(),
    };
    Host {
        error: Some(error),
        ..Host::new(&e.host, file)
    }
}

fn host(file: &str, report: &BenchReport) -> Host {
    let mut h = Host::new(&report.host, file);
    let figures = match figures::choose(report) {
        Ok(f) => f,
        Err(e) => {
            h.error = Some(format!("{e:#}"));
            return h;
        }
    };
    let report = figures::restrict(report, &figures);
    let Some(target) = policy::target_version(&report) else {
        h.error = Some(format!(
            "OpenSSH release unknown (banner {}): no config line",
            report.server.banner.as_deref().unwrap_or("none")
        ));
        return h;
    };
    let sel = policy::select(&report, policy::Policy::Secure, target, Directions::Both);
    let Some(best) = sel.chosen.first() else {
        h.error = Some("no cipher passed the secure policy".into());
        return h;
    };
    let row = |d: Direction| {
        report
            .results
            .iter()
            .find(|r| r.cipher == best.name && r.direction == d && r.error.is_none())
    };
    let (up, down) = (row(Direction::Upload), row(Direction::Download));
    let mac = up.or(down).and_then(|r| r.mac.clone());
    h.best = Some(match mac {
        Some(m) => format!("{}+{m}", best.name),
        None => best.name.clone(),
    });
    h.up_mib_s = best.up;
    h.down_mib_s = best.down;
    let v = |r: Option<&crate::bench::model::ResultRow>| {
        r.and_then(|r| r.verdict)
            .map_or("-".to_string(), |v| v.to_string())
    };
    let (vu, vd) = (v(up), v(down));
    let verdict = if vu == vd { vu } else { format!("{vu} / {vd}") };
    h.verdict = Some(if sel.link_bound {
        format!("{verdict}: the link binds, the cipher does not matter here")
    } else {
        verdict
    });
    let names: Vec<&str> = sel.chosen.iter().map(|c| c.name.as_str()).collect();
    h.ciphers_line = Some(format!("Ciphers {}", names.join(",")));
    h
}

fn cells(h: &Host) -> Vec<String> {
    let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    match &h.error {
        Some(e) if h.best.is_none() => vec![
            h.host.clone(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            format!("error: {e}"),
        ],
        _ => measured(h, f).to_vec(),
    }
}

/// A measured host's cells, its figures written by `f`.
fn measured(h: &Host, f: impl Fn(Option<f64>) -> String) -> [String; 6] {
    [
        h.host.clone(),
        h.best.clone().unwrap_or_default(),
        f(h.up_mib_s),
        f(h.down_mib_s),
        h.verdict.clone().unwrap_or_default(),
        h.ciphers_line.clone().unwrap_or_default(),
    ]
}

const HEADER: [&str; 6] = [
    "host",
    "best cipher",
    "up MiB/s",
    "down MiB/s",
    "verdict",
    "config",
];

fn legend(f: &Fleet) -> Vec<String> {
    vec![format!(
        "Best cipher and config: what `sshtune config --policy {}` gives each host from its report \
         (the OpenSSH rows; fastest of up and down first, for the host's OpenSSH release). MiB/s: \
         median of the host's samples.",
        f.policy
    )]
}

pub fn render(f: &Fleet, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json => serde_json::to_string_pretty(f)? + "\n",
        Format::Csv => {
            let mut w = ::csv::Writer::from_writer(Vec::new());
            w.write_record([
                "host",
                "best_cipher",
                "up_mib_s",
                "down_mib_s",
                "verdict",
                "ciphers_line",
                "error",
            ])?;
            for h in &f.hosts {
                let mut record = measured(h, super::cells::csv_figure).to_vec();
                record.push(h.error.clone().unwrap_or_default());
                w.write_record(record)?;
            }
            String::from_utf8(w.into_inner()?)?
        }
        Format::Table => {
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED).set_header(HEADER);
            super::terminal::fit(&mut t);
            for h in &f.hosts {
                t.add_row(cells(h));
            }
            let mut out = format!("sshtune report: fleet of {} hosts\n{t}\n", f.hosts.len());
            for l in legend(f) {
                out.push_str(&l);
                out.push('\n');
            }
            out
        }
        Format::Markdown => {
            let rows: Vec<Vec<String>> = f.hosts.iter().map(cells).collect();
            let mut out = markdown_table(&HEADER, &rows, |i| {
                if (2..4).contains(&i) {
                    Align::Right
                } else {
                    Align::Left
                }
            });
            out.push('\n');
            push_lines(&mut out, legend(f));
            out
        }
        Format::Html => {
            let rows: Vec<Vec<String>> = f.hosts.iter().map(cells).collect();
            let body = format!(
                "<h1>sshtune report: fleet of {} hosts</h1>\n{}{}",
                f.hosts.len(),
                table(&HEADER, &rows),
                list("how", &legend(f))
            );
            page(&format!("sshtune fleet ({})", esc(&f.policy)), &body)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench(name: &str, host: &str) -> (String, Loaded) {
        let text = match name {
            "9.2" => include_str!("../../tests/fixtures/config/bench-openssh-9.2.json"),
            _ => include_str!("../../tests/fixtures/config/bench-openssh-7.4.json"),
        };
        let mut r: BenchReport = serde_json::from_str(text).unwrap();
        r.host = host.into();
        (format!("{host}.json"), Loaded::Bench(Box::new(r)))
    }

    #[test]
    fn each_host_gets_its_best_cipher_and_line_and_failed_hosts_stay_listed() {
        let reports = vec![
            bench("9.2", "a"),
            bench("7.4", "b"),
            (
                "c.error.json".into(),
                Loaded::FleetError(Box::new(FleetError {
                    host: "c".into(),
                    step: Some("Run sshtune bench".into()),
                    error: "ssh: connect to host c port 22: No route to host".into(),
                })),
            ),
        ];
        assert!(is_fleet(&reports));
        assert!(!is_fleet(&[bench("9.2", "a"), bench("7.4", "a")]));
        let f = fleet(&reports);
        assert_eq!(f.hosts.len(), 3);
        for h in &f.hosts[..2] {
            assert!(h.best.is_some(), "{h:?}");
            let line = h.ciphers_line.as_deref().unwrap();
            let first = h.best.as_deref().unwrap().split('+').next().unwrap();
            assert!(line.starts_with(&format!("Ciphers {first}")), "{h:?}");
        }
        assert!(f.hosts[2]
            .error
            .as_deref()
            .unwrap()
            .contains("No route to host"));
        let table = render(&f, Format::Table).unwrap();
        assert!(
            table.contains("error: Run sshtune bench: ssh: connect"),
            "{table}"
        );
    }
}
