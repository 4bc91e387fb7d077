//! One fleet "host": a private sshd (the embedded one) in its own namespace, whose config
//! Includes a drop-in directory of the test's own, and its entry in the Ansible inventory.

use super::topology::{host_wrapper, Fleet};
use crate::support::{self, cgroup::CpuQuota};
use serde_json::{json, Value};
use sshtune::embedded::{EmbeddedSshd, Options};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Host {
    pub name: &'static str,
    pub rate_mbit: Option<u32>,
    size: &'static str,
    ns: String,
    /// Set when the host is reached through a jump host (ProxyJump): the ssh_config file
    /// naming the jump, and the link's rate as the ceiling bench cannot measure from here.
    jump_config: Option<PathBuf>,
    // Field order matters: the servers stop before their directories go.
    sshd: EmbeddedSshd,
    jump: Option<EmbeddedSshd>,
    dropins: tempfile::TempDir,
    /// Inventory variables of this host beside the connection's (merged last).
    pub extra_vars: Value,
}

const DROPIN: &str = "50-sshtune.conf";

/// What a host is: its sshd behind a link of `rate_mbit` (none: unshaped), with the
/// inventory's `bench_size`; see the methods for the rest.
pub struct Spec<'a> {
    name: &'static str,
    rate_mbit: Option<u32>,
    size: &'static str,
    quota: Option<&'a CpuQuota>,
    old_dropin: Option<&'a str>,
    behind_jump: bool,
}

impl<'a> Spec<'a> {
    pub fn new(name: &'static str, rate_mbit: Option<u32>, size: &'static str) -> Self {
        Spec {
            name,
            rate_mbit,
            size,
            quota: None,
            old_dropin: None,
            behind_jump: false,
        }
    }

    /// The sshd runs inside `quota`.
    pub fn quota(self, quota: &'a CpuQuota) -> Self {
        Spec {
            quota: Some(quota),
            ..self
        }
    }

    /// `text` is already in its drop-in directory.
    pub fn old_dropin(self, text: &'a str) -> Self {
        Spec {
            old_dropin: Some(text),
            ..self
        }
    }

    /// The sshd listens on the namespace's own 127.0.0.1, reachable only through a second
    /// sshd on the link address that forwards (ProxyJump), as a host behind a bastion is.
    pub fn behind_jump(self) -> Self {
        Spec {
            behind_jump: true,
            ..self
        }
    }
}

impl Host {
    /// Starts the host's sshd as `spec` says.
    pub fn start(fleet: &mut Fleet, spec: Spec) -> Self {
        let Spec {
            name,
            rate_mbit,
            quota,
            size,
            old_dropin,
            behind_jump,
        } = spec;
        let ns = fleet.add_host(rate_mbit);
        let dropins = tempfile::Builder::new()
            .prefix(&format!("sshtune-fleet-{name}-"))
            .tempdir()
            .expect("tempdir");
        if let Some(text) = old_dropin {
            std::fs::write(dropins.path().join(DROPIN), text).expect("old drop-in");
        }
        let mut prefix = quota.map(CpuQuota::wrapper).unwrap_or_default();
        prefix.extend(host_wrapper(&ns.ns));
        // First in the file, as a distribution's sshd_config Includes sshd_config.d: the
        // drop-in's Ciphers wins over the embedded server's own line. sftp as on a real host
        // (Ansible copies files with it).
        let sshd = EmbeddedSshd::start_with(&Options {
            extra: format!(
                "Include {}/*.conf\nSubsystem sftp internal-sftp\n",
                dropins.path().display()
            ),
            listen: Some(if behind_jump {
                Ipv4Addr::LOCALHOST.into()
            } else {
                ns.ip.into()
            }),
            wrapper: prefix.clone(),
            ..Options::default()
        })
        .unwrap_or_else(|e| panic!("{name}'s sshd starts: {e:#}"));
        let (jump, jump_config) = if behind_jump {
            let jump = EmbeddedSshd::start_with(&Options {
                extra: "AllowTcpForwarding yes\n".into(),
                listen: Some(ns.ip.into()),
                wrapper: prefix,
                ..Options::default()
            })
            .unwrap_or_else(|e| panic!("{name}'s jump sshd starts: {e:#}"));
            let config = dropins.path().join("ssh_config.jump");
            std::fs::write(&config, jump_ssh_config(&jump, ns.ip)).expect("ssh_config");
            (Some(jump), Some(config))
        } else {
            (None, None)
        };
        Self {
            name,
            rate_mbit,
            size,
            ns: ns.ns,
            jump_config,
            sshd,
            jump,
            dropins,
            extra_vars: json!({}),
        }
    }

    /// The address the controller reaches the host's sshd at.
    pub fn address(&self) -> &str {
        &self.sshd.target.destination
    }

    pub fn dropin(&self) -> PathBuf {
        self.dropins.path().join(DROPIN)
    }

    fn sshd_config(&self) -> PathBuf {
        self.sshd.dir().join("sshd_config")
    }

    /// Ansible's backups of the drop-in (`NAME.PID.DATE~`).
    pub fn backups(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.dropins.path())
            .expect("drop-in dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy().into_owned();
                n.starts_with(&format!("{DROPIN}.")) && n.ends_with('~')
            })
            .collect()
    }

    /// The value of an option the embedded target passes to ssh (`-p`, `-l`, `-i`).
    fn flag(&self, flag: &str) -> String {
        let o = &self.sshd.target.options;
        let i = o.iter().position(|a| a == flag).expect("flag present");
        o[i + 1].clone()
    }

    /// The `-F` and `-o` options (known hosts, no agent, the jump host), as
    /// ansible_ssh_common_args. ssh hands `-F` on to the ProxyJump connection, not `-o`/`-i`:
    /// the jump's own settings live in that file, as users keep them in ~/.ssh/config.
    fn common_args(&self) -> String {
        let o = &self.sshd.target.options;
        let mut args = match &self.jump_config {
            Some(config) => vec![
                format!("-F {}", config.display()),
                format!("-o ProxyJump={JUMP_ALIAS}"),
            ],
            None => vec!["-F /dev/null".to_string()],
        };
        for (i, a) in o.iter().enumerate() {
            if a == "-o" {
                args.push(format!("-o {}", o[i + 1]));
            }
        }
        args.join(" ")
    }

    fn inventory_vars(&self) -> Value {
        let pid = self.sshd.dir().join("sshd.pid");
        let mut vars = json!({
            "ansible_host": self.sshd.target.destination,
            "ansible_port": self.sshd.port,
            "ansible_user": self.flag("-l"),
            "ansible_ssh_private_key_file": self.flag("-i"),
            "ansible_ssh_common_args": self.common_args(),
            "bench_size": self.size,
            "config_dropin_path": self.dropin(),
            "config_sshd_config": self.sshd_config(),
            "config_reload_command": format!("sh -c 'kill -HUP \"$(cat {})\"'", pid.display()),
        });
        if self.jump.is_some() {
            // tcp-sink on the host is out of the controller's reach behind the jump: the
            // ceiling comes from elsewhere, here the link's known rate.
            let rate = f64::from(self.rate_mbit.expect("shaped")) * 1e6 / 8.0 / 1048576.0;
            vars["bench_ceiling"] = json!(format!("{rate:.1}"));
            vars["bench_remote_sshtune"] = json!("");
        }
        for (k, v) in self.extra_vars.as_object().into_iter().flatten() {
            vars[k] = v.clone();
        }
        vars
    }

    /// The Ciphers line `sshtune config` makes of this host's report.
    pub fn expected_ciphers_line(&self, reports: &Path) -> String {
        let out = support::sshtune()
            .args(["config", "--server", "--direction", "upload", "--from"])
            .arg(reports.join(format!("{}.json", self.name)))
            .output()
            .expect("sshtune config runs");
        support::ok(&out)
            .lines()
            .find(|l| l.starts_with("Ciphers "))
            .expect("a Ciphers line")
            .to_string()
    }

    /// The host's whole configuration, drop-in included, passes the real `sshd -t`.
    pub fn assert_sshd_accepts(&self) {
        let out = Command::new("/usr/sbin/sshd")
            .arg("-t")
            .arg("-f")
            .arg(self.sshd_config())
            .output()
            .expect("sshd -t runs");
        assert!(
            out.status.success(),
            "{}: sshd -t: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// After the handler's reload the server offers exactly the drop-in's ciphers (asked
    /// from the controller with `sshtune probe`; sshd re-executes itself on SIGHUP, so it may
    /// take a moment to listen again).
    pub fn assert_offers(&self, fleet: &Fleet, ciphers_line: &str) {
        let wanted: Vec<&str> = ciphers_line["Ciphers ".len()..].split(',').collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // Behind the jump only the host's own namespace reaches its sshd.
            let ns = if self.jump.is_some() {
                &self.ns
            } else {
                &fleet.controller_ns
            };
            let answer = probe(ns, &self.sshd.target.destination, self.sshd.port);
            let offered: Option<Vec<String>> = answer
                .as_ref()
                .ok()
                .and_then(|v| serde_json::from_value(v["kexinit"]["ciphers_c2s"].clone()).ok());
            if offered.as_deref().is_some_and(|o| o == wanted) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{}: sshd offers {offered:?} after the reload, the drop-in says {wanted:?} \
                 ({answer:?})",
                self.name,
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

const JUMP_ALIAS: &str = "fleet-jump";

/// An ssh_config naming the jump host with its key and known_hosts (from its embedded target).
fn jump_ssh_config(jump: &EmbeddedSshd, ip: Ipv4Addr) -> String {
    let o = &jump.target.options;
    let value = |flag: &str| o[o.iter().position(|a| a == flag).expect("flag") + 1].clone();
    let mut text = format!(
        "Host {JUMP_ALIAS}\n  HostName {ip}\n  Port {}\n  User {}\n  IdentityFile {}\n",
        jump.port,
        value("-l"),
        value("-i")
    );
    for (i, a) in o.iter().enumerate() {
        if a == "-o" {
            let (k, v) = o[i + 1].split_once('=').expect("key=value");
            text.push_str(&format!("  {k} {v}\n"));
        }
    }
    text
}

/// The inventory: the hosts, and with `with_gone` a host "gone" where nothing listens (the
/// controller's own loopback, inside its namespace: refused at once).
pub fn write_inventory(
    path: &Path,
    hosts: &[&Host],
    with_gone: bool,
    reports: &Path,
    ciphers: &[&str],
) {
    let mut entries = serde_json::Map::new();
    for h in hosts {
        entries.insert(h.name.into(), h.inventory_vars());
    }
    if with_gone {
        let mut gone = hosts[0].inventory_vars();
        gone["ansible_host"] = json!("127.0.0.1");
        gone["ansible_port"] = json!(9);
        entries.insert("gone".into(), gone);
    }
    let bin = support::SSHTUNE;
    let inventory = json!({
        "fleet": {
            "hosts": entries,
            "vars": {
                "ansible_python_interpreter": "/usr/bin/python3",
                "sshtune_binary": bin,
                "sshtune_report_dir": reports,
                "sshtune_become": false,
                "bench_ciphers": ciphers,
                "bench_repeat": 2,
                "bench_direction": "upload",
                // The hosts are this machine: sshtune is there, for the raw-TCP ceiling.
                "bench_remote_sshtune": bin,
                "config_direction": "upload",
                "config_sshd_binary": "/usr/sbin/sshd",
                // A host that locks the controller out rolls back 30 s after its reload.
                "config_login_timeout": 10,
            }
        }
    });
    // JSON is YAML: Ansible's yaml inventory plugin reads it.
    std::fs::write(path, serde_json::to_string_pretty(&inventory).unwrap()).expect("inventory");
}

/// (cipher, verdict) of every upload row in a host's report, read as plain JSON so a verdict
/// this test's build does not know yet still reads.
pub fn verdicts(reports: &Path, host: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(reports.join(format!("{host}.json"))).expect("report");
    let report: Value = serde_json::from_str(&text).expect("report is JSON");
    let rows: Vec<(String, String)> = report["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["direction"] == "upload")
        .map(|r| {
            (
                r["cipher"].as_str().unwrap_or("?").to_string(),
                r["verdict"].as_str().unwrap_or("none").to_string(),
            )
        })
        .collect();
    assert!(!rows.is_empty(), "{host}: no upload rows in {text}");
    rows
}

/// One line per upload row of a host's report: what its verdict was drawn from (samples, how
/// long each lasted, both ends' CPU and the verdict's reason), for a failure message.
pub fn evidence(reports: &Path, host: &str) -> String {
    let text = std::fs::read_to_string(reports.join(format!("{host}.json"))).expect("report");
    let report: Value = serde_json::from_str(&text).expect("report is JSON");
    let rows = report["results"].as_array().cloned().unwrap_or_default();
    rows.iter()
        .filter(|r| r["direction"] == "upload")
        .map(|r| {
            format!(
                "{} {}: samples {} MiB/s lasting {} s; client CPU {}%, server CPU {}%: {}",
                r["cipher"].as_str().unwrap_or("?"),
                r["verdict"],
                r["samples"],
                r["sample_seconds"],
                r["client_cpu_pct"],
                r["server_cpu_pct"],
                r["verdict_reason"].as_str().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `sshtune probe --json` run in namespace `ns`: the server's banner and KEXINIT, or the error.
pub fn probe(ns: &str, host: &str, port: u16) -> Result<Value, String> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(support::SSHTUNE)
        .args(["probe", "--json", "-p", &port.to_string(), host])
        .output()
        .expect("sshtune probe runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// The serve role's server runs unprivileged: not root, no capabilities, no new privileges.
/// Found by its executable (the role's installed copy) among this machine's processes.
pub fn assert_serve_sandboxed(installed: &Path) {
    let status = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|e| std::fs::read_link(e.path().join("exe")).is_ok_and(|x| x == installed))
        .find_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .expect("the served sshtune is running");
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.split_whitespace().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert!(field("Uid:").iter().all(|u| *u != "0"), "{status}");
    assert!(field("Gid:").iter().all(|g| *g != "0"), "{status}");
    assert_eq!(field("NoNewPrivs:"), ["1"], "{status}");
    for caps in ["CapEff:", "CapPrm:", "CapBnd:"] {
        assert_eq!(field(caps), ["0000000000000000"], "{caps} {status}");
    }
}

/// A real `ssh` from the controller logs in to the served sshtune (the role passed the
/// controller's login name and the keys) and runs its `stat` command.
pub fn assert_serve_login(ns: &str, host: &str, port: u16, key: &Path) {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "ssh", "-F", "/dev/null", "-i"])
        .arg(key)
        .args(["-p", &port.to_string()])
        .args(["-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes"])
        .args([
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
        ])
        .args([host, "stat"])
        .output()
        .expect("ssh runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("SSHTUNE-"),
        "ssh to the served sshtune: {}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
}
