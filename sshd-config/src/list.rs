//! OpenSSH algorithm-list syntax: `a,b` replaces, `+a` appends, `-a` removes, `^a` prepends.
//!
//! Evaluation follows OpenSSH's `kex_assemble_names`: `+` and `^` join the names with the
//! default list and drop repeats (the first occurrence keeps its place); `-` takes patterns
//! (`*`, `?`, `!`) and filters the default list. Whether each name is *allowed* is a separate
//! question, answered per OpenSSH version by [`crate::catalog`].

use crate::pattern;
use std::fmt;

/// A parsed list value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListSpec {
    Replace(Vec<String>),
    Append(Vec<String>),
    Remove(Vec<String>),
    Prepend(Vec<String>),
}

impl ListSpec {
    pub fn parse(value: &str) -> Self {
        let value = value.trim();
        let items = |s: &str| -> Vec<String> {
            s.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        };
        match value.chars().next() {
            Some('+') => ListSpec::Append(items(&value[1..])),
            Some('-') => ListSpec::Remove(items(&value[1..])),
            Some('^') => ListSpec::Prepend(items(&value[1..])),
            _ => ListSpec::Replace(items(value)),
        }
    }

    /// The names (or, for `Remove`, patterns) the value lists.
    pub fn names(&self) -> &[String] {
        match self {
            ListSpec::Replace(v)
            | ListSpec::Append(v)
            | ListSpec::Remove(v)
            | ListSpec::Prepend(v) => v,
        }
    }

    pub fn prefix(&self) -> &'static str {
        match self {
            ListSpec::Replace(_) => "",
            ListSpec::Append(_) => "+",
            ListSpec::Remove(_) => "-",
            ListSpec::Prepend(_) => "^",
        }
    }

    /// The effective list given the program's default list.
    pub fn apply(&self, default: &[&str]) -> Vec<String> {
        match self {
            ListSpec::Replace(v) => dedup(own(v)),
            ListSpec::Append(v) => dedup(default.iter().copied().chain(own(v))),
            ListSpec::Prepend(v) => dedup(own(v).into_iter().chain(default.iter().copied())),
            ListSpec::Remove(patterns) => default
                .iter()
                .filter(|d| {
                    pattern::match_list(d, patterns.iter().map(String::as_str)) != Some(true)
                })
                .map(|s| s.to_string())
                .collect(),
        }
    }
}

impl fmt::Display for ListSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.prefix(), self.names().join(","))
    }
}

fn own(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn dedup<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

/// Applies an algorithm-list value to a default list (see [`ListSpec::apply`]).
pub fn apply(default: &[&str], value: &str) -> Vec<String> {
    ListSpec::parse(value).apply(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        let d = ["a", "b", "c"];
        assert_eq!(apply(&d, "x,y"), ["x", "y"]);
        assert_eq!(apply(&d, "+x,a"), ["a", "b", "c", "x"]);
        assert_eq!(apply(&d, "-b"), ["a", "c"]);
        assert_eq!(apply(&d, "^c,x"), ["c", "x", "a", "b"]);
        assert_eq!(apply(&d, "x,x,y"), ["x", "y"]);
    }

    #[test]
    fn remove_takes_patterns_and_negation() {
        let d = ["aes128-ctr", "aes256-ctr", "aes128-gcm"];
        assert_eq!(apply(&d, "-aes*-ctr"), ["aes128-gcm"]);
        assert_eq!(
            apply(&d, "-aes128-ctr,!aes256-ctr"),
            ["aes256-ctr", "aes128-gcm"]
        );
        assert_eq!(
            apply(&d, "-aes*-ctr,!aes256-ctr"),
            ["aes256-ctr", "aes128-gcm"]
        );
    }

    #[test]
    fn display_round_trips() {
        for v in ["^a,b", "+a", "-a*", "a,b"] {
            assert_eq!(ListSpec::parse(v).to_string(), v);
        }
    }
}
