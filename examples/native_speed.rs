//! Quick native↔native upload timing for one cipher (development aid).
use sshtune::serve::embedded::EmbeddedNative;
use sshtune::transport::client::{connect, Exec};
use sshtune::transport::conn::Options;
use sshtune::transport::kex::Preferences;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cipher = args
        .get(1)
        .cloned()
        .unwrap_or("aes128-gcm@openssh.com".into());
    let mac = args.get(2).cloned();
    let mib: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(256);
    let server =
        EmbeddedNative::start(Preferences::from_catalog(true), Options::default()).unwrap();
    let mut cfg = server.client.clone();
    cfg.prefs = Preferences {
        ciphers: vec![cipher.clone()],
        macs: mac.into_iter().collect(),
    };
    let t = connect("127.0.0.1", server.addr.port(), &cfg).unwrap();
    let mut e = Exec::start(t, "sink", cfg.window, cfg.packet_size).unwrap();
    e.read_line().unwrap();
    let data = vec![7u8; 1 << 20];
    let t0 = Instant::now();
    for _ in 0..mib {
        e.write_all(&data).unwrap();
    }
    e.send_eof().unwrap();
    let done = e.read_line().unwrap().unwrap();
    let s = t0.elapsed().as_secs_f64();
    let (_, t) = e.finish().unwrap();
    println!(
        "{cipher}: {:.1} MiB/s, rekeys {} ({done})",
        mib as f64 / s,
        t.rekeys
    );
}
