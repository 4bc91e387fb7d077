//! `sshtune report`: read saved reports, render one in the asked format, or compare several of
//! one kind. Nothing is measured.

use crate::cli::ReportArgs;
use crate::exit::UsageError;
use crate::report::compare;
use crate::report::load::{self, Loaded};
use crate::report::{outputs, Format};
use anyhow::Result;

pub fn run(args: ReportArgs) -> Result<()> {
    let outputs = outputs::plan(&args.out.requests(), args.format)?;
    let mut reports: Vec<(String, Loaded)> = Vec::new();
    for f in &args.files {
        reports.push((f.display().to_string(), load::load(f)?));
    }
    outputs.write(|format| render(&reports, &args, format))?;
    Ok(())
}

fn render(reports: &[(String, Loaded)], args: &ReportArgs, format: Format) -> Result<String> {
    if args.label.len() > reports.len() {
        return Err(UsageError(format!(
            "{} --label for {} file(s)",
            args.label.len(),
            reports.len()
        ))
        .into());
    }
    if !args.compare && crate::report::fleet::is_fleet(reports) {
        let fleet = crate::report::fleet::fleet(reports);
        return crate::report::fleet::render(&fleet, format);
    }
    if let [(_, one)] = reports {
        if let Loaded::FleetError(e) = one {
            return Err(UsageError(format!(
                "{} records a failed run of {}, not a report to render",
                reports[0].0, e.host
            ))
            .into());
        }
        return crate::report::render::loaded(one, format);
    }
    let kind = reports[0].1.kind();
    if let Some((file, other)) = reports.iter().find(|(_, r)| r.kind() != kind) {
        return Err(UsageError(format!(
            "{file} is a {} report and {} a {kind} report: only reports of one kind compare",
            other.kind(),
            reports[0].0
        ))
        .into());
    }
    compare::render::render(&compare::compare(reports, &args.label), format)
}
