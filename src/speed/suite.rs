//! One speed run: the rows the options ask for, each timed on every backend beside
//! `openssl speed` of the same primitive, into a `SpeedReport`.

use super::measure;
use super::model::{self, Reference, RowKind, Settings, SpeedReport, SpeedRow, Stats};
use super::options::{BackendChoice, Options};
use super::reference::{self, Primitive, References};
use super::subject::{Subject, PACKET_BYTES};
use crate::process;
use crate::progress::Progress;
use crate::sysinfo;
use anyhow::{bail, Context, Result};
use ciphers::{Backend, CipherKind, CipherSpec, MacSpec, CIPHERS, MACS};

/// The MAC pairs use when none is named: OpenSSH's first preference.
const DEFAULT_PAIR_MAC: &str = "umac-64-etm@openssh.com";

/// The `openssl speed` reference: one run of one second per primitive (`-seconds` takes whole
/// seconds), so the reference column costs a second a row instead of `--samples` times
/// `--min-time`.
const REFERENCE_SECONDS: f64 = 1.0;
const REFERENCE_RUNS: u32 = 1;

fn pick<T: Copy>(
    names: &[String],
    all: &'static [T],
    name_of: fn(&T) -> &'static str,
    what: &str,
) -> Result<Vec<&'static T>> {
    if names.is_empty() {
        return Ok(all.iter().collect());
    }
    names
        .iter()
        .map(|n| {
            all.iter().find(|x| name_of(x) == n).ok_or_else(|| {
                let known: Vec<_> = all.iter().map(name_of).collect();
                anyhow::anyhow!("unknown {what} {n:?} (known: {})", known.join(", "))
            })
        })
        .collect()
}

/// Every row to measure, in presentation order.
pub fn subjects(opts: &Options) -> Result<Vec<Subject>> {
    let ciphers = pick(&opts.ciphers, CIPHERS, |c: &CipherSpec| c.name, "cipher")?;
    let macs = pick(&opts.macs, MACS, |m: &MacSpec| m.name, "MAC")?;
    let pair_macs = if opts.macs.is_empty() {
        vec![ciphers::mac(DEFAULT_PAIR_MAC).context("default pair MAC missing from catalog")?]
    } else {
        macs.clone()
    };
    let want = |k: RowKind| opts.rows.is_empty() || opts.rows.contains(&k);
    let mut out = Vec::new();
    if want(RowKind::Cipher) {
        out.extend(ciphers.iter().map(|c| Subject::Cipher(c)));
    }
    if want(RowKind::Mac) {
        out.extend(macs.iter().map(|m| Subject::Mac(m)));
    }
    if want(RowKind::Pair) {
        for c in ciphers
            .iter()
            .filter(|c| !c.is_aead() && c.kind != CipherKind::None)
        {
            out.extend(pair_macs.iter().map(|m| Subject::Pair(c, m)));
        }
    }
    if out.is_empty() {
        bail!("nothing to measure: the filters leave no rows");
    }
    Ok(out)
}

/// The backends to measure, and for `both` a warning naming any this build lacks. Asking for a
/// missing backend alone is an error before anything runs.
fn backends(c: BackendChoice) -> Result<(Vec<Backend>, Option<String>)> {
    let only = |b: Backend| {
        if b.is_available() {
            Ok((vec![b], None))
        } else {
            Err(ciphers::Error::BackendUnavailable(b.as_str()).into())
        }
    };
    match c {
        BackendChoice::Openssl => only(Backend::Openssl),
        BackendChoice::Rust => only(Backend::Rust),
        BackendChoice::Both => {
            let missing: Vec<String> = Backend::ALL
                .iter()
                .filter(|b| !b.is_available())
                .map(|b| {
                    format!("the {b} backend is not in this build (no `{b}` feature): not measured")
                })
                .collect();
            Ok((
                Backend::AVAILABLE.to_vec(),
                (!missing.is_empty()).then(|| missing.join("; ")),
            ))
        }
    }
}

/// `openssl speed` of the same primitive, or why there is none.
fn reference_for(s: &Subject) -> std::result::Result<Primitive, String> {
    match *s {
        Subject::Cipher(c) => match c.openssl_evp {
            Some(name) => Ok(Primitive::Evp {
                name: name.to_string(),
                legacy: c.primitive.needs_legacy_provider(),
            }),
            None => Err("no encryption: nothing to compare".into()),
        },
        Subject::Mac(m) => match m.openssl_digest() {
            Some(d) => Ok(Primitive::Hmac(d.to_string())),
            None => Err("openssl has no UMAC: compare with the hmac-sha2-256 rows".into()),
        },
        Subject::Pair(..) => Err("no single openssl primitive for a cipher+MAC pair".into()),
    }
}

fn row_base(s: &Subject, backend: Backend) -> SpeedRow {
    let (kind, grade, default_backend) = match *s {
        Subject::Cipher(c) => (RowKind::Cipher, c.grade, c.default_backend() == backend),
        Subject::Mac(m) => (RowKind::Mac, m.grade, m.default_backend() == backend),
        Subject::Pair(c, m) => (
            RowKind::Pair,
            ciphers::pair_grade(c, Some(m)),
            c.default_backend() == backend && m.default_backend() == backend,
        ),
    };
    SpeedRow {
        kind,
        cipher: s.cipher().map(|c| c.name.to_string()),
        mac: s.mac().map(|m| m.name.to_string()),
        grade: grade.to_string(),
        backend: backend.to_string(),
        default_backend,
        stats: None,
        sample_cpu_s: Vec::new(),
        cpu_share: None,
        reference: None,
        reference_note: None,
        ratio: None,
        error: None,
    }
}

fn label(s: &Subject) -> String {
    match (s.cipher(), s.mac()) {
        (Some(c), Some(m)) => format!("{} + {}", c.name, m.name),
        (Some(c), None) => c.name.to_string(),
        (None, Some(m)) => m.name.to_string(),
        (None, None) => String::new(),
    }
}

/// Measures every row and returns the report without presenting it.
pub fn run(opts: &Options, progress: &dyn Progress) -> Result<SpeedReport> {
    process::install_signal_handlers()?;
    let started = chrono::Local::now().to_rfc3339();
    let subjects = subjects(opts)?;
    let (backends, missing_backend) = backends(opts.backends)?;
    let openssl = if opts.reference {
        reference::probe()
    } else {
        model::OpensslInfo {
            available: false,
            version: None,
            note: Some("reference skipped (--no-reference)".into()),
        }
    };
    progress.begin((subjects.len() * backends.len()) as u64);
    let mut refs = References::default();
    let mut rows = Vec::new();
    let mut warnings: Vec<String> = missing_backend.into_iter().collect();
    for s in &subjects {
        let reference = match (reference_for(s), &openssl.note) {
            (Err(why), _) => Err(why),
            (Ok(_), Some(note)) => Err(note.clone()),
            (Ok(p), None) => {
                progress.status(&format!("openssl speed: {}", label(s)));
                refs.get(&p, REFERENCE_SECONDS, REFERENCE_RUNS)
            }
        };
        for &backend in &backends {
            process::check_interrupted()?;
            progress.status(&format!("{} ({backend})", label(s)));
            let row = measure_row(s, backend, opts, &reference)?;
            progress.step(&row_line(&label(s), backend, &row));
            rows.push(row);
        }
    }
    progress.finish();
    warnings.extend(busy_warning(&rows));
    Ok(SpeedReport {
        schema: model::SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started,
        machine: sysinfo::local(),
        settings: Settings {
            packet_bytes: PACKET_BYTES,
            min_time_s: opts.min_time_s,
            samples: opts.repeat,
            crypto: backends.iter().map(|b| b.to_string()).collect(),
            clock: "thread-cpu".into(),
        },
        openssl,
        rows,
        warnings,
        backend_choice: Some(super::backends::this_cpu()),
    })
}

/// One row: its samples on `backend`, or the error that stopped them, beside the reference.
fn measure_row(
    s: &Subject,
    backend: Backend,
    opts: &Options,
    reference: &std::result::Result<Reference, String>,
) -> Result<SpeedRow> {
    let mut row = row_base(s, backend);
    let timed = s
        .op(backend)
        .and_then(|mut op| measure::run_adaptive(&mut op, opts.min_time_s, opts.repeat));
    match timed {
        Ok(samples) => {
            let mib: Vec<f64> = samples.iter().map(|x| x.mib_s()).collect();
            let share: Vec<f64> = samples.iter().map(|x| x.cpu_share()).collect();
            row.cpu_share = crate::stats::median(&share);
            row.sample_cpu_s = samples.iter().map(|x| x.cpu_s).collect();
            row.stats = Stats::from_samples(mib);
        }
        Err(e) => {
            if e.downcast_ref::<process::Interrupted>().is_some() {
                return Err(e);
            }
            row.error = Some(format!("{e:#}"));
        }
    }
    match reference {
        Ok(r) => {
            row.ratio = row
                .stats
                .as_ref()
                .map(|s| s.median_mib_s / r.stats.median_mib_s);
            row.reference = Some(r.clone());
        }
        Err(why) => row.reference_note = Some(why.clone()),
    }
    Ok(row)
}

/// A warning when the measuring thread got less than most of a core.
fn busy_warning(rows: &[SpeedRow]) -> Option<String> {
    let busy = rows
        .iter()
        .filter_map(|r| r.cpu_share)
        .fold(f64::INFINITY, f64::min);
    (busy < 0.8).then(|| {
        format!(
            "the machine was busy: the measuring thread got as little as {:.0}% of a core; \
             figures are per CPU-second (as openssl speed counts), but caches and turbo were shared",
            busy * 100.0
        )
    })
}

/// `aes128-ctr (openssl): 4012.5 MiB/s, 0.93× openssl speed`, or the row's error.
fn row_line(label: &str, backend: impl std::fmt::Display, row: &SpeedRow) -> String {
    match (&row.error, &row.stats) {
        (Some(e), _) => format!("{label} ({backend}): {e}"),
        (None, Some(st)) => match row.ratio {
            Some(r) => format!(
                "{label} ({backend}): {:.1} MiB/s, {r:.2}× openssl speed",
                st.median_mib_s
            ),
            None => format!("{label} ({backend}): {:.1} MiB/s", st.median_mib_s),
        },
        (None, None) => format!("{label} ({backend}): no result"),
    }
}
