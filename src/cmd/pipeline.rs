//! `sshtune pipeline`: the command line turned into the run's options, measure, then
//! present; progress goes to stderr.

use crate::cli::PipelineArgs;
use crate::exit::UsageError;
use crate::pipeline::jobs::JobsAsked;
use crate::pipeline::{run, Options};
use crate::progress::{self, Progress};
use crate::report::render;
use anyhow::{bail, Result};

pub fn run(args: PipelineArgs) -> Result<()> {
    if args.luks && args.jobs != JobsAsked::One {
        return Err(UsageError("--jobs cannot be combined with --luks".into()).into());
    }
    let outputs = args.out.plan()?;
    super::bench_names::check_ssh_ciphers(&args.ciphers)?;
    let progress = progress::Stderr::new(args.quiet).log_status("pipeline");
    let say = |msg: &str| progress.note(msg);
    let report = run::measure(&options(&args), &say);
    progress.finish();
    let report = report?;
    outputs.write(|f| render::pipeline(&report, f))?;
    if report.luks.as_ref().is_some_and(|l| l.partial.is_some()) {
        // The report of the cells measured so far is written; the status says a signal
        // cut the run short, as after any other interruption.
        return Err(crate::process::Interrupted.into());
    }
    if report.rows.iter().all(|r| r.median_mib_s.is_none()) {
        bail!("no rsync run succeeded (see the errors in the report)");
    }
    Ok(())
}

/// The domain's options from the command line; presentation (`--format`, `--output`, `--export-*`) stays here.
fn options(args: &PipelineArgs) -> Options {
    Options {
        destination: args.destination.clone(),
        ssh_options: args.ssh.to_ssh_options(),
        ciphers: args.ciphers.clone(),
        max_ciphers: args.max_ciphers,
        dataset: args.dataset,
        size: args.size,
        source: args.source.clone(),
        variants: args.variants.clone(),
        repeat: args.repeat,
        rsync_path: args.rsync_path.clone(),
        interval_ms: args.interval_ms.unwrap_or(args.interval.as_millis() as u64),
        ceilings: !args.no_ceiling,
        keep: args.keep,
        luks: args.luks,
        luks_settings: args.luks_settings.clone(),
        luks_trim: !args.no_trim,
        deadline: args
            .max_time
            .map(|s| std::time::Instant::now() + std::time::Duration::from_secs_f64(s)),
        max_time_s: args.max_time,
        jobs: args.jobs,
        quiet: args.quiet,
    }
}
