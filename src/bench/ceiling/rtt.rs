//! The path's round trip without extra tools: a TCP connect to the ssh port takes one round
//! trip (SYN, SYN-ACK), the same path ssh's own connection took. The fastest of a few is the
//! least queued. The local address of that connection is ours on the path, which a receiver
//! connecting back (bash's `/dev/tcp`) needs.

use std::net::{IpAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// (RTT seconds, our address on the path), or None when the port cannot be reached directly
/// (a ProxyJump, a firewall towards this port from here).
pub fn connect_rtt(host: &str, port: u16, tries: u32) -> Option<(f64, IpAddr)> {
    let addr = (host, port).to_socket_addrs().ok()?.next()?;
    let mut best: Option<(f64, IpAddr)> = None;
    for _ in 0..tries {
        let t0 = Instant::now();
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(3)).ok()?;
        let rtt = t0.elapsed().as_secs_f64();
        let local = s.local_addr().ok()?.ip();
        drop(s);
        if best.is_none_or(|(b, _)| rtt < b) {
            best = Some((rtt, local));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_round_trip_is_short_and_local() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (rtt, local) = connect_rtt("127.0.0.1", port, 3).expect("reachable");
        assert!(rtt > 0.0 && rtt < 1.0, "{rtt}");
        assert_eq!(local, IpAddr::from([127, 0, 0, 1]));
        drop(l);
        assert_eq!(connect_rtt("127.0.0.1", port, 1), None);
    }
}
