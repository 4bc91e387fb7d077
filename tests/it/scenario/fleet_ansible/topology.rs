//! A controller and a few hosts, each in a network namespace of its own: one veth pair from
//! the controller to each host, optionally shaped with `tc tbf` at both ends, so every host
//! sits behind a link whose rate the test knows. Only addresses inside these namespaces carry
//! traffic. Dropping the fleet deletes every namespace (and with them the veth pairs), also
//! when the test panics.

use crate::support::netns::ip;
use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct Fleet {
    pub controller_ns: String,
    host_ns: Vec<String>,
    tag: String,
}

/// One host's end: its namespace and the address the controller reaches it at.
pub struct HostNs {
    pub ns: String,
    pub ip: Ipv4Addr,
}

impl Fleet {
    pub fn new() -> Self {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let tag = format!("sshtune-fleet-{}-{n}", std::process::id());
        let fleet = Self {
            controller_ns: format!("{tag}-ctl"),
            host_ns: Vec::new(),
            tag,
        };
        ip(&["netns", "add", &fleet.controller_ns]);
        ip(&["-n", &fleet.controller_ns, "link", "set", "lo", "up"]);
        fleet
    }

    /// A host namespace joined to the controller by its own link, `rate_mbit` shaping it.
    pub fn add_host(&mut self, rate_mbit: Option<u32>) -> HostNs {
        let n = self.host_ns.len() + 1;
        let ns = format!("{}-h{n}", self.tag);
        ip(&["netns", "add", &ns]);
        self.host_ns.push(ns.clone());
        let ctl_dev = format!("h{n}");
        ip(&[
            "link",
            "add",
            &ctl_dev,
            "netns",
            &self.controller_ns,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            &ns,
        ]);
        let ctl_ip = Ipv4Addr::new(10, 232, n as u8, 1);
        let host_ip = Ipv4Addr::new(10, 232, n as u8, 2);
        for (space, dev, addr) in [
            (&self.controller_ns, ctl_dev.as_str(), ctl_ip),
            (&ns, "eth0", host_ip),
        ] {
            ip(&[
                "-n",
                space,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                dev,
            ]);
            ip(&["-n", space, "link", "set", "lo", "up"]);
            ip(&["-n", space, "link", "set", dev, "up"]);
            if let Some(rate) = rate_mbit {
                crate::support::netns::shape(space, dev, rate);
            }
        }
        HostNs { ns, ip: host_ip }
    }

    /// Command prefix that runs a program on the controller.
    pub fn controller(&self) -> Vec<String> {
        wrapper(&self.controller_ns)
    }
}

pub fn wrapper(ns: &str) -> Vec<String> {
    ["ip", "netns", "exec", ns].map(String::from).to_vec()
}

/// Command prefix that runs a program on a host: only the network namespace changes.
/// (`ip netns exec` also mounts the namespace's own /sys, which hides the cgroup a quota
/// host's sshd runs in from the bench's remote side.)
pub fn host_wrapper(ns: &str) -> Vec<String> {
    vec!["nsenter".into(), format!("--net=/run/netns/{ns}")]
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for ns in self.host_ns.iter().chain([&self.controller_ns]) {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}
