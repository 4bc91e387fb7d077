//! Two network namespaces joined by a veth pair: a private link whose truth the test knows.
//!
//! Only the two addresses inside the namespaces (and each namespace's loopback) carry traffic;
//! nothing reaches the host's interfaces. With a rate, both ends shape their egress with `tc
//! tbf`, so the link is symmetric and uploads and downloads meet the same limit. Dropping the
//! fixture deletes both namespaces (and with them the veth pair), also when the test panics.

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct NetnsLink {
    pub client_ns: String,
    pub server_ns: String,
    pub client_ip: Ipv4Addr,
    pub server_ip: Ipv4Addr,
    /// tbf rate on both ends, Mbit/s (None: unshaped veth).
    pub rate_mbit: Option<u32>,
}

/// `ip ARGS`, failing the test with ip's stderr when it does not succeed.
pub fn ip(args: &[&str]) {
    run("ip", args);
}

fn run(prog: &str, args: &[&str]) {
    let out = Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {prog} (apt-get install iproute2): {e}"));
    assert!(
        out.status.success(),
        "{prog} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Limits `dev` in namespace `ns` to `rate_mbit` with tbf. The bucket holds a few 64 KiB GSO
/// packets so tbf never drops one for being too big; against transfers of megabytes it adds
/// well under 1%.
pub fn shape(ns: &str, dev: &str, rate_mbit: u32) {
    run(
        "ip",
        &[
            "netns",
            "exec",
            ns,
            "tc",
            "qdisc",
            "add",
            "dev",
            dev,
            "root",
            "tbf",
            "rate",
            &format!("{rate_mbit}mbit"),
            "burst",
            "256kb",
            "latency",
            "10ms",
        ],
    );
}

impl NetnsLink {
    /// Creates the namespaces and the link; `rate_mbit` shapes it with tbf.
    pub fn new(rate_mbit: Option<u32>) -> Self {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let tag = format!("sshtune-{}-{n}", std::process::id());
        let link = Self {
            client_ns: format!("{tag}-c"),
            server_ns: format!("{tag}-s"),
            client_ip: Ipv4Addr::new(10, 231, n as u8, 1),
            server_ip: Ipv4Addr::new(10, 231, n as u8, 2),
            rate_mbit,
        };
        // From here on Drop removes whatever was created, even if a later step fails.
        ip(&["netns", "add", &link.client_ns]);
        ip(&["netns", "add", &link.server_ns]);
        ip(&[
            "link",
            "add",
            "vc",
            "netns",
            &link.client_ns,
            "type",
            "veth",
            "peer",
            "name",
            "vs",
            "netns",
            &link.server_ns,
        ]);
        for (ns, dev, addr) in [
            (&link.client_ns, "vc", link.client_ip),
            (&link.server_ns, "vs", link.server_ip),
        ] {
            let cidr = format!("{addr}/24");
            ip(&["-n", ns, "addr", "add", &cidr, "dev", dev]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            if let Some(rate) = rate_mbit {
                shape(ns, dev, rate);
            }
        }
        link
    }

    /// The link rate in MiB/s (what a perfect transfer could reach).
    pub fn rate_mib_s(&self) -> Option<f64> {
        self.rate_mbit
            .map(|r| f64::from(r) * 1e6 / 8.0 / (1024.0 * 1024.0))
    }

    /// Command prefix that runs a program inside the server namespace.
    pub fn server_wrapper(&self) -> Vec<String> {
        vec![
            "ip".into(),
            "netns".into(),
            "exec".into(),
            self.server_ns.clone(),
        ]
    }

    /// Command prefix that runs a program inside the client namespace.
    pub fn client_wrapper(&self) -> Vec<String> {
        vec![
            "ip".into(),
            "netns".into(),
            "exec".into(),
            self.client_ns.clone(),
        ]
    }
}

impl Drop for NetnsLink {
    fn drop(&mut self) {
        for ns in [&self.client_ns, &self.server_ns] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}
