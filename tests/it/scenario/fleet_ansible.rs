//! The Ansible collection in contrib/ansible against a fleet of real OpenSSH servers: three
//! sshd "hosts" in network namespaces behind links the test shapes (two tbf rates; one host's
//! sshd under a CPU quota), a fourth reached only through a jump host, plus one nobody
//! answers for. The real `ansible-playbook`
//! runs the collection's playbook on a controller namespace: first `--check --diff` (every
//! host measured, the drop-ins shown, nothing changed), then for real (drop-ins installed,
//! validated, backed up, sshd reloaded). Each host's drop-in directory is a temp dir of the
//! test, never this machine's /etc/ssh.

use crate::support;

mod ansible;
mod host;
mod topology;

use ansible::Ansible;
use host::{verdicts, Host, Spec};
use std::path::Path;
use std::time::Instant;
use support::cgroup::CpuQuota;
use support::exclusive;
use topology::Fleet;

/// Where the serve role's server listens on the board (its namespace has no other user).
const SERVE_PORT: u16 = 2222;
const CIPHERS: [&str; 2] = ["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"];
/// A drop-in that was there before: the playbook must keep it as a backup. It still permits
/// the measured ciphers, so the bench sees them offered.
const OLD_DROPIN: &str = "# written by hand before the fleet was tuned\n\
                          Ciphers aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes256-ctr\n";

#[test]
fn playbook_benches_every_host_and_installs_its_dropin() {
    if !support::require_root("network namespaces, tc and cgroups need root") {
        return;
    }
    let _one = exclusive();
    let started = Instant::now();
    let tmp = tempfile::Builder::new()
        .prefix("sshtune-fleet-")
        .tempdir()
        .expect("tempdir");
    // Declared before the hosts: dropped after them, once no sshd is left inside.
    let mut fleet = Fleet::new();
    let quota = CpuQuota::new(20);
    let slow = Host::start(&mut fleet, Spec::new("slow", Some(40), "8M"));
    let fast = Host::start(
        &mut fleet,
        Spec::new("fast", Some(160), "32M").old_dropin(OLD_DROPIN),
    );
    // The board sizes its samples itself (no --size): under the quota they must last long
    // enough for its sshd to count enough scheduler ticks. Fixed 48 MiB samples lasted half a
    // second, 10 ticks at 20%, and one run read 16% and `unclear`.
    let board = Host::start(&mut fleet, Spec::new("board", None, "").quota(&quota));
    // ProxyJump from the inventory (ansible_ssh_common_args) reaches a host that only a
    // bastion can: its sshd listens on its namespace's 127.0.0.1, the jump sshd on the link.
    // It runs in this playbook, beside the others, rather than in a playbook of its own: each
    // run costs about two minutes of Ansible and bench on the 2-core CI machine.
    let hidden = Host::start(
        &mut fleet,
        Spec::new("hidden", Some(160), "32M").behind_jump(),
    );
    let hosts = [&slow, &fast, &board, &hidden];

    let reports = tmp.path().join("reports");
    let inventory = tmp.path().join("inventory.yml");
    host::write_inventory(&inventory, &hosts, true, &reports, &CIPHERS);
    let collection = support::repo_root().join("contrib/ansible");
    let ansible = Ansible::new(&tmp.path().join("ansible"), &collection, fleet.controller());

    // 1. Dry run: every host measured, the drop-ins shown, nothing on the hosts changed.
    let dry = ansible.playbook(&inventory, "sshtune.tune.tune", &["--check", "--diff"]);
    assert_eq!(
        dry.code, 2,
        "exit status: some host failed, none unreachable"
    );
    for h in hosts {
        assert_eq!(dry.count(h.name, "failed"), 0, "{} failed", h.name);
        assert!(
            reports.join(format!("{}.json", h.name)).is_file(),
            "{}'s report did not arrive",
            h.name
        );
        let header = format!("+++ after: {}", h.dropin().display());
        assert!(dry.stdout.contains(&header), "no diff for {}", h.name);
    }
    assert!(
        dry.stdout.contains("+Ciphers "),
        "the diff shows no Ciphers line"
    );
    assert!(!slow.dropin().exists() && !board.dropin().exists() && !hidden.dropin().exists());
    assert_eq!(std::fs::read_to_string(fast.dropin()).unwrap(), OLD_DROPIN);

    // The unreachable host failed alone, and said why.
    assert_eq!(dry.count("gone", "failed"), 1);
    assert!(!reports.join("gone.json").exists());
    let error: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join("gone.error.json")).expect("gone.error.json"),
    )
    .expect("error file is JSON");
    let why = error["error"].as_str().unwrap_or_default();
    eprintln!("gone: {why}");
    assert!(!why.is_empty(), "{error}");

    // 2. The verdicts follow the namespaces: the links bound the shaped hosts (`path`: a
    //    colleague's verdict for a link without a measured ceiling), the quota the board.
    for h in hosts {
        eprintln!("{}:\n{}", h.name, host::evidence(&reports, h.name));
    }
    for h in [&slow, &fast, &hidden] {
        for (cipher, v) in verdicts(&reports, h.name) {
            assert!(
                v == "network" || v == "path",
                "{} {cipher}: {v} on a {:?} Mbit/s link",
                h.name,
                h.rate_mbit
            );
        }
    }
    for (cipher, v) in verdicts(&reports, "board") {
        assert_eq!(
            v,
            "server-cpu",
            "board {cipher} under a 20% quota:\n{}",
            host::evidence(&reports, "board")
        );
    }

    // The merged fleet report over the directory the role filled: one row per host, the
    // unreachable one listed with its error instead of dropped.
    let mut files: Vec<_> = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let out = support::sshtune()
        .arg("report")
        .args(&files)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let table = support::ok_json(&out);
    assert_eq!(table["schema"], "sshtune.fleet/1", "{table}");
    let rows = table["hosts"].as_array().unwrap();
    assert_eq!(rows.len(), hosts.len() + 1, "{table}");
    let failed: Vec<_> = rows.iter().filter(|r| !r["error"].is_null()).collect();
    assert_eq!(failed.len(), 1, "{table}");
    assert_eq!(failed[0]["host"], "gone", "{table}");
    for r in rows.iter().filter(|r| r["error"].is_null()) {
        assert!(
            r["best"].is_string() && r["ciphers_line"].is_string(),
            "{r}"
        );
    }

    // 3. For real, from the reports the dry run wrote, with two hosts more that would lock
    //    the controller out, given fast's report: `locked`, which the controller reaches with
    //    aes256-ctr only (its ssh options pin it; the old drop-in allows it, the new line does
    //    not), and `oldssh`, whose controller ssh speaks none of the new line's ciphers.
    let locked = lockout_host(&mut fleet, "locked", &reports, tmp.path());
    let oldssh = lockout_host(&mut fleet, "oldssh", &reports, tmp.path());
    let all = [&slow, &fast, &board, &hidden, &locked, &oldssh];
    host::write_inventory(&inventory, &all, true, &reports, &CIPHERS);
    let apply = ansible.playbook(&inventory, "sshtune.tune.tune", &["--tags", "config"]);
    assert_eq!(apply.code, 2, "exit status: some host failed");
    assert_eq!(apply.count("gone", "failed"), 1);
    for h in [&locked, &oldssh] {
        assert_eq!(
            apply.count(h.name, "failed"),
            1,
            "{} was not refused",
            h.name
        );
        assert_eq!(
            std::fs::read_to_string(h.dropin()).unwrap(),
            OLD_DROPIN,
            "{}: the old drop-in is not in place",
            h.name
        );
        h.assert_offers(&fleet, OLD_DROPIN.lines().nth(1).unwrap());
    }
    assert!(
        apply
            .stdout
            .contains("locked: the new drop-in was taken back"),
        "no rollback message naming locked"
    );
    assert!(
        apply.stdout.contains("No drop-in for oldssh"),
        "no refusal naming oldssh"
    );
    assert!(locked.backups().len() == 1, "{:?}", locked.backups());
    assert!(oldssh.backups().is_empty(), "oldssh was changed");
    // The trial leaves nothing behind: no confirmation file, no rollback job still waiting.
    for h in all {
        let confirm = format!("{}.sshtune-confirm", h.dropin().display());
        assert!(!Path::new(&confirm).exists(), "{confirm} is left");
        let guard = std::process::Command::new("pgrep")
            .args(["-f", &confirm])
            .output()
            .expect("pgrep runs");
        assert!(
            guard.stdout.is_empty(),
            "{}: a rollback job still runs",
            h.name
        );
    }
    for h in hosts {
        assert_eq!(apply.count(h.name, "failed"), 0, "{} failed", h.name);
        let wanted = h.expected_ciphers_line(&reports);
        let installed = std::fs::read_to_string(h.dropin()).expect("drop-in installed");
        assert!(
            installed.lines().any(|l| l == wanted),
            "{}: {wanted:?} not in\n{installed}",
            h.name
        );
        h.assert_sshd_accepts();
        h.assert_offers(&fleet, &wanted);
    }
    let backups = fast.backups();
    assert_eq!(
        backups.len(),
        1,
        "one backup of the old drop-in: {backups:?}"
    );
    assert_eq!(std::fs::read_to_string(&backups[0]).unwrap(), OLD_DROPIN);
    assert!(slow.backups().is_empty(), "nothing to back up on slow");

    // 4. sshtune serve on the board, bounded in time, on the address the controller reaches.
    //    (Started from the board's sshd, it stays in the board's cgroup: removed with it.)
    //    It runs as `nobody` here (the role's default account would be added to this
    //    machine's passwd), which must reach the binary and state in the test's directory.
    let serve_dir = tmp.path().join("serve");
    std::fs::create_dir_all(serve_dir.join("bin")).expect("serve dir");
    for d in [tmp.path(), &serve_dir] {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let key = support::keygen(&serve_dir.join("client_ed25519"));
    let installed = serve_dir.join("bin/sshtune");
    let vars = serde_json::json!({
        "serve_binary_src": support::SSHTUNE,
        "serve_install_path": installed,
        "serve_state_dir": serve_dir.join("state"),
        "serve_authorized_keys": key.with_extension("pub"),
        "serve_listen": format!("{}:{SERVE_PORT}", board.address()),
        "serve_duration": 60,
        "serve_user": "nobody",
        // Hermetic: a transient systemd unit would run outside the board's namespace.
        "serve_systemd": false,
    });
    let serve = ansible.playbook(
        &inventory,
        "sshtune.tune.serve",
        &["-l", "board", "-e", &vars.to_string()],
    );
    assert_eq!(serve.code, 0, "serve playbook");
    assert!(installed.is_file(), "binary installed");
    let banner = host::probe(&fleet.controller_ns, board.address(), SERVE_PORT)
        .expect("sshtune serve answers the controller");
    let banner = banner["banner"].as_str().unwrap_or_default().to_string();
    assert!(banner.starts_with("SSH-2.0-sshtune_"), "{banner}");
    host::assert_serve_sandboxed(&installed);
    host::assert_serve_login(&fleet.controller_ns, board.address(), SERVE_PORT, &key);

    eprintln!("fleet test took {:.0} s", started.elapsed().as_secs_f64());
}

/// A host whose new drop-in (fast's report) would lock the controller out: by its ssh
/// options (`locked`, aes256-ctr only) or by its ssh (`oldssh`, `ssh -Q cipher` says
/// aes256-ctr only: an older client). Its old drop-in allows aes256-ctr.
fn lockout_host(fleet: &mut Fleet, name: &'static str, reports: &Path, tmp: &Path) -> Host {
    let mut h = Host::start(
        fleet,
        Spec::new(name, Some(160), "32M").old_dropin(OLD_DROPIN),
    );
    std::fs::copy(
        reports.join("fast.json"),
        reports.join(format!("{name}.json")),
    )
    .expect("copy fast's report");
    h.extra_vars = if name == "locked" {
        serde_json::json!({ "ansible_ssh_extra_args": "-o Ciphers=aes256-ctr" })
    } else {
        let ssh = tmp.join("old-ssh");
        std::fs::write(
            &ssh,
            "#!/bin/sh\nif [ \"$1\" = -Q ]; then echo aes256-ctr; exit 0; fi\nexec ssh \"$@\"\n",
        )
        .expect("old ssh");
        std::fs::set_permissions(&ssh, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        serde_json::json!({ "ansible_ssh_executable": ssh })
    };
    h
}
