//! Which measured ciphers a policy recommends for a given OpenSSH release, fastest tier first
//! (`config::tiers`), and why every other measured cipher was dropped.

use super::tiers::{self, Candidate};
use crate::bench::model::Directions;
use crate::bench::model::{BenchReport, Direction, Verdict};
use ciphers::{CipherKind, Grade, OpenSshVersion};
use sshd_config::catalog::cipher_rejection;

/// OpenSSH releases that do strict KEX (the Terrapin countermeasure) on both ends from here on.
pub const STRICT_KEX_SINCE: OpenSshVersion = OpenSshVersion::new(9, 6);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// AEAD and CTR ciphers graded ok by the catalog.
    Secure,
    /// Secure plus AES-CBC, with a warning comment.
    Compatible,
    /// Everything the target sshd still accepts (3DES, and on old releases Blowfish, CAST,
    /// RC4), with a comment stating the risk.
    Legacy,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Secure => "secure",
            Policy::Compatible => "compatible",
            Policy::Legacy => "legacy",
        }
    }
}

/// A recommended cipher with its measured figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    pub name: String,
    pub grade: Grade,
    pub up: Option<f64>,
    pub down: Option<f64>,
    /// The figure the order is based on (see [`score`]).
    pub score: f64,
    /// The samples of the row `score` came from: what decides the tiers.
    pub samples: Vec<f64>,
    /// 1 = the fastest tier; ciphers of one tier are ordered by preference (`config::tiers`).
    pub tier: u32,
    /// Warnings that belong next to this cipher in the emitted comment.
    pub notes: Vec<String>,
}

/// A measured cipher that is not recommended, and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    pub name: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub policy: Policy,
    pub target: OpenSshVersion,
    pub direction: Directions,
    pub strict_kex_both: bool,
    /// Every measured row of the chosen ciphers says the link binds (verdict `network` or
    /// `path`): the cipher does not change the throughput, and the order is preference alone.
    pub link_bound: bool,
    /// Fastest tier first.
    pub chosen: Vec<Chosen>,
    pub dropped: Vec<Dropped>,
}

/// Per cipher: the best median of each direction over its rows (several MACs may have been
/// measured with one cipher), and the first error seen.
struct Measured {
    name: String,
    up: Option<f64>,
    down: Option<f64>,
    up_samples: Vec<f64>,
    down_samples: Vec<f64>,
    error: Option<String>,
}

impl Measured {
    /// The samples behind `score`: the direction it took (for `both`, the slower one).
    fn score_samples(&self, direction: Directions) -> Vec<f64> {
        let up = match direction {
            Directions::Upload => true,
            Directions::Download => false,
            Directions::Both => match (self.up, self.down) {
                (Some(u), Some(d)) => u <= d,
                (u, _) => u.is_some(),
            },
        };
        if up {
            self.up_samples.clone()
        } else {
            self.down_samples.clone()
        }
    }
}

fn measured(report: &BenchReport) -> Vec<Measured> {
    let mut out: Vec<Measured> = Vec::new();
    for row in &report.results {
        let idx = match out.iter().position(|m| m.name == row.cipher) {
            Some(i) => i,
            None => {
                out.push(Measured {
                    name: row.cipher.clone(),
                    up: None,
                    down: None,
                    up_samples: Vec::new(),
                    down_samples: Vec::new(),
                    error: None,
                });
                out.len() - 1
            }
        };
        let m = &mut out[idx];
        match (row.error.as_ref(), row.median_mib_s) {
            (None, Some(v)) => {
                let (slot, samples) = match row.direction {
                    Direction::Upload => (&mut m.up, &mut m.up_samples),
                    Direction::Download => (&mut m.down, &mut m.down_samples),
                };
                if slot.is_none_or(|old| v > old) {
                    *slot = Some(v);
                    *samples = row.samples.clone();
                }
            }
            (Some(e), _) if m.error.is_none() => m.error = Some(e.clone()),
            _ => {}
        }
    }
    out
}

/// The figure that orders ciphers. For `both`, the slower direction: a transfer pattern that
/// goes both ways is only as fast as its worse leg.
pub fn score(up: Option<f64>, down: Option<f64>, direction: Directions) -> Option<f64> {
    match direction {
        Directions::Upload => up,
        Directions::Download => down,
        Directions::Both => match (up, down) {
            (Some(u), Some(d)) => Some(u.min(d)),
            (one, other) => one.or(other),
        },
    }
}

/// Whether both ends do strict KEX: the server said so in its KEXINIT, and the client's
/// OpenSSH is new enough to ask for it.
pub fn strict_kex_both(report: &BenchReport) -> bool {
    let client = report
        .client
        .ssh_version
        .as_deref()
        .and_then(OpenSshVersion::parse);
    report.server.strict_kex == Some(true) && client.is_some_and(|v| v >= STRICT_KEX_SINCE)
}

fn terrapin_note(kind: CipherKind) -> String {
    let with = if kind == CipherKind::Cbc {
        " with an -etm MAC"
    } else {
        ""
    };
    format!(
        "Terrapin (CVE-2023-48795) applies{with} unless both ends do strict KEX (OpenSSH >= 9.6 \
         on both sides); this run did not confirm strict KEX on both ends"
    )
}

pub fn select(
    report: &BenchReport,
    policy: Policy,
    target: OpenSshVersion,
    direction: Directions,
) -> Selection {
    let strict = strict_kex_both(report);
    let mut chosen = Vec::new();
    let mut dropped = Vec::new();
    let mut drop = |name: &str, reason: String| {
        dropped.push(Dropped {
            name: name.to_string(),
            reason,
        })
    };
    let link_bound = link_bound(report);
    for m in measured(report) {
        let Some(score) = score(m.up, m.down, direction) else {
            let why = match &m.error {
                Some(e) => format!("no successful measurement ({e})"),
                None => "no successful measurement in the chosen direction".into(),
            };
            drop(&m.name, why);
            continue;
        };
        let Some(spec) = ciphers::cipher(&m.name) else {
            drop(
                &m.name,
                "not in the cipher catalog; cannot vouch for it".into(),
            );
            continue;
        };
        if spec.kind == CipherKind::None {
            drop(&m.name, spec.reason.into());
            continue;
        }
        if let Some(why) = cipher_rejection(&m.name, target) {
            drop(
                &m.name,
                format!("the target sshd (OpenSSH {target}) rejects it: {why}"),
            );
            continue;
        }
        let mut notes = Vec::new();
        let allowed = match policy {
            Policy::Secure => {
                matches!(spec.kind, CipherKind::Aead | CipherKind::Ctr) && spec.grade == Grade::Ok
            }
            Policy::Compatible => {
                (matches!(spec.kind, CipherKind::Aead | CipherKind::Ctr) && spec.grade == Grade::Ok)
                    || (spec.kind == CipherKind::Cbc && !spec.legacy && spec.grade >= Grade::Weak)
            }
            Policy::Legacy => true,
        };
        if !allowed {
            drop(
                &m.name,
                format!(
                    "policy {} excludes it ({}: {})",
                    policy.as_str(),
                    spec.grade,
                    spec.reason
                ),
            );
            continue;
        }
        if spec.grade < Grade::Ok {
            let label = if spec.legacy { "RISK" } else { "WARNING" };
            notes.push(format!("{label}: graded {} — {}", spec.grade, spec.reason));
        }
        if spec.terrapin && !strict {
            notes.push(terrapin_note(spec.kind));
        }
        chosen.push(Chosen {
            samples: m.score_samples(direction),
            name: m.name,
            grade: spec.grade,
            up: m.up,
            down: m.down,
            score,
            tier: 0,
            notes,
        });
    }
    let chosen = in_tiers(chosen, link_bound);
    Selection {
        policy,
        target,
        direction,
        strict_kex_both: strict,
        link_bound,
        chosen,
        dropped,
    }
}

/// `chosen` in the line's order with each cipher's tier set (`config::tiers`).
fn in_tiers(chosen: Vec<Chosen>, link_bound: bool) -> Vec<Chosen> {
    let candidates: Vec<Candidate> = chosen
        .iter()
        .map(|c| Candidate {
            name: &c.name,
            grade: c.grade,
            score: c.score,
            samples: &c.samples,
        })
        .collect();
    tiers::order(&candidates, link_bound)
        .into_iter()
        .map(|(i, tier)| Chosen {
            tier,
            ..chosen[i].clone()
        })
        .collect()
}

/// Whether the link binds every measured row: each has a verdict, and it is `network` or `path`.
fn link_bound(report: &BenchReport) -> bool {
    let mut rows = report
        .results
        .iter()
        .filter(|r| r.error.is_none())
        .peekable();
    rows.peek().is_some()
        && rows.all(|r| matches!(r.verdict, Some(Verdict::Network | Verdict::Path)))
}

/// The OpenSSH release of the bench's server, from its banner.
pub fn target_version(report: &BenchReport) -> Option<OpenSshVersion> {
    report
        .server
        .openssh_version
        .as_deref()
        .and_then(OpenSshVersion::parse)
        .or_else(|| {
            report
                .server
                .banner
                .as_deref()
                .and_then(OpenSshVersion::parse)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::fixture;

    fn names(sel: &Selection) -> Vec<&str> {
        sel.chosen.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn both_directions_rank_by_the_slower_leg() {
        assert_eq!(
            score(Some(400.0), Some(380.0), Directions::Both),
            Some(380.0)
        );
        assert_eq!(score(None, Some(380.0), Directions::Both), Some(380.0));
        assert_eq!(score(Some(1.0), None, Directions::Download), None);
    }

    #[test]
    fn policies_widen_in_order_and_never_pass_a_rejected_name() {
        let r = fixture("bench-legacy-ciphers.json");
        let v = OpenSshVersion::new(9, 2);
        let secure = select(&r, Policy::Secure, v, Directions::Both);
        let compatible = select(&r, Policy::Compatible, v, Directions::Both);
        let legacy = select(&r, Policy::Legacy, v, Directions::Both);
        assert_eq!(secure.chosen.len(), 6);
        assert_eq!(compatible.chosen.len(), 8);
        assert_eq!(legacy.chosen.len(), 9);
        for sel in [&secure, &compatible, &legacy] {
            assert!(names(sel).iter().all(|n| cipher_rejection(n, v).is_none()));
            let scores: Vec<f64> = sel.chosen.iter().map(|c| c.score).collect();
            assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
            assert!(sel.dropped.iter().any(|d| d.name == "arcfour"));
        }
        // An old target keeps what it still accepts.
        let old = select(
            &r,
            Policy::Legacy,
            OpenSshVersion::new(7, 4),
            Directions::Both,
        );
        assert!(names(&old).contains(&"arcfour"));
    }

    #[test]
    fn strict_kex_needs_both_ends() {
        let mut r = fixture("bench-openssh-9.6-strict.json");
        assert!(strict_kex_both(&r));
        r.client.ssh_version = Some("OpenSSH_9.2p1 Debian-2".into());
        assert!(!strict_kex_both(&r));
        let sel = select(
            &r,
            Policy::Secure,
            OpenSshVersion::new(9, 6),
            Directions::Both,
        );
        let chacha = sel
            .chosen
            .iter()
            .find(|c| c.name.starts_with("chacha20"))
            .unwrap();
        assert!(chacha.notes[0].contains("CVE-2023-48795"));
    }
}
