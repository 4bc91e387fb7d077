//! Presentation of a pipeline report: table, JSON, CSV, Markdown. Nothing is computed here
//! that the report does not already hold.

use crate::pipeline::model::{CpuShare, PipelineReport, Row, StageCeiling};
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
        .find(|c| c.stage == "ssh" && c.cipher.as_deref() == Some(cipher))
}

fn cells(report: &PipelineReport, r: &Row) -> Vec<String> {
    let mut v = vec![
        r.cipher.clone(),
        r.variant.clone(),
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
        "{} runs per row; MiB/s: median (min–max) of dataset bytes ({}{}, {:.1} MiB in {} files) over the time from rsync's first progress line to its exit. CPU: % of one core, averaged over the row's runs.",
        report.settings.repeat,
        report.dataset.kind,
        report.dataset.source.as_deref().map(|s| format!(" {s}")).unwrap_or_default(),
        report.dataset.bytes as f64 / 1048576.0,
        report.dataset.files
    )];
    for c in report.ceilings.iter().filter(|c| c.stage != "ssh") {
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
        v.variant.as_deref().unwrap_or("-"),
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
    let mut s = format!("rsync over SSH to {}\n{t}\n", report.destination);
    for l in summary(report) {
        s.push_str(&l);
        s.push('\n');
    }
    s
}

pub(crate) fn markdown(report: &PipelineReport) -> String {
    let h = header();
    let mut s = format!(
        "## rsync over SSH to {}\n\n| {} |\n|{}\n",
        report.destination,
        h.join(" | "),
        "---|".repeat(h.len())
    );
    for r in &report.rows {
        s.push_str(&format!("| {} |\n", cells(report, r).join(" | ")));
    }
    s.push('\n');
    for l in summary(report) {
        s.push_str(&format!("- {l}\n"));
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
    w.write_record(&h)?;
    let f = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
    for r in &report.rows {
        let mut rec = vec![
            r.cipher.clone(),
            r.variant.clone(),
            r.bytes.to_string(),
            r.samples
                .iter()
                .map(|s| format!("{s:.3}"))
                .collect::<Vec<_>>()
                .join(" "),
            f(r.median_mib_s),
            f(r.min_mib_s),
            f(r.max_mib_s),
            f(ssh_for(report, &r.cipher).and_then(|c| c.median_mib_s)),
        ];
        for g in &groups {
            let (side, rest) = g.split_once('_').expect("side prefix");
            let name = rest.trim_end_matches("_pct");
            rec.push(f(share(&r.cpu, side, &[name])));
        }
        rec.push(r.error.clone().unwrap_or_default());
        w.write_record(&rec)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
