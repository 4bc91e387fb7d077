//! What a parsed line means: its keyword (case-insensitive), arguments, and the block keywords
//! that open a conditional section.

/// Which program reads the file: the block keyword and the Include base differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// sshd_config: `Match` opens a block; relative `Include` paths are under /etc/ssh.
    Sshd,
    /// ssh_config: `Host` and `Match` open blocks; relative `Include` paths are under ~/.ssh
    /// for a user's file and /etc/ssh for the system file.
    Ssh,
}

/// A `keyword args…` line. Offsets are byte positions in the line's raw text so an edit can
/// replace the value and keep the indentation, the keyword's spelling, the separator and any
/// trailing comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// The keyword as written (`ciphers`, `Ciphers`, `CIPHERS` are the same directive).
    pub keyword: String,
    pub args: Vec<String>,
    pub keyword_start: usize,
    pub value_start: usize,
    pub value_end: usize,
}

impl Directive {
    /// The keyword folded to lower case, the form OpenSSH compares.
    pub fn key(&self) -> String {
        self.keyword.to_ascii_lowercase()
    }

    pub fn is(&self, keyword: &str) -> bool {
        self.keyword.eq_ignore_ascii_case(keyword)
    }

    /// The arguments as one value (list directives take exactly one argument).
    pub fn value(&self) -> String {
        self.args.join(" ")
    }
}

/// The conditional context a directive sits in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Section {
    /// Applies to every connection (sshd) or every host (ssh).
    Global,
    /// `Match criteria…` (both programs).
    Match(Vec<String>),
    /// `Host patterns…` (ssh only).
    Host(Vec<String>),
}

impl Section {
    pub fn is_global(&self) -> bool {
        matches!(self, Section::Global)
    }

    /// The section a block directive opens, if it is one for this flavor. In ssh_config
    /// `Host *` is how the global section is usually re-entered, so it counts as global.
    pub fn opened_by(d: &Directive, flavor: Flavor) -> Option<Section> {
        if d.is("match") {
            if d.args.len() == 1 && d.args[0].eq_ignore_ascii_case("all") {
                return Some(Section::Global);
            }
            return Some(Section::Match(d.args.clone()));
        }
        if flavor == Flavor::Ssh && d.is("host") {
            if d.args.iter().all(|a| a == "*") {
                return Some(Section::Global);
            }
            return Some(Section::Host(d.args.clone()));
        }
        None
    }
}

/// Keywords whose value is an algorithm list in OpenSSH's `+`/`-`/`^` syntax.
pub const ALGORITHM_LISTS: &[&str] = &[
    "Ciphers",
    "MACs",
    "KexAlgorithms",
    "HostKeyAlgorithms",
    "PubkeyAcceptedAlgorithms",
    "HostbasedAcceptedAlgorithms",
    "CASignatureAlgorithms",
];

pub fn is_algorithm_list(keyword: &str) -> bool {
    ALGORITHM_LISTS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(keyword))
}
