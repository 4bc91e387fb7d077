//! Why the first cipher of a selection is first on this pair of machines, in one line for
//! `config`'s summary: its figure against the next one's, whether the bench told them apart
//! (or, tied with it, that the fixed preference put it first), and what the ends' CPUs have to
//! do with it (AES in hardware or in software).

use super::policy::Selection;
use crate::bench::cpu_note::{lacks, uses_aes};
use crate::bench::model::{BenchReport, Direction};

/// `chacha20-poly1305@openssh.com is first: 24.1 MiB/s against 19.0 for
/// aes128-gcm@openssh.com (+27%, apart in every direction measured); the server has no AES
/// instructions, AES ciphers run in software there`.
pub fn first(sel: &Selection, report: &BenchReport) -> Option<String> {
    let first = sel.chosen.first()?;
    let mut s = match sel.chosen.get(1) {
        _ if sel.link_bound => format!(
            "{} is first by preference: the link binds every row, the cipher does not matter on \
             this host",
            first.name
        ),
        Some(next) if next.tier == first.tier => format!(
            "{} is first by preference: tied with {} ({:.1} against {:.1} MiB/s, samples \
             overlap), a tier is ordered by grade, AEAD before CTR, then OpenSSH's order",
            first.name, next.name, first.score, next.score
        ),
        Some(next) => format!(
            "{} is first: {:.1} MiB/s against {:.1} for {} ({:+.0}%, {})",
            first.name,
            first.score,
            next.score,
            next.name,
            (first.score / next.score - 1.0) * 100.0,
            match apart(report, &first.name, &next.name) {
                Some(true) => "apart in every direction measured",
                Some(false) => "within the run's spread in some direction",
                None => "not ranked against each other",
            }
        ),
        None => format!("{} is first: the only cipher the policy keeps", first.name),
    };
    let (client, server) = (&report.client.machine, &report.server.machine);
    let behind_aes = sel.chosen.iter().skip(1).find(|c| uses_aes(&c.name));
    let cpus = if uses_aes(&first.name) {
        match (client.has_aes(), server.has_aes()) {
            (Some(true), Some(true)) => {
                Some("both ends have AES instructions, AES runs in hardware".to_string())
            }
            _ => [("server", server), ("client", client)]
                .iter()
                .find_map(|(who, m)| {
                    let (what, _) = lacks(&first.name, m)?;
                    Some(format!("it leads although the {who} has {what}"))
                }),
        }
    } else {
        behind_aes.and_then(|aes| {
            [("server", server), ("client", client)]
                .iter()
                .find_map(|(who, m)| {
                    let (what, runs) = lacks(&aes.name, m)?;
                    Some(format!("the {who} has {what}, {runs} in software there"))
                })
        })
    };
    if let Some(c) = cpus {
        s.push_str(&format!("; {c}"));
    }
    Some(s)
}

/// Whether the bench ranked `a` ahead of `b` in every direction both were ranked in (None:
/// never ranked together).
fn apart(report: &BenchReport, a: &str, b: &str) -> Option<bool> {
    let mut seen = None;
    for d in [Direction::Upload, Direction::Download] {
        for r in report.ranking.iter().filter(|r| r.direction == d) {
            let rank = |c: &str| r.entries.iter().find(|e| e.cipher == c).map(|e| e.rank);
            if let (Some(x), Some(y)) = (rank(a), rank(b)) {
                seen = Some(seen.unwrap_or(true) && x < y);
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::Directions;
    use crate::config::policy::{select, Policy};
    use crate::sysinfo::crypto_features;
    use ciphers::OpenSshVersion;

    #[test]
    fn the_first_cipher_says_why_on_these_cpus() {
        let secure = |r: &BenchReport| {
            select(
                r,
                Policy::Secure,
                OpenSshVersion::new(9, 2),
                Directions::Both,
            )
        };
        let mut r = crate::bench::model::fixture("bench-openssh-9.2.json");
        r.client.machine.arch = Some("x86_64".into());
        r.client.machine.cpu_features = crypto_features(Some("x86_64"), "aes pclmulqdq");
        r.server.machine = r.client.machine.clone();
        let sel = secure(&r);
        let line = first(&sel, &r).unwrap();
        assert!(
            line.starts_with(&format!("{} is first: ", sel.chosen[0].name)),
            "{line}"
        );
        if uses_aes(&sel.chosen[0].name) {
            assert!(line.ends_with("AES runs in hardware"), "{line}");
        }
        // The same figures from a server without AES, with chacha20-poly1305 measured first.
        r.server.machine.cpu_features = crypto_features(Some("x86_64"), "ssse3 avx2");
        for row in r.results.iter_mut() {
            if row.cipher.starts_with("chacha20") {
                row.median_mib_s = Some(1e6);
            }
        }
        let sel = secure(&r);
        let line = first(&sel, &r).unwrap();
        assert!(
            line.starts_with("chacha20-poly1305@openssh.com is first"),
            "{line}"
        );
        assert!(
            line.ends_with("the server has no AES instructions, AES ciphers run in software there"),
            "{line}"
        );
    }
}
