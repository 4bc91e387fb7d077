//! Which ciphers and rsync variants the run measures, and in which order.

use super::model::StageCeiling;
use super::options::Options;
use super::rsync::Variant;
use crate::target::{ssh_query, Resolved, SshTarget};
use anyhow::{bail, Result};
use std::time::Duration;

/// The ciphers worth an SSH-only ceiling, before any is measured.
pub struct Candidates {
    /// The user's, or the ok-graded ones both the local ssh and the server support.
    pub ciphers: Vec<String>,
    /// The cipher ssh would pick by default against this server; the verdict is about it.
    pub default: Option<String>,
    /// The server as the probe saw it (banner, release, strict KEX, what it offers): what
    /// `--luks` checks its drop-in against.
    pub server: crate::bench::model::ServerInfo,
}

/// Checks the user's ciphers against the local ssh and asks the server what it offers.
pub fn candidates(
    opts: &Options,
    target: &SshTarget,
    resolved: &Resolved,
    label: &str,
) -> Result<Candidates> {
    let client_ciphers = ssh_query("cipher")?;
    for c in &opts.ciphers {
        if !client_ciphers.contains(c) {
            bail!(
                "unknown cipher {c}: the local ssh supports {}",
                client_ciphers.join(",")
            );
        }
    }
    let offer = crate::probe::probe_target(target, resolved, Duration::from_secs(10))?;
    let offered = offer.ciphers();
    let default = resolved
        .ciphers
        .iter()
        .find(|c| offered.contains(c))
        .cloned();
    let ciphers: Vec<String> = if opts.ciphers.is_empty() {
        client_ciphers
            .iter()
            .filter(|c| offered.contains(c))
            .filter(|c| ciphers::cipher(c).is_some_and(|s| s.grade == ciphers::Grade::Ok))
            .cloned()
            .collect()
    } else {
        opts.ciphers.clone()
    };
    if ciphers.is_empty() {
        bail!("{label} offers no ok-graded cipher the local ssh supports; pass --ciphers");
    }
    let server = crate::bench::model::ServerInfo {
        banner: Some(offer.banner.clone()),
        openssh_version: offer.openssh_version.clone(),
        strict_kex: Some(offer.strict_kex),
        offered_ciphers: offered,
        offered_macs: offer.macs(),
        ..Default::default()
    };
    Ok(Candidates {
        ciphers,
        default,
        server,
    })
}

/// The ciphers rsync runs with: the user's as given, or the `max_ciphers` fastest
/// candidates by their SSH-only ceiling (unmeasured ones last), plus ssh's default.
pub fn chosen(opts: &Options, candidates: &Candidates, ceilings: &[StageCeiling]) -> Vec<String> {
    if !opts.ciphers.is_empty() {
        return opts.ciphers.clone();
    }
    let mut ranked: Vec<(&String, f64)> = candidates
        .ciphers
        .iter()
        .map(|c| {
            (
                c,
                ceilings
                    .iter()
                    .find(|s| s.cipher.as_ref() == Some(c))
                    .and_then(|s| s.median_mib_s)
                    .unwrap_or(0.0),
            )
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut v: Vec<String> = ranked
        .iter()
        .take(opts.max_ciphers as usize)
        .map(|(c, _)| (*c).clone())
        .collect();
    if let Some(d) = &candidates.default {
        if !v.contains(d) {
            v.push(d.clone());
        }
    }
    v
}

/// The variants in run order: fresh-destination ones first, so the delta ones find the data
/// in place.
pub fn variants(asked: &[Variant]) -> Vec<Variant> {
    let mut variants = asked.to_vec();
    variants.dedup();
    variants.sort_by_key(|v| v.needs_existing());
    variants
}
