//! The ssh arguments a bench was run with, kept in the report so that what is derived from it
//! later (`sshtune config`'s rsync line and client `Host` block) reaches the host the same way:
//! same port, user, identity, config file and `-o` options.

use serde::{Deserialize, Serialize};

/// `-p`, `-l`, `-i`, `-F` and `-o` as given on the bench command line (paths as typed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SshArgsUsed {
    pub port: Option<u16>,
    pub login: Option<String>,
    pub identity: Option<String>,
    pub ssh_config: Option<String>,
    /// Each `-o` value, e.g. `ProxyJump=gw`.
    pub options: Vec<String>,
}

impl SshArgsUsed {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The arguments as ssh takes them, in the order ssh reads them.
    pub fn argv(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut pair = |flag: &str, value: &str| {
            v.push(flag.to_string());
            v.push(value.to_string());
        };
        if let Some(f) = &self.ssh_config {
            pair("-F", f);
        }
        if let Some(p) = self.port {
            pair("-p", &p.to_string());
        }
        if let Some(l) = &self.login {
            pair("-l", l);
        }
        if let Some(i) = &self.identity {
            pair("-i", i);
        }
        for o in &self.options {
            pair("-o", o);
        }
        v
    }

    /// `-o` values as ssh_config `(Keyword, value)` lines (`Key=Value` or `Key Value`).
    pub fn option_lines(&self) -> Vec<(String, String)> {
        self.options
            .iter()
            .filter_map(|o| {
                let o = o.trim();
                let at = o.find(|c: char| c == '=' || c.is_whitespace())?;
                let value = o[at..].trim_start_matches(|c: char| c == '=' || c.is_whitespace());
                Some((o[..at].to_string(), value.to_string()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_and_option_lines() {
        let a = SshArgsUsed {
            port: Some(2222),
            login: Some("bob".into()),
            identity: Some("~/.ssh/nas".into()),
            ssh_config: None,
            options: vec!["ProxyJump=gw".into(), "ServerAliveInterval 5".into()],
        };
        assert_eq!(
            a.argv().join(" "),
            "-p 2222 -l bob -i ~/.ssh/nas -o ProxyJump=gw -o ServerAliveInterval 5"
        );
        assert_eq!(
            a.option_lines(),
            vec![
                ("ProxyJump".into(), "gw".into()),
                ("ServerAliveInterval".into(), "5".into())
            ]
        );
    }

    #[test]
    fn an_old_report_without_the_field_reads_as_empty() {
        let a: SshArgsUsed = serde_json::from_str("{}").unwrap();
        assert!(a.is_empty());
    }
}
