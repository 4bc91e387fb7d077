//! Keystream ahead on a helper thread (`SealingKey::with_keystream_ahead`) against the
//! single-thread key, sealing 32 KiB packets as `sshtune speed` does (framing and padding
//! included), for chacha20-poly1305@openssh.com (openssl backend) and aes128-ctr with
//! umac-64-etm@openssh.com (OpenSSH's first MAC) in both backends.
//!
//! Three views of the same work: `wall` is what a transfer would see (the point of the
//! helper); `cpu` is the whole process's CPU time per packet (what the helper costs in total);
//! `sealer-cpu` is the sealing thread's alone, the ceiling `wall` could reach if the helper
//! had a core to itself and kept up. A gain needs a free core: on a loaded machine the helper
//! competes with the sealer.
//! `cargo bench -p ciphers --bench ahead`.

mod support {
    pub mod cpu_time;
}

use ciphers::{Backend, DirectionKeys, SealingKey, HEADER_LEN};
use criterion::measurement::Measurement;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;
use support::cpu_time::CpuTime;

const LEN: usize = 32 * 1024;

const CASES: &[(&str, Option<&str>, Backend)] = &[
    ("chacha20-poly1305@openssh.com", None, Backend::Openssl),
    (
        "aes128-ctr",
        Some("umac-64-etm@openssh.com"),
        Backend::Openssl,
    ),
    ("aes128-ctr", Some("umac-64-etm@openssh.com"), Backend::Rust),
];

fn seal_all<M: Measurement>(c: &mut Criterion<M>, view: &str) {
    let mut g = c.benchmark_group(view);
    g.throughput(Throughput::Bytes(LEN as u64))
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(30);
    let (key, iv, mk) = ([7u8; 64], [8u8; 16], [9u8; 64]);
    for &(cipher, mac, backend) in CASES {
        let dk = DirectionKeys {
            cipher,
            mac,
            key: &key,
            iv: &iv,
            mac_key: &mk,
        };
        let keys = [
            ("single", SealingKey::new(&dk, Some(backend)).unwrap()),
            (
                "ahead",
                SealingKey::with_keystream_ahead(&dk, Some(backend)).unwrap(),
            ),
        ];
        for (how, mut s) in keys {
            let mut pkt = vec![0x55u8; HEADER_LEN + LEN];
            let mut seq = 0u32;
            g.bench_function(format!("{cipher}/{backend}/{how}"), |b| {
                b.iter(|| {
                    pkt.truncate(HEADER_LEN + LEN);
                    s.frame(&mut pkt, 0).unwrap();
                    s.seal_in_place(seq, &mut pkt).unwrap();
                    seq = seq.wrapping_add(1);
                })
            });
        }
    }
    g.finish();
}

fn wall(c: &mut Criterion) {
    seal_all(c, "wall");
}

fn cpu(c: &mut Criterion<CpuTime>) {
    seal_all(c, "cpu");
}

fn sealer_cpu(c: &mut Criterion<CpuTime>) {
    seal_all(c, "sealer-cpu");
}

criterion_group!(wall_view, wall);
criterion_group! {
    name = cpu_view;
    config = Criterion::default().with_measurement(CpuTime::process());
    targets = cpu
}
criterion_group! {
    name = sealer_view;
    config = Criterion::default().with_measurement(CpuTime::thread());
    targets = sealer_cpu
}
criterion_main!(wall_view, cpu_view, sealer_view);
