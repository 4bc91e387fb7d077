//! chacha20-poly1305@openssh.com: the parts it could be built from and the whole packet, timed
//! side by side over 32 KiB next to libcrypto's fused ChaCha20-Poly1305 (what `openssl speed
//! -evp chacha20-poly1305` times), measured again in each group so every ratio has a reference
//! from the same run.
//!
//! `parts`: keystream from libcrypto's ChaCha20 (one EVP call) or the `chacha20` crate (SIMD
//! picked at run time); Poly1305 from the `poly1305` crate (AVX2 picked at run time),
//! libcrypto through a fresh `EVP_PKEY` per packet (all the `openssl` crate offers), or
//! libcrypto's `EVP_MAC` with one context rekeyed per packet.
//! `whole`: ring's `chacha20_poly1305_openssh`, the two RustCrypto crates composed, and our
//! `SealingKey` in both backends (framing and random padding included, as the transport seals).
//!
//! Times are CPU time of the benchmarking thread (`support/cpu_time.rs`), as `sshtune speed`
//! counts them. `cargo bench -p ciphers --bench chacha` (append `-- parts` or `-- whole`).

mod support {
    pub mod cpu_time;
}

use ciphers::raw::RawPoly1305;
use ciphers::{Backend, DirectionKeys, SealingKey, HEADER_LEN};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;
use std::time::Duration;
use support::cpu_time::CpuTime;

const LEN: usize = 32 * 1024;
const NAME: &str = "chacha20-poly1305@openssh.com";

fn group<'a>(c: &'a mut Criterion<CpuTime>, name: &str) -> BenchmarkGroup<'a, CpuTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(LEN as u64))
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(30);
    g
}

fn reference(g: &mut BenchmarkGroup<'_, CpuTime>, buf: &mut [u8]) {
    let mut fused = CipherCtx::new().unwrap();
    fused
        .encrypt_init(
            Some(Cipher::chacha20_poly1305()),
            Some(&[7u8; 32]),
            Some(&[1u8; 12]),
        )
        .unwrap();
    g.bench_function("reference/libcrypto-fused", |b| {
        b.iter(|| {
            fused.encrypt_init(None, None, Some(&[1u8; 12])).unwrap();
            fused.cipher_update_inplace(&mut buf[..LEN], LEN).unwrap();
            fused.cipher_final(&mut []).unwrap();
            let mut t = [0u8; 16];
            fused.tag(&mut t).unwrap();
            t
        })
    });
}

fn parts(c: &mut Criterion<CpuTime>) {
    let mut g = group(c, "parts");
    let key = [7u8; 32];
    let mut buf = vec![0x55u8; LEN];
    reference(&mut g, &mut buf);

    let mut ks = CipherCtx::new().unwrap();
    ks.encrypt_init(Some(Cipher::chacha20()), Some(&key), Some(&[0u8; 16]))
        .unwrap();
    g.bench_function("keystream/libcrypto", |b| {
        b.iter(|| {
            ks.encrypt_init(None, None, Some(&[0u8; 16])).unwrap();
            ks.cipher_update_inplace(&mut buf, LEN).unwrap();
        })
    });
    g.bench_function("keystream/chacha20-crate", |b| {
        use chacha20::cipher::{KeyIvInit, StreamCipher};
        b.iter(|| {
            chacha20::ChaCha20Legacy::new(&key.into(), &[0u8; 8].into()).apply_keystream(&mut buf)
        })
    });

    let mut crate_poly = RawPoly1305::new(Backend::Rust).unwrap();
    g.bench_function("poly1305/poly1305-crate", |b| {
        b.iter(|| crate_poly.tag(&key, &buf).unwrap())
    });
    g.bench_function("poly1305/libcrypto-pkey-per-packet", |b| {
        use openssl::pkey::{Id, PKey};
        b.iter(|| {
            let pk = PKey::private_key_from_raw_bytes(&key, Id::POLY1305).unwrap();
            let mut s = openssl::sign::Signer::new_without_digest(&pk).unwrap();
            s.sign_oneshot_to_vec(&buf).unwrap()
        })
    });
    let mut evp_poly = RawPoly1305::new(Backend::Openssl).unwrap();
    g.bench_function("poly1305/libcrypto-evp-mac", |b| {
        b.iter(|| evp_poly.tag(&key, &buf).unwrap())
    });
    g.finish();
}

/// The RustCrypto candidate for the `rust` backend, composed here as the backend would: K_2
/// keys Poly1305 from block 0 and encrypts the body from block 1, K_1 encrypts the length.
fn crates_seal(key: &[u8; 64], seq: u32, packet: &mut [u8], tag: &mut [u8; 16]) {
    use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
    use chacha20::ChaCha20Legacy;
    let nonce = u64::from(seq).to_be_bytes();
    let mut main = ChaCha20Legacy::new(key[..32].into(), &nonce.into());
    let mut block0 = [0u8; 64];
    main.apply_keystream(&mut block0);
    main.seek(64u64);
    let (len4, body) = packet.split_at_mut(4);
    ChaCha20Legacy::new(key[32..].into(), &nonce.into()).apply_keystream(len4);
    main.apply_keystream(body);
    let mut pk = [0u8; 32];
    pk.copy_from_slice(&block0[..32]);
    *tag = RawPoly1305::new(Backend::Rust)
        .unwrap()
        .tag(&pk, packet)
        .unwrap();
}

fn whole(c: &mut Criterion<CpuTime>) {
    let mut g = group(c, "whole");
    let key = [7u8; 64];
    let mut buf = vec![0x55u8; LEN + 8];
    reference(&mut g, &mut buf);

    let ring_key = ring::aead::chacha20_poly1305_openssh::SealingKey::new(&key);
    let mut tag = [0u8; 16];
    let mut seq = 0u32;
    g.bench_function("candidate/ring-openssh", |b| {
        b.iter(|| {
            seq = seq.wrapping_add(1);
            ring_key.seal_in_place(seq, &mut buf, &mut tag)
        })
    });
    g.bench_function("candidate/chacha20+poly1305-crates", |b| {
        b.iter(|| {
            seq = seq.wrapping_add(1);
            crates_seal(&key, seq, &mut buf, &mut tag)
        })
    });

    for backend in Backend::ALL {
        let keys = DirectionKeys {
            cipher: NAME,
            mac: None,
            key: &key,
            iv: &[],
            mac_key: &[],
        };
        let mut s = SealingKey::new(&keys, Some(backend)).unwrap();
        // As `sshtune speed` seals: payload placed once, framed and sealed per call.
        let mut pkt = vec![0x55u8; HEADER_LEN + LEN];
        g.bench_function(format!("sealing-key/{backend}"), |b| {
            b.iter(|| {
                pkt.truncate(HEADER_LEN + LEN);
                s.frame(&mut pkt, 0).unwrap();
                seq = seq.wrapping_add(1);
                s.seal_in_place(seq, &mut pkt).unwrap();
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(CpuTime::thread());
    targets = parts, whole
}
criterion_main!(benches);
