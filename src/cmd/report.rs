//! `sshtune report`: read saved reports, render one in the asked format, or compare several of
//! one kind (and, with `--fail-on-drop`, fail on a significant drop). Nothing is measured.

use crate::cli::ReportArgs;
use crate::exit::{PolicyFailure, UsageError};
use crate::report::compare::{self, drops, Comparison};
use crate::report::load::{self, Loaded};
use crate::report::Format;
use anyhow::Result;

pub fn run(args: ReportArgs) -> Result<()> {
    let outputs = args.out.plan()?;
    let mut reports: Vec<(String, Loaded)> = Vec::new();
    for f in &args.files {
        reports.push((f.display().to_string(), load::load(f)?));
    }
    check_labels(&reports, &args)?;
    let comparison = if is_comparison(&reports, &args) {
        Some(comparison(&reports, &args)?)
    } else if args.fail_on_drop.is_some() {
        return Err(UsageError(
            "--fail-on-drop compares runs: give two or more reports of one kind (--compare for \
             bench reports of different hosts)"
                .into(),
        )
        .into());
    } else {
        None
    };
    outputs.write(|format| match &comparison {
        Some(c) => compare::render::render(c, format),
        None => render_one(&reports, format),
    })?;
    match (args.fail_on_drop, &comparison) {
        (Some(threshold), Some(c)) => fail_on_drop(c, threshold),
        _ => Ok(()),
    }
}

fn check_labels(reports: &[(String, Loaded)], args: &ReportArgs) -> Result<()> {
    if args.label.len() > reports.len() {
        return Err(UsageError(format!(
            "{} --label for {} file(s)",
            args.label.len(),
            reports.len()
        ))
        .into());
    }
    Ok(())
}

/// Several reports, and not bench reports of several hosts (the fleet table) unless asked.
fn is_comparison(reports: &[(String, Loaded)], args: &ReportArgs) -> bool {
    reports.len() > 1 && (args.compare || !crate::report::fleet::is_fleet(reports))
}

fn comparison(reports: &[(String, Loaded)], args: &ReportArgs) -> Result<Comparison> {
    let kind = reports[0].1.kind();
    if kind == "probe" {
        return Err(UsageError(
            "probe reports are rendered one at a time, not compared: an offer has no figure \
             to compare"
                .into(),
        )
        .into());
    }
    if let Some((file, other)) = reports.iter().find(|(_, r)| r.kind() != kind) {
        return Err(UsageError(format!(
            "{file} is a {} report and {} a {kind} report: only reports of one kind compare",
            other.kind(),
            reports[0].0
        ))
        .into());
    }
    Ok(compare::compare(reports, &args.label))
}

fn render_one(reports: &[(String, Loaded)], format: Format) -> Result<String> {
    if crate::report::fleet::is_fleet(reports) {
        let fleet = crate::report::fleet::fleet(reports);
        return crate::report::fleet::render(&fleet, format);
    }
    let (file, one) = &reports[0];
    if let Loaded::FleetError(e) = one {
        return Err(UsageError(format!(
            "{file} records a failed run of {}, not a report to render",
            e.host
        ))
        .into());
    }
    crate::report::render::loaded(one, format)
}

fn fail_on_drop(c: &Comparison, threshold: f64) -> Result<()> {
    let found = drops::drops(c, threshold);
    if found.is_empty() {
        return Ok(());
    }
    Err(PolicyFailure(drops::message(&found, threshold)).into())
}
