//! A criterion measurement that counts CPU time instead of wall time: this thread's, or the
//! whole process's (helper threads included).
//!
//! Why: the benches run on a 2-core machine shared with other builds, where wall time mostly
//! measures how often the scheduler preempted us. CPU time of the benchmarking thread is what
//! `sshtune speed` reports too, so the two agree on what a "MiB/s" is; process CPU time shows
//! what work moved to another thread costs in total.

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;
use nix::time::{clock_gettime, ClockId};

pub struct CpuTime(ClockId);

#[allow(dead_code)] // not every bench uses both clocks
impl CpuTime {
    pub fn thread() -> Self {
        CpuTime(ClockId::CLOCK_THREAD_CPUTIME_ID)
    }
    pub fn process() -> Self {
        CpuTime(ClockId::CLOCK_PROCESS_CPUTIME_ID)
    }
    fn now_ns(&self) -> u64 {
        let t = clock_gettime(self.0).expect("CPU clock");
        t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
    }
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        self.now_ns()
    }
    fn end(&self, start: u64) -> u64 {
        self.now_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Nanoseconds of CPU, shown as µs; throughput as MiB/s (MiB per CPU-second).
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, _typical: f64, values: &mut [f64]) -> &'static str {
        values.iter_mut().for_each(|v| *v /= 1e3);
        "µs cpu"
    }

    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let bytes = match t {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => *b as f64,
            Throughput::Elements(e) => *e as f64,
        };
        // ns per iteration → MiB per CPU-second.
        values
            .iter_mut()
            .for_each(|v| *v = bytes / (*v / 1e9) / (1024.0 * 1024.0));
        "MiB/s cpu"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
