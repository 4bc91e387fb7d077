//! Rendering a [`Selection`] as the three things a user pastes: the sshd drop-in, the client's
//! `Host` block and the rsync command line. Lines are built with the `sshd-config` crate and
//! checked against the catalog for the target release before they are returned.

use super::policy::{Chosen, Selection};
use super::reach;
use crate::bench::model::{BenchReport, Direction};
use anyhow::{bail, Result};
use ciphers::OpenSshVersion;
use sshd_config::catalog::{check_ciphers, cipher_rejection};
use sshd_config::{Document, Flavor, ListSpec};
use std::fmt::Write as _;

/// The client learned the `^` (prepend) list prefix in OpenSSH 8.2; older clients get the
/// full list spelled out instead.
pub const PREPEND_SINCE: OpenSshVersion = OpenSshVersion::new(8, 2);

/// Facts for the header that are not in the selection. No clock time: the same report must
/// give the same drop-in, byte for byte, so configuration management (Ansible's `copy`, a diff
/// in review) sees a change only when the recommendation changed.
#[derive(Debug, Clone)]
pub struct Meta {
    pub tool_version: String,
    /// The `Host` pattern (and rsync destination) for the client side.
    pub client_host: String,
    /// The local OpenSSH client's release, when known.
    pub client_version: Option<OpenSshVersion>,
    /// Which engine's rows the figures are (see `config::figures`).
    pub figures: String,
}

#[derive(Debug, Clone)]
pub struct Emitted {
    /// The server's Ciphers list, fastest tier first.
    pub server_list: Vec<String>,
    pub fastest: String,
    /// `/etc/ssh/sshd_config.d/50-sshtune.conf` content.
    pub server: String,
    /// `~/.ssh/config` block.
    pub client: String,
    /// A ready rsync command line.
    pub rsync: String,
}

pub fn emit(sel: &Selection, report: &BenchReport, meta: &Meta) -> Result<Emitted> {
    let Some(fastest) = sel.chosen.first() else {
        let why: Vec<String> = sel
            .dropped
            .iter()
            .map(|d| format!("{}: {}", d.name, d.reason))
            .collect();
        bail!(
            "no measured cipher is acceptable under policy {} for OpenSSH {} ({})",
            sel.policy.as_str(),
            sel.target,
            if why.is_empty() {
                "no rows in the report".into()
            } else {
                why.join("; ")
            }
        );
    };
    let server_list: Vec<String> = sel.chosen.iter().map(|c| c.name.clone()).collect();
    let spec = ListSpec::Replace(server_list.clone());
    if let Err(bad) = check_ciphers(&spec, sel.target) {
        // The policy already filtered on the catalog; reaching this is a bug, not user error.
        let bad: Vec<String> = bad.iter().map(ToString::to_string).collect();
        bail!(
            "internal check refused the Ciphers line: {}",
            bad.join("; ")
        );
    }

    let mut server = header(sel, report, meta);
    server.push_str(
        "# The server's list only permits; the client's order decides which cipher is used\n\
         # (see the client block sshtune printed with this file).\n",
    );
    let mut doc = Document::parse(&server);
    doc.set_global(Flavor::Sshd, "Ciphers", &[spec.to_string()]);
    let server = doc.render();

    let client = client_block(sel, report, fastest, meta)?;
    let rsync = format!(
        "rsync -a --info=progress2 -e 'ssh -c {} -o Compression=no{}' SRC/ {}:DEST/\n",
        fastest.name,
        reach::rsync_ssh_args(report),
        meta.client_host
    );
    Ok(Emitted {
        fastest: fastest.name.clone(),
        server_list,
        server,
        client,
        rsync,
    })
}

fn client_block(
    sel: &Selection,
    report: &BenchReport,
    fastest: &Chosen,
    meta: &Meta,
) -> Result<String> {
    let mut text = format!(
        "# sshtune {}: prefer the first cipher of the fastest tier measured to this host ({}, \
         policy {})\n",
        meta.tool_version,
        fmt_score(fastest.score),
        sel.policy.as_str()
    );
    let value = match meta.client_version {
        Some(v) => {
            if let Some(why) = cipher_rejection(&fastest.name, v) {
                bail!(
                    "the local ssh (OpenSSH {v}) cannot use {}: {why}",
                    fastest.name
                );
            }
            if v >= PREPEND_SINCE {
                ListSpec::Prepend(vec![fastest.name.clone()])
            } else {
                text.push_str(&format!(
                    "# OpenSSH {v} has no '^' prefix: the whole list, fastest first\n"
                ));
                ListSpec::Replace(sel.chosen.iter().map(|c| c.name.clone()).collect())
            }
        }
        None => ListSpec::Prepend(vec![fastest.name.clone()]),
    };
    for note in &fastest.notes {
        text.push_str(&format!("# {}: {note}\n", fastest.name));
    }
    if let Some(note) = reach::config_file_note(report) {
        text.push_str(&note);
    }
    let _ = write!(
        text,
        "Host {}\n    Ciphers {value}\n{}",
        meta.client_host,
        reach::host_lines(report)
    );
    Ok(text)
}

fn fmt_score(v: f64) -> String {
    format!("{v:.1} MiB/s")
}

fn cell(row: Option<(f64, f64, f64, usize)>) -> String {
    match row {
        Some((m, lo, hi, n)) => format!("{m:.1} ({lo:.1}-{hi:.1}, n={n})"),
        None => "-".into(),
    }
}

/// Best median row of `cipher` in `dir`, as (median, min, max, samples).
fn stats(report: &BenchReport, cipher: &str, dir: Direction) -> Option<(f64, f64, f64, usize)> {
    report
        .results
        .iter()
        .filter(|r| r.cipher == cipher && r.direction == dir && r.error.is_none())
        .filter_map(|r| {
            Some((
                r.median_mib_s?,
                r.min_mib_s.unwrap_or(f64::NAN),
                r.max_mib_s.unwrap_or(f64::NAN),
                r.samples.len(),
            ))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// Which places in the line the measurement decided and which the fixed preference did.
fn order_lines(h: &mut String, sel: &Selection) {
    if sel.link_bound {
        let _ = writeln!(
            h,
            "# the link binds every row (verdict network/path): the cipher does not matter on this \
             host; the list is in the fixed preference order"
        );
        return;
    }
    for tied in super::tiers::ties(sel.chosen.iter().map(|c| (c.name.as_str(), c.tier))) {
        let _ = writeln!(
            h,
            "# tied (samples overlap, not told apart by this run): {}",
            tied.join(", ")
        );
    }
    let _ = writeln!(
        h,
        "# order: tier by tier (a tier holds the ciphers whose samples overlap its fastest); inside \
         a tier the better grade, then AEAD before CTR before CBC, then OpenSSH's default order"
    );
}

fn header(sel: &Selection, report: &BenchReport, meta: &Meta) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "# sshtune {} — sshd Ciphers for {}",
        meta.tool_version, report.host
    );
    let _ = writeln!(
        h,
        "# target sshd OpenSSH {} ({}); policy {}; ordered by {} throughput",
        sel.target,
        report.server.banner.as_deref().unwrap_or("banner unknown"),
        sel.policy.as_str(),
        match sel.direction {
            crate::bench::model::Directions::Upload => "upload",
            crate::bench::model::Directions::Download => "download",
            crate::bench::model::Directions::Both => "the slower direction's",
        }
    );
    let _ = writeln!(
        h,
        "# measured by sshtune {} (bench run started {}), MiB/s median (min-max, samples):",
        report.tool_version, report.started
    );
    let _ = writeln!(h, "# {}", meta.figures);
    let mut names: Vec<&str> = Vec::new();
    for r in &report.results {
        if !names.contains(&r.cipher.as_str()) {
            names.push(&r.cipher);
        }
    }
    let _ = writeln!(
        h,
        "#   {:<30} {:<6} {:<26} {:<26} here",
        "cipher", "grade", "upload", "download"
    );
    for name in names {
        let grade = ciphers::cipher(name)
            .map(|c| c.grade.as_str())
            .unwrap_or("?");
        let status = match sel.chosen.iter().position(|c| c.name == name) {
            Some(i) => format!("#{} tier {}", i + 1, sel.chosen[i].tier),
            None => "dropped".into(),
        };
        let _ = writeln!(
            h,
            "#   {:<30} {:<6} {:<26} {:<26} {}",
            name,
            grade,
            cell(stats(report, name, Direction::Upload)),
            cell(stats(report, name, Direction::Download)),
            status
        );
    }
    order_lines(&mut h, sel);
    for w in &report.warnings {
        let _ = writeln!(h, "# bench warning: {w}");
    }
    if !sel.dropped.is_empty() {
        let _ = writeln!(h, "# dropped:");
        for d in &sel.dropped {
            let _ = writeln!(h, "#   {}: {}", d.name, d.reason);
        }
    }
    for c in &sel.chosen {
        for note in &c.notes {
            let _ = writeln!(h, "# {}: {note}", c.name);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::Directions;
    use crate::config::policy::{select, Policy};

    fn report() -> BenchReport {
        crate::bench::model::fixture("bench-openssh-9.2.json")
    }

    fn meta(client: Option<OpenSshVersion>) -> Meta {
        Meta {
            tool_version: "0.0.0".into(),
            client_host: "h".into(),
            client_version: client,
            figures: "figures: test".into(),
        }
    }

    /// The secure policy's upload order for an OpenSSH 9.2 target.
    fn secure_upload(r: &BenchReport) -> Selection {
        select(
            r,
            Policy::Secure,
            OpenSshVersion::new(9, 2),
            Directions::Upload,
        )
    }

    #[test]
    fn old_clients_get_the_whole_list_instead_of_a_prefix() {
        let r = report();
        let sel = secure_upload(&r);
        let new = emit(&sel, &r, &meta(Some(OpenSshVersion::new(9, 2)))).unwrap();
        assert!(new
            .client
            .ends_with("Host h\n    Ciphers ^aes128-gcm@openssh.com\n    User bench\n"));
        let old = emit(&sel, &r, &meta(Some(OpenSshVersion::new(7, 4)))).unwrap();
        assert!(old
            .client
            .contains("    Ciphers aes128-gcm@openssh.com,aes256-gcm@openssh.com,"));
        assert!(old.client.contains("no '^' prefix"));
    }

    #[test]
    fn the_rsync_line_and_host_block_keep_port_user_and_identity() {
        let mut r = report();
        r.host = "bob@nas".into();
        r.ssh_args = crate::bench::model::SshArgsUsed {
            port: Some(2222),
            identity: Some("~/.ssh/nas key".into()),
            options: vec!["ProxyJump=gw".into()],
            ..Default::default()
        };
        let sel = secure_upload(&r);
        let out = emit(&sel, &r, &meta(Some(OpenSshVersion::new(9, 2)))).unwrap();
        assert!(
            out.rsync.contains(
                "-o Compression=no -p 2222 -l bob -i \"~/.ssh/nas key\" -o ProxyJump=gw' SRC/ h:DEST/"
            ),
            "{}",
            out.rsync
        );
        assert!(
            out.client.ends_with(
                "    Ciphers ^aes128-gcm@openssh.com\n    Port 2222\n    User bob\n    \
                 IdentityFile \"~/.ssh/nas key\"\n    ProxyJump gw\n"
            ),
            "{}",
            out.client
        );
    }

    #[test]
    fn nothing_acceptable_is_an_error_naming_the_reasons() {
        let mut r = report();
        r.results.retain(|row| row.cipher == "3des-cbc");
        let sel = select(
            &r,
            Policy::Secure,
            OpenSshVersion::new(9, 2),
            Directions::Both,
        );
        let err = emit(&sel, &r, &meta(None)).unwrap_err().to_string();
        assert!(err.contains("3des-cbc: policy secure excludes it"), "{err}");
    }
}
