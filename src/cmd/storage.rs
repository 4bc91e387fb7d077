//! `sshtune storage`: the command line mapped to `storage::suite::Options`, the run, and its
//! outputs.

use crate::cli::StorageArgs;
use crate::progress::{self, Progress};
use crate::report::render;
use crate::storage::plan::{Overrides, Preset};
use crate::storage::suite::{self, Options};
use anyhow::Result;

pub fn run(args: StorageArgs) -> Result<()> {
    let outputs = args.out.plan()?;
    let opts = options(&args);
    let progress = progress::Stderr::new(args.quiet).log_status("storage");
    let report = suite::run(&opts, &progress)?;
    progress.finish();
    outputs.write(|f| render::storage(&report, f))?;
    Ok(())
}

fn options(args: &StorageArgs) -> Options {
    Options {
        preset: if args.quick {
            Preset::Quick
        } else {
            args.preset
        },
        overrides: Overrides {
            ciphers: args.ciphers.clone(),
            sector_sizes: args.sector_sizes.clone(),
            perf: args.perf.clone(),
            layers: args.layers.clone(),
            tests: args.tests.clone(),
            repeat: args.repeat,
        },
        size: args.size,
        dir: args.dir.clone(),
        device: args.device.clone(),
        destroy_data: args.destroy_data,
        force: args.force,
        load: args.load,
        luks2: args.luks2,
        fio_runtime: args.fio_runtime,
        no_matrix: args.no_matrix,
        no_speed: args.no_speed,
    }
}
