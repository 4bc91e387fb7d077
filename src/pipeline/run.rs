//! One pipeline run: check the destination, generate the data, measure the stage ceilings,
//! run rsync for every cipher × variant while both samplers record, then decide. Each step
//! is a function of its own file; this one only says in which order they run, and why.

use super::assemble::{self, Measured};
use super::ceilings::Ceilings;
use super::choice::Candidates;
use super::control::Control;
use super::dataset::Dataset;
use super::destination::Endpoint;
use super::model::{LuksSection, PipelineReport};
use super::options::Options;
use super::resources::{RemoteDir, Resources};
use super::setup::Setup;
use super::{cells, choice, jobs, luks, preflight, recording, MIB};
use crate::process;
use anyhow::{anyhow, Result};
use std::process::Command;
use std::time::Instant;

/// Measures one run and undoes everything it created, whether it succeeded, failed or was
/// interrupted. The signal handlers go in first: from then on Ctrl-C (or SIGTERM, SIGHUP)
/// does not end the process, it marks the run interrupted and stops the running children;
/// each step checks the mark before it starts something, so the run unwinds through
/// `release` instead of dying with a remote directory and a server left behind.
pub fn measure(opts: &Options, say: &dyn Fn(&str)) -> Result<PipelineReport> {
    process::install_signal_handlers()?;
    let mut res = Resources::default();
    let result = measure_in(opts, say, &mut res);
    res.release(opts.keep, result)
}

/// The steps in order. Cheap refusals come before anything is written: the destination and
/// the local rsync before data is generated, the remote check before the samplers start.
/// Whatever exists outside this process is registered in `res` the moment it is created.
/// The samplers are local, so they stop (ending their ssh session) when this returns,
/// before `res` removes the run directory and stops the server they went through.
fn measure_in(opts: &Options, say: &dyn Fn(&str), res: &mut Resources) -> Result<PipelineReport> {
    let t0 = Instant::now();
    let started = chrono::Local::now().to_rfc3339();
    let mut warnings = Vec::new();

    let end = Endpoint::open(opts, say, res)?;
    let control = open_control(&end, say, res, &mut warnings)?;
    let token = format!("sshtune-pipeline-{:08x}", rand::random::<u32>());
    let stale = start_luks(opts, &end, &control, &token, say, res)?;
    let local_rsync = local_rsync_version()?;
    let resolved = end.target.resolve()?;
    let dataset = dataset(opts, say)?;

    let run_dir = end.run_dir(&token);
    let facts = check_destination(
        &Setup {
            opts,
            end: &end,
            control: &control,
            run_dir: &run_dir,
            dataset: &dataset,
            shared: &recording::Shared::default(),
            say,
        },
        res,
        &mut warnings,
    )?;
    let cores = facts.machine.cores.or(facts.cores);
    let planned = jobs::Planned::new(opts.jobs, cores, &dataset, &mut warnings)?;

    let (shared, samplers) = recording::start(
        &control,
        facts.storage.dm_device.clone(),
        opts.interval_ms,
        &token,
    )?;
    let setup = Setup {
        opts,
        end: &end,
        control: &control,
        run_dir: &run_dir,
        dataset: &dataset,
        shared: &shared,
        say,
    };

    let candidates = choice::candidates(opts, &end.target, &resolved, &end.label)?;
    let (chosen, mut ceilings) = choose(&setup, &candidates, &facts)?;
    let variants = choice::variants(&opts.variants);
    let plan = planned.plan.as_ref();
    let (mut rows, jobs_rows) = cells::measure(&setup, &chosen, &variants, &mut ceilings, plan)?;
    let cores = f64::from(ceilings.cores.unwrap_or(1));
    let luks_measured = match res.luks.as_mut() {
        Some(agent) => Some(luks::run::measure(
            &setup,
            &chosen,
            &facts.storage,
            stale,
            cores,
            agent,
        )?),
        None => None,
    };
    shared.set_phase(None);
    let intervals = recording::finish(samplers, &mut warnings);
    recording::attach(&mut rows, &intervals);
    let luks = luks_measured.map(|m| {
        let side = LuksSide {
            end: &end,
            candidates: &candidates,
            host: &resolved.hostname,
            started: &started,
        };
        finish_luks(m, &intervals, cores, &side)
    });

    let mut report = assemble::report(Measured {
        opts,
        end: &end,
        resolved: &resolved,
        started,
        t0,
        run_dir,
        dataset: &dataset,
        facts,
        local_rsync,
        default_cipher: candidates.default,
        ciphers: chosen,
        variants,
        ceilings: ceilings.rows,
        cores: ceilings.cores,
        rows,
        intervals,
        warnings,
        jobs: planned.section(jobs_rows),
    });
    report.luks = luks;
    Ok(report)
}

/// `--luks`: starts the scratch-volume helper on the destination (registered in `res`) and
/// returns what it removed of killed runs.
fn start_luks(
    opts: &Options,
    end: &Endpoint,
    control: &Control,
    token: &str,
    say: &dyn Fn(&str),
    res: &mut Resources,
) -> Result<Vec<String>> {
    if !opts.luks {
        return Ok(Vec::new());
    }
    say(&format!(
        "LUKS: starting the scratch-volume helper on {}",
        end.label
    ));
    let (agent, lines) = luks::agent::Agent::start(control, &end.label, &end.dir, token, say)?;
    res.luks = Some(agent);
    Ok(lines)
}

/// The control connection the unmeasured commands share (registered in `res` at once, as
/// the master and as the handle whose logins the report counts). A master that cannot be
/// opened is a warning: the commands then log in one by one.
fn open_control(
    end: &Endpoint,
    say: &dyn Fn(&str),
    res: &mut Resources,
    warnings: &mut Vec<String>,
) -> Result<Control> {
    say(&format!("opening the control connection to {}", end.label));
    let (control, master) = Control::open(&end.target, warnings)?;
    res.master = master;
    res.control = Some(control.clone());
    Ok(control)
}

/// The remote check: creates the run directory (registered in `res` at once), then refuses
/// a destination too full for the dataset (and for the scratch volumes with `--luks`).
fn check_destination(
    s: &Setup,
    res: &mut Resources,
    warnings: &mut Vec<String>,
) -> Result<preflight::RemoteSide> {
    let (opts, end, run_dir, bytes) = (s.opts, s.end, s.run_dir, s.dataset.bytes);
    (s.say)(&format!("checking {} on {}", end.dir, end.label));
    let facts = preflight::check(end, s.control, run_dir, &opts.rsync_path, warnings)?;
    res.remote_dir = Some(RemoteDir {
        control: s.control.clone(),
        path: run_dir.to_string(),
        label: end.label.clone(),
        keep: opts.keep,
    });
    preflight::check_room(&facts.storage, bytes, &end.label)?;
    if opts.luks {
        luks::run::check_room(bytes, facts.storage.free_bytes, &end.dir)?;
    }
    Ok(facts)
}

/// The SSH-only ceilings of the candidates rank them, so they come before the choice; the
/// user's own ciphers get theirs right before their rsync runs (`cells.rs`). Then the disk
/// and rsync-local ceilings.
fn choose(
    setup: &Setup,
    candidates: &Candidates,
    facts: &preflight::RemoteSide,
) -> Result<(Vec<String>, Ceilings)> {
    let opts = setup.opts;
    let mut ceilings = Ceilings::new(facts.cores);
    if opts.ceilings && opts.ciphers.is_empty() {
        let what = format!("{} cipher(s)", candidates.ciphers.len());
        ceilings.ssh(setup, &candidates.ciphers, &what)?;
    }
    let chosen = choice::chosen(opts, candidates, &ceilings.rows);
    if opts.ceilings {
        ceilings.disk(setup, facts.storage.free_bytes);
        ceilings.rsync_local(setup)?;
    }
    Ok((chosen, ceilings))
}

/// What the `--luks` advice needs to know of the SSH side.
struct LuksSide<'a> {
    end: &'a Endpoint,
    candidates: &'a Candidates,
    host: &'a str,
    started: &'a str,
}

/// The `--luks` section, once the samplers have stopped; the client's ssh release is what
/// `sshtune config` reads from a bench report.
fn finish_luks(
    m: luks::run::Measured,
    intervals: &[recording::Interval],
    cores: f64,
    side: &LuksSide,
) -> LuksSection {
    let client_version = crate::target::ssh_version().ok();
    luks::finish::finish(
        m,
        intervals,
        cores,
        side.end.embedded,
        side.candidates.default.as_deref(),
        &luks::advice::SshSide {
            server: &side.candidates.server,
            client_version: client_version.as_deref(),
            host: side.host,
            started: side.started,
        },
    )
}

/// The local rsync's `--version`; without rsync there is nothing to measure.
fn local_rsync_version() -> Result<String> {
    process::run_capture(Command::new("rsync").arg("--version"))
        .map_err(|_| anyhow!("rsync is not installed on this machine (apt-get install rsync)"))
}

/// The user's data, or a generated dataset (removed with the `Dataset`).
fn dataset(opts: &Options, say: &dyn Fn(&str)) -> Result<Dataset> {
    match &opts.source {
        Some(p) => Dataset::existing(p),
        None => {
            say(&format!(
                "generating a {} dataset of {:.0} MiB",
                opts.dataset.as_str(),
                opts.size as f64 / MIB
            ));
            Dataset::generate(opts.dataset, opts.size)
        }
    }
}
