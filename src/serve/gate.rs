//! The server's answer to "may this user log in with this key from here": the user-name
//! allow-list and authorized_keys (`authorized.rs`, pure) applied to one connection, with a
//! log line for every refusal so the owner can see why a key did not work. Peer-controlled
//! text (the user name) goes through the one sanitiser before it is logged.

use super::authorized::{Access, Decision};
use crate::transport::auth::Policy;
use crate::transport::hostkey::fingerprint;
use crate::wire::sanitize::{peer_text, PEER_TEXT_MAX};
use std::net::IpAddr;

/// `Access` for one connection from `peer`.
pub struct Gate<'a> {
    pub access: &'a Access,
    pub peer: Option<IpAddr>,
    /// Log refusals (off for the in-process bench server).
    pub verbose: bool,
}

impl Gate<'_> {
    fn log(&self, msg: &str) {
        if self.verbose {
            let peer = self.peer.map_or_else(|| "?".to_string(), |p| p.to_string());
            eprintln!("sshtune serve: {peer}: {msg}");
        }
    }
}

impl Policy for Gate<'_> {
    fn allow(&self, user: &str, key_blob: &[u8]) -> Option<Option<String>> {
        if !self.access.user_allowed(user) {
            self.log(&format!(
                "login as user \"{}\" refused: serve accepts only {} (see --user)",
                peer_text(user.as_bytes(), PEER_TEXT_MAX),
                self.access.users.join(", ")
            ));
            return None;
        }
        let now = chrono::Utc::now().timestamp();
        match self.access.keys.decide(key_blob, self.peer, now) {
            Decision::Allow { forced, .. } => Some(forced),
            Decision::Refuse(why) => {
                self.log(&format!(
                    "key {} refused: {}",
                    fingerprint(key_blob),
                    why.join("; ")
                ));
                None
            }
            Decision::Unknown => None,
        }
    }

    fn unusable_key(&self, why: &str) {
        self.log(&format!("key refused: {why}"));
    }
}
