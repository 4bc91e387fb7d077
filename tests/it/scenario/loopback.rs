//! Scenario 4, unconstrained loopback: client and server share this machine's CPUs and the
//! path is memory-speed, so the honest verdicts are a CPU or `unclear`, never `network`.

use crate::support;

use sshtune::bench::model::Verdict;
use sshtune::embedded::EmbeddedSshd;
use support::exclusive;
use support::scenario::{agreeing, bench, independent_upload, median_and_spread};

const CIPHERS: [&str; 2] = ["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"];

#[test]
fn loopback_is_never_network_bound() {
    let _one = exclusive();
    let server = EmbeddedSshd::start("").expect("sshd starts");
    let ciphers = CIPHERS.join(",");
    let args = [
        "--ciphers",
        &ciphers,
        "--direction",
        "both",
        "--min-duration",
        "2",
        "--repeat",
        "3",
    ];
    let (report, explain) = agreeing(
        &format!("loopback {}: sshtune median vs plain ssh + cat", CIPHERS[0]),
        0.10,
        |runs| independent_upload(&[], &server.target, CIPHERS[0], 256 << 20, runs),
        || bench(&[], &server.target, &args),
        |(report, _)| median_and_spread(report, CIPHERS[0]),
    );
    let ceiling = report.ceiling.as_ref().expect("loopback ceiling measured");
    assert!(ceiling.method.contains("loopback"), "{}", ceiling.method);
    for r in &report.results {
        assert!(r.error.is_none(), "{r:#?}");
        assert!(r.verdict.is_some(), "{r:#?}");
        assert_ne!(r.verdict, Some(Verdict::Network), "{r:#?}");
        eprintln!(
            "{} {}: {:.1} MiB/s, {} ({})",
            r.cipher,
            r.direction,
            r.median_mib_s.unwrap(),
            r.verdict.unwrap(),
            r.verdict_reason.as_deref().unwrap_or("")
        );
    }
    // Both directions ranked, each saying whether its order is significant.
    assert_eq!(report.ranking.len(), 2, "{:#?}", report.ranking);
    for needle in ["ceiling", "ratio", "client CPU", "server CPU"] {
        assert!(
            explain.contains(needle),
            "--explain lacks {needle}: {explain}"
        );
    }
}
