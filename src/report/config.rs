//! What `sshtune config` decided, as one record: the summary its text form prints on stderr
//! and, with `--format json`, the object it prints on stdout (the line, why its first cipher
//! is first, each chosen cipher's tier and figures, what was dropped, and the three outputs).

use crate::config::emit::{Emitted, Meta};
use crate::config::policy::Selection;
use serde::Serialize;

pub const SCHEMA: &str = "sshtune.config/1";

#[derive(Debug, Clone, Serialize)]
pub struct ConfigSummary {
    pub schema: &'static str,
    pub tool_version: String,
    /// Which engine's rows the figures are.
    pub figures: String,
    pub policy: String,
    /// The target sshd's OpenSSH release.
    pub openssh_version: String,
    /// The `Ciphers` line, first tier first.
    pub ciphers: Vec<String>,
    pub first: String,
    /// Why the first cipher is first on this pair of machines.
    pub why_first: Option<String>,
    /// Every measured row of the chosen ciphers says the link binds: the order is preference.
    pub link_bound: bool,
    pub chosen: Vec<ChosenCipher>,
    pub dropped: Vec<DroppedCipher>,
    pub outputs: Outputs,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChosenCipher {
    pub name: String,
    pub grade: String,
    /// 1 = the fastest tier; ciphers of one tier are ordered by the fixed preference.
    pub tier: u32,
    pub upload_mib_s: Option<f64>,
    pub download_mib_s: Option<f64>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DroppedCipher {
    pub name: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Outputs {
    /// The sshd drop-in.
    pub server: String,
    /// The client's `Host` block.
    pub client: String,
    pub rsync: String,
}

impl ConfigSummary {
    pub fn new(sel: &Selection, out: &Emitted, meta: &Meta, why_first: Option<String>) -> Self {
        Self {
            schema: SCHEMA,
            tool_version: meta.tool_version.clone(),
            figures: meta.figures.clone(),
            policy: sel.policy.as_str().to_string(),
            openssh_version: sel.target.to_string(),
            ciphers: out.server_list.clone(),
            first: out.fastest.clone(),
            why_first,
            link_bound: sel.link_bound,
            chosen: sel
                .chosen
                .iter()
                .map(|c| ChosenCipher {
                    name: c.name.clone(),
                    grade: c.grade.to_string(),
                    tier: c.tier,
                    upload_mib_s: c.up,
                    download_mib_s: c.down,
                    notes: c.notes.clone(),
                })
                .collect(),
            dropped: sel
                .dropped
                .iter()
                .map(|d| DroppedCipher {
                    name: d.name.clone(),
                    reason: d.reason.clone(),
                })
                .collect(),
            outputs: Outputs {
                server: out.server.clone(),
                client: out.client.clone(),
                rsync: out.rsync.clone(),
            },
        }
    }

    /// The summary lines the text form prints on stderr.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{}\npolicy {} for OpenSSH {}: {} (first: {})\n",
            self.figures,
            self.policy,
            self.openssh_version,
            self.ciphers.join(","),
            self.first
        );
        if let Some(why) = &self.why_first {
            s.push_str(&format!("{why}\n"));
        }
        for d in &self.dropped {
            s.push_str(&format!("dropped {}: {}\n", d.name, d.reason));
        }
        s
    }
}
