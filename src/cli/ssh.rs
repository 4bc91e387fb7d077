//! The destination options every command that starts `ssh` takes, passed to it as given.

use clap::Args;
use std::path::PathBuf;

/// Destination options, passed to `ssh` exactly as given.
#[derive(Debug, Args, Clone, Default)]
pub struct SshArgs {
    /// Port to connect to on the remote host (ssh -p).
    #[arg(short = 'p', long = "port")]
    pub port: Option<u16>,
    /// User to log in as (ssh -l).
    #[arg(short = 'l', long = "login")]
    pub login: Option<String>,
    /// Identity file (ssh -i).
    #[arg(short = 'i', long = "identity")]
    pub identity: Option<PathBuf>,
    /// Alternative ssh config file (ssh -F).
    #[arg(short = 'F', long = "ssh-config")]
    pub config: Option<PathBuf>,
    /// Extra ssh option, repeatable (ssh -o), e.g. -o ProxyJump=gw.
    #[arg(short = 'o', long = "ssh-option")]
    pub option: Vec<String>,
    /// Connect through this jump host, `[user@]host[:port]`, comma-separated hops (ssh -J;
    /// the same as -o ProxyJump=...).
    #[arg(short = 'J', long = "jump", value_name = "DESTINATION")]
    pub jump: Option<String>,
    /// IPv4 addresses only (ssh -4; -o AddressFamily=inet).
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6 addresses only (ssh -6; -o AddressFamily=inet6).
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// ssh's own debug output on stderr (ssh -v; repeat for more). The native engine has no
    /// ssh log to show.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl SshArgs {
    /// What the bench report records of these arguments: `-J`, `-4` and `-6` as the `-o`
    /// options they stand for, so a derived `Host` block carries them too. `-v` is not
    /// recorded: it changes what ssh prints, not where it goes.
    pub fn used(&self) -> crate::bench::model::SshArgsUsed {
        crate::bench::model::SshArgsUsed {
            port: self.port,
            login: self.login.clone(),
            identity: self.identity.as_ref().map(|p| p.display().to_string()),
            ssh_config: self.config.as_ref().map(|p| p.display().to_string()),
            options: self.options(),
        }
    }
    /// `-o` values, then the ones `-J`, `-4` and `-6` stand for (ssh takes the first value
    /// of an option, so an explicit `-o` wins, as it does in ssh).
    fn options(&self) -> Vec<String> {
        let mut v = self.option.clone();
        if let Some(j) = &self.jump {
            v.push(format!("ProxyJump={j}"));
        }
        if self.ipv4 {
            v.push("AddressFamily=inet".into());
        }
        if self.ipv6 {
            v.push("AddressFamily=inet6".into());
        }
        v
    }

    pub fn to_ssh_options(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(c) = &self.config {
            v.extend(["-F".to_string(), c.display().to_string()]);
        }
        if let Some(p) = self.port {
            v.extend(["-p".to_string(), p.to_string()]);
        }
        if let Some(l) = &self.login {
            v.extend(["-l".to_string(), l.clone()]);
        }
        if let Some(i) = &self.identity {
            v.extend(["-i".to_string(), i.display().to_string()]);
        }
        for o in self.options() {
            v.extend(["-o".to_string(), o]);
        }
        v.extend((0..self.verbose.min(3)).map(|_| "-v".to_string()));
        v
    }
}
