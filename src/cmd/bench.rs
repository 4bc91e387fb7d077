//! `sshtune bench`: the command line turned into `bench::Options`, the suite run with a
//! progress display, the report presented as asked.

use crate::bench::model::BenchReport;
use crate::bench::options::{CeilingSource, NativeOptions, Options, SamplingOptions};
use crate::bench::suite;
use crate::bench::EngineKind;
use crate::cli::{BenchArgs, EngineChoice, SshArgs};
use crate::progress;
use crate::report::{self, Format};
use crate::target::SshTarget;
use anyhow::{bail, Result};

/// Runs the bench and presents the report as the arguments ask.
pub fn run(args: BenchArgs) -> Result<()> {
    let mut outputs = args.out.plan()?;
    if args.json_stream {
        outputs = outputs.files_only();
    }
    let report = measure(&args)?;
    if args.json_stream {
        progress::emit(&serde_json::json!({ "event": "end", "report": &report }));
    }
    outputs.write(|f| report::render::bench(&report, f))?;
    // Evidence is prose: it follows a human format on stdout (or is stdout's only text when
    // the files took the report), and goes to stderr beside a machine format so stdout stays
    // parseable.
    if args.explain {
        let evidence = report::explain(&report);
        match outputs.stdout() {
            Some(Format::Table | Format::Markdown) => print!("\n{evidence}"),
            Some(_) => eprint!("{evidence}"),
            None => print!("{evidence}"),
        }
    }
    if report.results.iter().all(|r| r.error.is_some()) {
        bail!("no cipher could be measured (see the errors in the report)");
    }
    Ok(())
}

/// Runs the bench and returns the report without presenting it.
pub fn measure(args: &BenchArgs) -> Result<BenchReport> {
    let opts = options(args);
    super::bench_names::check(&opts)?;
    if let Some(why) = crate::bench::streams::refusal(&opts) {
        return Err(crate::exit::UsageError(why.into()).into());
    }
    let (quiet, stream) = (args.quiet, args.json_stream);
    let mut report = suite::run(&opts, &|| {
        let shown: Box<dyn progress::Progress> = Box::new(progress::Stderr::new(quiet));
        if stream {
            Box::new(progress::JsonStream(shown))
        } else {
            shown
        }
    })?;
    let said = crate::speed::overhead::annotate(&mut report);
    report.warnings.extend(said);
    Ok(report)
}

/// The engines `--engine` names (after its defaults), in the order they run.
pub fn engines(engine: EngineChoice) -> Vec<EngineKind> {
    match engine {
        EngineChoice::Openssh => vec![EngineKind::Openssh],
        EngineChoice::Native => vec![EngineKind::Native],
        EngineChoice::Both => vec![EngineKind::Openssh, EngineKind::Native],
    }
}

/// The destination as ssh takes it, with the `-p/-l/-i/-F/-o` options; None without a HOST.
pub fn target(host: Option<&str>, ssh: &SshArgs) -> Option<SshTarget> {
    host.map(|h| SshTarget {
        destination: h.to_string(),
        options: ssh.to_ssh_options(),
        embedded: false,
    })
}

/// The domain's options from the command line.
pub fn options(args: &BenchArgs) -> Options {
    Options {
        ssh_args: args.ssh.used(),
        engines_defaulted: args.engine.is_none(),
        ciphers: args.ciphers.clone(),
        macs: args.macs.clone(),
        directions: args.direction.list(),
        sampling: SamplingOptions {
            repeat: args.repeat,
            warmup: args.warmup,
            size: args.size,
            min_duration_s: args.min_duration.0,
            thorough: args.thorough,
            max_time_s: args.max_time,
        }
        .capped_by_default(),
        ceiling: match (&args.ceiling, args.no_ceiling) {
            (Some(rate), _) => CeilingSource::Given(rate.clone()),
            (None, true) => CeilingSource::None,
            (None, false) => CeilingSource::Measure,
        },
        native: NativeOptions {
            packet_size: args.packet_size,
            window: args.window,
            threads: args.threads,
            known_hosts: args.known_hosts.clone(),
        },
        remote_sshtune: args.remote_sshtune.clone(),
        streams: args.streams,
        ..Options::new(
            target(args.host.as_deref(), &args.ssh),
            engines(args.engine()),
        )
    }
}
