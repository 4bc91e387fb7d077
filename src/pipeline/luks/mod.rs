//! `sshtune pipeline --luks`: SSH cipher × LUKS setting measured as one system. Scratch LUKS2
//! volumes on a loop file beside the destination, made and removed by a POSIX-sh helper that
//! runs there through ssh (`agent.rs`: the destination needs nothing of sshtune), the settings
//! compared (`settings.rs`), the order things run in (`run.rs`): the stages alone
//! (`alone.rs`), one volume per setting for its dm-crypt pass and its cells (`volume.rs`,
//! `matrix.rs`, each copy checked by `verify.rs`), the report's section (`finish.rs`). The
//! time the matrix takes and its cut to `--max-time` (`budget.rs`), a setting's copies with
//! the helper emptying and flushing the volume (`copy.rs`), what each stage costs in CPU net
//! of the samplers' load (`costs.rs`), the model that predicts a cell from its stages
//! measured alone and trims settings before the end-to-end runs (`predict.rs`), and the
//! recommendation (`advice.rs`) with its gain split into a cipher change, a LUKS change and
//! both (`split.rs`); `step.rs` holds what the steps share. See docs/pipeline.md.

pub mod advice;
pub mod agent;
mod alone;
pub mod budget;
pub mod copy;
pub mod costs;
pub mod finish;
mod matrix;
pub mod predict;
pub mod run;
pub mod settings;
pub mod split;
mod step;
mod verify;
mod volume;
