//! Which cipher names an OpenSSH release accepts and offers by default, from the `ciphers`
//! catalog, so an emitted line can be checked before any sshd sees it.

use crate::list::ListSpec;
use ciphers::{OpenSshVersion, CIPHERS};
use std::fmt;

/// The ciphers sshd and ssh of `version` use when no `Ciphers` line is given, in preference
/// order. Before 6.7 the real default also contained the CBC and RC4 ciphers (in a different
/// order than the catalog's); where the exact order matters, ask the binary (`sshd -T`).
pub fn default_ciphers(version: OpenSshVersion) -> Vec<&'static str> {
    CIPHERS
        .iter()
        .filter(|c| c.accepted_by(version))
        .filter(|c| c.openssh_server_default_dropped.is_none_or(|d| version < d))
        .map(|c| c.name)
        .collect()
}

/// Every cipher name a `Ciphers` line of `version` may contain.
pub fn accepted_ciphers(version: OpenSshVersion) -> Vec<&'static str> {
    CIPHERS
        .iter()
        .filter(|c| c.accepted_by(version))
        .map(|c| c.name)
        .collect()
}

/// A name a given OpenSSH release would refuse, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub name: String,
    pub reason: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.reason)
    }
}

/// Why OpenSSH `version` would refuse the cipher `name`, or `None` if it accepts it.
pub fn cipher_rejection(name: &str, version: OpenSshVersion) -> Option<String> {
    let Some(spec) = ciphers::cipher(name) else {
        return Some("not a cipher OpenSSH knows".into());
    };
    if spec.accepted_by(version) {
        return None;
    }
    Some(match (spec.openssh_added, spec.openssh_removed) {
        (None, _) => "OpenSSH never accepts it in a Ciphers line".into(),
        (Some(a), _) if version < a => format!("added in OpenSSH {a}, target is {version}"),
        (_, Some(r)) => format!("removed in OpenSSH {r}; sshd {version} refuses to start with it"),
        _ => format!("not accepted by OpenSSH {version}"),
    })
}

/// Checks a `Ciphers` value the way sshd's `ciphers_valid` does: every name in a `+`, `^` or
/// plain list must be one the release knows; a `-` list holds patterns and is always valid.
pub fn check_ciphers(spec: &ListSpec, version: OpenSshVersion) -> Result<(), Vec<Rejection>> {
    if matches!(spec, ListSpec::Remove(_)) {
        return Ok(());
    }
    let mut bad: Vec<Rejection> = spec
        .names()
        .iter()
        .filter_map(|n| {
            cipher_rejection(n, version).map(|reason| Rejection {
                name: n.clone(),
                reason,
            })
        })
        .collect();
    if spec.names().is_empty() {
        bad.push(Rejection {
            name: String::new(),
            reason: "empty list".into(),
        });
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_of_9_2() {
        assert_eq!(
            default_ciphers(OpenSshVersion::new(9, 2)),
            [
                "chacha20-poly1305@openssh.com",
                "aes128-ctr",
                "aes192-ctr",
                "aes256-ctr",
                "aes128-gcm@openssh.com",
                "aes256-gcm@openssh.com"
            ]
        );
    }

    #[test]
    fn removed_and_unknown_names_are_rejected() {
        let v = OpenSshVersion::new(9, 2);
        let err = check_ciphers(&ListSpec::parse("^aes128-ctr,arcfour,foo"), v).unwrap_err();
        assert_eq!(err.len(), 2);
        assert!(
            err[0].reason.contains("removed in OpenSSH 7.6"),
            "{}",
            err[0]
        );
        assert!(check_ciphers(&ListSpec::parse("-arcfour*,foo"), v).is_ok());
        assert!(check_ciphers(&ListSpec::parse("+arcfour"), OpenSshVersion::new(7, 4)).is_ok());
    }
}
