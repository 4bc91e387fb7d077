//! `sshtune pipeline`: measure, then present; progress goes to stderr.

use crate::cli::PipelineArgs;
use crate::pipeline::{render, run};
use anyhow::{bail, Context, Result};

pub fn run(args: PipelineArgs) -> Result<()> {
    if let Some(path) = &args.output {
        crate::outfile::check_writable(path)?;
    }
    super::bench_names::check_ssh_ciphers(&args.ciphers)?;
    let quiet = args.quiet;
    let say = move |msg: &str| {
        if !quiet {
            eprintln!("pipeline: {msg}");
        }
    };
    let report = run::measure(&args, &say)?;
    let text = render::render(&report, args.format)?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{text}"),
    }
    if report.rows.iter().all(|r| r.median_mib_s.is_none()) {
        bail!("no rsync run succeeded (see the errors in the report)");
    }
    Ok(())
}
