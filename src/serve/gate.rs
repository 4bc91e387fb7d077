//! The server's answer to "may this user log in with this key from here": the user-name
//! allow-list and authorized_keys (`authorized.rs`, pure) applied to one connection. Every
//! refused attempt is noted alike, as sshd logs "Invalid user" and "Failed publickey": a name
//! not on the list, a key not in authorized_keys, a listed key whose line refuses it, a key
//! of a refused type or with a bad signature. The notes of one connection are folded into one
//! log line (`log_refusals`), so a stranger's six attempts cost one line, not six.
//! Peer-controlled text (the user name) goes through the one sanitiser before it is logged.

use super::authorized::{Access, Decision};
use super::fold::Fold;
use crate::transport::auth::Policy;
use crate::transport::hostkey::fingerprint;
use crate::wire::sanitize::{peer_text, terminal_safe, PEER_TEXT_MAX};
use std::cell::RefCell;
use std::net::IpAddr;

/// Distinct refusals one connection's log line names; more are counted.
const REFUSALS_LOGGED: usize = 3;

/// `Access` for one connection from `peer`.
pub struct Gate<'a> {
    access: &'a Access,
    peer: Option<IpAddr>,
    /// Log refusals (off for the in-process bench server).
    verbose: bool,
    refused: RefCell<Fold>,
}

impl<'a> Gate<'a> {
    pub fn new(access: &'a Access, peer: Option<IpAddr>, verbose: bool) -> Self {
        Self {
            access,
            peer,
            verbose,
            refused: RefCell::new(Fold::new(REFUSALS_LOGGED)),
        }
    }

    /// One line for every attempt refused so far on this connection, if there was any.
    pub fn log_refusals(&self) {
        let refused = self.refused.borrow();
        if !self.verbose || refused.total() == 0 {
            return;
        }
        let peer = self.peer.map_or_else(|| "?".to_string(), |p| p.to_string());
        let n = refused.total();
        let attempts = if n == 1 { "attempt" } else { "attempts" };
        let line = format!("{peer}: {n} login {attempts} refused: {}", refused.text());
        eprintln!("sshtune serve: {}", terminal_safe(&line));
    }

    /// Notes a refused attempt by `user`: "invalid user" when the name is not on the list,
    /// whatever else is wrong, as sshd checks the name first.
    fn refuse(&self, user: &str, why: impl FnOnce() -> String) {
        let user_shown = peer_text(user.as_bytes(), PEER_TEXT_MAX);
        let note = if self.access.user_allowed(user) {
            format!("failed publickey for \"{user_shown}\": {}", why())
        } else {
            format!(
                "invalid user \"{user_shown}\" (serve accepts only {}; see --user)",
                self.access.users.join(", ")
            )
        };
        self.refused.borrow_mut().push(note);
    }
}

impl Policy for Gate<'_> {
    fn allow(&self, user: &str, key_blob: &[u8]) -> Option<Option<String>> {
        let key = || fingerprint(key_blob);
        if !self.access.user_allowed(user) {
            self.refuse(user, String::new);
            return None;
        }
        let now = chrono::Utc::now().timestamp();
        match self.access.keys.decide(key_blob, self.peer, now) {
            Decision::Allow { forced, .. } => Some(forced),
            Decision::Refuse(why) => {
                self.refuse(user, || {
                    format!("key {} refused: {}", key(), why.join("; "))
                });
                None
            }
            Decision::Unknown => {
                self.refuse(user, || format!("key {} is not in authorized_keys", key()));
                None
            }
        }
    }

    fn unusable_key(&self, user: &str, why: &str) {
        self.refuse(user, || format!("key refused: {why}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::authorized::AuthorizedKeys;

    fn notes(gate: &Gate) -> String {
        gate.refused.borrow().text()
    }

    /// A refused user name used to be logged on every attempt and an unknown key not at all:
    /// both are noted now, alike, and six attempts fold into one entry.
    #[test]
    fn unknown_users_and_unknown_keys_are_noted_alike_and_folded() {
        let access = Access {
            keys: AuthorizedKeys::from_blobs([b"listed".to_vec()]),
            users: vec!["u".into()],
        };
        let gate = Gate::new(&access, None, true);
        for _ in 0..6 {
            assert_eq!(gate.allow("root", b"listed"), None);
        }
        assert_eq!(
            notes(&gate),
            "invalid user \"root\" (serve accepts only u; see --user) (6 times)"
        );
        let gate = Gate::new(&access, None, true);
        assert_eq!(gate.allow("u", b"stranger"), None);
        gate.unusable_key("u", "RSA key of 1024 bits");
        gate.unusable_key("evil\u{1b}[2J", "RSA key of 1024 bits");
        gate.unusable_key("u", "bad signature");
        assert_eq!(gate.allow("u", b"listed"), Some(None));
        let text = notes(&gate);
        let want = [
            "failed publickey for \"u\": key SHA256:",
            " is not in authorized_keys; failed publickey for \"u\": key refused: RSA key of 1024 \
             bits; invalid user \"evil\\x1b[2J\" (serve accepts only u; see --user); and 1 more",
        ];
        assert!(
            text.starts_with(want[0]) && text.ends_with(want[1]),
            "{text}"
        );
        assert_eq!(gate.refused.borrow().total(), 4);
    }
}
