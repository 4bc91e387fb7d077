//! The unit rates are shown in by terminal and Markdown tables (`--units`). Measurements are in
//! MiB/s (binary bytes per second) and the JSON, CSV and HTML keep them so; network people read
//! links in Mbit/s (iperf3's `-f m`), disk vendors in MB/s, so a table may show either.

use std::sync::atomic::{AtomicU8, Ordering};

const BYTES_PER_MIB: f64 = 1_048_576.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    /// Mebibytes (2^20 bytes) per second, as measured.
    MibS,
    /// Megabits (10^6 bits) per second, as link speeds and iperf3 count.
    MbitS,
    /// Megabytes (10^6 bytes) per second.
    MbS,
}

impl RateUnit {
    pub fn label(self) -> &'static str {
        match self {
            RateUnit::MibS => "MiB/s",
            RateUnit::MbitS => "Mbit/s",
            RateUnit::MbS => "MB/s",
        }
    }

    /// `mib_s` in this unit.
    pub fn of(self, mib_s: f64) -> f64 {
        match self {
            RateUnit::MibS => mib_s,
            RateUnit::MbitS => mib_s * BYTES_PER_MIB * 8.0 / 1e6,
            RateUnit::MbS => mib_s * BYTES_PER_MIB / 1e6,
        }
    }
}

static UNIT: AtomicU8 = AtomicU8::new(RateUnit::MibS as u8);

/// Sets the process's table unit (`--units`); the CLI calls it once at start.
pub fn set(unit: RateUnit) {
    UNIT.store(unit as u8, Ordering::Relaxed);
}

/// The unit tables show rates in.
pub fn current() -> RateUnit {
    match UNIT.load(Ordering::Relaxed) {
        x if x == RateUnit::MbitS as u8 => RateUnit::MbitS,
        x if x == RateUnit::MbS as u8 => RateUnit::MbS,
        _ => RateUnit::MibS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mib_per_second_in_each_unit() {
        assert_eq!(RateUnit::MibS.of(1.0), 1.0);
        assert!((RateUnit::MbitS.of(1.0) - 8.388608).abs() < 1e-9);
        assert!((RateUnit::MbS.of(1.0) - 1.048576).abs() < 1e-9);
        // 1 Gbit/s is 119.2 MiB/s.
        assert!((RateUnit::MbitS.of(119.209_29) - 1000.0).abs() < 0.01);
    }
}
