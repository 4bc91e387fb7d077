//! Presentation of a storage report: tables in the seed's shape (one per layer, an `acc`
//! column, MiB/s with % of the unencrypted baseline), Markdown, CSV and JSON.

use crate::storage::model::{CellResult, MatrixResult, StorageReport, TestResult};
use crate::storage::plan::{Layer, Test};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "NO"
    }
}

/// Capabilities and what they rule out, as plain lines.
pub fn capabilities(r: &StorageReport) -> String {
    let c = &r.capabilities;
    let mut out = String::from("Capabilities:\n");
    out.push_str(&format!("  root: {}\n", yes(c.root)));
    out.push_str(&format!(
        "  device-mapper: {}\n",
        if c.device_mapper {
            "yes"
        } else {
            "NO (no device-mapper: /dev/mapper/control missing)"
        }
    ));
    out.push_str(&format!("  dm-crypt target: {}\n", yes(c.crypt_target)));
    out.push_str(&format!("  loop devices: {}\n", yes(c.loop_devices)));
    out.push_str(&format!(
        "  AF_ALG (kernel crypto user API): {}\n",
        yes(c.af_alg)
    ));
    let tools: Vec<String> = c
        .tools
        .iter()
        .map(|t| {
            format!(
                "{} {}",
                t.name,
                if t.path.is_some() { "ok" } else { "MISSING" }
            )
        })
        .collect();
    out.push_str(&format!("  tools: {}\n", tools.join(", ")));
    for d in &c.drivers {
        out.push_str(&format!(
            "  driver for {}: {} [{}] ({})\n",
            d.spec,
            d.driver.as_deref().unwrap_or("none"),
            d.class,
            d.basis
        ));
    }
    if !r.ruled_out.is_empty() {
        out.push_str("Ruled out here:\n");
        for l in &r.ruled_out {
            out.push_str(&format!("  - {l}\n"));
        }
    }
    for l in &r.stale_cleanup {
        out.push_str(&format!("Stale from an earlier run: {l}\n"));
    }
    out
}

fn table(md: bool) -> Table {
    let mut t = Table::new();
    if md {
        t.load_preset(comfy_table::presets::ASCII_MARKDOWN);
    } else {
        t.load_preset(UTF8_FULL_CONDENSED);
        super::terminal::fit(&mut t);
    }
    t
}

/// A terminal table keeps its words whole (`terminal::keep_words`); Markdown is not wrapped.
fn whole_words(t: &mut Table, md: bool, expendable: &[usize]) {
    if !md {
        super::terminal::keep_words(t, expendable);
    }
}

/// The table (or Markdown) a person reads.
pub(crate) fn text(r: &StorageReport, md: bool) -> String {
    let mut out = format!(
        "sshtune storage ({})\n{}\n",
        r.schema,
        super::machine::line(&r.machine)
    );
    if md {
        out.push('\n');
    }
    out.push_str(&capabilities(r));
    out.push('\n');
    match (&r.kernel_speed, &r.kernel_speed_error) {
        (Some(k), _) => {
            out.push_str(&format!("Cipher speed: {}\n", k.method));
            let mut t = table(md);
            t.set_header(vec![
                "algorithm",
                "key",
                "encryption MiB/s",
                "decryption MiB/s",
                "samples",
                "note",
            ]);
            for row in &k.rows {
                let f = |v: Option<f64>, range: Option<(f64, f64)>| match (v, range) {
                    (Some(v), Some((lo, hi))) if row.samples > 1 => {
                        format!("{v:.1} ({lo:.1}–{hi:.1})")
                    }
                    (Some(v), _) => format!("{v:.1}"),
                    (None, _) => "N/A".into(),
                };
                t.add_row(vec![
                    row.cipher.clone(),
                    format!("{}b", row.key_bits),
                    f(row.encrypt_mib_s, row.encrypt_range),
                    f(row.decrypt_mib_s, row.decrypt_range),
                    row.samples.to_string(),
                    row.note.clone().unwrap_or_default(),
                ]);
            }
            whole_words(&mut t, md, &[3, 4]);
            out.push_str(&format!("{t}\n\n"));
        }
        (None, Some(e)) => out.push_str(&format!("Cipher speed: not measured: {e}\n\n")),
        (None, None) => {}
    }
    if let Some(m) = &r.matrix {
        out.push_str(&matrix(m, md));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

fn cell_text(r: Option<&TestResult>) -> String {
    match r {
        None => "-".into(),
        Some(r) => match (r.median_mib_s, &r.error) {
            (Some(m), _) => match r.pct_of_baseline {
                Some(p) => format!("{m:.1} ({p:.0}%)"),
                None => format!("{m:.1}"),
            },
            (None, Some(_)) => "error".into(),
            _ => "-".into(),
        },
    }
}

fn matrix(m: &MatrixResult, md: bool) -> String {
    let mut out = format!(
        "dm-crypt matrix ({:?} preset) on {}, {} MiB per sequential test, fio capped at {} s, \
         {} sample(s) per figure, {} CPU-load thread(s), {} mode\n",
        m.preset,
        m.target,
        m.io_bytes >> 20,
        m.fio_runtime_s,
        m.repeat,
        m.load_threads,
        match m.format {
            crate::storage::dmcrypt::VolumeFormat::Plain => "plain (no header)",
            crate::storage::dmcrypt::VolumeFormat::Luks2 => "LUKS2",
        }
    );
    out.push_str("MiB/s (median); in brackets: % of the same test without encryption.\n\n");
    for layer in [Layer::Raw, Layer::Ext4] {
        let cells: Vec<&CellResult> = m.cells.iter().filter(|c| c.layer == layer).collect();
        if cells.is_empty() {
            continue;
        }
        let tests: Vec<Test> = m
            .tests
            .iter()
            .map(|t| t.test)
            .filter(|t| t.applies_to(layer))
            .collect();
        out.push_str(match layer {
            Layer::Raw => "Block device\n",
            Layer::Ext4 => "EXT4\n",
        });
        let mut t = table(md);
        let mut header = vec![
            "cipher".to_string(),
            "key".into(),
            "sector".into(),
            "flags".into(),
            "acc".into(),
        ];
        header.extend(tests.iter().map(|x| x.label().to_string()));
        t.set_header(header);
        for c in &cells {
            let mut row = vec![
                c.label(),
                c.key_bits.map(|k| format!("{k}b")).unwrap_or_default(),
                c.sector_size.map(|s| s.to_string()).unwrap_or_default(),
                c.perf.map(|p| p.label().to_string()).unwrap_or_default(),
                c.acc.map(|a| a.label().to_string()).unwrap_or_default(),
            ];
            row.extend(tests.iter().map(|x| cell_text(c.result(*x))));
            t.add_row(row);
        }
        // The accelerator class, the flags and the sector size go before a word would split.
        whole_words(&mut t, md, &[4, 3, 2]);
        out.push_str(&format!("{t}\n"));
        for c in &cells {
            if let Some(e) = &c.error {
                out.push_str(&format!("  {}: {e}\n", c.label()));
            }
            for r in c.results.iter().filter(|r| r.error.is_some()) {
                out.push_str(&format!(
                    "  {} {}: {}\n",
                    c.label(),
                    r.test.label(),
                    r.error.as_deref().unwrap_or("")
                ));
            }
        }
        out.push('\n');
    }
    out.push_str("How each column is measured:\n");
    for t in &m.tests {
        out.push_str(&format!("  {}: {}\n", t.label, t.how));
    }
    out.push_str("  acc: class of the kernel driver /proc/crypto shows for the cipher once mapped (offload engine, CPU instructions, generic C).\n");
    if !m.complete {
        out.push_str("warning: the run was interrupted; the matrix is incomplete\n");
    }
    out
}

pub(crate) fn csv(r: &StorageReport) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "layer",
        "cipher",
        "key_bits",
        "sector_size",
        "perf",
        "acc",
        "driver",
        "test",
        "samples_mib_s",
        "median_mib_s",
        "min_mib_s",
        "max_mib_s",
        "pct_of_baseline",
        "fio_read_mib_s",
        "fio_write_mib_s",
        "fio_read_iops",
        "fio_write_iops",
        "error",
    ])?;
    let f = super::cells::csv_figure;
    if let Some(m) = &r.matrix {
        for c in &m.cells {
            let base = |test: String, t: Option<&TestResult>| -> Vec<String> {
                vec![
                    format!("{:?}", c.layer).to_lowercase(),
                    c.cipher.clone().unwrap_or_else(|| "none".into()),
                    c.key_bits.map(|k| k.to_string()).unwrap_or_default(),
                    c.sector_size.map(|k| k.to_string()).unwrap_or_default(),
                    c.perf.map(|p| p.label().to_string()).unwrap_or_default(),
                    c.acc.map(|a| a.label().to_string()).unwrap_or_default(),
                    c.driver.clone().unwrap_or_default(),
                    test,
                    t.map(|t| {
                        t.samples_mib_s
                            .iter()
                            .map(|s| format!("{s:.3}"))
                            .collect::<Vec<_>>()
                            .join(";")
                    })
                    .unwrap_or_default(),
                    f(t.and_then(|t| t.median_mib_s)),
                    f(t.and_then(|t| t.min_mib_s)),
                    f(t.and_then(|t| t.max_mib_s)),
                    f(t.and_then(|t| t.pct_of_baseline)),
                    f(t.and_then(|t| t.fio.as_ref().map(|x| x.read_mib_s))),
                    f(t.and_then(|t| t.fio.as_ref().map(|x| x.write_mib_s))),
                    f(t.and_then(|t| t.fio.as_ref().map(|x| x.read_iops))),
                    f(t.and_then(|t| t.fio.as_ref().map(|x| x.write_iops))),
                    t.and_then(|t| t.error.clone())
                        .or_else(|| c.error.clone())
                        .unwrap_or_default(),
                ]
            };
            if c.results.is_empty() {
                w.write_record(base(String::new(), None))?;
            }
            for t in &c.results {
                w.write_record(base(t.test.id().to_string(), Some(t)))?;
            }
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
