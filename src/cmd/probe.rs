//! `sshtune probe`: print what a server offers, graded by the catalog (`probe::model`), in
//! any report format and to any `--output`; with `--fail-on`, turn a weak or broken offer into
//! exit status 3 (ssh-audit style) so a script or CI job can gate on it.

use crate::cli::{FailOn, ProbeArgs};
use crate::exit::PolicyFailure;
use crate::probe::model::ProbeReport;
use crate::probe::probe;
use crate::report::render;
use crate::target::SshTarget;
use anyhow::Result;

pub fn run(args: ProbeArgs) -> Result<()> {
    let outputs = args.out.plan()?;
    let timeout = args.timeout;
    let result = match destination(&args)? {
        Ok((target, r)) => crate::probe::probe_target(&target, &r, timeout)?,
        Err((host, port)) => probe(&host, port, timeout)?,
    };
    let report = ProbeReport::new(result);
    outputs.write(|format| render::probe(&report, format))?;
    match args.fail_on {
        Some(level) => fail_on(level, &report),
        None => Ok(()),
    }
}

/// Status 3 when any offered algorithm is graded `level` or worse; names them all.
fn fail_on(level: FailOn, report: &ProbeReport) -> Result<()> {
    let threshold = level.threshold();
    let bad = report.at_or_below(threshold);
    if bad.is_empty() {
        return Ok(());
    }
    Err(PolicyFailure(format!(
        "--fail-on {}: the server offers {}",
        threshold,
        bad.join(", ")
    ))
    .into())
}

/// Resolves aliases, ports and proxies like ssh would, when an ssh client is installed (Ok);
/// else the host and port as given (Err).
type Destination = std::result::Result<(SshTarget, crate::target::Resolved), (String, u16)>;

fn destination(args: &ProbeArgs) -> Result<Destination> {
    let target = SshTarget {
        destination: args.host.clone(),
        options: args.ssh.to_ssh_options(),
        embedded: false,
    };
    if crate::process::find_program("ssh").is_some() {
        let r = target.resolve()?;
        return Ok(Ok((target, r)));
    }
    let host = args
        .host
        .rsplit('@')
        .next()
        .unwrap_or(&args.host)
        .to_string();
    Ok(Err((host, args.ssh.port.unwrap_or(22))))
}
