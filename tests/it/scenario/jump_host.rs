//! A target behind a jump host: two namespaces joined by a veth pair; in the server one, a
//! jump sshd on the veth address and the target sshd on that namespace's own 127.0.0.1. From
//! the client namespace the target is unreachable directly, so `probe` and both bench engines
//! can reach it only through `ProxyJump` or `ProxyCommand`, as ssh does.

use crate::support;

use sshtune::bench::model::BenchReport;
use sshtune::embedded::{EmbeddedSshd, Options};
use std::path::Path;
use std::process::Command;
use support::netns::NetnsLink;
use support::{ok, output};

/// `Host jump` and `Host target` entries, each with its own sshd's key and known_hosts.
fn ssh_config(jump: &EmbeddedSshd, jump_ip: &str, target: &EmbeddedSshd) -> String {
    let user = support::user_name();
    let entry = |name: &str, host: &str, s: &EmbeddedSshd| {
        format!(
            "Host {name}\n  HostName {host}\n  Port {}\n  User {user}\n  IdentityFile {}\n  \
             IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {}\n  \
             GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  UpdateHostKeys no\n  \
             BatchMode yes\n",
            s.port,
            s.dir().join("client_ed25519").display(),
            s.dir().join("known_hosts").display(),
        )
    };
    entry("jump", jump_ip, jump) + &entry("target", "127.0.0.1", target)
}

/// `sshtune` inside the client namespace.
fn sshtune_in_client(link: &NetnsLink) -> Command {
    support::under(&link.client_wrapper(), support::SSHTUNE)
}

/// Processes whose command line names `config`: the ssh children a run started.
fn leftovers(config: &Path) -> Vec<String> {
    let needle = config.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&needle))
        .collect()
}

fn bench(link: &NetnsLink, cfg: &str, proxy: &str, engine: &str) -> BenchReport {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    ok(&output(
        sshtune_in_client(link)
            .args([
                "bench", "-F", cfg, "-o", proxy, "target", "--engine", engine,
            ])
            .args(support::quick_bench("aes128-ctr", "8M"))
            .args(["--direction", "upload", "--quiet", "--format", "json"])
            .arg("--output")
            .arg(&json),
    ));
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn probe_and_both_engines_reach_a_target_behind_a_jump_host() {
    let Some(_lock) = support::shared_as_root("network namespaces need root") else {
        return;
    };
    let link = NetnsLink::new(None);
    // The embedded sshd forbids forwarding; a jump host's job is `ssh -W`.
    let jump = EmbeddedSshd::start_with(&Options {
        extra: "AllowTcpForwarding yes".into(),
        listen: Some(link.server_ip.into()),
        wrapper: link.server_wrapper(),
        ..Options::default()
    })
    .expect("jump sshd starts");
    let target = EmbeddedSshd::start_with(&Options {
        wrapper: link.server_wrapper(),
        ..Options::default()
    })
    .expect("target sshd starts on the namespace's loopback");
    let dir = tempfile::tempdir().unwrap();
    let cfg_path = dir.path().join("ssh_config");
    std::fs::write(
        &cfg_path,
        ssh_config(&jump, &link.server_ip.to_string(), &target),
    )
    .unwrap();
    let cfg = cfg_path.to_str().unwrap();
    let proxy_command = format!("ProxyCommand=ssh -F {cfg} -W %h:%p jump");

    // Directly, the client namespace's own 127.0.0.1 has nothing on that port.
    let direct = output(sshtune_in_client(&link).args(["probe", "-F", cfg, "target"]));
    assert!(!direct.status.success());
    let err = String::from_utf8_lossy(&direct.stderr);
    assert!(err.contains("cannot connect to 127.0.0.1"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    for proxy in ["ProxyJump=jump", proxy_command.as_str()] {
        let out = ok(&output(sshtune_in_client(&link).args([
            "probe", "-F", cfg, "-o", proxy, "target", "--format", "json",
        ])));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v["banner"].as_str().unwrap().contains("OpenSSH"), "{out}");
        assert!(v["kexinit"].is_object(), "{out}");
    }

    for (proxy, engine) in [
        ("ProxyJump=jump", "openssh"),
        ("ProxyJump=jump", "native"),
        (proxy_command.as_str(), "native"),
    ] {
        let report = bench(&link, cfg, proxy, engine);
        let rows: Vec<_> = report
            .results
            .iter()
            .filter(|r| r.cipher == "aes128-ctr" && r.median_mib_s.is_some())
            .collect();
        assert_eq!(rows.len(), 1, "{proxy} {engine}: {:?}", report.results);
        // 127.0.0.1 behind the jump is the far side's loopback, not ours.
        assert!(
            !support::scenario::warns_shared_machine(&report),
            "{proxy} {engine}: {:?}",
            report.warnings
        );
        assert!(report.ceiling.is_none(), "{proxy} {engine}");
    }

    // A jump host that is not there: a one-line cause, a distinct failure, nothing left.
    let broken = output(sshtune_in_client(&link).args([
        "probe",
        "-F",
        cfg,
        "-o",
        "ProxyJump=127.0.0.1:1",
        "target",
    ]));
    assert!(!broken.status.success());
    let err = String::from_utf8_lossy(&broken.stderr);
    assert!(err.contains("ended") && err.contains("refused"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    assert_eq!(leftovers(&cfg_path), Vec::<String>::new());
}
