//! The visits after a row's first: racing rounds, then the last visit.

use super::decide::decide;
use super::events::{sampled, status};
use super::noise::disagreement;
use super::race::Race;
use crate::bench::executor::Job;
use crate::process;
use crate::target::SshError;
use anyhow::Result;

impl Race<'_> {
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
            self.round += 1;
            for i in open {
                process::check_interrupted()?;
                self.race_sample(i, "racing")?;
            }
        }
    }

    /// The last visit: every row not sampled in the last racing round gets one more sample
    /// now, at the run's end: the rows decided in their first round, and the contenders
    /// ordered or tied before the racing ended. A row's first round takes its samples within
    /// a second or two, and the racing rounds follow one another within seconds; whatever
    /// lasts longer than that and changes during the run (a neighbour's load, the native
    /// engine's rate level, where the scheduler put a remote server's processes) would move
    /// the rows measured while it lasted and leave the others, and their ranges could not
    /// show it: the two back-to-back samples of a first round agreed within 2.5% (median over
    /// rows) while the row's sample at the run's end sat 5.1% from them (docs/measurements.md,
    /// "Time to an answer"). With every row's samples reaching from its first round to the
    /// run's end, such a drift widens every row's range alike. Skipped once `--max-time` is
    /// spent.
    pub(super) fn revisit(&mut self) -> Result<()> {
        if !self.adaptive.revisit || self.budget.exhausted() {
            return Ok(());
        }
        let due: Vec<usize> = (0..self.rows.len())
            .filter(|&i| {
                let r = &self.rows[i];
                // A row sampled in the last racing round has a sample at the end already.
                let at_end = r.last_round > 0 && r.last_round == self.round;
                r.error.is_none() && !r.samples.is_empty() && !at_end
            })
            .collect();
        self.total += due.len();
        self.progress.begin(self.total as u64);
        for i in due {
            process::check_interrupted()?;
            self.race_sample(i, "revisit")?;
        }
        Ok(())
    }

    /// One more sample of row `i` (`phase`: racing, revisit).
    pub(super) fn race_sample(&mut self, i: usize, phase: &str) -> Result<()> {
        let r = &mut self.rows[i];
        r.last_round = self.round;
        self.progress
            .status(&status(&r.cipher, r.direction, &self.budget));
        let job = Job {
            cipher: &r.cipher,
            mac: r.mac.as_deref(),
            direction: r.direction,
            bytes: r.size,
        };
        match self.exec.transfer(&job) {
            Ok(s) => {
                self.budget.add(&s);
                if let Some(last) = r.samples.last() {
                    if last.bytes == s.bytes {
                        self.noise.record(disagreement(last.mib_s(), s.mib_s()));
                    }
                }
                r.samples.push(s);
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
