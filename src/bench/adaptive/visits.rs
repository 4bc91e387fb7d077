//! The visits after a row's first: the visit midway, racing rounds, then the last visit.

use super::decide::{decide, ORDERED_AFTER};
use super::events::{sampled, status};
use super::noise::disagreement;
use super::race::Race;
use crate::process;
use crate::target::SshError;
use anyhow::Result;

impl Race<'_> {
    /// The visit midway: once every row has had its first round, every measured row gets one
    /// more sample, in plan order, before the racing. A row's first round takes its samples
    /// back to back, within a second or two, and whatever lasts longer than that and changes
    /// during the run (a neighbour's load, the native engine's rate level, where the
    /// scheduler put a remote server's processes) meets both of them alike: two first-round
    /// samples of OpenSSH's aes128-ctr download read 494 and 541 MiB/s, its sample at the
    /// run's end 652, and `--thorough` 652–657 (docs/measurements.md, "Time to an answer").
    /// Taken in plan order after every first round, this sample lies most of the run's first
    /// part away from the row's first round, and a row's figure counts each visit once
    /// (`Row::figure`). Skipped once `--max-time` is spent.
    pub(super) fn midway(&mut self) -> Result<()> {
        if !self.adaptive.revisit || self.budget.exhausted() {
            return Ok(());
        }
        let due: Vec<usize> = (0..self.rows.len())
            .filter(|&i| self.rows[i].error.is_none() && !self.rows[i].samples.is_empty())
            .collect();
        self.visit += 1;
        self.sample_all(due, "midway")
    }

    /// Racing rounds: one more sample for every row whose place is not yet clear.
    pub(super) fn racing(&mut self) -> Result<()> {
        loop {
            decide(&mut self.rows, self.adaptive, &self.noise);
            let open: Vec<usize> = (0..self.rows.len())
                .filter(|&i| !self.rows[i].done)
                .collect();
            if open.is_empty() {
                return Ok(());
            }
            if self.budget.exhausted() {
                for i in open {
                    self.rows[i].done = true;
                    self.rows[i].stopped = Some("max-time");
                }
                return Ok(());
            }
            self.total += open.len();
            self.progress.begin(self.total as u64);
            self.visit += 1;
            for i in open {
                process::check_interrupted()?;
                self.race_sample(i, "racing")?;
            }
        }
    }

    /// The last visit: a row seen in fewer than three visits whose visits read apart by more
    /// than the run's noise gets one more sample, at the run's end, in plan order: a third
    /// visit that says which of the two states its figure belongs to, since a median over
    /// two visits is their mean. A row whose first round and visit midway agree spans the
    /// run's first part already and needs no third; a contender raced in three visits or
    /// more has its majority. Skipped once `--max-time` is spent.
    pub(super) fn revisit(&mut self) -> Result<()> {
        if !self.adaptive.revisit || self.budget.exhausted() {
            return Ok(());
        }
        let threshold = self.noise.threshold();
        let due: Vec<usize> = (0..self.rows.len())
            .filter(|&i| {
                let r = &self.rows[i];
                r.error.is_none()
                    && !r.samples.is_empty()
                    && r.visit_count() < ORDERED_AFTER
                    && r.visits_disagree(threshold)
            })
            .collect();
        self.visit += 1;
        self.sample_all(due, "revisit")
    }

    /// One sample of each of rows `due`, in their order (`phase`: midway, revisit).
    fn sample_all(&mut self, due: Vec<usize>, phase: &str) -> Result<()> {
        self.total += due.len();
        self.progress.begin(self.total as u64);
        for i in due {
            process::check_interrupted()?;
            self.race_sample(i, phase)?;
        }
        Ok(())
    }

    /// One more sample of row `i` in the visit under way (`phase`: midway, racing, revisit).
    pub(super) fn race_sample(&mut self, i: usize, phase: &str) -> Result<()> {
        let r = &mut self.rows[i];
        self.progress
            .status(&status(&r.cipher, r.direction, &self.budget));
        match self.exec.transfer(&r.job()) {
            Ok(s) => {
                self.budget.add(&s);
                if let Some(last) = r.samples.last() {
                    if last.bytes == s.bytes {
                        self.noise.record(disagreement(last.mib_s(), s.mib_s()));
                    }
                }
                r.samples.push(s);
                r.visits.push(self.visit);
                let pair = (r.cipher.as_str(), r.mac.as_deref(), r.direction);
                sampled(
                    self.progress,
                    self.exec.engine(),
                    pair,
                    phase,
                    &r.samples,
                    1,
                );
            }
            Err(SshError::Fatal(e)) => return Err(e),
            Err(SshError::Failed(why) | SshError::Refused(why)) => {
                r.error = Some(format!("after {} samples: {why}", r.samples.len()));
                r.done = true;
                self.progress
                    .step(&format!("{} {}: {}", r.cipher, r.direction, why));
            }
        }
        Ok(())
    }
}
