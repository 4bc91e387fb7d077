//! The default mode's settings: sample lengths, bytes, samples, racing, later visits.

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
    /// Give every row a sample midway, after every row's first round (`Race::midway`), and
    /// a third visit at the run's end where its two visits disagree (`Race::revisit`).
    pub revisit: bool,
    /// One untimed transfer of every row before any row's first round (`Race::survey`), as
    /// `--thorough` sizes every row before its first sample: set for the native engine over
    /// loopback, and only where a pair has nothing of its own to warm
    /// (`Executor::warms_per_pair`).
    pub survey: bool,
}
