//! The storage page: the dm-crypt matrix as a heat map per layer — one row per cipher setting,
//! one column per test, each cell its median MiB/s coloured by its share of the unencrypted
//! baseline (the seed's "% of baseline" column, made visible).

use super::shell::{esc, list, page};
use super::svg;
use crate::report::storage::capabilities;
use crate::storage::model::{CellResult, StorageReport};
use crate::storage::plan::Layer;

pub fn storage(report: &StorageReport) -> String {
    let mut body = format!(
        "<h1>sshtune storage</h1>\n<p class=\"meta\">started {} · {} · kernel {}</p>\n",
        esc(&report.started),
        esc(&crate::report::machine::line(&report.machine)),
        esc(report.machine.kernel.as_deref().unwrap_or("?"))
    );
    match &report.matrix {
        None => body.push_str("<p>No matrix was measured.</p>\n"),
        Some(m) => {
            body.push_str("<p class=\"legend\"><span>cell: median MiB/s (% of the unencrypted baseline of the same layer and test)</span><span><i style=\"background:#e57373\"></i>far below</span><span><i style=\"background:#ffffff;border:1px solid #ccc\"></i>equal</span><span><i style=\"background:#a5d6a7\"></i>above</span></p>\n");
            let mut layers = Vec::new();
            for c in &m.cells {
                if !layers.contains(&c.layer) {
                    layers.push(c.layer);
                }
            }
            let columns: Vec<String> = m.tests.iter().map(|t| t.label.clone()).collect();
            for layer in layers {
                let rows: Vec<svg::HeatRow> = m
                    .cells
                    .iter()
                    .filter(|c| c.layer == layer)
                    .map(|c| {
                        let cells = m
                            .tests
                            .iter()
                            .map(|t| {
                                let r = c.result(t.test)?;
                                let med = r.median_mib_s?;
                                let pct = if c.cipher.is_none() {
                                    100.0
                                } else {
                                    r.pct_of_baseline?
                                };
                                Some((pct, format!("{med:.1} ({pct:.0}%)")))
                            })
                            .collect();
                        (row_label(c), cells)
                    })
                    .collect();
                body.push_str(&svg::heatmap(
                    &format!(
                        "{}: MiB/s and % of baseline",
                        match layer {
                            Layer::Raw => "Block device",
                            Layer::Ext4 => "File on ext4",
                        }
                    ),
                    &columns,
                    &rows,
                ));
            }
            let errors: Vec<String> = m
                .cells
                .iter()
                .filter_map(|c| Some(format!("{}: {}", row_label(c), c.error.as_ref()?)))
                .collect();
            body.push_str(&list("how warn", &errors));
            body.push_str("<h2>How these figures were obtained</h2>\n");
            let mut how = vec![format!(
                "Target: {} ({:.0} MiB); {} MiB per sequential test, fio runs up to {} s; {} samples per test (median shown); {:?} mapping; {} CPU-load threads{}.",
                m.target,
                m.target_bytes as f64 / 1048576.0,
                m.io_bytes / 1048576,
                m.fio_runtime_s,
                m.repeat,
                m.format,
                m.load_threads,
                if m.complete { "" } else { "; the run was interrupted, the matrix is incomplete" }
            )];
            how.extend(m.tests.iter().map(|t| format!("{}: {}", t.label, t.how)));
            body.push_str(&list("how", &how));
        }
    }
    body.push_str(&format!(
        "<h2>Machine</h2>\n<pre>{}</pre>\n",
        esc(&capabilities(report))
    ));
    body.push_str(&list("how", &report.ruled_out));
    body.push_str(&list("how warn", &report.warnings));
    page("sshtune storage", &body)
}

fn row_label(c: &CellResult) -> String {
    let mut s = c.label();
    if let Some(k) = c.key_bits {
        s.push_str(&format!(" {k}-bit"));
    }
    if let Some(ss) = c.sector_size {
        s.push_str(&format!(" {ss} B"));
    }
    if let Some(p) = c.perf {
        s.push_str(&format!(" {}", p.label()));
    }
    if let Some(a) = c.acc {
        s.push_str(&format!(" [{a}]"));
    }
    s
}
