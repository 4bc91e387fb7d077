//! `sshtune speed`: the command line turned into `speed::Options`, the run measured with a
//! progress display, the report presented as asked.

use crate::cli::SpeedArgs;
use crate::progress;
use crate::speed::options::Options;
use crate::speed::suite;
use anyhow::{bail, Result};

pub fn run(args: SpeedArgs) -> Result<()> {
    let outputs = args.out.plan()?;
    let report = suite::run(&options(&args), &progress::Stderr::new(args.quiet))?;
    outputs.write(|f| crate::report::render::speed(&report, f))?;
    if report.rows.iter().all(|r| r.error.is_some()) {
        bail!("no row could be measured (see the errors in the report)");
    }
    Ok(())
}

/// The domain's options from the command line.
fn options(args: &SpeedArgs) -> Options {
    Options {
        ciphers: args.ciphers.clone(),
        macs: args.macs.clone(),
        rows: args.rows.clone(),
        backends: args.crypto,
        min_time_s: args.min_time.0,
        repeat: args.repeat,
        reference: !args.no_reference,
    }
}
