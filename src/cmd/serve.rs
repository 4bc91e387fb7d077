use crate::cli::ServeArgs;
use crate::serve::authorized::{Access, AuthorizedKeys};
use crate::serve::hostkey_store;
use crate::serve::limits::Limits;
use crate::serve::{Server, ServerConfig};
use crate::transport::channel::{DEFAULT_MAX_PACKET, DEFAULT_WINDOW};
use crate::transport::conn::Options;
use crate::transport::hostkey;
use crate::transport::kex::{self, Preferences};
use anyhow::{bail, Context, Result};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

pub fn run(args: ServeArgs) -> Result<()> {
    let authorized_path = match &args.authorized_keys {
        Some(p) => p.clone(),
        None => home()?.join(".ssh/authorized_keys"),
    };
    let text = std::fs::read_to_string(&authorized_path).with_context(|| {
        format!(
            "reading authorized keys {} (pass --authorized-keys FILE)",
            authorized_path.display()
        )
    })?;
    let keys = AuthorizedKeys::parse(&text);
    for (line, why) in &keys.skipped {
        eprintln!(
            "sshtune serve: {} line {line} ignored: {why}",
            authorized_path.display()
        );
    }
    if keys.is_empty() {
        bail!(
            "{} lists no usable public key: nobody could log in",
            authorized_path.display()
        );
    }
    let users = if args.users.is_empty() {
        vec![current_user()?]
    } else {
        args.users.clone()
    };
    let authorized = Access { keys, users };
    let key_path = match &args.host_key {
        Some(p) => p.clone(),
        None => hostkey_store::state_dir()?.join("host_ed25519"),
    };
    let (key, created) = hostkey_store::load_or_create(&key_path)?;
    let (prefs, kex) = if args.allow_legacy {
        (Preferences::from_catalog(true), kex::KEX_METHODS)
    } else {
        (Preferences::recommended(), kex::KEX_RECOMMENDED)
    };
    let fp = hostkey::fingerprint(&key.public_blob());
    let cfg = ServerConfig {
        host_key: Arc::new(key),
        authorized,
        prefs: prefs.clone(),
        opts: Options {
            rekey_bytes: args.rekey_limit,
            threads: args.threads,
            kex: Some(kex.iter().map(|k| k.to_string()).collect()),
            ..Options::default()
        },
        limits: Limits {
            max_sessions: args.max_sessions as usize,
            startups: args.max_startups,
            per_source: args.per_source_max_startups as usize,
            login_grace: args.login_grace_time,
        },
        idle_timeout: args.idle_timeout,
        window: DEFAULT_WINDOW,
        packet_size: DEFAULT_MAX_PACKET,
        verbose: true,
    };
    crate::serve::memory::return_big_buffers();
    let server =
        Server::bind(args.listen, cfg).with_context(|| format!("listening on {}", args.listen))?;
    let addr = server.local_addr()?;
    if !addr.ip().is_loopback() {
        eprintln!(
            "sshtune serve: WARNING: listening on {addr}, reachable from other machines \
             (publickey login only, built-in commands only)"
        );
    }
    if args.allow_legacy {
        let ok = Preferences::recommended();
        let weak: Vec<&str> = (prefs.ciphers.iter().filter(|c| !ok.ciphers.contains(c)))
            .chain(prefs.macs.iter().filter(|m| !ok.macs.contains(m)))
            .map(String::as_str)
            .chain([kex::DH14_SHA1])
            .collect();
        eprintln!(
            "sshtune serve: WARNING: weak and insecure algorithms enabled for measurement: {}",
            weak.join(",")
        );
    }
    let mut out = std::io::stdout();
    writeln!(
        out,
        "sshtune serve: listening on {addr}\nsshtune serve: host key {fp} ({}{})\nsshtune serve: ciphers {}\nsshtune serve: commands: {}",
        key_path.display(),
        if created { ", new" } else { "" },
        prefs.ciphers.join(","),
        crate::serve::server::BUILTINS
    )?;
    out.flush()?;
    server.serve();
    Ok(())
}

/// The account serve runs as: the one user name it accepts unless `--user` says otherwise.
fn current_user() -> Result<String> {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .context("cannot find the name of the account serve runs as: pass --user NAME")
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set: pass --authorized-keys")
}
