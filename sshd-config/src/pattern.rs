//! OpenSSH wildcard patterns (`*`, `?`) and comma-separated pattern lists with `!` negation,
//! as used by `-` algorithm lists, `Host` lines and `Match host`.

/// Whether `name` matches a single pattern.
pub fn matches(name: &str, pattern: &str) -> bool {
    fn rec(n: &[u8], p: &[u8]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some((b'*', rest)) => (0..=n.len()).any(|i| rec(&n[i..], rest)),
            Some((b'?', rest)) => !n.is_empty() && rec(&n[1..], rest),
            Some((c, rest)) => n.first() == Some(c) && rec(&n[1..], rest),
        }
    }
    rec(name.as_bytes(), pattern.as_bytes())
}

/// OpenSSH's `match_pattern_list`: `Some(true)` on a positive match, `Some(false)` when a
/// negated pattern matches (which vetoes the whole list), `None` when nothing matches.
pub fn match_list<'a>(name: &str, patterns: impl IntoIterator<Item = &'a str>) -> Option<bool> {
    let mut hit = None;
    for p in patterns {
        if let Some(neg) = p.strip_prefix('!') {
            if matches(name, neg) {
                return Some(false);
            }
        } else if matches(name, p) {
            hit = Some(true);
        }
    }
    hit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(matches("aes128-ctr", "aes*-ctr"));
        assert!(matches("aes128-ctr", "aes???-ctr"));
        assert!(!matches("aes128-gcm@openssh.com", "aes*-ctr"));
        assert_eq!(match_list("web1", ["web*", "!web1"]), Some(false));
        assert_eq!(match_list("web2", ["web*", "!web1"]), Some(true));
        assert_eq!(match_list("db", ["web*"]), None);
    }
}
