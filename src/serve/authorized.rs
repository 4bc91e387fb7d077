//! authorized_keys read the way sshd reads it (sshd(8) "AUTHORIZED_KEYS FILE FORMAT"), and
//! the decision for one offered key: a line is `[options] keytype base64 [comment]`, `#`
//! starts a comment only at the start of a line, a line with a malformed key or an unknown
//! option counts for nothing, and when a key is listed twice the first line whose options
//! pass wins. Pure: the caller brings the peer address and the time.
//!
//! Keys are decoded by the `ssh-key` crate. The options field is tokenised here because the
//! crate's option iterator rejects spaces inside quoted values (`command="source 1G"`) and its
//! line iterator cuts at a `#` anywhere, inside quotes too; sshd allows both.
//!
//! serve has nothing to forward, so the forwarding and pty options are accepted and have no
//! effect. Where sshd would run a command or trust certificates, serve refuses the key
//! instead: a forced command must be one of serve's built-ins, and `cert-authority` and
//! `principals=` lines never authorize a plain key.

use sshd_config::pattern;
use std::net::IpAddr;

/// A parsed authorized_keys file.
#[derive(Debug, Clone, Default)]
pub struct AuthorizedKeys {
    entries: Vec<Entry>,
    /// Lines that are neither blank, comments nor usable keys: (line number, why).
    pub skipped: Vec<(usize, String)>,
}

/// One key line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based line number, for log lines.
    pub line: usize,
    /// The key blob as it appears in a USERAUTH_REQUEST.
    pub blob: Vec<u8>,
    pub opts: KeyOptions,
}

/// The options of one line that change whether or how the key logs in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyOptions {
    /// `from="pattern-list"`.
    pub from: Option<String>,
    /// `expiry-time=`, as seconds since the Unix epoch.
    pub expires: Option<i64>,
    /// `command="…"`.
    pub command: Option<String>,
    /// `cert-authority` or `principals=`: the line is about certificates, which serve does not
    /// accept, so the key is refused.
    pub certificates: bool,
}

/// What the file says about one offered key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The key may log in; with a forced built-in if its line has `command=`.
    Allow { line: usize, forced: Option<String> },
    /// Listed, but every line with it refuses; one reason per line.
    Refuse(Vec<String>),
    /// Not listed at all.
    Unknown,
}

/// Who may log in: the keys, and the user names a client may ask for.
#[derive(Debug, Clone, Default)]
pub struct Access {
    pub keys: AuthorizedKeys,
    pub users: Vec<String>,
}

impl Access {
    pub fn user_allowed(&self, user: &str) -> bool {
        self.users.iter().any(|u| u == user)
    }
}

/// Option names that are valid but change nothing for serve (no forwarding, no pty, no rc,
/// no FIDO keys). Matched case-insensitively, like sshd.
const NO_EFFECT_FLAGS: &[&str] = &[
    "restrict",
    "agent-forwarding",
    "no-agent-forwarding",
    "port-forwarding",
    "no-port-forwarding",
    "x11-forwarding",
    "no-x11-forwarding",
    "pty",
    "no-pty",
    "user-rc",
    "no-user-rc",
    "touch-required",
    "no-touch-required",
    "verify-required",
];
const NO_EFFECT_VALUES: &[&str] = &["environment", "permitopen", "permitlisten", "tunnel"];

impl AuthorizedKeys {
    pub fn parse(text: &str) -> Self {
        let mut out = Self::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim_start_matches([' ', '\t']).trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line) {
                Ok((blob, opts)) => out.entries.push(Entry {
                    line: i + 1,
                    blob,
                    opts,
                }),
                Err(why) => out.skipped.push((i + 1, why)),
            }
        }
        out
    }

    /// An allow-list of exactly these key blobs, without options (the in-process server).
    pub fn from_blobs(blobs: impl IntoIterator<Item = Vec<u8>>) -> Self {
        let entries = blobs
            .into_iter()
            .enumerate()
            .map(|(i, blob)| Entry {
                line: i + 1,
                blob,
                opts: KeyOptions::default(),
            })
            .collect();
        Self {
            entries,
            skipped: Vec::new(),
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `blob` may log in from `peer` at `now` (seconds since the epoch).
    pub fn decide(&self, blob: &[u8], peer: Option<IpAddr>, now: i64) -> Decision {
        let mut reasons = Vec::new();
        for e in self.entries.iter().filter(|e| e.blob == blob) {
            match e.opts.check(peer, now) {
                Ok(forced) => {
                    return Decision::Allow {
                        line: e.line,
                        forced,
                    }
                }
                Err(why) => reasons.push(format!("line {}: {why}", e.line)),
            }
        }
        if reasons.is_empty() {
            Decision::Unknown
        } else {
            Decision::Refuse(reasons)
        }
    }
}

impl KeyOptions {
    /// The forced built-in (if any) when this line lets the key in, else why not.
    fn check(&self, peer: Option<IpAddr>, now: i64) -> Result<Option<String>, String> {
        if self.certificates {
            return Err("cert-authority/principals= line (certificates are not supported)".into());
        }
        if let Some(t) = self.expires {
            if now > t {
                return Err(format!("key expired (expiry-time {})", show_time(t)));
            }
        }
        if let Some(list) = &self.from {
            let Some(ip) = peer else {
                return Err("from= given but the client address is unknown".into());
            };
            match from_matches(list, ip) {
                Ok(true) => {}
                Ok(false) => return Err(format!("from=\"{list}\" does not allow {ip}")),
                Err(why) => return Err(format!("from=\"{list}\": {why}")),
            }
        }
        match &self.command {
            Some(c) if super::builtins::is_builtin(c) => Ok(Some(c.clone())),
            Some(c) => Err(format!(
                "forced command \"{c}\" is not a serve built-in ({})",
                super::builtins::BUILTINS
            )),
            None => Ok(None),
        }
    }
}

fn show_time(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| t.to_string())
}

/// One line (not blank, not a comment): the key blob and its options.
fn parse_line(line: &str) -> Result<(Vec<u8>, KeyOptions), String> {
    if let Ok(blob) = read_key(line) {
        return Ok((blob, KeyOptions::default()));
    }
    let (opts, rest) = split_options(line)?;
    let blob = read_key(rest).map_err(|e| format!("not a public key line ({e})"))?;
    Ok((blob, parse_options(&opts)?))
}

/// `keytype base64 [comment]`, fields separated by runs of spaces or tabs as sshd allows
/// (the crate wants single spaces); the comment is not needed.
fn read_key(text: &str) -> Result<Vec<u8>, String> {
    let mut fields = text.split([' ', '\t']).filter(|f| !f.is_empty());
    let (Some(kind), Some(b64)) = (fields.next(), fields.next()) else {
        return Err("no key type and key".into());
    };
    let key =
        ssh_key::PublicKey::from_openssh(&format!("{kind} {b64}")).map_err(|e| e.to_string())?;
    key.to_bytes()
        .map_err(|e| format!("cannot encode key: {e}"))
}

/// Splits `line` at the first space or tab outside double quotes.
fn split_options(line: &str) -> Result<(String, &str), String> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ' ' | '\t' if !quoted => return Ok((line[..i].to_string(), &line[i..])),
            _ => {}
        }
    }
    Err("no key after the options".into())
}

/// sshd's option syntax: `name` or `name="value"` (with `\"` inside), comma-separated.
fn parse_options(text: &str) -> Result<KeyOptions, String> {
    let mut opts = KeyOptions::default();
    let mut rest = text;
    while !rest.is_empty() {
        let name_end = rest.find(['=', ',']).unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = &rest[name_end..];
        let value = match rest.strip_prefix('=') {
            Some(v) => {
                let (value, after) = quoted_value(v)?;
                rest = after;
                Some(value)
            }
            None => None,
        };
        match (name.as_str(), value) {
            (n, None) if NO_EFFECT_FLAGS.contains(&n) => {}
            (n, Some(_)) if NO_EFFECT_VALUES.contains(&n) => {}
            ("cert-authority", None) | ("principals", Some(_)) => opts.certificates = true,
            ("command", Some(v)) => {
                if opts.command.replace(v).is_some() {
                    return Err("more than one command= option".into());
                }
            }
            ("from", Some(v)) => {
                if opts.from.replace(v).is_some() {
                    return Err("more than one from= option".into());
                }
            }
            ("expiry-time", Some(v)) => {
                let t = parse_expiry(&v)?;
                // Like sshd, the earliest of several wins.
                opts.expires = Some(opts.expires.map_or(t, |old| old.min(t)));
            }
            (n, _) => return Err(format!("unsupported or malformed option \"{n}\"")),
        }
        match rest.strip_prefix(',') {
            Some(r) => rest = r,
            None if rest.is_empty() => {}
            None => return Err("unexpected text after an option".into()),
        }
    }
    Ok(opts)
}

/// `"…"` at the start of `s`: the unescaped value and what follows the closing quote.
fn quoted_value(s: &str) -> Result<(String, &str), String> {
    let body = s
        .strip_prefix('"')
        .ok_or("option value must be in double quotes")?;
    let mut value = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((value, &body[i + 1..])),
            '\\' => match chars.next() {
                Some((_, '"')) => value.push('"'),
                Some((_, other)) => {
                    value.push('\\');
                    value.push(other);
                }
                None => break,
            },
            c => value.push(c),
        }
    }
    Err("unterminated quoted option value".into())
}

/// `YYYYMMDD[HHMM[SS]]`, local time, or UTC with a trailing `Z` (sshd(8)).
fn parse_expiry(v: &str) -> Result<i64, String> {
    use chrono::{NaiveDate, NaiveDateTime, TimeZone as _};
    let bad = || format!("invalid expiry-time \"{v}\"");
    let (digits, utc) = match v.strip_suffix(['Z', 'z']) {
        Some(d) => (d, true),
        None => (v, false),
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| digits[r].parse::<u32>().map_err(|_| bad());
    let (h, m, s) = match digits.len() {
        8 => (0, 0, 0),
        12 => (num(8..10)?, num(10..12)?, 0),
        14 => (num(8..10)?, num(10..12)?, num(12..14)?),
        _ => return Err(bad()),
    };
    let date =
        NaiveDate::from_ymd_opt(num(0..4)? as i32, num(4..6)?, num(6..8)?).ok_or_else(bad)?;
    let naive: NaiveDateTime = date.and_hms_opt(h, m, s).ok_or_else(bad)?;
    if utc {
        return Ok(naive.and_utc().timestamp());
    }
    chrono::Local
        .from_local_datetime(&naive)
        .earliest()
        .map(|t| t.timestamp())
        .ok_or_else(bad)
}

/// sshd's `from=` rule: each comma-separated entry is an address, a CIDR network or a
/// `*`/`?` pattern, `!` negates; a negated match refuses, otherwise any match allows. The
/// address is also the host name (sshd's default `UseDNS no`). A malformed network refuses.
pub fn from_matches(list: &str, ip: IpAddr) -> Result<bool, String> {
    let ip = ip.to_canonical();
    let text = ip.to_string();
    let mut hit = false;
    for entry in list.split(',') {
        let (neg, pat) = match entry.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, entry),
        };
        if pat.is_empty() {
            return Err("empty entry".into());
        }
        let matched = match parse_cidr(pat) {
            Some(Ok((net, len))) => in_network(ip, net, len),
            Some(Err(why)) => return Err(why),
            None => pattern::matches(&text, &pat.to_ascii_lowercase()),
        };
        if matched {
            if neg {
                return Ok(false);
            }
            hit = true;
        }
    }
    Ok(hit)
}

/// `addr` or `addr/len`; None if `s` is not an address at all (then it is a pattern).
fn parse_cidr(s: &str) -> Option<Result<(IpAddr, u32), String>> {
    let (addr, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (s, None),
    };
    let addr: IpAddr = addr.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let len = match len {
        None => max,
        Some(l) => match l.parse::<u32>() {
            Ok(l) if l <= max => l,
            _ => return Some(Err(format!("bad mask length in \"{s}\""))),
        },
    };
    if host_bits(addr, len) {
        return Some(Err(format!("\"{s}\" has bits set beyond its mask")));
    }
    Some(Ok((addr, len)))
}

fn bits(ip: IpAddr) -> (u128, u32) {
    match ip {
        IpAddr::V4(a) => (u32::from(a) as u128, 32),
        IpAddr::V6(a) => (u128::from(a), 128),
    }
}

fn mask(width: u32, len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        (u128::MAX << (128 - len)) >> (128 - width)
    }
}

fn host_bits(net: IpAddr, len: u32) -> bool {
    let (n, w) = bits(net);
    n & !mask(w, len) != 0
}

fn in_network(ip: IpAddr, net: IpAddr, len: u32) -> bool {
    if ip.is_ipv4() != net.is_ipv4() {
        return false;
    }
    let ((a, w), (b, _)) = (bits(ip), bits(net));
    a & mask(w, len) == b & mask(w, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::hostkey::Ed25519Key;

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    fn key() -> (String, Vec<u8>) {
        let k = Ed25519Key::generate().unwrap();
        (k.public_openssh(), k.public_blob())
    }

    #[test]
    fn commented_out_key_never_logs_in() {
        let (k, blob) = key();
        let ak = AuthorizedKeys::parse(&format!("# {k} disabled\n  #{k}\n"));
        assert!(ak.is_empty());
        assert_eq!(ak.decide(&blob, ip("127.0.0.1"), 0), Decision::Unknown);
    }

    #[test]
    fn from_and_forced_command_restrict_the_key() {
        let (k, blob) = key();
        let ak =
            AuthorizedKeys::parse(&format!("from=\"10.9.9.9\",command=\"/bin/false\" {k} x\n"));
        assert_eq!(ak.entries().len(), 1);
        let Decision::Refuse(why) = ak.decide(&blob, ip("127.0.0.1"), 0) else {
            panic!()
        };
        assert!(why[0].contains("from="), "{why:?}");
        let Decision::Refuse(why) = ak.decide(&blob, ip("10.9.9.9"), 0) else {
            panic!()
        };
        assert!(why[0].contains("forced command"), "{why:?}");
    }

    #[test]
    fn builtin_forced_command_with_spaces_is_kept() {
        let (k, blob) = key();
        let ak = AuthorizedKeys::parse(&format!("restrict,command=\"source 1M\" {k}\n"));
        assert_eq!(
            ak.decide(&blob, None, 0),
            Decision::Allow {
                line: 1,
                forced: Some("source 1M".into())
            }
        );
    }

    #[test]
    fn first_passing_line_wins_and_bad_lines_count_for_nothing() {
        let (k, blob) = key();
        let text = format!(
            "from=\"10.0.0.0/8\" {k}\nbogus-option {k}\ngarbage here\ncommand=\"sink\" {k}\n"
        );
        let ak = AuthorizedKeys::parse(&text);
        assert_eq!(ak.skipped.len(), 2, "{:?}", ak.skipped);
        assert_eq!(
            ak.decide(&blob, ip("10.1.2.3"), 0),
            Decision::Allow {
                line: 1,
                forced: None
            }
        );
        assert_eq!(
            ak.decide(&blob, ip("192.168.1.1"), 0),
            Decision::Allow {
                line: 4,
                forced: Some("sink".into())
            }
        );
    }

    #[test]
    fn cert_authority_and_principals_refuse() {
        let (k, blob) = key();
        for opt in ["cert-authority", "cert-authority,principals=\"a,b\""] {
            let ak = AuthorizedKeys::parse(&format!("{opt} {k}\n"));
            assert!(
                matches!(ak.decide(&blob, None, 0), Decision::Refuse(_)),
                "{opt}"
            );
        }
    }

    #[test]
    fn expiry_time() {
        let (k, blob) = key();
        let ak = AuthorizedKeys::parse(&format!("expiry-time=\"20200101Z\" {k}\n"));
        let t = parse_expiry("20200101Z").unwrap();
        assert_eq!(t, 1_577_836_800);
        assert!(matches!(ak.decide(&blob, None, t + 1), Decision::Refuse(_)));
        assert!(matches!(ak.decide(&blob, None, t), Decision::Allow { .. }));
        assert!(parse_expiry("2020010").is_err());
        assert!(parse_expiry("20201301").is_err());
        assert_eq!(parse_expiry("202001010102Z").unwrap(), t + 62 * 60);
    }

    #[test]
    fn from_patterns_and_networks() {
        let v4 = "127.0.0.1".parse().unwrap();
        assert_eq!(from_matches("127.0.0.1", v4), Ok(true));
        assert_eq!(from_matches("10.9.9.9", v4), Ok(false));
        assert_eq!(from_matches("!127.0.0.1,*", v4), Ok(false));
        assert_eq!(from_matches("*,!10.0.0.1", v4), Ok(true));
        assert_eq!(from_matches("127.0.0.0/8", v4), Ok(true));
        assert_eq!(from_matches("10.0.0.0/8", v4), Ok(false));
        assert_eq!(from_matches("127.0.0.?", v4), Ok(true));
        assert_eq!(from_matches("0.0.0.0/0", v4), Ok(true));
        assert!(from_matches("127.0.0.1/8", v4).is_err());
        assert!(from_matches("127.0.0.0/33", v4).is_err());
        assert!(from_matches("a,,b", v4).is_err());
        let mapped = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(from_matches("127.0.0.0/8", mapped), Ok(true));
        let v6 = "2001:db8::5".parse().unwrap();
        assert_eq!(from_matches("2001:db8::/32", v6), Ok(true));
        assert_eq!(from_matches("127.0.0.0/8", v6), Ok(false));
    }

    #[test]
    fn runs_of_blanks_and_tabs_separate_fields_as_in_sshd() {
        let (k, blob) = key();
        let tabbed = k.replacen(' ', "\t\t", 1);
        for line in [format!("restrict \t {k} c"), format!(" {tabbed}\tc")] {
            let ak = AuthorizedKeys::parse(&line);
            assert_eq!(ak.entries().len(), 1, "{line:?} {:?}", ak.skipped);
            assert_eq!(ak.entries()[0].blob, blob);
        }
    }

    #[test]
    fn options_are_case_insensitive_and_unknown_ones_void_the_line() {
        let (k, blob) = key();
        let ak = AuthorizedKeys::parse(&format!("No-Pty,RESTRICT {k}\nno-such-thing {k}\n"));
        assert_eq!(ak.entries().len(), 1);
        assert_eq!(ak.skipped[0].0, 2);
        assert!(matches!(ak.decide(&blob, None, 0), Decision::Allow { .. }));
    }
}
