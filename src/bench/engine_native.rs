//! The native engine's setup: our client against the target (through its proxy when `ssh -G`
//! names one) or against an in-process server, host keys and user key found as ssh would find
//! them, one login for the server's facts, and the raw-TCP ceiling a remote `sshtune serve`
//! can measure itself. Transfers are `Native`'s; no ssh, sshd or OpenSSH probe is needed.

use super::ceiling::step;
use super::engine_openssh::{is_loopback, pairs, Reach, FORWARDED, SHARED_CPUS};
use super::executor::{Engine, Executor, Facts, Job, Sample};
use super::model::EngineKind;
use super::model::{Ceiling, ServerInfo};
use super::native::{preflight_offer, Native, Peer};
use super::options::Options;
use crate::probe::probe_target;
use crate::proxy::Proxy;
use crate::remote;
use crate::serve::in_process::InProcessServer;
use crate::target::Resolved;
use crate::target::SshError;
use crate::transport::client::ClientConfig;
use crate::transport::conn::{self, Options as ConnOptions};
use crate::transport::kex::Preferences;
use crate::transport::known_hosts::{Policy, Strict};
use crate::transport::userkey::{self, Agent, UserKey};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub struct NativeEngine {
    exec: Native,
    /// The ciphers the server offered (the catalog's, for our own server).
    offered: Vec<String>,
    window: u32,
    /// Kept alive while the engine is used; dropping it stops the in-process server.
    embedded: Option<InProcessServer>,
    /// The server is another machine behind a loopback address (`Reach::Forwarded`).
    forwarded: bool,
}

impl NativeEngine {
    pub fn open(opts: &Options) -> Result<Self> {
        let window = opts.native.window();
        let packet_size = opts.native.packet_size();
        // Both ends of the in-process pair seal with the same number of threads.
        let conn_opts = ConnOptions {
            threads: opts.native.threads,
            ..ConnOptions::default()
        };
        let Some(target) = &opts.target else {
            let server =
                InProcessServer::start(Preferences::from_catalog(true), conn_opts.clone())?;
            let mut client = server.client.clone();
            client.window = window;
            client.packet_size = packet_size;
            let exec = Native::new(
                "127.0.0.1".into(),
                server.addr.port(),
                client,
                Peer::Sshtune,
            );
            return Ok(Self {
                exec,
                offered: Preferences::from_catalog(true).ciphers,
                window,
                embedded: Some(server),
                forwarded: false,
            });
        };
        let resolved = target.resolve()?;
        let identity = opts.ssh_args.identity.as_deref().map(Path::new);
        let key = user_key(identity, &resolved.identity_files)?;
        let host_keys = host_key_policy(opts.native.known_hosts.as_deref(), &resolved)?;
        let offer = probe_target(target, &resolved, Duration::from_secs(10))?;
        let peer = if offer.software.starts_with("sshtune") {
            Peer::Sshtune
        } else {
            Peer::Shell
        };
        let cfg = ClientConfig {
            user: resolved.user.clone(),
            key,
            known_hosts: host_keys.user_files[0].clone(),
            // Only ok-graded algorithms to log in; each transfer offers just its own.
            prefs: preflight_offer(),
            opts: conn_opts,
            window,
            packet_size,
            connect_timeout: Duration::from_secs(10),
        };
        let mut exec = Native::new(resolved.hostname.clone(), resolved.port, cfg, peer);
        exec.host_keys = host_keys;
        exec.proxy = Proxy::of(&resolved, &target.options, &target.destination);
        Ok(Self {
            exec,
            offered: offer.ciphers(),
            window,
            embedded: None,
            forwarded: false,
        })
    }
}

impl Executor for NativeEngine {
    fn engine(&self) -> &'static str {
        self.exec.engine()
    }

    fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
        self.exec.transfer(job)
    }

    fn warms_per_pair(&self) -> bool {
        self.exec.warms_per_pair()
    }

    fn placement(&self) -> Option<super::placement::Placement> {
        self.exec.placement()
    }
}

impl Engine for NativeEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Native
    }

    fn preflight(&mut self, opts: &Options) -> Result<Facts> {
        let (info, banner) = self.exec.preflight()?;
        let mut warnings = Vec::new();
        // Behind a jump host, 127.0.0.1 is the far side's loopback, not ours.
        let embedded = self.embedded.is_some();
        let same_boot = remote::same_boot(&info);
        let reach = match embedded {
            true => Reach::Loopback,
            false => Reach::of(
                self.exec.proxy.is_none() && is_loopback(&self.exec.host),
                same_boot,
            ),
        };
        let loopback = reach == Reach::Loopback;
        self.exec.place(embedded, reach.same_machine(same_boot));
        self.forwarded = reach == Reach::Forwarded;
        if loopback {
            warnings.push(SHARED_CPUS.into());
        }
        let server = ServerInfo {
            banner: Some(banner),
            openssh_version: None,
            strict_kex: Some(true),
            offered_ciphers: self.offered.clone(),
            offered_macs: Preferences::from_catalog(true).macs,
            machine: remote::machine(&info),
            cpu_quota_cores: info.get("quota").and_then(|q| remote::parse_quota(&q)),
            same_machine: reach.same_machine(same_boot),
        };
        Ok(Facts {
            host_label: match &opts.target {
                Some(t) => t.destination.clone(),
                None => "embedded native server".into(),
            },
            server,
            client_version: Some(conn::OUR_IDENT.to_string()),
            info,
            loopback,
            forwarded: self.forwarded,
            // The native engine measures no RTT of its own.
            infers_path: false,
            rtt: None,
            tick_cpu: false,
            // The in-process server's CPU is not a separate process's: no shared rule.
            shared_cores: None,
            warnings,
        })
    }

    /// Every cipher both ends have except `none`, with the first MAC in OpenSSH's default
    /// order (or each `--macs` name).
    fn default_pairs(
        &self,
        facts: &Facts,
        opts: &Options,
    ) -> Result<Vec<(String, Option<String>)>> {
        let ciphers: Vec<String> = if opts.ciphers.is_empty() {
            facts
                .server
                .offered_ciphers
                .iter()
                .filter(|c| *c != "none" && ::ciphers::cipher(c).is_some())
                .cloned()
                .collect()
        } else {
            opts.ciphers.clone()
        };
        Ok(pairs(
            &ciphers,
            &opts.macs,
            Some(::ciphers::MACS[0].name.to_string()),
        ))
    }

    fn ceiling(
        &mut self,
        _facts: &Facts,
        opts: &Options,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Ceiling>> {
        let ceiling = if self.embedded.is_some() {
            (!opts.ceiling.skipped()).then(step::loopback).transpose()?
        } else if self.forwarded {
            warnings.push(FORWARDED.into());
            return Ok(None);
        } else if self.exec.proxy.is_none()
            && self.exec.peer == Peer::Sshtune
            && !opts.ceiling.skipped()
        {
            // A remote `sshtune serve` measures the raw-TCP ceiling itself (median of three).
            let mut v: Vec<f64> = (0..3)
                .filter_map(|_| self.exec.tcp_ceiling(64 << 20).ok())
                .collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).map(|m| Ceiling {
                mib_s: *m,
                method: format!("raw TCP to sshtune serve, median of {}", v.len()),
                rtt_ms: None,
                receiver: Some("sshtune serve".into()),
                directions: Vec::new(),
            })
        } else {
            None
        };
        if ceiling.is_none() {
            warnings.push(
                "raw-TCP ceiling unknown: pass --ceiling MIB/s (e.g. measured with iperf3) so a \
                 network-bound row can be recognised"
                    .into(),
            );
        }
        Ok(ceiling)
    }

    fn window(&self) -> Option<u64> {
        Some(u64::from(self.window))
    }
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set: pass --identity and --known-hosts")
}

/// Host keys are checked where and as ssh would (`ssh -G`): `UserKnownHostsFile` (or
/// `--known-hosts`), `GlobalKnownHostsFile`, `StrictHostKeyChecking`, `HashKnownHosts`,
/// `HostKeyAlias`.
fn host_key_policy(known_hosts: Option<&Path>, resolved: &Resolved) -> Result<Policy> {
    let user_files = match known_hosts {
        Some(p) => vec![p.to_path_buf()],
        None if !resolved.known_hosts.is_empty() => resolved.known_hosts.clone(),
        None => vec![home()?.join(".ssh/known_hosts")],
    };
    let strict = match resolved.strict_host_key_checking.as_deref() {
        None => Strict::Yes,
        Some(v) => Strict::parse(v)
            .with_context(|| format!("StrictHostKeyChecking {v:?} (from ssh -G) is not known"))?,
    };
    Ok(Policy {
        user_files,
        global_files: resolved.global_known_hosts.clone(),
        strict,
        hash: resolved.hash_known_hosts,
        alias: resolved.host_key_alias.clone(),
    })
}

/// `-i FILE` if given, else the ssh-agent, else the first `IdentityFile` ssh would try that
/// exists (its defaults ~/.ssh/id_ed25519, id_rsa, ... or what the user's config names).
fn user_key(identity: Option<&Path>, identity_files: &[PathBuf]) -> Result<Arc<dyn UserKey>> {
    if let Some(p) = identity {
        return userkey::load(p);
    }
    if let Some(sock) = std::env::var_os("SSH_AUTH_SOCK").filter(|s| !s.is_empty()) {
        if let Ok(agent) = Agent::connect(Path::new(&sock)) {
            if !agent.identities().is_empty() {
                return Ok(Arc::new(agent));
            }
        }
    }
    let defaults = match home() {
        Ok(h) => vec![h.join(".ssh/id_ed25519"), h.join(".ssh/id_rsa")],
        Err(_) => Vec::new(),
    };
    for p in identity_files.iter().chain(&defaults) {
        if p.exists() {
            return userkey::load(p);
        }
    }
    anyhow::bail!(
        "the native engine found no key: pass -i FILE (ed25519 or RSA, unencrypted) or start ssh-agent"
    )
}
