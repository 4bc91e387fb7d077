//! A row's first round: warm-up, samples sized to the start-cost floor, then lengthened.

use super::budget::Budget;
use super::noise::{disagreement, Noise};
use super::row::Row;
use super::settings::Adaptive;
use crate::bench::executor::{Executor, Job, Sample};
use crate::bench::run::{next_size, Sampling, MAX_SIZE};
use crate::stats;
use crate::target::SshError;

/// Sizing rounds of the warm-up, as in the thorough loop.
const MAX_SIZING_ROUNDS: u32 = 8;

/// The share of the shortest sample a new pair's first transfer aims at, at the rate of the
/// row before (`first_guess`): small enough that a cipher 25 times slower spends 1.6 s on
/// it, large enough that one sizing transfer after it reaches the shortest length.
const FIRST_GUESS_SHARE: f64 = 0.25;

/// Bytes per MiB, for the rates (`Sample::mib_s`) turned back into sizes.
const MIB_F: f64 = 1024.0 * 1024.0;

/// A sizing transfer longer than this many shortest samples is not kept as a sample: the
/// samples after it would start from its length, and the second is twice the first.
pub(super) const OVERSHOT: f64 = 2.0;

/// What a row's first transfer starts from (`first_round`).
#[derive(Debug, Clone)]
pub(super) struct Footing<'a> {
    /// Nothing left to warm up: the pair's other direction has just run in the same session,
    /// or the pair has nothing of its own to warm and this process has run a transfer.
    pub(super) warm: bool,
    /// The first transfer's size is the one the pair's other direction settled on.
    pub(super) settled: bool,
    /// The next pair, for a row with a warm-up: its session is opened (`Executor::prepare`)
    /// once this row's first transfer is over, so that its login runs during the rest of the
    /// warm-up and no two logins run at once (a server's `PerSourceMaxStartups` may allow
    /// one).
    pub(super) ahead: Option<Job<'a>>,
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
pub(super) fn first_round(
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
pub(super) fn first_guess(before: &Row, a: &Adaptive) -> Option<u64> {
    let mib_s = stats::median(&before.rates())?;
    Some((mib_s * MIB_F * a.start_s * FIRST_GUESS_SHARE) as u64)
}

/// The first transfer of a row whose own rate an untimed transfer showed (`Race::survey`):
/// the bytes that last one shortest sample at that rate. A transfer of a few milliseconds
/// pays its channel's opening too and reads low, so this errs short, and a transfer short of
/// the shortest sample only sizes the next.
pub(super) fn own_guess(mib_s: f64, a: &Adaptive) -> u64 {
    (mib_s * MIB_F * a.start_s) as u64
}

/// The size that lasts a quarter past `target` at the rate a transfer of `size` bytes in
/// `seconds` showed, in whole MiB: `next_size`'s aim, for a transfer that lasted too long.
fn shrink(size: u64, seconds: f64, target: f64) -> u64 {
    let bytes = (size as f64 * target * 1.25 / seconds.max(1e-3)) as u64;
    bytes.div_ceil(1 << 20).saturating_mul(1 << 20).min(size)
}

/// `next_size` towards `target`, but not past the size that would last `longest` at the
/// rate just seen: the thorough mode's length is the most a sample is worth.
pub(super) fn aim(size: u64, seconds: f64, target: f64, longest: f64) -> u64 {
    let cap = (size as f64 * longest / seconds.max(1e-3)) as u64;
    next_size(size, seconds, target).min(cap.max(size + 1))
}
