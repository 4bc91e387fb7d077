//! `sshtune serve`: the native SSH server's listener, keys, limits and timeouts.

use super::parse::{parse_idle_timeout, parse_step_timeout, parse_user_name};
use crate::units::parse_size;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port to listen on. Anything but loopback exposes the server (a warning is printed).
    #[arg(long, default_value = "127.0.0.1:2222")]
    pub listen: std::net::SocketAddr,
    /// Public keys allowed to log in. Default: ~/.ssh/authorized_keys.
    #[arg(long)]
    pub authorized_keys: Option<PathBuf>,
    /// User name a client may log in as (repeatable). Default: the account serve runs as.
    #[arg(long = "user", value_name = "NAME", value_parser = parse_user_name)]
    pub users: Vec<String>,
    /// Host key (OpenSSH ed25519 format); created on first use. Default: in the user's state dir.
    #[arg(long)]
    pub host_key: Option<PathBuf>,
    /// Logged-in connections served at once; more are refused.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub max_sessions: u32,
    /// Unauthenticated connections: from START on, refuse new ones with RATE% chance, rising to
    /// 100% at FULL (as sshd's MaxStartups).
    #[arg(long, default_value = "10:30:100", value_name = "START:RATE:FULL")]
    pub max_startups: crate::serve::limits::Startups,
    /// Unauthenticated connections from one address at once.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub per_source_max_startups: u32,
    /// Time from connect to the end of authentication (as sshd's LoginGraceTime; 1s–1h).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_step_timeout)]
    pub login_grace_time: Duration,
    /// How long a connection may stay silent (or not take our data) before it is dropped
    /// (at least 1s).
    #[arg(long, default_value = "5m", value_name = "DURATION", value_parser = parse_idle_timeout)]
    pub idle_timeout: Duration,
    /// Also offer insecure legacy ciphers (arcfour*, blowfish-cbc, cast128-cbc, 3des-cbc, none).
    #[arg(long)]
    pub allow_legacy: bool,
    /// Rekey after this much data in one direction (e.g. 1M), below the cipher's own limit.
    #[arg(long, value_parser = parse_size)]
    pub rekey_limit: Option<u64>,
    #[arg(long, help = THREADS_HELP, default_value_t = 1,
          value_parser = clap::value_parser!(u8).range(1..=2))]
    pub threads: u8,
}

/// `--threads` of the native engine and `serve`, one text for both.
pub(super) const THREADS_HELP: &str = "Native engine and serve: threads that seal what we send. 2 computes \
    the keystream of aes*-ctr and chacha20-poly1305 ahead on a second core (other ciphers \
    ignore it); off (1) by default: it showed no reliable gain in the measurements (docs/bench-json.md), and a loss where the helper shares a CPU \
    quota with the connection";
