//! `sshtune bench --engine native|both`: sets up the native client (and, with no HOST, the
//! in-process native server) and runs the same measurement loop as the openssh engine.

use super::bench::{is_loopback, StderrProgress};
use crate::bench::model::{self, BenchReport, ClientInfo, ResultRow, ServerInfo, Settings};
use crate::bench::native::{Native, Peer};
use crate::bench::run::{self, Plan};
use crate::cli::{BenchArgs, Engine};
use crate::probe::probe_target;
use crate::proxy::Proxy;
use crate::serve::embedded::EmbeddedNative;
use crate::target::{Resolved, SshTarget};
use crate::transport::channel::{DEFAULT_MAX_PACKET, DEFAULT_WINDOW};
use crate::transport::client::ClientConfig;
use crate::transport::conn::Options;
use crate::transport::kex::Preferences;
use crate::transport::known_hosts::{Policy, Strict};
use crate::transport::userkey::{self, Agent, UserKey};
use crate::{cgroup, sysinfo};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Keeps the in-process server alive while the engine is used.
pub struct NativeSetup {
    pub exec: Native,
    pub host_label: String,
    pub server: ServerInfo,
    pub ceiling: Option<model::Ceiling>,
    pub warnings: Vec<String>,
    _embedded: Option<EmbeddedNative>,
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set: pass --identity and --known-hosts")
}

/// The channel window the native client grants (`--window`, else the tuned default).
pub fn window(args: &BenchArgs) -> u32 {
    args.window.unwrap_or(DEFAULT_WINDOW)
}

/// The largest data packet the native client uses (`--packet-size`, else the default).
pub fn packet_size(args: &BenchArgs) -> u32 {
    args.packet_size.unwrap_or(DEFAULT_MAX_PACKET)
}

pub fn setup(args: &BenchArgs) -> Result<NativeSetup> {
    let mut warnings = Vec::new();
    let (exec, embedded, host_label, offered) = match &args.host {
        None => {
            let server =
                EmbeddedNative::start(Preferences::from_catalog(true), Options::default())?;
            let mut client = server.client.clone();
            client.window = window(args);
            client.packet_size = packet_size(args);
            let exec = Native::new(
                "127.0.0.1".into(),
                server.addr.port(),
                client,
                Peer::Sshtune,
            );
            let offered = Preferences::from_catalog(true).ciphers;
            (
                exec,
                Some(server),
                "embedded native server".to_string(),
                offered,
            )
        }
        Some(h) => {
            let target = SshTarget {
                destination: h.clone(),
                options: args.ssh.to_ssh_options(),
                embedded: false,
            };
            let resolved = target.resolve()?;
            let key = user_key(args, &resolved.identity_files)?;
            let host_keys = host_key_policy(args, &resolved)?;
            let offer = probe_target(&target, &resolved, Duration::from_secs(10))?;
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
                prefs: crate::bench::native::preflight_offer(),
                opts: Options::default(),
                window: window(args),
                packet_size: packet_size(args),
                connect_timeout: Duration::from_secs(10),
            };
            let mut exec = Native::new(resolved.hostname.clone(), resolved.port, cfg, peer);
            exec.host_keys = host_keys;
            exec.proxy = Proxy::of(&resolved, &target.options, &target.destination);
            (exec, None, h.clone(), offer.ciphers())
        }
    };
    let info = exec.preflight()?;
    let get = |k: &str| info.get(k);
    // Behind a jump host, 127.0.0.1 is the far side's loopback, not ours.
    if embedded.is_none() && exec.proxy.is_none() && is_loopback(&exec.host) {
        warnings.push(
            "client and server share this machine's CPUs: good for ranking ciphers, not for \
             absolute figures of a remote link"
                .into(),
        );
    }
    let server = ServerInfo {
        banner: None,
        openssh_version: None,
        strict_kex: Some(true),
        offered_ciphers: offered,
        offered_macs: Preferences::from_catalog(true).macs,
        machine: sysinfo::MachineInfo {
            cpu_model: get("cpu"),
            cores: get("cores").and_then(|c| c.parse().ok()),
            kernel: get("kernel"),
        },
        cpu_quota_cores: get("quota").and_then(|q| crate::bench::remote::parse_quota(&q)),
        same_machine: None,
    };
    // A remote `sshtune serve` can measure the raw-TCP ceiling itself (median of three).
    let ceiling = if embedded.is_none()
        && exec.proxy.is_none()
        && exec.peer == Peer::Sshtune
        && args.ceiling.is_none()
        && !args.no_ceiling
    {
        let mut v: Vec<f64> = (0..3)
            .filter_map(|_| exec.tcp_ceiling(64 << 20).ok())
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).map(|m| model::Ceiling {
            mib_s: *m,
            method: format!("raw TCP to sshtune serve, median of {}", v.len()),
            rtt_ms: None,
            receiver: Some("sshtune serve".into()),
            directions: Vec::new(),
        })
    } else {
        None
    };
    Ok(NativeSetup {
        exec,
        host_label,
        server,
        ceiling,
        warnings,
        _embedded: embedded,
    })
}

/// Host keys are checked where and as ssh would (`ssh -G`): `UserKnownHostsFile` (or
/// `--known-hosts`), `GlobalKnownHostsFile`, `StrictHostKeyChecking`, `HashKnownHosts`,
/// `HostKeyAlias`.
fn host_key_policy(args: &BenchArgs, resolved: &Resolved) -> Result<Policy> {
    let user_files = match &args.known_hosts {
        Some(p) => vec![p.clone()],
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
fn user_key(args: &BenchArgs, identity_files: &[PathBuf]) -> Result<Arc<dyn UserKey>> {
    if let Some(p) = &args.ssh.identity {
        return userkey::load(p);
    }
    if let Some(sock) = std::env::var_os("SSH_AUTH_SOCK").filter(|s| !s.is_empty()) {
        if let Ok(agent) = Agent::connect(std::path::Path::new(&sock)) {
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

/// (cipher, MAC) pairs for the native engine: the user's choice, else every cipher both
/// ends have except `none`, with the first MAC in OpenSSH's default order.
pub fn pairs(args: &BenchArgs, offered: &[String]) -> Vec<(String, Option<String>)> {
    let ciphers: Vec<String> = if args.ciphers.is_empty() {
        offered
            .iter()
            .filter(|c| *c != "none" && ciphers::cipher(c).is_some())
            .cloned()
            .collect()
    } else {
        args.ciphers.clone()
    };
    let mut out = Vec::new();
    for c in ciphers {
        if ciphers::cipher(&c).is_some_and(|s| s.is_aead()) {
            out.push((c, None));
        } else if args.macs.is_empty() {
            out.push((c, Some(ciphers::MACS[0].name.to_string())));
        } else {
            out.extend(args.macs.iter().map(|m| (c.clone(), Some(m.clone()))));
        }
    }
    out
}

/// Runs the native engine alone and builds a whole report.
pub fn measure(args: &BenchArgs, plan: Plan, mut ctx: run::Context) -> Result<BenchReport> {
    let started = chrono::Local::now().to_rfc3339();
    let mut s = setup(args)?;
    if let Some(c) = &s.ceiling {
        ctx.ceiling_mib_s = c.judges_network();
    }
    let plan = Plan {
        pairs: pairs(args, &s.server.offered_ciphers),
        ..plan
    };
    let progress = StderrProgress::new(args.quiet);
    let results = run::run(&mut s.exec, &plan, ctx, &progress)?;
    let ranking = crate::report::ranking::rank(&results);
    Ok(BenchReport {
        schema: model::SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started,
        host: s.host_label.clone(),
        embedded: args.host.is_none(),
        client: ClientInfo {
            ssh_version: Some(crate::transport::conn::OUR_IDENT.to_string()),
            machine: sysinfo::local(),
            cpu_quota_cores: cgroup::quota_cores("self"),
        },
        server: s.server.clone(),
        settings: settings(args, Engine::Native),
        ceiling: s.ceiling.take(),
        ranking,
        results,
        warnings: std::mem::take(&mut s.warnings),
        path_rtt_ms: None,
        ssh_args: args.ssh.used(),
    })
}

/// What the report records of how it was measured; the native packet size and window only
/// when the native engine ran.
pub fn settings(args: &BenchArgs, engine: Engine) -> Settings {
    let native = engine != Engine::Openssh;
    Settings {
        engines: match engine {
            Engine::Openssh => vec!["openssh".into()],
            Engine::Native => vec!["native".into()],
            Engine::Both => vec!["openssh".into(), "native".into()],
        },
        repeat: args.repeat,
        warmup: args.warmup,
        fixed_size_bytes: args.size,
        min_duration_s: args.min_duration,
        native_packet_bytes: native.then(|| packet_size(args)),
        native_window_bytes: native.then(|| window(args)),
    }
}

/// The native rows for `--engine both`, appended to the openssh report.
pub fn rows(args: &BenchArgs, plan: &Plan, ctx: run::Context) -> Result<Vec<ResultRow>> {
    let mut s = setup(args)?;
    let plan = Plan {
        pairs: pairs(args, &s.server.offered_ciphers),
        ..plan.clone()
    };
    let progress = StderrProgress::new(args.quiet);
    run::run(&mut s.exec, &plan, ctx, &progress)
}
