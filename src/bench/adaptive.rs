//! The default sampling: samples sized by stability, then racing.
//!
//! A fixed 2 s per sample spends most of a run on ciphers that are plainly slower than the
//! leader. Here each row starts with short samples and lengthens them only while a sample and
//! one twice as long disagree by more than the noise the run has seen: on a slow link or a
//! starved CPU the channel window's ramp-up makes short samples slow, the longer one is then
//! faster, and the rule keeps lengthening until it no longer is. After that first round a row
//! whose whole sample range lies below the leader's (per engine and direction) and whose own
//! samples agree is decided and sampled no more; the leader and the rows that overlap it get
//! one more sample per round until the order is clear (a median behind the leader's by more
//! than the noise, or tied with it within half the noise), their sample budget is used, or
//! the run's time cap is spent. Every row keeps a median and a spread, and says why it stopped.

use super::executor::{Executor, Job, Sample};
use super::model::{Direction, ResultRow};
use super::progress::row_line;
use super::run::{next_size, summarise, Context, Sampling, MAX_SIZE};
use super::stats;
use crate::process;
use crate::progress::Progress;
use crate::target::SshError;
use anyhow::Result;
use std::time::Instant;

/// Sizing rounds of the warm-up, as in the thorough loop.
const MAX_SIZING_ROUNDS: u32 = 8;
/// Below this relative difference two samples agree whatever noise the run has seen: finer
/// than that, a rank between ciphers is not worth the time on any machine.
pub const NOISE_FLOOR: f64 = 0.05;

/// The least gain a longer sample must show over the one before for the shorter one to count
/// as paying a start: the run learns its noise from equal-length samples, which come mostly
/// in the racing rounds after every row's first, so the first rows are judged against the
/// floor alone. Consecutive OpenSSH samples on loopback differ by 10–20%; with `NOISE_FLOOR`
/// there, rows were lengthened on noise, a second at a time. A window ramp-up on a slow
/// link or a fresh session under a CPU quota costs a short sample 30% and more.
const RAMP_FLOOR: f64 = 0.10;

/// The share of the shortest sample a new pair's first transfer aims at, at the rate of the
/// row before (`first_guess`): small enough that a cipher 25 times slower spends 1.6 s on
/// it, large enough that one sizing transfer after it reaches the shortest length.
const FIRST_GUESS_SHARE: f64 = 0.25;

/// Bytes per MiB, for the rates (`Sample::mib_s`) turned back into sizes.
const MIB_F: f64 = 1024.0 * 1024.0;

/// A sizing transfer longer than this many shortest samples is not kept as a sample: the
/// samples after it would start from its length, and the second is twice the first.
const OVERSHOT: f64 = 2.0;

/// Samples a row below the leader needs before its median alone may order it (as many as
/// the thorough mode takes).
const ORDERED_AFTER: usize = 3;

/// After `ORDERED_AFTER` samples, a row whose median lies within this share of the run's noise
/// of the leader's is tied with it and stops (`decide`).
const TIED_WITHIN: f64 = 0.5;

/// How the default mode sizes and races samples.
#[derive(Debug, Clone, Copy)]
pub struct Adaptive {
    /// The shortest sample, seconds.
    pub start_s: f64,
    /// Samples are not lengthened past this (the thorough mode's length).
    pub longest_s: f64,
    /// The fewest bytes per sample: a few channel windows, so one window's round trip cannot
    /// be the whole sample.
    pub min_bytes: u64,
    /// Samples a contender gets at most.
    pub max_samples: u32,
    /// Stop sampling rows already decided; off, every row gets `max_samples`.
    pub race: bool,
    /// Give every row measured in one visit only (its first round) one more sample at the
    /// run's end (`Race::revisit`).
    pub revisit: bool,
}

/// When the run must stop measuring more than it needs, and how long it has taken so far.
/// Time spent is the larger of the wall clock and the seconds of all transfers, so a
/// scripted executor (whose transfers take no wall time) advances it too.
pub struct Budget {
    started: Instant,
    transfer_s: f64,
    max_s: Option<f64>,
}

impl Budget {
    pub fn new(max_s: Option<f64>) -> Self {
        Self {
            started: Instant::now(),
            transfer_s: 0.0,
            max_s,
        }
    }

    pub fn spent_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64().max(self.transfer_s)
    }

    pub fn exhausted(&self) -> bool {
        self.max_s.is_some_and(|m| self.spent_s() >= m)
    }

    fn add(&mut self, s: &Sample) {
        self.transfer_s += s.seconds;
    }
}

/// What the run has seen so far: the disagreement between consecutive samples of one length,
/// and the start cost of a sample.
#[derive(Debug, Default)]
pub struct Noise {
    diffs: Vec<f64>,
    /// Per agreeing pair of samples of different lengths, the seconds a sample costs beyond
    /// its bytes at the pair's rate (the intercept of time over bytes): window and congestion ramp-up,
    /// the remote's start, a CPU quota's first throttled period.
    starts: Vec<f64>,
}

impl Noise {
    /// Two samples farther apart than this disagree.
    pub fn threshold(&self) -> f64 {
        stats::median(&self.diffs).unwrap_or(0.0).max(NOISE_FLOOR)
    }

    /// How much faster a longer sample must be than the one before to say the shorter one
    /// paid a start (ramp-up), not the noise: the upper decile of the disagreements seen,
    /// never below `threshold` or `RAMP_FLOOR`. At the median, half the noisy pairs disagree
    /// by more, and the longer sample is the faster in half of those by chance: a quarter of
    /// the pairs lengthened a row at every step for nothing (on loopback, where consecutive
    /// samples differ by 10–20%, one row went through six lengths). A real ramp-up (a window
    /// opening on a slow link, a fresh session under a CPU quota) makes the short sample
    /// slower by far more.
    pub fn ramp_threshold(&self) -> f64 {
        stats::upper_decile(&self.diffs)
            .unwrap_or(0.0)
            .max(self.threshold())
            .max(RAMP_FLOOR)
    }

    fn record(&mut self, d: f64) {
        self.diffs.push(d);
    }

    /// Records the start cost two samples of different lengths imply.
    fn record_start(&mut self, a: &Sample, b: &Sample) {
        if let Some(s) = start_cost(a, b) {
            self.starts.push(s);
        }
    }

    /// The shortest sample the run can trust: long enough that the start cost it has seen is
    /// at most `NOISE_FLOOR` of the sample, and never below `start_s` or above `longest_s`.
    /// Samples that agree with each other but are all this short and all this low are what it
    /// catches: agreement alone cannot, since every one of them pays the same start.
    ///
    /// The cost is the lower quartile over pairs, not the median: a pair's intercept is the
    /// start plus twice the shorter sample's disturbance minus the longer one's, and a
    /// disturbance only ever adds time, so most pairs read high. On loopback the median over
    /// agreeing pairs asks for tens of milliseconds, enough to lengthen every OpenSSH sample
    /// to the longest length, where samples of fixed sizes show no start at all
    /// (docs/measurements.md, "The start-cost floor").
    pub fn shortest_s(&self, a: &Adaptive) -> f64 {
        let cost = stats::lower_quartile(&self.starts).unwrap_or(0.0);
        (cost / NOISE_FLOOR).max(a.start_s).min(a.longest_s)
    }
}

/// The intercept of time over bytes through two samples of different sizes, seconds (0 when
/// the pair implies none); None for samples of one size.
pub fn start_cost(a: &Sample, b: &Sample) -> Option<f64> {
    if a.bytes == b.bytes || a.seconds <= 0.0 || b.seconds <= 0.0 {
        return None;
    }
    let (x1, x2) = (a.bytes as f64, b.bytes as f64);
    let cost = (a.seconds * x2 - b.seconds * x1) / (x2 - x1);
    Some(cost.max(0.0))
}

/// Relative difference of two rates, against their mean.
pub fn disagreement(a: f64, b: f64) -> f64 {
    let mean = (a + b) / 2.0;
    if mean <= 0.0 {
        return 0.0;
    }
    (a - b).abs() / mean
}

/// One row being measured.
struct Row {
    cipher: String,
    mac: Option<String>,
    direction: Direction,
    size: u64,
    samples: Vec<Sample>,
    error: Option<String>,
    stopped: Option<&'static str>,
    /// No more samples: decided, budget used, or failed.
    done: bool,
    /// Times the run came to this row: its first round, each racing round, the revisit.
    visits: u32,
}

impl Row {
    fn rates(&self) -> Vec<f64> {
        self.samples.iter().map(Sample::mib_s).collect()
    }
}

/// Runs the plan in the default mode. Errors that concern one cipher become rows.
pub fn run(
    exec: &mut dyn Executor,
    sampling: &Sampling,
    adaptive: &Adaptive,
    ctx: Context,
    progress: &dyn Progress,
) -> Result<Vec<ResultRow>> {
    let mut race = Race::new(exec, sampling, adaptive, progress);
    for p in 0..sampling.pairs.len() {
        race.first_round_of_pair(p)?;
    }
    race.racing()?;
    race.revisit()?;
    Ok(race.finish(ctx))
}

/// The racing loop's state: every row's first round, then racing rounds, then the rows in
/// plan order. One method per phase.
struct Race<'r> {
    exec: &'r mut dyn Executor,
    sampling: &'r Sampling,
    adaptive: &'r Adaptive,
    progress: &'r dyn Progress,
    budget: Budget,
    noise: Noise,
    rows: Vec<Row>,
    /// Rows that failed, at their index in the plan.
    failed: Vec<(usize, ResultRow)>,
    /// Steps: every row's first round, then each racing sample (added to the total per
    /// round), so the progress's ETA follows the run as racing decides how long it is.
    total: usize,
    /// Whether the pair starting now had its session opened ahead (`Executor::prepare`).
    opened_ahead: bool,
}

impl<'r> Race<'r> {
    fn new(
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
        }
    }

    /// First round of pair `p`: every direction gets its sample length and two samples.
    fn first_round_of_pair(&mut self, p: usize) -> Result<()> {
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
    fn first_round_of_row(
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
        let warm = !self.rows.is_empty() && (!self.exec.warms_per_pair() || guess.is_some());
        let bytes = guess.unwrap_or_else(|| {
            self.rows
                .last()
                .and_then(|r| first_guess(r, self.adaptive))
                .unwrap_or(0)
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
            error: None,
            stopped: None,
            done: false,
            visits: 1,
        })
    }

    /// A row that could not be measured, kept at its place in the plan.
    fn fail(
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

    /// Racing rounds: one more sample for every row whose place is not yet clear.
    fn racing(&mut self) -> Result<()> {
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
            for i in open {
                process::check_interrupted()?;
                self.race_sample(i, "racing")?;
            }
        }
    }

    /// The last visit: every row whose samples all come from its first round (decided there)
    /// gets one more sample now, at the run's end. A row's first round takes its samples
    /// within a second or two; whatever lasts longer than that and changes during the run (a
    /// neighbour's load, where the scheduler put a remote server's processes) would move the
    /// rows measured while it lasted and leave the others, and their ranges could not show
    /// it. With two visits far apart, such a drift widens every row's range alike. Skipped
    /// once `--max-time` is spent.
    fn revisit(&mut self) -> Result<()> {
        if !self.adaptive.revisit || self.budget.exhausted() {
            return Ok(());
        }
        let due: Vec<usize> = (0..self.rows.len())
            .filter(|&i| {
                let r = &self.rows[i];
                r.visits == 1 && r.error.is_none() && !r.samples.is_empty()
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
    fn race_sample(&mut self, i: usize, phase: &str) -> Result<()> {
        let r = &mut self.rows[i];
        r.visits += 1;
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

    /// Rows back in the order they were planned, failed ones in their place.
    fn finish(self, ctx: Context) -> Vec<ResultRow> {
        let engine = self.exec.engine();
        let mut out: Vec<Option<ResultRow>> = vec![None; self.rows.len() + self.failed.len()];
        for (i, r) in self.failed {
            out[i] = Some(r);
        }
        let mut measured = self.rows.into_iter();
        for slot in out.iter_mut().filter(|s| s.is_none()) {
            let r = measured.next().expect("one measured row per free slot");
            let mut row = summarise(
                engine,
                &r.cipher,
                r.mac.as_deref(),
                r.direction,
                r.size,
                &r.samples,
                ctx,
            );
            row.stopped = r.stopped.map(String::from);
            if r.error.is_some() {
                row.error = r.error;
                row.verdict = None;
                row.verdict_reason = None;
                row.verdict_rule = None;
            }
            *slot = Some(row);
        }
        self.progress.finish();
        out.into_iter().flatten().collect()
    }
}

/// The progress status: what is measured and, under `--max-time`, how much of it is left (the
/// progress display's own ETA comes from the steps).
fn status(cipher: &str, direction: Direction, budget: &Budget) -> String {
    match budget.max_s {
        Some(m) => format!(
            "{cipher} {direction} (max-time: {:.0} s left)",
            (m - budget.spent_s()).max(0.0)
        ),
        None => format!("{cipher} {direction}"),
    }
}

/// `aes128-ctr upload: racing, 412.3 MiB/s median of 3 samples`.
fn sample_line(cipher: &str, direction: Direction, phase: &str, samples: &[Sample]) -> String {
    let mib: Vec<f64> = samples.iter().map(|s| s.mib_s()).collect();
    let median = stats::median(&mib).unwrap_or(0.0);
    format!(
        "{cipher} {direction}: {phase}, {median:.1} MiB/s median of {} samples",
        samples.len()
    )
}

/// A step for the person waiting, and for `--json-stream` one event per sample of the
/// `new` last ones.
fn sampled(
    progress: &dyn Progress,
    engine: &str,
    (cipher, mac, direction): (&str, Option<&str>, Direction),
    phase: &str,
    samples: &[Sample],
    new: usize,
) {
    progress.step(&sample_line(cipher, direction, phase, samples));
    for s in &samples[samples.len().saturating_sub(new)..] {
        progress.record(&serde_json::json!({
            "event": "sample",
            "engine": engine,
            "cipher": cipher,
            "mac": mac,
            "direction": direction,
            "phase": phase,
            "bytes": s.bytes,
            "seconds": s.seconds,
            "mib_s": s.mib_s(),
        }));
    }
}

/// What a row's first transfer starts from (`first_round`).
#[derive(Debug, Clone)]
struct Footing<'a> {
    /// Nothing left to warm up: the pair's other direction has just run in the same session,
    /// or the pair has nothing of its own to warm and this process has run a transfer.
    warm: bool,
    /// The first transfer's size is the one the pair's other direction settled on.
    settled: bool,
    /// The next pair, for a row with a warm-up: its session is opened (`Executor::prepare`)
    /// once this row's first transfer is over, so that its login runs during the rest of the
    /// warm-up and no two logins run at once (a server's `PerSourceMaxStartups` may allow
    /// one).
    ahead: Option<Job<'a>>,
}

/// A warm-up of at least one shortest sample's time, its transfers sized towards the
/// shortest sample; then samples lengthened while the next, longer sample is faster than the
/// one before by more than the noise (and than a second sample at the shorter length), or
/// while the longer one is shorter than the run's start cost allows (`Noise::shortest_s`).
/// Returns the size later samples take (the shorter of the last two, or the longest length)
/// and the samples kept: the last two, or three when the second sample at the shorter length
/// showed that the pair's gap was noise.
///
/// `row` names the row, its `bytes` the first transfer's size: the size its pair's other
/// direction settled on, when there is one, else `first_guess`. A row with nothing left to
/// warm up (`warm`: its pair's other direction has just run in the same session, or the pair
/// has nothing of its own to warm and this process has run a transfer) has no warm-up: its
/// first transfer long enough is its first sample. A size its pair's other direction
/// `settled` on is kept as a sample up to the longest length: the other direction vouched
/// for it, and shrinking a 0.6 s 3des-cbc download to the shortest length cost three
/// transfers more (0.7 s). A `first_guess` comes from another cipher and is kept up to
/// `OVERSHOT` shortest samples.
///
/// The second sample is always twice the first: two samples of one length can agree while
/// both read low, and then the start they pay goes unseen, which only a longer sample shows
/// (docs/measurements.md, "The second sample twice the first").
fn first_round(
    exec: &mut dyn Executor,
    sampling: &Sampling,
    a: &Adaptive,
    budget: &mut Budget,
    noise: &mut Noise,
    row: &Job,
    footing: Footing,
) -> Result<(u64, Vec<Sample>), SshError> {
    let warm = footing.warm;
    // A warm row's first transfer may be its first sample: no login of a session opened
    // ahead (`Executor::prepare`) may run beside it.
    if warm {
        exec.settle();
    }
    let mut round = FirstRound {
        exec,
        sampling,
        a,
        budget,
        noise,
        row,
    };
    let (size, folded) = round.warm_up(footing)?;
    // A fresh session's warm-up is over: what follows is timed.
    if !warm {
        round.exec.settle();
    }
    let prev = match folded {
        Some(s) => s,
        None => round.take(size)?,
    };
    let (size, prev) = round.resize(size, prev)?;
    round.lengthen(size, prev)
}

/// One row's first round (`first_round`), one method per phase: warm-up, resizing to the
/// start-cost floor, lengthening.
struct FirstRound<'f, 'j> {
    exec: &'f mut dyn Executor,
    sampling: &'f Sampling,
    a: &'f Adaptive,
    budget: &'f mut Budget,
    noise: &'f mut Noise,
    row: &'f Job<'j>,
}

impl FirstRound<'_, '_> {
    fn take(&mut self, bytes: u64) -> Result<Sample, SshError> {
        let s = self.exec.transfer(&Job { bytes, ..*self.row })?;
        self.budget.add(&s);
        Ok(s)
    }

    /// The warm-up: transfers sized towards the shortest sample. Returns the size reached and,
    /// for a warm row, its first transfer when that is long enough to be the first sample.
    fn warm_up(&mut self, footing: Footing) -> Result<(u64, Option<Sample>), SshError> {
        let Footing {
            warm,
            settled,
            mut ahead,
        } = footing;
        let mut size = self.row.bytes.max(self.a.min_bytes).clamp(1, MAX_SIZE);
        let mut rounds = 0;
        let mut warmed_s = 0.0;
        let mut folded = None;
        loop {
            let s = self.take(size)?;
            if let Some(next) = ahead.take() {
                self.exec.prepare(&next);
            }
            rounds += 1;
            warmed_s += s.seconds;
            let long_enough = s.seconds >= self.a.start_s;
            // A first guess far too large (a cipher much slower than the one before): the samples
            // start again from the shortest length, at the rate this transfer showed.
            let too_long = if settled {
                self.a.longest_s
            } else {
                OVERSHOT * self.a.start_s
            };
            let overshot = s.seconds > too_long;
            if overshot {
                size = shrink(size, s.seconds, self.a.start_s).max(self.a.min_bytes);
            }
            if warm && long_enough && !overshot {
                folded = Some(s);
                break;
            }
            if !long_enough {
                size = next_size(size, s.seconds, self.a.start_s);
            }
            // A session is warm once it has carried a shortest sample's time, in one transfer or
            // several: the first sample then takes the size the last one aims at. Waiting for one
            // sizing transfer to last that long would cost a fresh session a third transfer
            // whenever the second fell just short. A shorter warm-up (the first transfer alone)
            // leaves first samples low over loopback (docs/measurements.md, "Rules measured and
            // not adopted").
            let warmed = long_enough || (!warm && warmed_s >= self.a.start_s);
            if (warmed && rounds >= self.sampling.warmup.max(1))
                || rounds >= MAX_SIZING_ROUNDS
                || size >= MAX_SIZE
            {
                break;
            }
        }
        Ok((size, folded))
    }

    /// Samples resized while shorter than the run's start cost allows (`Noise::shortest_s`).
    fn resize(&mut self, mut size: u64, mut prev: Sample) -> Result<(u64, Sample), SshError> {
        // Once the warm-up has opened the connection's windows a sample can be faster than the
        // sizing saw, and a start the run has seen elsewhere may ask for longer ones: size again.
        // The pair a resizing makes (the short sample and the longer one) says what a start costs
        // too, and it is the only pair a floor at the longest length leaves: every later pair is
        // of one length and implies none. Unrecorded, one early pair's noise would set the floor
        // for the whole run (a 3des-cbc pair 20% apart, within the noise its first sample had
        // shown, can imply 0.10 s and hold every later OpenSSH sample at 2 s: docs/measurements.md,
        // "The start-cost floor"). A real start gives the same intercept in every pair, so only a
        // floor noise raised comes down.
        let mut resized = 0;
        while prev.seconds < self.noise.shortest_s(self.a)
            && size < MAX_SIZE
            && resized < MAX_SIZING_ROUNDS
        {
            size = aim(
                size,
                prev.seconds,
                self.noise.shortest_s(self.a),
                self.a.longest_s,
            );
            let s = self.take(size)?;
            if disagreement(prev.mib_s(), s.mib_s()) <= self.noise.ramp_threshold() {
                self.noise.record_start(&prev, &s);
            }
            prev = s;
            resized += 1;
        }
        Ok((size, prev))
    }

    /// Samples lengthened while a longer one is faster by more than the noise; returns the
    /// size later samples take and the samples kept.
    fn lengthen(
        &mut self,
        mut size: u64,
        mut prev: Sample,
    ) -> Result<(u64, Vec<Sample>), SshError> {
        loop {
            let can_lengthen =
                prev.seconds < self.a.longest_s && size < MAX_SIZE && !self.budget.exhausted();
            let next = if can_lengthen {
                let factor = (self.a.longest_s / prev.seconds.max(1e-3)).min(2.0);
                ((size as f64 * factor) as u64).max(size + 1).min(MAX_SIZE)
            } else {
                size
            };
            let s = self.take(next)?;
            let d = disagreement(prev.mib_s(), s.mib_s());
            if next == size {
                // Two samples of one length: what they disagree by is the self.noise.
                self.noise.record(d);
                return Ok((size, vec![prev, s]));
            }
            size = next;
            let within = d <= self.noise.ramp_threshold();
            if within {
                // Only a pair within what the noise explains says what the start costs: in one
                // beyond it the intercept is mostly the noise that set it apart, and would
                // lengthen every later row on a busy machine for nothing. A start smaller than
                // the ramp threshold shows here, in the intercepts of many such pairs.
                self.noise.record_start(&prev, &s);
            }
            // A start (ramp-up) makes the longer sample the faster one, by more than the noise
            // does in all but its worst tenth. A longer sample that is slower says the machine is
            // noisy, not that short samples read low: lengthening would not help, more samples
            // do, and racing gives a row whose samples spread more than the noise those samples.
            let ramp = !within && s.mib_s() > prev.mib_s();
            if !ramp && prev.seconds.min(s.seconds) >= self.noise.shortest_s(self.a) {
                // Racing samples take the shorter length: it is the one the pair vouched for.
                return Ok((prev.bytes, vec![prev, s]));
            }
            if ramp {
                // One pair is one draw of the noise: before lengthening, the shorter length gets a
                // second sample. A start makes it read low again; noise does not, and then the
                // row keeps all three samples at the shorter length's pace, and the run has an
                // equal-length pair to learn its noise from in its first rows.
                let again = self.take(prev.bytes)?;
                self.noise.record(disagreement(prev.mib_s(), again.mib_s()));
                let d = disagreement(again.mib_s(), s.mib_s());
                let confirmed = d > self.noise.ramp_threshold() && s.mib_s() > again.mib_s();
                if !confirmed && again.seconds.min(s.seconds) >= self.noise.shortest_s(self.a) {
                    if d <= self.noise.ramp_threshold() {
                        self.noise.record_start(&again, &s);
                    }
                    return Ok((prev.bytes, vec![prev, s, again]));
                }
            }
            // The longer sample is faster: the shorter one was not representative; drop it.
            prev = s;
        }
    }
}

/// The first transfer of a pair with no other direction measured yet: the bytes the row
/// before moved in `FIRST_GUESS_SHARE` of the shortest sample. Sized from nothing (4 MiB), a
/// fast cipher on loopback took four sizing transfers, 0.9 s, before its first sample. The
/// ciphers a server offers ran within a factor of 25 of each other here (3des-cbc against
/// aes128-gcm@openssh.com): a cipher like the one before gets one short transfer, one 25
/// times slower spends about 1.6 s on it, and its samples then start from the shortest
/// length again (`OVERSHOT`). A rate, not the row's size: a row lengthened to the longest
/// length would carry that length into the next row's guess.
fn first_guess(before: &Row, a: &Adaptive) -> Option<u64> {
    let mib_s = stats::median(&before.rates())?;
    Some((mib_s * MIB_F * a.start_s * FIRST_GUESS_SHARE) as u64)
}

/// The size that lasts a quarter past `target` at the rate a transfer of `size` bytes in
/// `seconds` showed, in whole MiB: `next_size`'s aim, for a transfer that lasted too long.
fn shrink(size: u64, seconds: f64, target: f64) -> u64 {
    let bytes = (size as f64 * target * 1.25 / seconds.max(1e-3)) as u64;
    bytes.div_ceil(1 << 20).saturating_mul(1 << 20).min(size)
}

/// `next_size` towards `target`, but not past the size that would last `longest` at the
/// rate just seen: the thorough mode's length is the most a sample is worth.
fn aim(size: u64, seconds: f64, target: f64, longest: f64) -> u64 {
    let cap = (size as f64 * longest / seconds.max(1e-3)) as u64;
    next_size(size, seconds, target).min(cap.max(size + 1))
}

/// Marks the rows whose sampling can end: below the leader of their engine and direction
/// with agreeing samples (`decided`), with the thorough count of samples and a median behind
/// the leader's by more than the noise (`ordered`), every row of a group once only its leader
/// is left, and rows that had every sample they are due.
fn decide(rows: &mut [Row], a: &Adaptive, noise: &Noise) {
    for r in rows.iter_mut() {
        if !r.done && r.samples.len() as u32 >= a.max_samples {
            r.done = true;
        }
    }
    if !a.race {
        return;
    }
    let threshold = noise.threshold();
    // A row's samples are stable when they disagree by no more than the noise explains in all
    // but its worst tenth (the bound a ramp-up must pass too). Against the median noise half
    // of all rows fail by chance alone: on loopback, 3des-cbc at 1/30 of the leader took a
    // third sample for two that differed by 8%, and 13 of 20 rows in one run did so.
    let stable_within = noise.ramp_threshold();
    for direction in [Direction::Upload, Direction::Download] {
        let group: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].direction == direction && rows[i].error.is_none())
            .filter(|&i| !rows[i].samples.is_empty())
            .collect();
        let Some(&leader) = group.iter().max_by(|&&x, &&y| {
            let m = |i: usize| stats::median(&rows[i].rates()).unwrap_or(0.0);
            m(x).total_cmp(&m(y))
        }) else {
            continue;
        };
        let leader_min = stats::min(&rows[leader].rates()).unwrap_or(0.0);
        let leader_median = stats::median(&rows[leader].rates()).unwrap_or(0.0);
        for &i in &group {
            if i == leader || rows[i].done {
                continue;
            }
            let rates = rows[i].rates();
            let below = stats::max(&rates).is_some_and(|m| m < leader_min);
            let stable = stats::relative_spread(&rates).is_some_and(|s| s <= stable_within);
            if below && stable {
                rows[i].done = true;
                rows[i].stopped = Some("decided");
                continue;
            }
            // A range that overlaps the leader's never comes apart from it: more samples only
            // widen both. What more samples do is steady the medians, and once a row has the
            // thorough count and its median trails the leader's by more than the noise, its
            // place is clear; the rows within the noise of the leader are the ones worth them.
            let m = stats::median(&rates).unwrap_or(0.0);
            let gap = disagreement(m, leader_median);
            if rates.len() >= ORDERED_AFTER && gap > threshold {
                rows[i].done = true;
                rows[i].stopped = Some("ordered");
            }
            // A median within half the noise of the leader's after three samples is a tie
            // more samples do not break: on loopback the two GCM ciphers raced to five samples
            // in every run (484–1008 MiB/s within one row) and `--thorough` never told them
            // apart, while their extra rounds cost about 0.7 s each.
            if rates.len() >= ORDERED_AFTER && gap <= threshold * TIED_WITHIN {
                rows[i].done = true;
                rows[i].stopped = Some("tied");
            }
        }
        let others_open = group.iter().any(|&i| i != leader && !rows[i].done);
        if !others_open && !rows[leader].done {
            let tied = group.iter().any(|&i| rows[i].stopped == Some("tied"));
            rows[leader].done = true;
            rows[leader].stopped = Some(if tied { "tied" } else { "decided" });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Silent as Quiet;

    const MIB: u64 = 1024 * 1024;

    /// A scripted executor: each cipher has a true rate, and every transfer pays a fixed
    /// ramp-up (seconds at no throughput) like a window opening on a slow link; `jitter`
    /// alternates samples up and down by that fraction. It tests the rule, never a product
    /// number.
    struct Scripted {
        rates: Vec<(&'static str, f64)>,
        ramp_s: f64,
        jitter: f64,
        calls: Vec<(String, u64)>,
        /// Each cipher's session needs its own warm-up (OpenSSH); false: only the process
        /// does (native).
        kept: bool,
        /// Calls (by index) disturbed once, and by how much longer they take (1.25: a
        /// quarter).
        disturbed: Vec<(usize, f64)>,
        /// Shifts `jitter`'s alternation by one call.
        phase: usize,
        /// Downloads run at this share of the cipher's rate.
        download_share: f64,
        /// Transfers (`cipher:MiB`), `prepare:cipher` and `settle`, in order.
        events: Vec<String>,
        /// From the first transfer that returns to a cipher measured before (the first racing
        /// round) on, every transfer takes this many times longer.
        drift: Option<f64>,
        drifting: bool,
    }

    impl Scripted {
        fn new(rates: &[(&'static str, f64)], ramp_s: f64, jitter: f64) -> Self {
            Self {
                rates: rates.to_vec(),
                ramp_s,
                jitter,
                calls: Vec::new(),
                kept: true,
                disturbed: Vec::new(),
                phase: 0,
                download_share: 1.0,
                events: Vec::new(),
                drift: None,
                drifting: false,
            }
        }
    }

    impl Executor for Scripted {
        fn engine(&self) -> &'static str {
            "scripted"
        }
        fn warms_per_pair(&self) -> bool {
            self.kept
        }
        fn prepare(&mut self, next: &Job) {
            self.events.push(format!("prepare:{}", next.cipher));
        }
        fn settle(&mut self) {
            self.events.push("settle".into());
        }
        fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
            let rate = self
                .rates
                .iter()
                .find(|(c, _)| *c == job.cipher)
                .map(|(_, r)| *r)
                .ok_or_else(|| SshError::Refused("not offered".into()))?;
            let rate = match job.direction {
                Direction::Upload => rate,
                Direction::Download => rate * self.download_share,
            };
            let sign = if (self.calls.len() + self.phase) % 2 == 0 {
                1.0
            } else {
                -1.0
            };
            let disturbed = self
                .disturbed
                .iter()
                .find(|(i, _)| *i == self.calls.len())
                .map_or(1.0, |(_, f)| *f);
            let returns = self.calls.last().is_some_and(|l| l.0 != job.cipher)
                && self.calls.iter().any(|c| c.0 == job.cipher);
            self.drifting |= returns;
            let disturbed = match self.drift {
                Some(f) if self.drifting => disturbed * f,
                _ => disturbed,
            };
            self.calls.push((job.cipher.to_string(), job.bytes));
            self.events
                .push(format!("{}:{}", job.cipher, job.bytes / MIB));
            let mib = job.bytes as f64 / MIB as f64;
            Ok(Sample {
                bytes: job.bytes,
                seconds: (mib / rate + self.ramp_s) * (1.0 + sign * self.jitter) * disturbed,
                client_cpu_s: None,
                client_user_cpu_s: None,
                server_cpu_s: None,
                server_busy_s: None,
                server_quota_cores: None,
                placement: None,
            })
        }
    }

    fn plan(ciphers: &[&str]) -> Sampling {
        Sampling {
            pairs: ciphers.iter().map(|c| (c.to_string(), None)).collect(),
            directions: vec![Direction::Upload],
            repeat: 3,
            warmup: 1,
            fixed_size: None,
            initial_size: 4 * MIB,
            min_duration_s: 2.0,
            max_time_s: None,
        }
    }

    fn adaptive() -> Adaptive {
        Adaptive {
            start_s: 0.25,
            longest_s: 2.0,
            min_bytes: 4 * MIB,
            max_samples: 5,
            race: true,
            // The first round and racing, tested apart from the last visit (its own test).
            revisit: false,
        }
    }

    fn run_it(ex: &mut Scripted, sampling: &Sampling) -> Vec<ResultRow> {
        run(ex, sampling, &adaptive(), Context::default(), &Quiet).unwrap()
    }

    #[test]
    fn ramp_up_makes_the_rule_lengthen_samples() {
        // 0.3 s of ramp-up: a 0.25 s sample shows well under half the true 100 MiB/s.
        let mut ex = Scripted::new(&[("slow-link", 100.0)], 0.3, 0.0);
        let rows = run_it(&mut ex, &plan(&["slow-link"]));
        let r = &rows[0];
        assert!(
            r.sample_seconds.iter().all(|&s| s > 1.0),
            "samples stayed short: {:?}",
            r.sample_seconds
        );
        let m = r.median_mib_s.unwrap();
        assert!(m > 80.0, "median {m} still dominated by ramp-up");
        // Without ramp-up the first pair agrees and samples stay short.
        let mut ex = Scripted::new(&[("fast", 100.0)], 0.0, 0.0);
        let rows = run_it(&mut ex, &plan(&["fast"]));
        assert!(rows[0].sample_seconds.iter().all(|&s| s < 1.0), "{rows:?}");
    }

    /// A first sample slowed once by a disturbance makes the longer one look like the end of a
    /// ramp-up; a second sample at the shorter length reads the true rate, and the row keeps
    /// all three at the shorter length instead of lengthening.
    #[test]
    fn a_second_short_sample_tells_a_disturbance_from_a_ramp_up() {
        let mut calm = Scripted::new(&[("a", 100.0)], 0.0, 0.0);
        let rows = run_it(&mut calm, &plan(&["a"]));
        assert_eq!(rows[0].samples.len(), 2, "{rows:?}");
        let first_sample = calm.calls.len() - 2;
        let mut ex = Scripted::new(&[("a", 100.0)], 0.0, 0.0);
        ex.disturbed = vec![(first_sample, 1.25)];
        let rows = run_it(&mut ex, &plan(&["a"]));
        let r = &rows[0];
        assert_eq!(r.samples.len(), 3, "{r:?}");
        assert_eq!(r.bytes, rows_bytes(&calm), "{r:?}");
        assert_eq!(ex.calls.len(), calm.calls.len() + 1, "{:?}", ex.calls);
        assert!((r.median_mib_s.unwrap() - 100.0).abs() < 1.0, "{r:?}");
        // A real ramp-up reads low in the second short sample too: the row is lengthened.
        let mut ex = Scripted::new(&[("a", 100.0)], 0.3, 0.0);
        let rows = run_it(&mut ex, &plan(&["a"]));
        assert!(rows[0].sample_seconds.iter().all(|&s| s > 1.0), "{rows:?}");
    }

    /// The size of the calm run's samples: its last call is the longer of its pair.
    fn rows_bytes(ex: &Scripted) -> u64 {
        ex.calls[ex.calls.len() - 2].1
    }

    /// Noise without a ramp-up (every other transfer 15% slow) does not lengthen samples: a
    /// longer sample that is slower is no sign that short ones read low. The noise is in the
    /// phase that makes each row's longer sample the slow one; in the other, slow, fast, slow
    /// again is what a ramp-up looks like, and no second short sample can tell them apart.
    #[test]
    fn noise_alone_keeps_samples_short() {
        let mut ex = Scripted::new(&[("a", 100.0), ("b", 90.0), ("c", 80.0)], 0.0, 0.15);
        ex.phase = 1;
        let rows = run_it(&mut ex, &plan(&["a", "b", "c"]));
        for r in &rows {
            assert!(
                r.sample_seconds.iter().all(|&s| s < 1.0),
                "{}: {:?}",
                r.cipher,
                r.sample_seconds
            );
        }
    }

    /// A pair with a session of its own warms it up once, in its first direction; the download
    /// after its uploads starts at their size and takes no warm-up. Where only the process
    /// warms, only the run's first row takes one.
    #[test]
    fn a_pair_warms_up_once_and_a_process_once_per_run() {
        let names = ["a", "b"];
        let scripted = || Scripted::new(&[("a", 100.0), ("b", 100.0)], 0.0, 0.0);
        let mut p = plan(&names);
        p.directions = vec![Direction::Upload, Direction::Download];
        let mut a = adaptive();
        a.race = false;
        a.max_samples = 2;
        let mib = |ex: &Scripted, c: &str| -> Vec<u64> {
            ex.calls
                .iter()
                .filter(|(n, _)| n == c)
                .map(|(_, b)| b / MIB)
                .collect()
        };
        let mut ex = scripted();
        let rows = run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
        // Upload: a sizing transfer, a warm-up, a sample and one twice as long; download: the
        // same two samples, the first at the upload's size.
        assert_eq!(mib(&ex, "a"), [4, 32, 32, 64, 32, 64]);
        // The next pair's first transfer is a quarter of a shortest sample at the rate of the
        // row before (6.25 MiB), then sized as the first was.
        assert_eq!(mib(&ex, "b"), [6, 32, 32, 64, 32, 64]);
        assert!(rows.iter().all(|r| r.samples.len() == 2));
        // Nothing to warm per pair: after the run's first row, the first transfer long enough
        // is the first sample.
        let mut ex = Scripted {
            kept: false,
            ..scripted()
        };
        run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
        assert_eq!(mib(&ex, "a"), [4, 32, 32, 64, 32, 64]);
        assert_eq!(mib(&ex, "b"), [6, 32, 64, 32, 64]);
    }

    /// A pair like the one before reaches its sample length after one short transfer; one 20
    /// times slower than the one before spends a bounded time on its first transfer.
    #[test]
    fn a_new_pair_is_sized_from_the_rate_of_the_row_before() {
        let mut ex = Scripted::new(&[("a", 1000.0), ("b", 1000.0), ("c", 50.0)], 0.0, 0.0);
        let mut a = adaptive();
        a.race = false;
        a.max_samples = 2;
        run(
            &mut ex,
            &plan(&["a", "b", "c"]),
            &a,
            Context::default(),
            &Quiet,
        )
        .unwrap();
        let calls = |c: &str| -> Vec<u64> {
            ex.calls
                .iter()
                .filter(|(n, _)| n == c)
                .map(|(_, b)| *b)
                .collect()
        };
        // From 4 MiB, "a" takes two sizing transfers before its warm-up at the sample length.
        assert_eq!(calls("a").len(), 5, "{:?}", calls("a"));
        // "b" takes one: a quarter of the shortest sample at a's rate.
        let b = calls("b");
        assert_eq!(b.len(), 4, "{b:?}");
        assert!((b[0] as f64 / MIB as f64 - 62.5).abs() < 1.0, "{b:?}");
        // "c" at 1/20 of b's rate: its first transfer lasts 1.25 s (five shortest samples);
        // the samples start again from the shortest length at the rate it showed.
        let c = calls("c");
        let first_s = c[0] as f64 / MIB as f64 / 50.0;
        assert!((first_s - 1.25).abs() < 0.02, "{c:?}");
        let mib: Vec<u64> = c[1..].iter().map(|b| b / MIB).collect();
        assert_eq!(mib, [16, 32], "{c:?}");
    }

    /// One login at a time, none during a sample: the next pair's session is opened once this
    /// pair's own login is over (after its first transfer, or from its start when it was
    /// opened ahead itself), and the run waits for the new login (`settle`) before every
    /// transfer that may be a sample: after the warm-up, and before a warm row's first
    /// transfer.
    #[test]
    fn the_next_login_runs_during_the_warm_up_and_never_during_a_sample() {
        let mut ex = Scripted::new(&[("a", 100.0), ("b", 100.0), ("c", 100.0)], 0.0, 0.0);
        let mut p = plan(&["a", "b", "c"]);
        p.directions = vec![Direction::Upload, Direction::Download];
        let mut a = adaptive();
        a.race = false;
        a.max_samples = 2;
        run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
        // "a" asks for "b" once its own first transfer (its login) is over; "b", opened ahead,
        // asks for "c" before its first transfer, once its own login is waited for.
        let want = [
            "a:4",
            "prepare:b",
            "a:32",
            "settle",
            "a:32",
            "a:64",
            "settle",
            "a:32",
            "a:64",
            "settle",
            "prepare:c",
            "b:6",
            "b:32",
            "settle",
            "b:32",
            "b:64",
            "settle",
            "b:32",
            "b:64",
            "c:6",
            "c:32",
            "settle",
            "c:32",
            "c:64",
            "settle",
            "c:32",
            "c:64",
        ];
        assert_eq!(ex.events, want);
    }

    /// A download at 0.4 of its upload's rate: the size the upload settled on lasts 2.5
    /// shortest samples, too long for a first guess from another cipher but within the
    /// longest length, so it is the download's first sample, not a transfer thrown away.
    #[test]
    fn the_size_the_other_direction_settled_on_is_kept_up_to_the_longest_length() {
        let mut ex = Scripted {
            download_share: 0.4,
            ..Scripted::new(&[("a", 100.0)], 0.0, 0.0)
        };
        let mut p = plan(&["a"]);
        p.directions = vec![Direction::Upload, Direction::Download];
        let mut a = adaptive();
        a.race = false;
        a.max_samples = 2;
        let rows = run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
        // The upload ends with its second sample, twice its size.
        let up = ex
            .calls
            .iter()
            .position(|(_, b)| *b == 2 * rows[0].bytes)
            .unwrap();
        let down: Vec<u64> = ex.calls[up + 1..].iter().map(|(_, b)| *b).collect();
        assert_eq!(down.len(), 2, "{down:?}");
        assert_eq!(down[0], rows[0].bytes);
        assert!(rows[1].sample_seconds[0] > OVERSHOT * a.start_s, "{rows:?}");
        assert_eq!(rows[1].bytes, rows[0].bytes);
    }

    #[test]
    fn sizing_does_not_aim_past_the_longest_length() {
        // 0.5 s seen, 1.9 s wanted, 2 s the longest: next_size alone would aim at 2.4 s.
        let next = aim(10 * MIB, 0.5, 1.9, 2.0);
        assert!(next <= 40 * MIB, "{next}");
        assert!(next > 10 * MIB);
    }

    /// Samples that agree but all pay the same start: a 50 ms start at 100 MiB/s makes every
    /// 0.25 s sample read about 20% low, and a pair of 0.25 s and 0.5 s ones disagree by less
    /// than a tenth. The start cost the pair implies must lengthen them to where it is at most
    /// the noise floor.
    #[test]
    fn a_start_cost_lengthens_samples_that_agree() {
        let mut ex = Scripted::new(&[("a", 100.0), ("b", 90.0)], 0.05, 0.0);
        let mut a = adaptive();
        a.max_samples = 2;
        let rows = run(&mut ex, &plan(&["a", "b"]), &a, Context::default(), &Quiet).unwrap();
        for r in &rows {
            assert!(
                r.sample_seconds.iter().all(|&s| s >= 0.05 / NOISE_FLOOR),
                "{r:?}"
            );
            let truth = if r.cipher == "a" { 100.0 } else { 90.0 };
            assert!(
                r.median_mib_s.unwrap() >= truth * (1.0 - NOISE_FLOOR),
                "{r:?}"
            );
        }
        let pair = |mib: u64, secs: f64| Sample {
            bytes: mib * MIB,
            seconds: secs,
            client_cpu_s: None,
            client_user_cpu_s: None,
            server_cpu_s: None,
            server_busy_s: None,
            server_quota_cores: None,
            placement: None,
        };
        let cost = start_cost(&pair(10, 0.15), &pair(20, 0.25)).unwrap();
        assert!((cost - 0.05).abs() < 1e-9);
        assert_eq!(start_cost(&pair(10, 0.1), &pair(10, 0.2)), None);
    }

    /// One early pair whose noise implies a start cost at the longest length (its first
    /// sample slow, the second short sample slow too, but by less: within the noise the first
    /// showed) must not hold every later row at the longest length: the pair each later row's
    /// resizing makes shows no start, and the floor comes down.
    #[test]
    fn one_noisy_start_cost_does_not_hold_the_run_at_the_longest_length() {
        let mut calm = Scripted::new(&[("a", 100.0)], 0.0, 0.0);
        run_it(&mut calm, &plan(&["a"]));
        let first_sample = calm.calls.len() - 2;
        let names = ["a", "b", "c", "d"];
        let rates = [("a", 100.0), ("b", 95.0), ("c", 90.0), ("d", 85.0)];
        let mut ex = Scripted::new(&rates, 0.0, 0.0);
        // The first sample, and the second at its length (after the longer one).
        ex.disturbed = vec![(first_sample, 1.6), (first_sample + 2, 1.2)];
        let rows = run_it(&mut ex, &plan(&names));
        let a = &rows[0];
        assert!(a.samples.len() >= 3, "{a:?}");
        let last = rows.last().unwrap();
        assert!(
            last.sample_seconds.iter().all(|&s| s < 1.0),
            "{}: {:?}",
            last.cipher,
            last.sample_seconds
        );
    }

    #[test]
    fn a_row_below_the_leader_stops_after_two_samples() {
        let mut ex = Scripted::new(
            &[("lead", 400.0), ("slow", 40.0), ("close", 395.0)],
            0.0,
            0.01,
        );
        let rows = run_it(&mut ex, &plan(&["lead", "slow", "close"]));
        let slow = rows.iter().find(|r| r.cipher == "slow").unwrap();
        assert_eq!(slow.samples.len(), 2);
        assert_eq!(slow.stopped.as_deref(), Some("decided"));
        assert!(slow.median_mib_s.is_some() && slow.min_mib_s.is_some());
        // The two contenders overlap: sampled to the budget, not stopped early.
        for c in ["lead", "close"] {
            let r = rows.iter().find(|r| r.cipher == c).unwrap();
            assert_eq!(r.samples.len(), 5, "{c}: {r:?}");
            assert_eq!(r.stopped, None);
        }
        assert_eq!(
            rows.iter().map(|r| r.cipher.as_str()).collect::<Vec<_>>(),
            ["lead", "slow", "close"]
        );
    }

    /// A row decided in its first round is visited once more at the run's end, after every
    /// other row: a drift during the run (here every transfer after the first rounds reads
    /// 20% low) then widens its range too, not only the contenders'.
    #[test]
    fn a_row_decided_in_its_first_round_is_visited_again_at_the_end() {
        let mut ex = Scripted::new(
            &[("lead", 400.0), ("slow", 40.0), ("close", 395.0)],
            0.0,
            0.01,
        );
        let a = Adaptive {
            revisit: true,
            ..adaptive()
        };
        ex.drift = Some(1.25);
        let rows = run(
            &mut ex,
            &plan(&["lead", "slow", "close"]),
            &a,
            Context::default(),
            &Quiet,
        )
        .unwrap();
        let slow = rows.iter().find(|r| r.cipher == "slow").unwrap();
        assert_eq!(slow.samples.len(), 3, "{slow:?}");
        assert_eq!(slow.stopped.as_deref(), Some("decided"));
        // Its last sample is the run's last transfer, after the contenders' racing.
        assert_eq!(ex.calls.last().map(|c| c.0.as_str()), Some("slow"));
        let spread = stats::relative_spread(&slow.samples).unwrap();
        assert!(
            spread > 0.15,
            "the drift shows in its range: {:?}",
            slow.samples
        );
        // Rows sampled in several visits already are not visited again: they get as many
        // samples as without the revisit.
        let mut same = Scripted::new(
            &[("lead", 400.0), ("slow", 40.0), ("close", 395.0)],
            0.0,
            0.01,
        );
        same.drift = Some(1.25);
        let without = run_it(&mut same, &plan(&["lead", "slow", "close"]));
        for (a, b) in rows
            .iter()
            .zip(&without)
            .filter(|(a, _)| a.cipher != "slow")
        {
            assert!(a.samples.len() >= 3, "{a:?}");
            assert_eq!(a.samples.len(), b.samples.len(), "{}", a.cipher);
        }
    }

    /// Below the leader, a row whose two samples differ by more than the run's median noise
    /// but within what its noise explains (the upper decile, at least 10%) is decided; one
    /// beyond that gets another sample.
    #[test]
    fn a_row_below_the_leader_is_stable_within_the_runs_usual_noise() {
        let row = |cipher: &str, rates: &[f64]| Row {
            cipher: cipher.into(),
            mac: None,
            direction: Direction::Upload,
            size: MIB,
            samples: rates
                .iter()
                .map(|&r| Sample {
                    bytes: (r * MIB as f64) as u64,
                    seconds: 1.0,
                    client_cpu_s: None,
                    client_user_cpu_s: None,
                    server_cpu_s: None,
                    server_busy_s: None,
                    server_quota_cores: None,
                    placement: None,
                })
                .collect(),
            error: None,
            stopped: None,
            done: false,
            visits: 1,
        };
        let mut rows = vec![
            row("lead", &[400.0, 410.0]),
            row("steady", &[40.0, 43.0]),
            row("unsteady", &[40.0, 46.0]),
        ];
        let mut noise = Noise::default();
        for _ in 0..10 {
            noise.record(0.05);
        }
        decide(&mut rows, &adaptive(), &noise);
        assert_eq!(rows[1].stopped, Some("decided"));
        assert!(!rows[2].done && !rows[0].done);
    }

    /// After three samples a row whose range overlaps the leader's is ordered when its median
    /// trails by more than the noise, tied within half of it, and races on in between.
    #[test]
    fn an_overlapping_row_is_ordered_by_its_median_after_three_samples() {
        let row = |name: &str, rates: &[f64]| Row {
            cipher: name.into(),
            mac: None,
            direction: Direction::Upload,
            size: MIB,
            samples: rates
                .iter()
                .map(|r| Sample {
                    bytes: MIB,
                    seconds: 1.0 / r,
                    ..Sample::default()
                })
                .collect(),
            error: None,
            stopped: None,
            done: false,
            visits: 1,
        };
        let mut noise = Noise::default();
        noise.record(0.10);
        let mut rows = vec![
            row("lead", &[100.0, 120.0, 110.0]),
            row("behind", &[70.0, 101.0, 80.0]),
            row("close", &[95.0, 115.0, 105.0]),
            row("near", &[90.0, 112.0, 102.0]),
            row("young", &[70.0, 101.0]),
        ];
        decide(&mut rows, &adaptive(), &noise);
        let stopped: Vec<_> = rows.iter().map(|r| r.stopped).collect();
        assert_eq!(stopped, [None, Some("ordered"), Some("tied"), None, None]);
        // Once the rows still racing are settled, the leader is tied with the tied one.
        rows[3].done = true;
        rows[4].done = true;
        decide(&mut rows, &adaptive(), &noise);
        assert_eq!(rows[0].stopped, Some("tied"));
    }

    #[test]
    fn max_time_stops_the_contenders() {
        let mut ex = Scripted::new(&[("a", 100.0), ("b", 99.0)], 0.0, 0.02);
        let mut p = plan(&["a", "b", "gone"]);
        p.max_time_s = Some(0.1);
        let rows = run_it(&mut ex, &p);
        for r in &rows[..2] {
            assert_eq!(r.samples.len(), 2, "{r:?}");
            assert_eq!(r.stopped.as_deref(), Some("max-time"));
        }
        assert!(rows[2].error.as_deref().unwrap().contains("not offered"));
    }

    #[test]
    fn without_racing_every_row_gets_its_samples() {
        let mut ex = Scripted::new(&[("lead", 400.0), ("slow", 40.0)], 0.0, 0.0);
        let a = Adaptive {
            race: false,
            ..adaptive()
        };
        let rows = run(
            &mut ex,
            &plan(&["lead", "slow"]),
            &a,
            Context::default(),
            &Quiet,
        )
        .unwrap();
        assert!(rows
            .iter()
            .all(|r| r.samples.len() == 5 && r.stopped.is_none()));
    }
}
