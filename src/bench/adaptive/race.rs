//! The racing loop's state, each row's first visit, and the rows it returns.

use super::budget::Budget;
use super::events::{sampled, status};
use super::first_round::{first_guess, first_round, own_guess, Footing};
use super::noise::Noise;
use super::row::Row;
use super::settings::Adaptive;
use crate::bench::executor::{Executor, Job};
use crate::bench::model::{Direction, ResultRow};
use crate::bench::progress::row_line;
use crate::bench::run::{keep_late_error, summarise, Context, Sampling, Taken};
use crate::process;
use crate::progress::Progress;
use crate::target::SshError;
use anyhow::Result;

/// The racing loop's state: every row's first round, then racing rounds, then the rows in
/// plan order. One method per phase.
pub(super) struct Race<'r> {
    pub(super) exec: &'r mut dyn Executor,
    pub(super) sampling: &'r Sampling,
    pub(super) adaptive: &'r Adaptive,
    pub(super) progress: &'r dyn Progress,
    pub(super) budget: Budget,
    pub(super) noise: Noise,
    pub(super) rows: Vec<Row>,
    /// Rows that failed, at their index in the plan.
    pub(super) failed: Vec<(usize, ResultRow)>,
    /// Steps: every row's first round, then each racing sample (added to the total per
    /// round), so the progress's ETA follows the run as racing decides how long it is.
    pub(super) total: usize,
    /// Whether the pair starting now had its session opened ahead (`Executor::prepare`).
    pub(super) opened_ahead: bool,
    /// The visit under way: 0 during the first rounds, then one more for the visit midway,
    /// each racing round and the last visit. A row's samples of one visit count once in its
    /// figure (`Row::figure`).
    pub(super) visit: u32,
    /// The rate of each row's untimed transfer before the first rounds (`survey`), in plan
    /// order; empty without one.
    pub(super) surveyed: Vec<Option<f64>>,
}

impl<'r> Race<'r> {
    pub(super) fn new(
        exec: &'r mut dyn Executor,
        sampling: &'r Sampling,
        adaptive: &'r Adaptive,
        progress: &'r dyn Progress,
    ) -> Self {
        let total = sampling.pairs.len() * sampling.directions.len();
        progress.begin(total as u64);
        Self {
            exec,
            sampling,
            adaptive,
            progress,
            budget: Budget::new(sampling.max_time_s),
            noise: Noise::default(),
            rows: Vec::new(),
            failed: Vec::new(),
            total,
            opened_ahead: false,
            visit: 0,
            surveyed: Vec::new(),
        }
    }

    /// Where a pair has nothing of its own to warm (the native engine), one untimed transfer
    /// of every row, in plan order, of the run's first size, before any row's first round.
    /// Without it, the native engine's first row read a median 0.66 of its own later visits
    /// over loopback (12 rows of six runs), alone or after the OpenSSH engine, and about as
    /// low after a warm-up eight times as long; after one such transfer of every row, 0.97,
    /// as `--thorough`, which sizes every row before any sample, always had
    /// (docs/measurements.md, "The native engine's first rows"). Its
    /// rate sizes the row's first transfer (`own_guess`), which then needs no sizing from
    /// another cipher's rate. A row that fails here is left to its first round, which
    /// reports it.
    pub(super) fn survey(&mut self) -> Result<()> {
        if !self.adaptive.survey || self.exec.warms_per_pair() {
            return Ok(());
        }
        let sampling = self.sampling;
        for (cipher, mac) in &sampling.pairs {
            for &direction in &sampling.directions {
                process::check_interrupted()?;
                self.progress
                    .status(&format!("{cipher} {direction} (survey)"));
                let job = Job {
                    cipher,
                    mac: mac.as_deref(),
                    direction,
                    bytes: sampling.initial_size,
                };
                let rate = match self.exec.transfer(&job) {
                    Ok(s) => {
                        self.budget.add(&s);
                        Some(s.mib_s())
                    }
                    Err(SshError::Fatal(e)) => return Err(e),
                    Err(SshError::Failed(_) | SshError::Refused(_)) => None,
                };
                self.surveyed.push(rate);
            }
        }
        Ok(())
    }

    /// First round of pair `p`: every direction gets its sample length and two samples.
    pub(super) fn first_round_of_pair(&mut self, p: usize) -> Result<()> {
        let sampling = self.sampling;
        let (cipher, mac) = &sampling.pairs[p];
        // The pair after this one logs in during this pair's warm-up, one login at a time (a
        // server's `PerSourceMaxStartups` may allow no more): from the start when this pair's
        // own session was opened ahead (its login is over once `settle` returns), else once
        // this pair's first transfer, and with it its own login, is over.
        let mut ahead = sampling
            .pairs
            .get(p + 1)
            .zip(sampling.directions.first())
            .map(|((next, next_mac), &direction)| Job {
                cipher: next,
                mac: next_mac.as_deref(),
                direction,
                bytes: 0,
            });
        let asked_early = self.opened_ahead && ahead.is_some();
        if asked_early {
            self.exec.settle();
            self.exec.prepare(ahead.as_ref().expect("checked"));
            ahead = None;
        }
        self.opened_ahead = asked_early;
        let mut refused: Option<String> = None;
        for &direction in &sampling.directions {
            process::check_interrupted()?;
            let index = self.rows.len() + self.failed.len();
            if let Some(why) = &refused {
                self.fail(index, cipher, mac, direction, why.clone());
                continue;
            }
            let job = Job {
                cipher,
                mac: mac.as_deref(),
                direction,
                bytes: 0,
            };
            match self.first_round_of_row(job, &mut ahead) {
                Ok(row) => self.rows.push(row),
                Err(SshError::Fatal(e)) => return Err(e),
                Err(SshError::Refused(why)) => {
                    refused = Some(why.clone());
                    self.fail(index, cipher, mac, direction, why);
                }
                Err(SshError::Failed(why)) => self.fail(index, cipher, mac, direction, why),
            }
        }
        Ok(())
    }

    /// One row's first round; `ahead` is the next pair, still to be opened ahead.
    pub(super) fn first_round_of_row(
        &mut self,
        job: Job,
        ahead: &mut Option<Job<'r>>,
    ) -> Result<Row, SshError> {
        let (cipher, mac, direction) = (job.cipher, job.mac, job.direction);
        self.progress
            .status(&status(cipher, direction, &self.budget));
        // The pair's other direction, measured just before: its size is a first guess at
        // this one's, and its session is warm for this one too, once the pipes around
        // `ssh` are wide on both ends (`process::widen_pipes`, `remote`'s setup): behind
        // 64 KiB pipes a session's first download stalls (docs/measurements.md, "The pipes
        // around `ssh`"). A first sample that still reads low is what the ramp-up rule in
        // `first_round` lengthens. Where a pair has nothing of its own to warm (the native
        // engine), any transfer before warmed up all there is to warm: this process.
        let guess = self
            .rows
            .last()
            .filter(|r| r.cipher == cipher && r.mac.as_deref() == mac)
            .map(|r| r.size);
        let warm = (!self.surveyed.is_empty() || !self.rows.is_empty())
            && (!self.exec.warms_per_pair() || guess.is_some());
        let surveyed = self
            .surveyed
            .get(self.rows.len() + self.failed.len())
            .copied()
            .flatten();
        let bytes = guess.unwrap_or_else(|| {
            match surveyed {
                Some(mib_s) => own_guess(mib_s, self.adaptive),
                None => self
                    .rows
                    .last()
                    .and_then(|r| first_guess(r, self.adaptive))
                    .unwrap_or(0),
            }
            .max(self.sampling.initial_size)
        });
        let asked_late = !warm && ahead.is_some();
        let first = first_round(
            self.exec,
            self.sampling,
            self.adaptive,
            &mut self.budget,
            &mut self.noise,
            &Job { bytes, ..job },
            Footing {
                warm,
                settled: guess.is_some(),
                ahead: if warm { None } else { ahead.take() },
            },
        );
        // Asked after the first transfer: only a row that got that far is sure to have.
        self.opened_ahead |= asked_late && first.is_ok();
        let (size, samples) = first?;
        let visits = vec![self.visit; samples.len()];
        let pair = (cipher, mac, direction);
        let engine = self.exec.engine();
        sampled(
            self.progress,
            engine,
            pair,
            "first round",
            &samples,
            samples.len(),
        );
        Ok(Row {
            cipher: cipher.to_string(),
            mac: mac.map(String::from),
            direction,
            size,
            samples,
            visits,
            error: None,
            stopped: None,
            done: false,
        })
    }

    /// A row that could not be measured, kept at its place in the plan.
    pub(super) fn fail(
        &mut self,
        index: usize,
        cipher: &str,
        mac: &Option<String>,
        direction: Direction,
        why: String,
    ) {
        let r = ResultRow::failed(self.exec.engine(), cipher, mac.as_deref(), direction, why);
        self.progress.step(&row_line(&r));
        self.failed.push((index, r));
    }

    /// Rows back in the order they were planned, failed ones in their place.
    pub(super) fn finish(self, ctx: Context) -> Vec<ResultRow> {
        let engine = self.exec.engine();
        let mut out: Vec<Option<ResultRow>> = vec![None; self.rows.len() + self.failed.len()];
        for (i, r) in self.failed {
            out[i] = Some(r);
        }
        let mut measured = self.rows.into_iter();
        for slot in out.iter_mut().filter(|s| s.is_none()) {
            let r = measured.next().expect("one measured row per free slot");
            let taken = Taken {
                samples: &r.samples,
                visits: &r.visits,
            };
            let mut row = summarise(engine, &r.job(), taken, ctx);
            row.stopped = r.stopped.map(String::from);
            keep_late_error(&mut row, r.error);
            *slot = Some(row);
        }
        self.progress.finish();
        out.into_iter().flatten().collect()
    }
}
