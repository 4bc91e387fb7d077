//! `bench --format csv`: one line per result row. With `--streams N` the same line carries the
//! N streams' figures in the `streams_*` columns (empty for a row measured with one stream).

use super::cells::csv_figure as figure;
use super::export::Exporter;
use crate::bench::model::{BenchReport, ResultRow, Streams};

pub struct Csv;

/// The columns of every row, in order.
const HEAD: [&str; 15] = [
    "engine",
    "cipher",
    "mac",
    "grade",
    "direction",
    "bytes",
    "samples_mib_s",
    "median_mib_s",
    "min_mib_s",
    "max_mib_s",
    "client_cpu_pct",
    "server_cpu_pct",
    "server_total_cpu_pct",
    "verdict",
    "error",
];

/// The `--streams` columns after them (docs/bench-json.md, "CSV").
const STREAMS_HEAD: [&str; 15] = [
    "streams",
    "streams_samples_mib_s",
    "streams_median_mib_s",
    "streams_min_mib_s",
    "streams_max_mib_s",
    "streams_per_stream_mib_s",
    "streams_client_cpu_pct",
    "streams_server_cpu_pct",
    "streams_server_total_cpu_pct",
    "streams_gain",
    "streams_gain_min",
    "streams_gain_max",
    "streams_gain_significant",
    "streams_note",
    "streams_error",
];

impl Exporter<BenchReport> for Csv {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record(HEAD.iter().chain(STREAMS_HEAD.iter()))?;
        for r in &report.results {
            let mut rec = row(r);
            rec.extend(streams(r.streams.as_ref()));
            w.write_record(&rec)?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}

fn figures(v: &[f64]) -> String {
    v.iter()
        .map(|s| format!("{s:.3}"))
        .collect::<Vec<_>>()
        .join(";")
}

fn row(r: &ResultRow) -> Vec<String> {
    vec![
        r.engine.clone(),
        r.cipher.clone(),
        r.mac.clone().unwrap_or_default(),
        r.grade.clone().unwrap_or_default(),
        r.direction.to_string(),
        r.bytes.to_string(),
        figures(&r.samples),
        figure(r.median_mib_s),
        figure(r.min_mib_s),
        figure(r.max_mib_s),
        figure(r.client_cpu_pct),
        figure(r.server_cpu_pct),
        figure(r.server_total_cpu_pct),
        r.verdict.map(|v| v.to_string()).unwrap_or_default(),
        r.error.clone().unwrap_or_default(),
    ]
}

/// The `streams_*` cells: empty for a row without them.
fn streams(s: Option<&Streams>) -> Vec<String> {
    let Some(s) = s else {
        return vec![String::new(); STREAMS_HEAD.len()];
    };
    let gain = s.gain.as_ref();
    vec![
        s.count.to_string(),
        figures(&s.samples),
        figure(s.median_mib_s),
        figure(s.min_mib_s),
        figure(s.max_mib_s),
        figures(&s.per_stream_mib_s),
        figure(s.client_cpu_pct),
        figure(s.server_cpu_pct),
        figure(s.server_total_cpu_pct),
        figure(gain.map(|g| g.median)),
        figure(gain.map(|g| g.min)),
        figure(gain.map(|g| g.max)),
        gain.map(|g| g.significant.to_string()).unwrap_or_default(),
        s.note.clone().unwrap_or_default(),
        s.error.clone().unwrap_or_default(),
    ]
}
