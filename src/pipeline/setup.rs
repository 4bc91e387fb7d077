//! What the measuring steps share once the destination is checked and the samplers run.

use super::control::Control;
use super::dataset::Dataset;
use super::destination::Endpoint;
use super::options::Options;
use super::recording::Shared;

pub struct Setup<'a> {
    pub opts: &'a Options,
    pub end: &'a Endpoint,
    /// The control connection: every remote command that is not measured goes through it.
    pub control: &'a Control,
    /// This run's directory on the remote side (exists, registered for removal).
    pub run_dir: &'a str,
    pub dataset: &'a Dataset,
    /// The samplers' phase tag: every step says what it measures, so CPU is attributed.
    pub shared: &'a Shared,
    /// One progress line for humans.
    pub say: &'a dyn Fn(&str),
}
