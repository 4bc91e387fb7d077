//! Running the real `ansible-playbook` with everything it writes kept in the test's temporary
//! directory: its home, the installed collection, control sockets, temp files on the
//! controller and on the "hosts" (which are this machine). No ansible.cfg of the user applies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Ansible {
    home: PathBuf,
    /// Command prefix (the controller's namespace).
    prefix: Vec<String>,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
}

impl Ansible {
    /// Installs the collection from `source` (a directory with galaxy.yml) into `home`.
    pub fn new(home: &Path, source: &Path, prefix: Vec<String>) -> Self {
        for sub in ["collections", "tmp", "remote-tmp", "cp"] {
            std::fs::create_dir_all(home.join(sub)).expect("ansible dirs");
        }
        std::fs::write(home.join("ansible.cfg"), "").expect("empty ansible.cfg");
        let a = Self {
            home: home.to_path_buf(),
            prefix,
        };
        let mut cmd = a.command("ansible-galaxy");
        cmd.args(["collection", "install", "--force", "-p"])
            .arg(home.join("collections"))
            .arg(source);
        let out = cmd.output().expect(
            "ansible-galaxy runs (scripts/setup installs ansible-core from tests/requirements.txt)",
        );
        assert!(
            out.status.success(),
            "ansible-galaxy collection install failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        a
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = match self.prefix.split_first() {
            Some((p, rest)) => {
                let mut c = Command::new(p);
                c.args(rest).arg(program);
                c
            }
            None => Command::new(program),
        };
        let h = &self.home;
        cmd.env("ANSIBLE_CONFIG", h.join("ansible.cfg"))
            .env("ANSIBLE_HOME", h)
            .env("ANSIBLE_COLLECTIONS_PATH", h.join("collections"))
            .env("ANSIBLE_LOCAL_TEMP", h.join("tmp"))
            .env("ANSIBLE_REMOTE_TEMP", h.join("remote-tmp"))
            .env("ANSIBLE_ASYNC_DIR", h.join("async"))
            .env("ANSIBLE_SSH_CONTROL_PATH_DIR", h.join("cp"))
            // No master connection outliving the run (ControlPersist would keep ssh processes
            // around after the test); pipelining keeps the logins few anyway.
            .env(
                "ANSIBLE_SSH_ARGS",
                "-o ControlMaster=no -o ControlPath=none",
            )
            .env("ANSIBLE_PIPELINING", "true")
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "false")
            .env("ANSIBLE_GALAXY_DISABLE_GPG_VERIFY", "true");
        cmd
    }

    /// `ansible-playbook -i inventory PLAYBOOK args…`; stdout is echoed for --nocapture.
    pub fn playbook(&self, inventory: &Path, playbook: &str, args: &[&str]) -> Run {
        let mut cmd = self.command("ansible-playbook");
        cmd.arg("-i").arg(inventory).arg(playbook).args(args);
        let out = cmd.output().expect("ansible-playbook runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        eprintln!(
            "--- ansible-playbook {playbook} {}\n{stdout}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout,
        }
    }
}

impl Run {
    /// The PLAY RECAP counters per host: `host : ok=5 changed=2 unreachable=0 failed=0 …`.
    pub fn recap(&self) -> BTreeMap<String, BTreeMap<String, u32>> {
        let tail = self
            .stdout
            .split("PLAY RECAP")
            .nth(1)
            .expect("ansible-playbook printed a PLAY RECAP");
        tail.lines()
            .filter_map(|l| {
                let (host, counts) = l.split_once(" : ")?;
                let counts = counts
                    .split_whitespace()
                    .filter_map(|kv| {
                        let (k, v) = kv.split_once('=')?;
                        Some((k.to_string(), v.parse().ok()?))
                    })
                    .collect();
                Some((host.trim().to_string(), counts))
            })
            .collect()
    }

    pub fn count(&self, host: &str, what: &str) -> u32 {
        let recap = self.recap();
        let counts = recap
            .get(host)
            .unwrap_or_else(|| panic!("{host} is not in the recap {recap:?}"));
        counts.get(what).copied().unwrap_or(0)
    }
}
