//! known_hosts as OpenSSH's client reads it, so the native client accepts and refuses the same
//! servers `ssh` does. Pure: the caller reads the files and appends the line we return.
//!
//! What ssh does (hostfile.c, sshconnect.c): every line whose host field matches is collected
//! from the user files, then the global ones, as one list. A `@revoked` line with the server's
//! key wins wherever it stands; otherwise the key is trusted when any plain line carries it and
//! "changed" when plain lines carry only other keys. Host fields are `*`/`?`/`!` pattern lists
//! (case-insensitive) or one hashed name `|1|salt|HMAC-SHA1(salt, name)`; the name looked up is
//! `host`, or `[host]:port` when the port is not 22 (falling back to `host` when nothing at
//! all is listed for `[host]:port`; a key revoked there stays revoked, where ssh 9.2 would
//! treat the host as new), or `HostKeyAlias` as given.
//! `@cert-authority` lines only vouch for host certificates, which we do not accept, so they
//! never make a plain key trusted. Markers and host fields are parsed by the `ssh-key` crate.

use base64ct::Encoding as _;
use ssh_key::known_hosts::{HostPatterns, Marker};
use std::path::PathBuf;

/// `StrictHostKeyChecking` as `ssh -G` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strict {
    /// `yes`, and `ask`: we never prompt, so an unknown host is refused as in `BatchMode`.
    Yes,
    /// Unknown hosts are recorded in the first user file and accepted.
    AcceptNew,
    /// Like `accept-new` for unknown hosts; changed and revoked keys are still refused.
    No,
}

impl Strict {
    /// `ssh -G` prints `true`, `false`, `ask` or `accept-new`; config files also say
    /// `yes`/`no`/`off`.
    pub fn parse(v: &str) -> Option<Self> {
        match v.to_ascii_lowercase().as_str() {
            "true" | "yes" | "ask" => Some(Self::Yes),
            "accept-new" => Some(Self::AcceptNew),
            "false" | "no" | "off" => Some(Self::No),
            _ => None,
        }
    }
}

/// Where and how the native client checks a server's key, from `ssh -G`.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `UserKnownHostsFile`: read in order; an accepted new key goes into the first.
    pub user_files: Vec<PathBuf>,
    /// `GlobalKnownHostsFile`: read after the user files, never written.
    pub global_files: Vec<PathBuf>,
    pub strict: Strict,
    /// `HashKnownHosts`: a recorded name is hashed.
    pub hash: bool,
    /// `HostKeyAlias`: the name looked up instead of the host and port.
    pub alias: Option<String>,
}

impl Policy {
    /// One file, strict checking: what `ssh -o StrictHostKeyChecking=yes
    /// -o UserKnownHostsFile=FILE -o GlobalKnownHostsFile=/dev/null` does.
    pub fn strict_file(file: PathBuf) -> Self {
        Self {
            user_files: vec![file],
            global_files: Vec::new(),
            strict: Strict::Yes,
            hash: false,
            alias: None,
        }
    }

    /// The user files, then the global ones: the order ssh reads them in.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        self.user_files.iter().chain(&self.global_files)
    }
}

/// What the files say about the server's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Trusted,
    /// A matching `@revoked` line carries this key.
    Revoked,
    /// The host is listed, with other keys only.
    Changed,
    Unknown,
}

/// What to do with the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Accept,
    /// Accept and append the key to the first user file (accept-new, no).
    Record,
    Refuse,
}

/// The name ssh looks up and records: the alias as given, else the host in lower case,
/// bracketed with the port when it is not 22.
pub fn lookup_name(host: &str, port: u16, alias: Option<&str>) -> String {
    if let Some(a) = alias {
        return a.to_string();
    }
    let host = host.to_ascii_lowercase();
    if port == 22 {
        host
    } else {
        format!("[{host}]:{port}")
    }
}

/// What the files (texts of the user files, then the global ones) say about `host`'s key:
/// [`status`] under [`lookup_name`], and, as ssh does for a host on another port than 22
/// with no alias, the bare host name when `[host]:port` is not listed at all. There a trusted
/// key counts and a changed one leaves the host unknown, as in ssh; a revoked one stays
/// revoked. (ssh 9.2 prints its revocation warning and then treats the host as new, so with
/// `accept-new` or `no` it records and accepts the revoked key: we refuse.)
pub fn lookup(
    texts: &[&str],
    host: &str,
    port: u16,
    alias: Option<&str>,
    key_blob: &[u8],
) -> Status {
    let first = status(
        texts.iter().copied(),
        &lookup_name(host, port, alias),
        key_blob,
    );
    if first != Status::Unknown || alias.is_some() || port == 22 {
        return first;
    }
    match status(
        texts.iter().copied(),
        &lookup_name(host, 22, None),
        key_blob,
    ) {
        bare @ (Status::Trusted | Status::Revoked) => bare,
        Status::Changed | Status::Unknown => Status::Unknown,
    }
}

/// Looks `key_blob` up for `name` in the texts of all files (user files first) as one list.
pub fn status<'a>(files: impl IntoIterator<Item = &'a str>, name: &str, key_blob: &[u8]) -> Status {
    let (mut trusted, mut changed, mut revoked) = (false, false, false);
    for entry in files.into_iter().flat_map(|t| t.lines()).filter_map(parse) {
        if !host_matches(&entry.hosts, name) {
            continue;
        }
        let same = entry.key == key_blob;
        match entry.marker {
            Some(Marker::Revoked) => revoked |= same,
            Some(Marker::CertAuthority) => {}
            None if same => trusted = true,
            None => changed = true,
        }
    }
    match (revoked, trusted, changed) {
        (true, _, _) => Status::Revoked,
        (_, true, _) => Status::Trusted,
        (_, _, true) => Status::Changed,
        _ => Status::Unknown,
    }
}

/// The decision for `status` under `strict`. Where ssh with `StrictHostKeyChecking no` goes on
/// past a changed or revoked key (with password logins disabled), we refuse: a benchmark has
/// no reason to talk to a server that may be an impostor.
pub fn decide(status: Status, strict: Strict) -> Decision {
    match (status, strict) {
        (Status::Trusted, _) => Decision::Accept,
        (Status::Unknown, Strict::AcceptNew | Strict::No) => Decision::Record,
        (Status::Unknown, Strict::Yes) | (Status::Changed | Status::Revoked, _) => Decision::Refuse,
    }
}

/// The line to append for `name` and the key in `key_blob` (`name ALG BASE64`), with the name
/// hashed under `salt` when given (ssh uses 20 random bytes). `None` for a malformed blob.
pub fn entry_line(name: &str, key_blob: &[u8], salt: Option<&[u8]>) -> Option<String> {
    let mut r = crate::wire::Reader::new(key_blob);
    let alg = std::str::from_utf8(r.string("key type").ok()?).ok()?;
    let host = match salt {
        Some(salt) => format!(
            "|1|{}|{}",
            base64ct::Base64::encode_string(salt),
            base64ct::Base64::encode_string(hmac_sha1(salt, name).as_ref())
        ),
        None => name.to_string(),
    };
    Some(format!(
        "{host} {alg} {}\n",
        base64ct::Base64::encode_string(key_blob)
    ))
}

/// One known_hosts line: marker, host field and the key blob.
struct Line {
    marker: Option<Marker>,
    hosts: HostPatterns,
    key: Vec<u8>,
}

/// Comments, blank and malformed lines (which ssh skips too) are `None`. Fields are separated
/// by any run of blanks. The marker and host field are parsed by the `ssh-key` crate; the key
/// is kept as its blob, whose own type name must agree with the line's, so key types the crate
/// does not decode (ECDSA in this build, security keys) still count as "listed".
fn parse(line: &str) -> Option<Line> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let mut f = line.split_whitespace();
    let mut first = f.next()?;
    let marker = match first.strip_prefix('@') {
        Some(_) => {
            let m = first.parse::<Marker>().ok()?;
            first = f.next()?;
            Some(m)
        }
        None => None,
    };
    let hosts = first.parse::<HostPatterns>().ok()?;
    let (alg, b64) = (f.next()?, f.next()?);
    let key = base64ct::Base64::decode_vec(b64).ok()?;
    let mut r = crate::wire::Reader::new(&key);
    (r.string("key type").ok()? == alg.as_bytes()).then_some(Line { marker, hosts, key })
}

fn host_matches(patterns: &HostPatterns, name: &str) -> bool {
    match patterns {
        HostPatterns::HashedName { salt, hash } => {
            let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, salt);
            ring::hmac::verify(&key, name.as_bytes(), hash).is_ok()
        }
        HostPatterns::Patterns(list) => {
            let name = name.to_ascii_lowercase();
            let lower: Vec<String> = list.iter().map(|p| p.to_ascii_lowercase()).collect();
            sshd_config::pattern::match_list(&name, lower.iter().map(String::as_str)) == Some(true)
        }
    }
}

fn hmac_sha1(salt: &[u8], name: &str) -> ring::hmac::Tag {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, salt);
    ring::hmac::sign(&key, name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::hostkey::Ed25519Key;

    fn key() -> (String, Vec<u8>) {
        let k = Ed25519Key::generate().unwrap();
        (k.public_openssh(), k.public_blob())
    }

    fn st(text: &str, name: &str, blob: &[u8]) -> Status {
        status([text], name, blob)
    }

    #[test]
    fn revoked_wins_wherever_it_stands() {
        let (k, blob) = key();
        let after = format!("host {k}\n@revoked host {k}\n");
        assert_eq!(st(&after, "host", &blob), Status::Revoked);
        let wildcard = format!("host {k}\n@revoked * {k}\n");
        assert_eq!(st(&wildcard, "host", &blob), Status::Revoked);
        // Across files: a revocation in the global file beats the user file's entry.
        let user = format!("host {k}\n");
        let global = format!("@revoked   *\t{k}\n");
        assert_eq!(status([&*user, &*global], "host", &blob), Status::Revoked);
        // Revoking another key does not touch this one.
        let (other, _) = key();
        let text = format!("host {k}\n@revoked * {other}\n");
        assert_eq!(st(&text, "host", &blob), Status::Trusted);
    }

    #[test]
    fn cert_authority_lines_never_trust_a_plain_key() {
        let (k, blob) = key();
        let text = format!("@cert-authority host {k}\n");
        assert_eq!(st(&text, "host", &blob), Status::Unknown);
        assert_eq!(decide(Status::Unknown, Strict::Yes), Decision::Refuse);
    }

    #[test]
    fn patterns_negation_ports_and_case() {
        let (k, blob) = key();
        let t = |hosts: &str| format!("{hosts} {k}\n");
        assert_eq!(
            st(&t("*.example.org"), "a.example.org", &blob),
            Status::Trusted
        );
        assert_eq!(st(&t("web?"), "web1", &blob), Status::Trusted);
        assert_eq!(st(&t("web?"), "web10", &blob), Status::Unknown);
        assert_eq!(st(&t("*,!bad"), "bad", &blob), Status::Unknown);
        assert_eq!(st(&t("!bad,*"), "good", &blob), Status::Trusted);
        assert_eq!(
            st(&t("HOST.Example"), "host.example", &blob),
            Status::Trusted
        );
        let name = lookup_name("127.0.0.1", 2222, None);
        assert_eq!(name, "[127.0.0.1]:2222");
        assert_eq!(st(&t("[127.0.0.1]:2222"), &name, &blob), Status::Trusted);
        assert_eq!(st(&t("127.0.0.1"), &name, &blob), Status::Unknown);
        // ssh's fallback to the bare host, for another port and no alias, when [host]:port
        // is not listed at all; never past a listed [host]:port, never with an alias.
        let look = |text: &str, alias| lookup(&[text], "127.0.0.1", 2222, alias, &blob);
        assert_eq!(look(&t("127.0.0.1"), None), Status::Trusted);
        assert_eq!(look(&t("127.0.0.1"), Some("nas")), Status::Unknown);
        let (other, _) = key();
        let listed = format!("127.0.0.1 {k}\n[127.0.0.1]:2222 {other}\n");
        assert_eq!(look(&listed, None), Status::Changed);
        let bare_changed = format!("127.0.0.1 {other}\n");
        assert_eq!(look(&bare_changed, None), Status::Unknown);
        // Regression: a key revoked under the bare host came out unknown, which accept-new
        // records and accepts.
        let bare_revoked = format!("@revoked 127.0.0.1 {k}\n");
        assert_eq!(look(&bare_revoked, None), Status::Revoked);
        assert_eq!(
            decide(look(&bare_revoked, None), Strict::AcceptNew),
            Decision::Refuse
        );
        assert_eq!(st(&t("[127.0.0.*]:*"), &name, &blob), Status::Trusted);
        assert_eq!(lookup_name("Host", 22, None), "host");
        assert_eq!(lookup_name("h", 2222, Some("Alias")), "Alias");
    }

    #[test]
    fn changed_unknown_and_comments() {
        let (k, blob) = key();
        let (other, other_blob) = key();
        let text = format!("# host {other}\nhost {k}\n\n  \ngarbage line\n");
        assert_eq!(st(&text, "host", &blob), Status::Trusted);
        assert_eq!(st(&text, "host", &other_blob), Status::Changed);
        assert_eq!(st(&text, "elsewhere", &blob), Status::Unknown);
        // A second plain line with the right key makes it trusted, as in ssh.
        let two = format!("host {other}\nhost {k}\n");
        assert_eq!(st(&two, "host", &blob), Status::Trusted);
    }

    #[test]
    fn hashed_names_read_and_written() {
        let (k, blob) = key();
        let line = entry_line("[127.0.0.1]:2222", &blob, Some(&[7u8; 20])).unwrap();
        assert!(
            line.starts_with("|1|") && line.ends_with(&format!(" {k}\n")),
            "{line}"
        );
        assert_eq!(st(&line, "[127.0.0.1]:2222", &blob), Status::Trusted);
        assert_eq!(st(&line, "127.0.0.1", &blob), Status::Unknown);
        let plain = entry_line("host", &blob, None).unwrap();
        assert_eq!(plain, format!("host {k}\n"));
        assert!(entry_line("host", b"\xff", None).is_none());
    }

    #[test]
    fn other_key_types_count_as_listed() {
        let (_, blob) = key();
        // ssh-keygen -t ecdsa / -t rsa public keys: listed under the host, so "changed".
        let ecdsa = "host ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBMU7MV6Y\
                     31JI6U6QJ7eX8ZGVuxEoMcAWOzXJVDtwmwojwOXuMm4fCxe47NDUmzBwMalk+MDN/Czt+A5mTMpMyUE= c\n";
        assert_eq!(st(ecdsa, "host", &blob), Status::Changed);
    }

    #[test]
    fn decisions_per_strictness() {
        use Decision::*;
        for s in [Strict::Yes, Strict::AcceptNew, Strict::No] {
            assert_eq!(decide(Status::Trusted, s), Accept);
            assert_eq!(decide(Status::Changed, s), Refuse);
            assert_eq!(decide(Status::Revoked, s), Refuse);
        }
        assert_eq!(decide(Status::Unknown, Strict::Yes), Refuse);
        assert_eq!(decide(Status::Unknown, Strict::AcceptNew), Record);
        assert_eq!(decide(Status::Unknown, Strict::No), Record);
        assert_eq!(Strict::parse("ask"), Some(Strict::Yes));
        assert_eq!(Strict::parse("true"), Some(Strict::Yes));
        assert_eq!(Strict::parse("false"), Some(Strict::No));
        assert_eq!(Strict::parse("accept-new"), Some(Strict::AcceptNew));
        assert_eq!(Strict::parse("maybe"), None);
    }
}
