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
//! the run's time cap is spent. Every row gets one sample midway, between the first rounds
//! and the racing, and a third visit at the end when its two visits disagree; a row's figure
//! is the median over its visits (`Row::figure`), so that back-to-back samples count once.
//! Every row keeps a median and a spread, and says why it stopped. The native engine's rows
//! over loopback first get one untimed transfer each (`Race::survey`): a row measured before
//! the process had run the others read low.

mod budget;
mod decide;
mod events;
mod first_round;
mod noise;
mod race;
mod row;
mod settings;
#[cfg(test)]
mod tests;
mod visits;

pub use budget::Budget;
pub use noise::{disagreement, start_cost, Noise, NOISE_FLOOR};
pub use settings::Adaptive;

use super::executor::Executor;
use super::model::ResultRow;
use super::run::{Context, Sampling};
use crate::progress::Progress;
use anyhow::Result;
use race::Race;

/// Runs the plan in the default mode. Errors that concern one cipher become rows.
pub fn run(
    exec: &mut dyn Executor,
    sampling: &Sampling,
    adaptive: &Adaptive,
    ctx: Context,
    progress: &dyn Progress,
) -> Result<Vec<ResultRow>> {
    let mut race = Race::new(exec, sampling, adaptive, progress);
    race.survey()?;
    for p in 0..sampling.pairs.len() {
        race.first_round_of_pair(p)?;
    }
    race.midway()?;
    race.racing()?;
    race.revisit()?;
    Ok(race.finish(ctx))
}
