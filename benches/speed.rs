//! Criterion benches for the same subjects `sshtune speed` times: each cipher (AEADs as whole
//! SSH packets), each MAC, and each non-AEAD cipher paired with OpenSSH's default MAC, in both
//! backends, over 32 KiB. `cargo bench --bench speed -- aes128` narrows the set.

use ciphers::{Backend, CipherKind, CIPHERS, MACS};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sshtune::speed::subject::{Subject, PACKET_BYTES};
use std::time::Duration;

fn subjects() -> Vec<(String, Subject)> {
    let mut v = Vec::new();
    for c in CIPHERS {
        v.push((format!("cipher/{}", c.name), Subject::Cipher(c)));
    }
    for m in MACS {
        v.push((format!("mac/{}", m.name), Subject::Mac(m)));
    }
    let pair_mac = ciphers::mac("umac-64-etm@openssh.com").expect("in the catalog");
    for c in CIPHERS
        .iter()
        .filter(|c| !c.is_aead() && c.kind != CipherKind::None)
    {
        v.push((
            format!("pair/{}+{}", c.name, pair_mac.name),
            Subject::Pair(c, pair_mac),
        ));
    }
    v
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("speed");
    g.throughput(Throughput::Bytes(PACKET_BYTES as u64))
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for (name, s) in subjects() {
        for b in Backend::ALL {
            let mut op = match s.op(b) {
                Ok(op) => op,
                Err(e) => panic!("{name} {b}: {e:#}"),
            };
            g.bench_function(format!("{name}/{b}"), |bch| {
                bch.iter(|| op().expect("sealing failed"))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
