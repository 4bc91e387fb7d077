//! "What is the effective `Ciphers` here?" answered from the files alone: the first value in
//! evaluation order wins, as in both sshd and ssh. The real binaries (`sshd -T`, `ssh -G`)
//! remain the authority; this answer explains *which line* decides and lets us predict the
//! effect of an edit before writing it.

use crate::directive::Section;
use crate::include::{ConfigSet, Origin};
use crate::list::ListSpec;
use crate::pattern;

/// The value that decides a keyword, and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub keyword: String,
    pub value: String,
    pub origin: Origin,
}

impl Setting {
    /// The effective algorithm list, given the program's default list for this keyword.
    pub fn list(&self, default: &[&str]) -> Vec<String> {
        ListSpec::parse(&self.value).apply(default)
    }
}

/// One place a keyword appears, and whether it is the one that counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub value: String,
    pub origin: Origin,
    pub section: Section,
    /// True for the line that decides the global value.
    pub wins: bool,
}

impl ConfigSet {
    /// The value that applies outside any conditional block (sshd: every connection no `Match`
    /// selects; ssh: every host, `Host *` included), or `None` when the default applies.
    pub fn effective(&self, keyword: &str) -> Option<Setting> {
        self.first(keyword, |s| s.is_global())
    }

    /// The effective `Ciphers` list for OpenSSH `version`, with the catalog's default list
    /// where no line sets it.
    pub fn effective_ciphers(&self, version: ciphers::OpenSshVersion) -> Vec<String> {
        let default = crate::catalog::default_ciphers(version);
        match self.effective("Ciphers") {
            Some(s) => s.list(&default),
            None => default.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// ssh_config only: the value for connections to `host`, considering `Host` blocks.
    /// `Match` blocks need runtime facts (user, exec, …) and are skipped; ask `ssh -G` when
    /// they matter.
    pub fn effective_for_host(&self, keyword: &str, host: &str) -> Option<Setting> {
        self.first(keyword, |s| match s {
            Section::Global => true,
            Section::Host(patterns) => {
                pattern::match_list(host, patterns.iter().map(String::as_str)) == Some(true)
            }
            Section::Match(_) => false,
        })
    }

    /// Every line that sets `keyword`, in evaluation order.
    pub fn occurrences(&self, keyword: &str) -> Vec<Occurrence> {
        let winner = self.effective(keyword).map(|s| s.origin);
        self.entries
            .iter()
            .filter(|e| self.directive(e).is(keyword))
            .map(|e| {
                let origin = self.origin(e);
                Occurrence {
                    value: self.directive(e).value(),
                    wins: winner.as_ref() == Some(&origin),
                    origin,
                    section: e.section.clone(),
                }
            })
            .collect()
    }

    fn first(&self, keyword: &str, applies: impl Fn(&Section) -> bool) -> Option<Setting> {
        self.entries
            .iter()
            .find(|e| applies(&e.section) && self.directive(e).is(keyword))
            .map(|e| {
                let d = self.directive(e);
                Setting {
                    keyword: d.keyword.clone(),
                    value: d.value(),
                    origin: self.origin(e),
                }
            })
    }
}
