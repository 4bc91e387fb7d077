//! Presentation of a pipeline report: table, JSON, CSV, Markdown. Nothing is computed here
//! that the report does not already hold.

use super::cells::csv_figure;
use super::md_table::{markdown_table, Align};
use super::pipeline_jobs_csv as jobs_csv;
use crate::pipeline::model::{CpuShare, LuksSection, PipelineReport, Row, Stage, StageCeiling};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

/// Columns of the CPU breakdown: (header, side, groups summed).
pub(crate) const STAGES: &[(&str, &str, &[&str])] = &[
    ("rsync snd", "client", &["rsync-sender"]),
    ("ssh", "client", &["ssh"]),
    ("sshd", "server", &["sshd"]),
    ("rsync rcv", "server", &["rsync-receiver"]),
    ("dm-crypt", "server", &["kcryptd", "dmcrypt_write"]),
    ("irq", "server", &["irq", "ksoftirqd"]),
    ("iowait", "server", &["total-iowait"]),
];

pub(crate) fn share(cpu: &[CpuShare], side: &str, groups: &[&str]) -> Option<f64> {
    let v: Vec<f64> = cpu
        .iter()
        .filter(|s| s.side == side && groups.contains(&s.group.as_str()))
        .map(|s| s.pct)
        .collect();
    (!v.is_empty()).then(|| v.iter().fold(0.0, |a, b| a + b))
}

fn rate(r: &Row) -> String {
    match (&r.error, r.median_mib_s, r.min_mib_s, r.max_mib_s) {
        (Some(e), None, _, _) => format!("error: {e}"),
        (_, Some(m), Some(lo), Some(hi)) => format!("{m:.1} ({lo:.1}–{hi:.1})"),
        _ => "n/a".into(),
    }
}

fn ceiling_cell(c: Option<&StageCeiling>) -> String {
    match c {
        None => "-".into(),
        Some(c) => match (&c.error, c.median_mib_s, c.min_mib_s, c.max_mib_s) {
            (Some(e), _, _, _) => format!("error: {e}"),
            (None, Some(m), Some(lo), Some(hi)) => format!("{m:.1} ({lo:.1}–{hi:.1})"),
            _ => "n/a".into(),
        },
    }
}

fn ssh_for<'a>(report: &'a PipelineReport, cipher: &str) -> Option<&'a StageCeiling> {
    report
        .ceilings
        .iter()
        .find(|c| c.stage == Stage::Ssh && c.cipher.as_deref() == Some(cipher))
}

fn cells(report: &PipelineReport, r: &Row) -> Vec<String> {
    let mut v = vec![
        r.cipher.clone(),
        r.variant.to_string(),
        rate(r),
        ceiling_cell(ssh_for(report, &r.cipher)),
    ];
    for (_, side, groups) in STAGES {
        v.push(share(&r.cpu, side, groups).map_or("?".into(), |p| format!("{p:.0}")));
    }
    v
}

fn header() -> Vec<String> {
    let mut h: Vec<String> = ["cipher", "variant", "MiB/s", "SSH-only MiB/s"]
        .map(String::from)
        .to_vec();
    h.extend(STAGES.iter().map(|(n, _, _)| format!("{n} %")));
    h
}

fn summary(report: &PipelineReport) -> Vec<String> {
    let mut out = vec![format!(
        "{} runs per row; MiB/s: median (min–max) of dataset bytes ({}{}, {:.1} MiB in {} files) over the time from rsync's first progress line to the end of the destination's flush (`sync -f`) after rsync exits. CPU: % of one core, averaged over the row's runs.",
        report.settings.repeat,
        report.dataset.kind,
        report.dataset.source.as_deref().map(|s| format!(" {s}")).unwrap_or_default(),
        report.dataset.bytes as f64 / 1048576.0,
        report.dataset.files
    )];
    for c in report.ceilings.iter().filter(|c| c.stage != Stage::Ssh) {
        out.push(format!(
            "Stage ceiling {}: {} MiB/s — {}",
            c.stage,
            ceiling_cell(Some(c)),
            c.method
        ));
    }
    let s = &report.storage;
    out.push(format!(
        "Destination: {} on {} ({}){}",
        report.remote_dir,
        s.device.as_deref().unwrap_or("?"),
        s.fstype.as_deref().unwrap_or("?"),
        match &s.dm_name {
            Some(n) => format!(
                ", dm-crypt mapping {n} ({}, {}), cipher {}, sector {}, flags [{}]",
                s.dm_device.as_deref().unwrap_or("?"),
                s.device.as_deref().unwrap_or("?"),
                s.crypt_cipher.as_deref().unwrap_or("?"),
                s.sector_size.map_or("?".into(), |x| x.to_string()),
                s.crypt_flags.join(",")
            ),
            None => ", no dm-crypt under it".into(),
        }
    ));
    let v = &report.verdict;
    out.push(format!(
        "Verdict ({} {}, {} MiB/s): bound by {} — {}",
        v.cipher.as_deref().unwrap_or("-"),
        v.variant.map_or("-", |v| v.as_str()),
        v.end_to_end_mib_s.map_or("?".into(), |m| format!("{m:.1}")),
        v.bound_by,
        v.reason
    ));
    for (i, s) in v.suggestions.iter().enumerate() {
        let gain = match (s.expected_mib_s, s.gain_pct) {
            (Some(e), Some(g)) => format!("→ {e:.1} MiB/s ({g:+.0}%, {})", s.basis),
            _ => format!("(gain {})", s.basis),
        };
        out.push(format!("  {}. {} {gain}: {}", i + 1, s.change, s.why));
    }
    if v.suggestions.is_empty() {
        out.push("  No change measured in this run would help.".into());
    }
    let cipher = v.cipher.as_deref();
    out.extend(
        crate::pipeline::jobs_gain::no_gain(report.jobs.as_ref(), cipher).map(|l| format!("  {l}")),
    );
    out.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
    out
}

pub(crate) fn table(report: &PipelineReport) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(header());
    super::terminal::fit(&mut t);
    for r in &report.rows {
        t.add_row(cells(report, r));
    }
    super::terminal::keep_words(&mut t, &[9, 10, 8, 7, 4, 6, 5]);
    let mut s = format!("rsync over SSH to {}\n", report.destination);
    for l in super::machine::both(&report.client, &report.server) {
        s.push_str(&l);
        s.push('\n');
    }
    s.push_str(&format!("{t}\n"));
    for l in summary(report) {
        s.push_str(&l);
        s.push('\n');
    }
    s.push_str(&super::pipeline_jobs::table(report).unwrap_or_default());
    if let Some(l) = &report.luks {
        for (title, head, rows) in luks_tables(l) {
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED).set_header(head);
            super::terminal::fit(&mut t);
            for r in rows {
                t.add_row(r);
            }
            super::terminal::keep_words(&mut t, &[]);
            s.push_str(&format!("\n{title}\n{t}\n"));
        }
        for l in luks_summary(l) {
            s.push_str(&l);
            s.push('\n');
        }
    }
    s
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.digits$}"))
}

/// The LUKS part as tables: (title, header, rows) — the settings with their dm-crypt pass,
/// the stages alone, and the matrix with the bound, the model and the CPU split per cell.
pub(crate) fn luks_tables(l: &LuksSection) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let settings = l
        .settings
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                format!(
                    "{} {}b {}B{}",
                    s.cipher,
                    s.key_bits,
                    s.sector_size,
                    if s.flags.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", s.flags.join("+"))
                    }
                ),
                opt(s.dm_crypt_mib_s, 1),
                opt(s.dm_cpu_s_per_mib.map(|c| c * 1000.0), 1),
                opt(s.predicted_best_mib_s, 1),
                match (&s.error, &s.trimmed) {
                    (Some(e), _) => format!("error: {e}"),
                    (None, Some(t)) => format!("trimmed: {t}"),
                    _ => "run end to end".into(),
                },
            ]
        })
        .collect();
    let alone = l
        .alone
        .iter()
        .map(|a| {
            vec![
                match (&a.cipher, &a.setting) {
                    (Some(c), Some(st)) => format!("{} {c}, beside {st}'s cells", a.stage),
                    (Some(c), None) => format!("{} {c}", a.stage),
                    (None, _) => a.stage.to_string(),
                },
                a.error
                    .clone()
                    .map_or_else(|| opt(a.mib_s, 1), |e| format!("error: {e}")),
                opt(a.cpu_s_per_mib.map(|c| c * 1000.0), 1),
            ]
        })
        .collect();
    let cells = l
        .cells
        .iter()
        .map(|c| {
            let mut r = vec![
                c.setting.clone(),
                c.row.cipher.clone(),
                format!("{} n={}", rate(&c.row), c.row.samples.len()),
                opt(c.predicted_mib_s, 1),
                c.error_pct
                    .map_or_else(|| "–".into(), |e| format!("{e:+.0}%")),
                c.bound_by.clone(),
            ];
            for (_, side, groups) in STAGES.iter().filter(|(h, ..)| *h != "iowait") {
                r.push(opt(share(&c.row.cpu, side, groups), 0));
            }
            r
        })
        .collect();
    let mut cell_head: Vec<String> = ["LUKS", "cipher", "MiB/s", "model", "error", "bound"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    cell_head.extend(
        STAGES
            .iter()
            .filter(|(h, ..)| *h != "iowait")
            .map(|(h, ..)| format!("{h} %")),
    );
    let strs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (
            format!(
                "LUKS settings (scratch LUKS2 on a {:.0} MiB loop file; dm-crypt pass: {} MiB written into ext4, then synced)",
                l.loop_file_bytes as f64 / 1048576.0,
                l.pass_bytes >> 20
            ),
            strs(&["name", "setting", "dm-crypt MiB/s", "CPU ms/MiB", "model best", "status"]),
            settings,
        ),
        (
            "Stages alone (the model's inputs)".into(),
            strs(&["stage", "MiB/s", "CPU ms/MiB"]),
            alone,
        ),
        (
            format!(
                "SSH cipher × LUKS setting, end to end (rsync --whole-file; CPU in % of one core){}",
                if l.partial.is_some() { " — PARTIAL: interrupted, the cells measured so far" } else { "" }
            ),
            cell_head,
            cells,
        ),
    ]
}

/// The matrix's time against its estimate and budget, and its fixed costs.
fn timing(t: &crate::pipeline::model::LuksTiming) -> String {
    let secs = |v: Option<f64>| v.map_or_else(|| "–".into(), |v| format!("{v:.1} s"));
    format!(
        "Time: matrix {} (estimated {}{}); fixed costs: a volume {}, a login {}, a copy beyond its data {}.",
        secs(t.matrix_s),
        secs(t.estimate_s),
        t.max_time_s
            .map(|m| format!(", --max-time {m:.0} s"))
            .unwrap_or_default(),
        secs(t.volume_s),
        secs(t.login_s),
        secs(t.copy_fixed_s)
    )
}

pub(crate) fn luks_summary(l: &LuksSection) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = &l.partial {
        out.push(format!("PARTIAL: {p}."));
    }
    if let Some((why, what)) = l.left_out.split_first() {
        out.push(format!("LEFT OUT ({why}): {}.", what.join("; ")));
    }
    if let Some(t) = &l.timing {
        out.push(timing(t));
    }
    out.extend(
        l.stale_removed
            .iter()
            .map(|s| format!("before the run: {s}")),
    );
    if let Some(e) = l.model_max_error_pct {
        let base = match l.baseline_cores {
            Some(b) => format!(
                "; each stage alone net of the {:.0}% of a core the machine takes with only the samplers running, dm-crypt's cost from its own threads",
                b * 100.0
            ),
            None => String::new(),
        };
        out.push(format!(
            "Model: the stages' times alone added up (beside the samplers they take turns), or their summed CPU cost over the free cores when longer{base}; error per cell in the matrix's error column, median {}, largest {e:.0}%.",
            l.model_median_error_pct.map_or_else(|| "–".into(), |m| format!("{m:.0}%"))
        ));
    }
    match &l.recommendation {
        Some(r) => {
            out.push(format!(
                "Recommended: ssh cipher {} onto LUKS setting {}: {:.1} MiB/s{}.",
                r.cipher,
                r.setting,
                r.mib_s,
                match (&r.today_cipher, &r.today_setting, r.today_mib_s, r.gain_pct) {
                    (Some(c), Some(s), Some(m), Some(g)) =>
                        format!(" ({g:+.0}% over today's {c} onto {s}, {m:.1} MiB/s, measured)"),
                    _ => String::new(),
                }
            ));
            let parts = [
                ("cipher change alone (today's LUKS setting)", &r.cipher_only),
                ("LUKS change alone (today's cipher)", &r.luks_only),
                ("both", &r.both),
            ];
            for (what, o) in parts {
                if let Some(o) = o {
                    out.push(format!(
                        "  {what}: {}",
                        crate::pipeline::luks::split::describe(o)
                    ));
                }
            }
            out.push(format!("  client (~/.ssh/config): {}", r.client_line));
            out.push(format!(
                "  server: {}",
                r.sshd_dropin.replace('\n', "\n          ")
            ));
            if let Some(c) = &r.luks_command {
                out.push(format!("  LUKS: {c}"));
            }
            out.push(format!("  LUKS: {}", r.luks_note));
        }
        None => out.push("No LUKS cell with a safe cipher was measured: no recommendation.".into()),
    }
    out
}

pub(crate) fn markdown(report: &PipelineReport) -> String {
    let h = header();
    let [client, server] = super::machine::both(&report.client, &report.server);
    let rows: Vec<Vec<String>> = report.rows.iter().map(|r| cells(report, r)).collect();
    let mut s = format!(
        "## rsync over SSH to {}\n\n{client}  \n{server}\n\n{}",
        report.destination,
        markdown_table(&h, &rows, |_| Align::Left)
    );
    s.push('\n');
    for l in summary(report) {
        s.push_str(&format!("- {l}\n"));
    }
    s.push_str(&super::pipeline_jobs::markdown(report).unwrap_or_default());
    if let Some(l) = &report.luks {
        for (title, head, rows) in luks_tables(l) {
            s.push_str(&format!(
                "\n### {title}\n\n{}",
                markdown_table(&head, &rows, |_| Align::Left)
            ));
        }
        s.push('\n');
        for l in luks_summary(l) {
            s.push_str(&format!("- {}\n", l.trim_start()));
        }
    }
    s
}

pub(crate) fn csv(report: &PipelineReport) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut h = vec![
        "cipher",
        "variant",
        "bytes",
        "samples_mib_s",
        "median_mib_s",
        "min_mib_s",
        "max_mib_s",
        "ssh_only_mib_s",
    ];
    let groups: Vec<String> = ["client", "server"]
        .iter()
        .flat_map(|side| {
            crate::pipeline::sampler::groups(if *side == "client" {
                crate::pipeline::sampler::Side::Client
            } else {
                crate::pipeline::sampler::Side::Server
            })
            .iter()
            .chain(crate::pipeline::sampler::TOTALS)
            .map(move |g| format!("{side}_{g}_pct"))
        })
        .collect();
    h.extend(groups.iter().map(String::as_str));
    h.push("error");
    let luks = report.luks.as_ref();
    if luks.is_some() {
        h.extend([
            "luks_setting",
            "predicted_mib_s",
            "model_error_pct",
            "bound_by",
        ]);
    }
    let jobs = report.jobs.as_ref();
    if jobs.is_some() {
        h.extend(jobs_csv::HEAD);
    }
    w.write_record(&h)?;
    let one = || jobs.map(|_| jobs_csv::one()).unwrap_or_default();
    let no_luks = || vec![String::new(); if luks.is_some() { 4 } else { 0 }];
    for r in &report.rows {
        let ssh = ssh_for(report, &r.cipher).and_then(|c| c.median_mib_s);
        let mut rec = csv_record(r, ssh, &groups);
        rec.extend(no_luks());
        rec.extend(one());
        w.write_record(&rec)?;
    }
    for c in luks.map(|l| l.cells.as_slice()).unwrap_or_default() {
        let mut rec = csv_record(&c.row, None, &groups);
        rec.extend([
            c.setting.clone(),
            csv_figure(c.predicted_mib_s),
            csv_figure(c.error_pct),
            c.bound_by.clone(),
        ]);
        rec.extend(one());
        w.write_record(&rec)?;
    }
    for (r, cells) in jobs.map(jobs_csv::lines).unwrap_or_default() {
        let ssh = ssh_for(report, &r.cipher).and_then(|c| c.median_mib_s);
        let mut rec = csv_record(&r, ssh, &groups);
        rec.extend(no_luks());
        rec.extend(cells);
        w.write_record(&rec)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// One rsync run's CSV columns up to `error` (the LUKS columns are the caller's).
fn csv_record(r: &Row, ssh_only: Option<f64>, groups: &[String]) -> Vec<String> {
    let mut rec = vec![
        r.cipher.clone(),
        r.variant.to_string(),
        r.bytes.to_string(),
        r.samples
            .iter()
            .map(|s| format!("{s:.3}"))
            .collect::<Vec<_>>()
            .join(" "),
        csv_figure(r.median_mib_s),
        csv_figure(r.min_mib_s),
        csv_figure(r.max_mib_s),
        csv_figure(ssh_only),
    ];
    for g in groups {
        let (side, rest) = g.split_once('_').expect("side prefix");
        let name = rest.trim_end_matches("_pct");
        rec.push(csv_figure(share(&r.cpu, side, &[name])));
    }
    rec.push(r.error.clone().unwrap_or_default());
    rec
}
