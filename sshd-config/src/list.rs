//! OpenSSH algorithm-list syntax: `a,b` replaces, `+a` appends, `-a` removes, `^a` prepends.

/// Applies an algorithm-list value to a default list the way OpenSSH's `kex_assemble_names`
/// does (without wildcard patterns), so the effective list can be explained without the binary.
pub fn apply(default: &[&str], value: &str) -> Vec<String> {
    let value = value.trim();
    let items = |s: &str| -> Vec<String> {
        s.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    if let Some(rest) = value.strip_prefix('+') {
        let mut out: Vec<String> = default.iter().map(|s| s.to_string()).collect();
        for n in items(rest) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
        out
    } else if let Some(rest) = value.strip_prefix('-') {
        let remove = items(rest);
        default
            .iter()
            .filter(|d| !remove.iter().any(|r| r == *d))
            .map(|s| s.to_string())
            .collect()
    } else if let Some(rest) = value.strip_prefix('^') {
        let mut out = items(rest);
        for d in default {
            if !out.iter().any(|o| o == d) {
                out.push(d.to_string());
            }
        }
        out
    } else {
        items(value)
    }
}

#[cfg(test)]
mod tests {
    use super::apply;

    #[test]
    fn prefixes() {
        let d = ["a", "b", "c"];
        assert_eq!(apply(&d, "x,y"), ["x", "y"]);
        assert_eq!(apply(&d, "+x,a"), ["a", "b", "c", "x"]);
        assert_eq!(apply(&d, "-b"), ["a", "c"]);
        assert_eq!(apply(&d, "^c,x"), ["c", "x", "a", "b"]);
    }
}
