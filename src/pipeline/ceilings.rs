//! The stage ceilings of a run: which stage is measured when, with the samplers' phase set
//! so their CPU is not counted against a cipher. How each stage is measured is `stages.rs`.

use super::model::{Stage, StageCeiling};
use super::setup::Setup;
use super::ssh::remote_call;
use super::stages;
use anyhow::Result;

/// The ceilings measured so far, and the server's cores as far as known (the destination
/// check's `nproc`, else what the SSH-only bench learnt).
pub struct Ceilings {
    pub rows: Vec<StageCeiling>,
    pub cores: Option<u32>,
}

impl Ceilings {
    pub fn new(cores: Option<u32>) -> Self {
        Self {
            rows: Vec::new(),
            cores,
        }
    }

    /// SSH-only upload of `ciphers` through the bench; `what` names them on the progress line.
    pub fn ssh(&mut self, s: &Setup, ciphers: &[String], what: &str) -> Result<()> {
        (s.say)(&format!("stage ceiling: SSH only, {what}"));
        s.shared.set_phase(Some("ceiling:ssh".into()));
        let (rows, report) = stages::ssh_only(
            &s.end.target.destination,
            &s.end.target.options,
            ciphers,
            s.opts.repeat,
            s.opts.quiet,
        )?;
        self.cores = self.cores.or(report.server.machine.cores);
        self.rows.extend(rows);
        Ok(())
    }

    /// A write of at most 128 MiB (and at most half the free space) into the run directory.
    pub fn disk(&mut self, s: &Setup, free_bytes: Option<u64>) {
        let free_mib = free_bytes.map_or(u64::MAX, |f| (f >> 20) / 2);
        let mib = 128.min((s.dataset.bytes >> 20).max(1)).min(free_mib);
        (s.say)(&format!(
            "stage ceiling: disk only, {mib} MiB write on the destination filesystem"
        ));
        s.shared.set_phase(Some("ceiling:disk".into()));
        self.rows.push(if mib == 0 {
            stages::failed(
                Stage::Disk,
                None,
                "too little free space for a write test".into(),
            )
        } else {
            stages::disk_only(
                |script| {
                    remote_call(
                        s.control,
                        script,
                        &s.end.label,
                        "measuring the disk-only ceiling",
                    )
                },
                s.run_dir,
                mib,
                s.opts.repeat,
            )
        });
    }

    /// rsync of the dataset into a local scratch directory, without ssh.
    pub fn rsync_local(&mut self, s: &Setup) -> Result<()> {
        (s.say)("stage ceiling: rsync without ssh, into a local temp directory");
        s.shared.set_phase(Some("ceiling:rsync-local".into()));
        let scratch = s.dataset.scratch()?;
        self.rows.push(stages::rsync_local(
            &s.dataset.rsync_source(),
            scratch.path(),
            s.dataset.bytes,
            s.opts.repeat,
        ));
        Ok(())
    }
}
