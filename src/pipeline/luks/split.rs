//! The gain split into its parts, cheapest change first: a cipher change alone (today's LUKS
//! setting), a LUKS change alone (today's cipher), and both. A LUKS change costs a
//! re-encryption (hours offline for a real disk), so it is advised only when its best cell is
//! clearly faster than the best cipher-only cell: the same rule the bench's tiers use (a row
//! moves ahead of another only when their samples do not overlap). Inside a setting the cipher
//! is the first of config's tier order (ties by the fixed preference, not by noise).

use crate::config::tiers::{self, Candidate};
use crate::pipeline::model::{LuksCell, LuksOption};

/// The three ways from today's combination to a faster one, as measured.
#[derive(Debug, Clone, Default)]
pub struct Split {
    /// The best cipher on today's setting.
    pub cipher_only: Option<LuksOption>,
    /// Today's cipher on the fastest other setting.
    pub luks_only: Option<LuksOption>,
    /// The best cipher on the fastest other setting.
    pub both: Option<LuksOption>,
    /// The fastest cell on today's setting and on any other: the leaders of their first
    /// tiers, which the rule compares (a cell ties with its tier's leader).
    today_lead: Option<LuksOption>,
    other_lead: Option<LuksOption>,
}

/// Only the ciphers the catalog grades ok are advised.
fn safe(cipher: &str) -> bool {
    ciphers::cipher(cipher).is_some_and(|c| c.grade == ciphers::Grade::Ok)
}

fn option(c: &LuksCell) -> Option<LuksOption> {
    let s = &c.row.samples;
    Some(LuksOption {
        cipher: c.row.cipher.clone(),
        setting: c.setting.clone(),
        median_mib_s: c.row.median_mib_s?,
        min_mib_s: crate::stats::min(s)?,
        max_mib_s: crate::stats::max(s)?,
        samples: s.len() as u32,
    })
}

/// Setting `name`'s measured cells with a safe cipher.
fn measured<'a>(cells: &'a [LuksCell], name: &str) -> Vec<&'a LuksCell> {
    cells
        .iter()
        .filter(|c| c.setting == name && c.row.error.is_none() && safe(&c.row.cipher))
        .filter(|c| c.row.median_mib_s.is_some() && !c.row.samples.is_empty())
        .collect()
}

/// Setting `name`'s fastest safe cell.
fn lead(cells: &[LuksCell], name: &str) -> Option<LuksOption> {
    fastest(measured(cells, name).into_iter().filter_map(option))
}

/// Setting `name`'s choice: the first safe cell of config's tier order.
pub fn choice(cells: &[LuksCell], name: &str) -> Option<LuksOption> {
    let ok = measured(cells, name);
    let cands: Vec<Candidate> = ok
        .iter()
        .map(|c| Candidate {
            name: &c.row.cipher,
            grade: ciphers::Grade::Ok,
            score: c.row.median_mib_s.unwrap_or(0.0),
            samples: &c.row.samples,
        })
        .collect();
    let (first, _) = *tiers::order(&cands, false).first()?;
    option(ok[first])
}

fn fastest(v: impl Iterator<Item = LuksOption>) -> Option<LuksOption> {
    v.max_by(|a, b| a.median_mib_s.total_cmp(&b.median_mib_s))
}

/// The split against today's setting (`today_setting`) and today's cell.
pub fn split(cells: &[LuksCell], today_setting: Option<&str>, today: Option<&LuksCell>) -> Split {
    let mut others: Vec<&str> = Vec::new();
    for c in cells {
        if Some(c.setting.as_str()) != today_setting && !others.contains(&c.setting.as_str()) {
            others.push(&c.setting);
        }
    }
    let luks_only = today.and_then(|t| {
        fastest(
            cells
                .iter()
                .filter(|c| others.contains(&c.setting.as_str()) && c.row.cipher == t.row.cipher)
                .filter(|c| c.row.error.is_none())
                .filter_map(option),
        )
    });
    let other_lead = fastest(others.iter().filter_map(|s| lead(cells, s)));
    Split {
        cipher_only: today_setting.and_then(|t| choice(cells, t)),
        luks_only,
        both: other_lead.as_ref().and_then(|l| choice(cells, &l.setting)),
        today_lead: today_setting.and_then(|t| lead(cells, t)),
        other_lead,
    }
}

/// a's samples lie wholly above b's.
fn clearly_faster(a: &LuksOption, b: &LuksOption) -> bool {
    a.min_mib_s > b.max_mib_s
}

impl Split {
    /// The LUKS change worth its re-encryption, if any: the best other setting's choice, when
    /// that setting's fastest cell lies above today's setting's fastest (or nothing ran on
    /// today's setting).
    pub fn luks_change(&self) -> Option<&LuksOption> {
        let both = self.both.as_ref()?;
        match (&self.other_lead, &self.today_lead) {
            (Some(o), Some(t)) if !clearly_faster(o, t) => None,
            _ => Some(both),
        }
    }

    /// Why today's setting stays, and what a longer run would need to tell them apart.
    pub fn keep_note(&self) -> String {
        let head = "no measured gain from the LUKS change: keep today's setting";
        let (Some(b), Some(c)) = (&self.other_lead, &self.today_lead) else {
            return format!("{head} (no other setting was measured end to end)");
        };
        if b.median_mib_s <= c.median_mib_s {
            return format!(
                "{head} ({} read no faster than {})",
                describe(b),
                describe(c)
            );
        }
        let gain = (b.median_mib_s / c.median_mib_s - 1.0) * 100.0;
        let n = b.samples.max(c.samples).max(1);
        format!(
            "{head} ({} against {}: the samples overlap, so the {gain:+.0}% is within the run's \
             spread ({:.0}% and {:.0}%); to tell them apart each spread has to fall below the \
             difference: a longer run, more copies per cell (--repeat {}) or a larger --size)",
            describe(b),
            describe(c),
            spread(b),
            spread(c),
            n * 2
        )
    }
}

/// `cipher onto setting: M MiB/s (min–max, n=N)`.
pub fn describe(o: &LuksOption) -> String {
    format!(
        "{} onto {}: {:.1} MiB/s ({:.1}–{:.1}, n={})",
        o.cipher, o.setting, o.median_mib_s, o.min_mib_s, o.max_mib_s, o.samples
    )
}

/// Max minus min over the median, %.
fn spread(o: &LuksOption) -> f64 {
    (o.max_mib_s - o.min_mib_s) / o.median_mib_s.max(1e-9) * 100.0
}
