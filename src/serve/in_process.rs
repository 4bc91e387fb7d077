//! An in-process `sshtune serve` on 127.0.0.1 with throwaway keys: the native engine's
//! embedded default, and the fixture the tests use.

use super::authorized::{Access, AuthorizedKeys};
use super::limits::{Limits, Startups};
use super::server::{Server, ServerConfig};
use crate::transport::channel::{DEFAULT_MAX_PACKET, DEFAULT_WINDOW};
use crate::transport::client::ClientConfig;
use crate::transport::conn::Options;
use crate::transport::hostkey::Ed25519Key;
use crate::transport::kex::Preferences;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub struct InProcessServer {
    pub addr: SocketAddr,
    /// A client configuration that trusts this server and is authorized on it.
    pub client: ClientConfig,
    _dir: tempfile::TempDir,
}

impl InProcessServer {
    /// `prefs` is what the server allows (legacy ciphers included if the caller wants).
    pub fn start(prefs: Preferences, opts: Options) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("sshtune-native-")
            .tempdir()
            .context("creating a temporary directory for the native server")?;
        let host_key = Arc::new(Ed25519Key::generate()?);
        let user_key = Arc::new(Ed25519Key::generate()?);
        let user = nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .map(|u| u.name)
            .unwrap_or_else(|| "sshtune".into());
        let cfg = ServerConfig {
            host_key: host_key.clone(),
            authorized: Access {
                keys: AuthorizedKeys::from_blobs([user_key.public_blob()]),
                users: vec![user.clone()],
            },
            prefs: prefs.clone(),
            opts: opts.clone(),
            // Only the bench itself connects: no early drop to make a measurement fail.
            limits: Limits {
                max_sessions: 64,
                startups: Startups {
                    start: 64,
                    rate: 100,
                    full: 64,
                },
                per_source: 64,
                ..Limits::default()
            },
            idle_timeout: Duration::from_secs(120),
            window: DEFAULT_WINDOW,
            packet_size: DEFAULT_MAX_PACKET,
            verbose: false,
        };
        let server = Server::bind("127.0.0.1:0".parse()?, cfg)
            .context("binding the in-process server on 127.0.0.1")?;
        let addr = server.local_addr()?;
        // The accept loop lives as long as the process; it holds no files of its own.
        server.spawn();
        let known_hosts = dir.path().join("known_hosts");
        std::fs::write(
            &known_hosts,
            format!(
                "[127.0.0.1]:{} {}\n",
                addr.port(),
                host_key.public_openssh()
            ),
        )?;
        Ok(Self {
            addr,
            client: ClientConfig {
                user,
                key: user_key,
                known_hosts,
                prefs,
                opts,
                window: DEFAULT_WINDOW,
                packet_size: DEFAULT_MAX_PACKET,
                connect_timeout: Duration::from_secs(10),
            },
            _dir: dir,
        })
    }
}
