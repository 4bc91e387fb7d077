//! Latency × window: an SSH channel can have at most one window of data unacknowledged, so a
//! transfer can never beat `window / RTT`, whatever the CPUs and the link could do. On a long
//! link this is the bottleneck neither CPU nor raw-TCP figures reveal (raw TCP scales its own
//! window far beyond SSH's), so bench compares throughput with this limit (docs/verdicts.md).

/// OpenSSH's session channel window: CHAN_SES_WINDOW_DEFAULT = 64 packets × 32 KiB.
pub const OPENSSH_CHANNEL_WINDOW: u64 = 64 * 32 * 1024;

/// Throughput within this share of `window / RTT` is taken as window-bound, like the network
/// threshold: the window is never filled perfectly (acks, adjust messages, scheduling).
pub const WINDOW_NEAR: f64 = 0.85;

const MIB: f64 = 1024.0 * 1024.0;

/// The most a window of `window_bytes` allows over a path of `rtt_s`, MiB/s.
pub fn limit_mib_s(window_bytes: u64, rtt_s: f64) -> f64 {
    if rtt_s <= 0.0 {
        return f64::INFINITY;
    }
    window_bytes as f64 / rtt_s / MIB
}

/// The round trip above which `window_bytes` caps a transfer below `mib_s`, seconds.
pub fn rtt_limiting(window_bytes: u64, mib_s: f64) -> f64 {
    if mib_s <= 0.0 {
        return f64::INFINITY;
    }
    window_bytes as f64 / (mib_s * MIB)
}

/// Bandwidth-delay product: the window a path of `mib_s` and `rtt_s` needs to be filled, bytes.
pub fn bdp_bytes(mib_s: f64, rtt_s: f64) -> u64 {
    (mib_s * MIB * rtt_s.max(0.0)).ceil() as u64
}

/// True when `mib_s` is close enough to `window / RTT` that the window is the likely limit.
pub fn is_window_bound(mib_s: f64, window_bytes: u64, rtt_s: f64) -> bool {
    let limit = limit_mib_s(window_bytes, rtt_s);
    limit.is_finite() && mib_s >= WINDOW_NEAR * limit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn window_is_two_mib() {
        assert_eq!(OPENSSH_CHANNEL_WINDOW, 2 * 1024 * 1024);
    }

    #[test]
    fn limit_is_window_over_rtt() {
        assert!(close(limit_mib_s(OPENSSH_CHANNEL_WINDOW, 0.010), 200.0));
        assert!(close(limit_mib_s(OPENSSH_CHANNEL_WINDOW, 0.100), 20.0));
        assert!(close(limit_mib_s(OPENSSH_CHANNEL_WINDOW, 0.200), 10.0));
        assert_eq!(limit_mib_s(OPENSSH_CHANNEL_WINDOW, 0.0), f64::INFINITY);
    }

    #[test]
    fn rtt_and_bdp_are_inverses() {
        // 1 Gbit/s ≈ 119.2 MiB/s: a 2 MiB window fills it only below ~16.8 ms.
        let gbit = 1e9 / 8.0 / MIB;
        let rtt = rtt_limiting(OPENSSH_CHANNEL_WINDOW, gbit);
        assert!((rtt - 0.016777216).abs() < 1e-9, "{rtt}");
        assert_eq!(bdp_bytes(gbit, rtt), OPENSSH_CHANNEL_WINDOW);
        // At 50 ms the same link needs a ~6 MiB window.
        assert_eq!(bdp_bytes(gbit, 0.050), 6_250_000);
    }

    #[test]
    fn window_bound_needs_to_be_near_the_limit() {
        // 100 ms: limit 20 MiB/s.
        assert!(is_window_bound(19.0, OPENSSH_CHANNEL_WINDOW, 0.1));
        assert!(is_window_bound(17.0, OPENSSH_CHANNEL_WINDOW, 0.1));
        assert!(!is_window_bound(16.9, OPENSSH_CHANNEL_WINDOW, 0.1));
        // Loopback-like RTT: no transfer is window-bound.
        assert!(!is_window_bound(500.0, OPENSSH_CHANNEL_WINDOW, 0.00005));
        assert!(!is_window_bound(500.0, OPENSSH_CHANNEL_WINDOW, 0.0));
    }
}
