//! Transport overhead: the CPU the native client spent per byte sent in bench, against the CPU
//! per byte of only sealing the same cipher and MAC in this process, in the same run.
//!
//! The ratio says how far the transport is from the crypto limit: 1.0 would mean channel
//! bookkeeping, copies and socket writes cost nothing. It is only computed for native uploads,
//! because there the client is this process's own thread (bench records that thread's CPU)
//! and sealing is most of its work; an `ssh` process or a receiving client also does other
//! things, so their ratio would not measure the transport. Both sides are CPU-time rates, so
//! a loaded machine slows both alike and the ratio still compares like with like.

use super::{measure, subject::Subject};
use crate::bench::model::{BenchReport, Direction, EngineKind, TransportOverhead};
use crate::bench::ResultRow;
use anyhow::{anyhow, Result};

/// CPU seconds of sealing per cipher and MAC, in `SEAL_SAMPLES` samples whose median counts:
/// short, since the packet loop is steady after the warm-up and the thread's CPU clock counts
/// nanoseconds (sshtune speed's samples are as short), but split in three because one sample
/// on a busy machine varied by a third. 0.3 s cost the embedded default 5 s of its 15 pairs.
pub const SEAL_CPU_S: f64 = 0.15;
const SEAL_SAMPLES: u32 = 3;

/// MiB sealed per CPU-second with the backend the transport itself picks (the catalog's
/// default for this CPU), in 32 KiB packets with framing, padding and tag, as `sshtune speed` seals them.
pub fn seal_mib_per_cpu_s(cipher: &str, mac: Option<&str>) -> Result<f64> {
    let c = ciphers::cipher(cipher).ok_or_else(|| anyhow!("unknown cipher {cipher}"))?;
    let subject = match mac.filter(|_| !c.is_aead()) {
        Some(m) => Subject::Pair(
            c,
            ciphers::mac(m).ok_or_else(|| anyhow!("unknown MAC {m}"))?,
        ),
        None => Subject::Cipher(c),
    };
    let mut op = subject.op(c.default_backend())?;
    let samples = measure::run(&mut op, SEAL_CPU_S / SEAL_SAMPLES as f64, SEAL_SAMPLES)?;
    let rates: Vec<f64> = samples.iter().map(measure::Sample::mib_s).collect();
    crate::stats::median(&rates).ok_or_else(|| anyhow!("no seal sample"))
}

/// MiB per CPU-second of a thread that only writes to a loopback TCP socket, in the
/// transport's batch size (`transport::packet::WRITE_BATCH`), the median of `SEAL_SAMPLES`
/// samples of `SEAL_CPU_S / SEAL_SAMPLES` each; a second thread reads. Over loopback the
/// sending thread also runs the receive path of the packets it sends, as the bench's native
/// sender does, so this is the kernel's share of its CPU that no transport can avoid.
pub fn loopback_send_mib_per_cpu_s() -> Result<f64> {
    use std::io::Write;
    let mut pair = crate::bench::ceiling::LoopbackPair::open()?;
    let s = &mut pair.sender;
    let chunk = vec![0x5au8; crate::transport::packet::WRITE_BATCH];
    let per_sample = SEAL_CPU_S / f64::from(SEAL_SAMPLES);
    let cpu = || crate::sysinfo::thread_cpu_seconds().ok_or_else(|| anyhow!("no thread CPU clock"));
    // A warm-up: the connection's window and the reader's start.
    for _ in 0..64 {
        s.write_all(&chunk)?;
    }
    let mut rates = Vec::new();
    for _ in 0..SEAL_SAMPLES {
        let c0 = cpu()?;
        let mut bytes = 0u64;
        let used = loop {
            s.write_all(&chunk)?;
            bytes += chunk.len() as u64;
            let used = cpu()? - c0;
            if used >= per_sample {
                break used;
            }
        };
        rates.push(bytes as f64 / 1048576.0 / used);
    }
    pair.finish()?;
    crate::stats::median(&rates).ok_or_else(|| anyhow!("no socket sample"))
}

/// The row's overhead given the seal rate (and the plain socket's, when it applies), when the
/// row has a throughput and its client CPU.
pub fn of_row(
    row: &ResultRow,
    seal_mib_per_cpu_s: f64,
    socket_mib_per_cpu_s: Option<f64>,
) -> Option<TransportOverhead> {
    let share = row.client_cpu_pct? / 100.0;
    let mib_s = row.median_mib_s?;
    (share > 0.0 && mib_s > 0.0 && seal_mib_per_cpu_s > 0.0).then(|| {
        let sender = mib_s / share;
        let sender_user = row
            .client_user_cpu_pct
            .filter(|u| *u > 0.0)
            .map(|u| mib_s / (u / 100.0));
        let socket = socket_mib_per_cpu_s.filter(|s| *s > 0.0);
        TransportOverhead {
            sender_mib_per_cpu_s: sender,
            seal_mib_per_cpu_s,
            ratio: seal_mib_per_cpu_s / sender,
            sender_user_mib_per_cpu_s: sender_user,
            user_ratio: sender_user.map(|u| seal_mib_per_cpu_s / u),
            socket_mib_per_cpu_s: socket,
            // CPU-seconds per MiB: the sender's against sealing's plus the socket's.
            beyond_socket_ratio: socket
                .map(|k| (1.0 / sender) / (1.0 / seal_mib_per_cpu_s + 1.0 / k)),
        }
    })
}

/// A row's cipher and MAC names.
type PairKey = (String, Option<String>);

/// Whether the row is one the ratio means something for (see the module doc).
fn applies(row: &ResultRow) -> bool {
    row.engine == EngineKind::Native.as_str()
        && row.direction == Direction::Upload
        && row.error.is_none()
}

/// Measures the seal rate once per cipher and MAC of the report's native uploads and fills
/// in their `transport_overhead`. A pair that cannot be sealed here leaves its rows without
/// one and says why in the returned warnings.
pub fn annotate(report: &mut BenchReport) -> Vec<String> {
    let mut warnings = Vec::new();
    // The plain socket's cost is only this sender's when the server is on this machine: a
    // real network's send costs the sender less than loopback's send-and-receive.
    let local = report.embedded || report.server.same_machine == Some(true);
    let socket = if local && report.results.iter().any(applies) {
        match loopback_send_mib_per_cpu_s() {
            Ok(r) => Some(r),
            Err(e) => {
                warnings.push(format!(
                    "transport overhead: the plain loopback socket could not be timed: {e:#}"
                ));
                None
            }
        }
    } else {
        None
    };
    // The seal rate per (cipher, MAC), None when it could not be timed.
    let mut rates: Vec<(PairKey, Option<f64>)> = Vec::new();
    for row in report.results.iter_mut().filter(|r| applies(r)) {
        let key = (row.cipher.clone(), row.mac.clone());
        let rate = match rates.iter().find(|(k, _)| *k == key) {
            Some((_, r)) => *r,
            None => {
                let r = match seal_mib_per_cpu_s(&row.cipher, row.mac.as_deref()) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        warnings.push(format!(
                            "transport overhead of {}: sealing could not be timed: {e:#}",
                            row.cipher
                        ));
                        None
                    }
                };
                rates.push((key, r));
                r
            }
        };
        row.transport_overhead = rate.and_then(|r| of_row(row, r, socket));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(engine: &str, cipher: &str, mac: Option<&str>, d: Direction) -> ResultRow {
        let mut r = ResultRow::failed(engine, cipher, mac, d, String::new());
        r.error = None;
        r.median_mib_s = Some(400.0);
        r.client_cpu_pct = Some(80.0);
        r
    }

    #[test]
    fn ratio_is_seal_rate_over_sender_rate_per_cpu_second() {
        let r = row("native", "aes128-ctr", None, Direction::Upload);
        // 400 MiB/s on 80% of a core is 500 MiB per CPU-second; sealing alone does 650.
        let o = of_row(&r, 650.0, None).unwrap();
        assert_eq!(o.sender_mib_per_cpu_s, 500.0);
        assert!((o.ratio - 1.3).abs() < 1e-9, "{o:?}");
        assert_eq!(o.user_ratio, None);
        assert_eq!(o.beyond_socket_ratio, None);
        // A plain socket sends 1300 MiB per CPU-second: sealing and sending cost
        // 1/650 + 1/1300 = 1/433.3 s per MiB, against the sender's 1/500: 0.867×.
        let o = of_row(&r, 650.0, Some(1300.0)).unwrap();
        assert!(
            (o.beyond_socket_ratio.unwrap() - 433.333 / 500.0).abs() < 1e-4,
            "{o:?}"
        );
        // Half of that CPU in user space: 1000 MiB per user CPU-second, 0.65× of sealing.
        let mut split = r.clone();
        split.client_user_cpu_pct = Some(40.0);
        let o = of_row(&split, 650.0, None).unwrap();
        assert_eq!(o.sender_user_mib_per_cpu_s, Some(1000.0));
        assert!((o.user_ratio.unwrap() - 0.65).abs() < 1e-9, "{o:?}");
        let mut no_cpu = r.clone();
        no_cpu.client_cpu_pct = None;
        assert_eq!(of_row(&no_cpu, 650.0, None), None);
    }

    #[test]
    fn only_native_uploads_get_a_measured_overhead() {
        let text = include_str!("../../tests/fixtures/config/bench-openssh-9.2.json");
        let mut report: BenchReport = serde_json::from_str(text).unwrap();
        let etm = Some("umac-64-etm@openssh.com");
        report.results = vec![
            row("native", "aes128-ctr", etm, Direction::Upload),
            row("native", "aes128-ctr", etm, Direction::Download),
            row("openssh", "aes128-ctr", etm, Direction::Upload),
            row(
                "native",
                "chacha20-poly1305@openssh.com",
                None,
                Direction::Upload,
            ),
        ];
        assert_eq!(annotate(&mut report), Vec::<String>::new());
        let has: Vec<bool> = report
            .results
            .iter()
            .map(|r| r.transport_overhead.is_some())
            .collect();
        assert_eq!(has, [true, false, false, true]);
        for r in report.results.iter().filter_map(|r| r.transport_overhead) {
            assert!(r.seal_mib_per_cpu_s > 1.0 && r.ratio > 0.0, "{r:?}");
            // The fixture's server is another machine: no loopback socket to compare with.
            assert_eq!(r.beyond_socket_ratio, None, "{r:?}");
        }
        let json = serde_json::to_string(&report).unwrap();
        assert_eq!(json.matches("transport_overhead").count(), 2);
    }
}
