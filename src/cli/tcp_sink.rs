//! `sshtune tcp-sink` (hidden): the raw-TCP receiver bench starts on the server.

use super::parse::parse_sink_timeout;
use clap::Args;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct TcpSinkArgs {
    /// Address to listen on. Default: the server address of the ssh connection
    /// (SSH_CONNECTION), else 127.0.0.1.
    #[arg(long)]
    pub listen: Option<std::net::IpAddr>,
    /// Secret the sender must present first; other connections are ignored.
    #[arg(long)]
    pub token: String,
    /// Connections to count before exiting.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub count: u32,
    /// Give up after this long in total (e.g. 30s; 1s–10m).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_sink_timeout)]
    pub timeout: Duration,
}
