//! `--ciphers` / `--macs` checked before anything connects. A typo (`aes128-gmc`) would
//! otherwise surface minutes later as an error row, after the probe, the preflight and the
//! ceiling run. Names are checked against what can run them: the cipher catalog for the
//! native engine, `ssh -Q` for the OpenSSH client; the closest known name is suggested.

/// Names of one kind (`cipher`, `MAC`) the engines in use can run.
pub struct Known<'a> {
    pub what: &'a str,
    pub names: Vec<String>,
    /// Where the list came from, for the message (e.g. `the catalog and ssh -Q cipher`).
    pub source: &'a str,
}

/// The first name in `asked` that is not in `known`, as a one-line message with a suggestion.
pub fn check(asked: &[String], known: &Known) -> Result<(), String> {
    for name in asked {
        if known.names.iter().any(|k| k == name) {
            continue;
        }
        let hint = match closest(name, &known.names) {
            Some(s) => format!("; did you mean {s}?"),
            None => String::new(),
        };
        return Err(format!(
            "unknown {} {name:?} (not in {}){hint}",
            known.what, known.source
        ));
    }
    Ok(())
}

/// The known name nearest `name` by edit distance, if near enough to be a likely typo.
fn closest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    let (best, d) = known
        .iter()
        .map(|k| (k, distance(name, k).min(distance(name, base(k)))))
        .min_by_key(|&(_, d)| d)?;
    (d <= (name.len() / 3).max(2)).then_some(best.as_str())
}

/// `aes128-gcm@openssh.com` without its `@domain`, so `aes128-gcm` finds it.
fn base(name: &str) -> &str {
    name.split('@').next().unwrap_or(name)
}

/// Edit distance counting a swap of two neighbours as one edit (`gmc` is one step from `gcm`,
/// two from `cbc`), as typing slips are.
fn distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Known<'static> {
        Known {
            what: "cipher",
            names: [
                "aes128-ctr",
                "aes256-ctr",
                "aes128-cbc",
                "aes128-gcm@openssh.com",
            ]
            .map(String::from)
            .to_vec(),
            source: "the catalog",
        }
    }

    #[test]
    fn known_names_pass() {
        assert!(check(&["aes128-ctr".into()], &known()).is_ok());
    }

    #[test]
    fn a_typo_gets_the_nearest_name() {
        let e = check(&["aes128-gmc@openssh.com".into()], &known()).unwrap_err();
        assert!(e.contains("did you mean aes128-gcm@openssh.com?"), "{e}");
        let e = check(&["aes128-gcm".into()], &known()).unwrap_err();
        assert!(e.contains("did you mean aes128-gcm@openssh.com?"), "{e}");
        let e = check(&["aes999-ctr".into()], &known()).unwrap_err();
        assert!(e.contains("unknown cipher \"aes999-ctr\""), "{e}");
    }

    #[test]
    fn nothing_close_suggests_nothing() {
        let e = check(&["rot13".into()], &known()).unwrap_err();
        assert!(!e.contains("did you mean"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn edit_distance() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("same", "same"), 0);
        assert_eq!(distance("gmc", "gcm"), 1);
    }

    #[test]
    fn a_swap_of_neighbours_is_one_slip() {
        let e = check(&["aes128-gmc".into()], &known()).unwrap_err();
        assert!(e.contains("did you mean aes128-gcm@openssh.com?"), "{e}");
    }
}
