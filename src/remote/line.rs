//! Every line the remote side prints to say where it is: one `Line` per `SSHTUNE-*` keyword,
//! read with `Line::parse` and written with `Display`, so `sshtune serve`'s built-ins, the
//! POSIX-sh scripts (through `keyword!`) and every reader spell each line one way.
//!
//! A line is a keyword, then either one free-text argument (`MISSING tool`, `INFO key=value`,
//! `CEIL-ERR why`) or `key=value` fields (`READY`, `DONE`, …). Values hold no whitespace,
//! except the free text. Hand-written: the grammar is one split per line, no parser crate needed.

use std::fmt;

/// The keyword of a line as a literal, for the shell scripts, which are built with `concat!`
/// at compile time; the `Line` constants below come from the same literals.
macro_rules! keyword {
    (OK) => {
        "SSHTUNE-OK"
    };
    (MISSING) => {
        "SSHTUNE-MISSING"
    };
    (INFO) => {
        "SSHTUNE-INFO"
    };
    (HELLO) => {
        "SSHTUNE-HELLO"
    };
    (READY) => {
        "SSHTUNE-READY"
    };
    (DONE) => {
        "SSHTUNE-DONE"
    };
    (TCP) => {
        "SSHTUNE-TCP"
    };
    (SINK) => {
        "SSHTUNE-SINK"
    };
    (SINK_DONE) => {
        "SSHTUNE-SINK-DONE"
    };
    (ERR) => {
        "SSHTUNE-ERR"
    };
    (SYNC) => {
        "SSHTUNE-SYNC"
    };
    (DISK) => {
        "SSHTUNE-DISK"
    };
    (CEIL_ERR) => {
        "SSHTUNE-CEIL-ERR"
    };
    (CEIL_LISTEN) => {
        "SSHTUNE-CEIL-LISTEN"
    };
    (CEIL_DONE) => {
        "SSHTUNE-CEIL-DONE"
    };
}
pub(crate) use keyword;

/// Login worked and commands run (preflight, `stat`).
pub const OK: &str = keyword!(OK);
/// A tool the transfer scripts need is missing: `SSHTUNE-MISSING tool`.
pub const MISSING: &str = keyword!(MISSING);
/// One fact about the server: `SSHTUNE-INFO key=value`.
pub const INFO: &str = keyword!(INFO);
/// A session (`scripts::session_script`) is set up and waits for its first request.
pub const HELLO: &str = keyword!(HELLO);
/// Just before a timed window: where the session process is, its counters and quota.
pub const READY: &str = keyword!(READY);
/// Just after a timed window: status or byte count, and the counters again.
pub const DONE: &str = keyword!(DONE);
/// `sshtune serve`'s `tcp-ceiling`: the one-shot data port and its token.
pub const TCP: &str = keyword!(TCP);
/// `sshtune tcp-sink` listening: `addr=IP port=N`.
pub const SINK_LISTENING: &str = keyword!(SINK);
/// `sshtune tcp-sink` per counted connection: `bytes=N seconds=S cpu_s=C` (its own CPU time
/// while counting, so bench can tell a CPU-bound ceiling from the network's).
pub const SINK_DONE: &str = keyword!(SINK_DONE);
/// A pipeline helper script refuses: `SSHTUNE-ERR why [detail]` (`missing`, `notwritable …`,
/// `norsync`, `mkdir`).
pub const ERR: &str = keyword!(ERR);
/// A pipeline flush: the destination's uptime before and after `sync`, `SSHTUNE-SYNC A B`.
pub const SYNC: &str = keyword!(SYNC);
/// A pipeline disk write: `SSHTUNE-DISK rc=N mode=direct|buffered`; dd's last line follows.
pub const DISK: &str = keyword!(DISK);
/// A raw-TCP receiver script cannot run: `SSHTUNE-CEIL-ERR why`.
pub const CEIL_ERR: &str = keyword!(CEIL_ERR);
/// A listening raw-TCP receiver: `addr=IP port=N`.
pub const CEIL_LISTEN: &str = keyword!(CEIL_LISTEN);
/// After each raw-TCP run: byte count and clock (uploads), CPU counters (`STRANGER` when
/// someone without the token connected).
pub const CEIL_DONE: &str = keyword!(CEIL_DONE);

/// The words after a keyword, in order: `key=value` or a bare word (`STRANGER`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields(Vec<(String, Option<String>)>);

impl Fields {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key=value` (the value's whitespace would end it, so it must have none).
    pub fn with(mut self, key: &str, value: impl fmt::Display) -> Self {
        self.0.push((key.to_string(), Some(value.to_string())));
        self
    }

    /// Adds a bare word.
    pub fn word(mut self, word: &str) -> Self {
        self.0.push((word.to_string(), None));
        self
    }

    /// Every word of `rest`; a word without `=` is bare.
    pub fn parse(rest: &str) -> Self {
        Self(
            rest.split_whitespace()
                .map(|w| match w.split_once('=') {
                    Some((k, v)) => (k.to_string(), Some(v.to_string())),
                    None => (w.to_string(), None),
                })
                .collect(),
        )
    }

    /// The first value of `key` (empty when written `key=`).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, v)| k == key && v.is_some())
            .and_then(|(_, v)| v.as_deref())
    }

    /// Whether the bare word `word` is among them.
    pub fn has_word(&self, word: &str) -> bool {
        self.0.iter().any(|(k, v)| k == word && v.is_none())
    }
}

impl fmt::Display for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match v {
                Some(v) => write!(f, "{k}={v}")?,
                None => f.write_str(k)?,
            }
        }
        Ok(())
    }
}

/// One line of the remote protocol.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Ok,
    Missing(String),
    Info { key: String, value: String },
    Hello,
    Ready(Fields),
    Done(Fields),
    Tcp(Fields),
    SinkListening(Fields),
    SinkDone(Fields),
    Err(String),
    Sync { before: f64, after: f64 },
    Disk(Fields),
    CeilErr(String),
    CeilListen(Fields),
    CeilDone(Fields),
}

/// Why a line is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// No `SSHTUNE-` keyword (a banner, a motd, data).
    NotProtocol,
    /// An `SSHTUNE-` keyword this side does not know.
    Unknown(String),
    /// A known keyword without the argument it needs.
    Malformed(&'static str),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotProtocol => f.write_str("not an SSHTUNE line"),
            Self::Unknown(k) => write!(f, "unknown line {k}"),
            Self::Malformed(k) => write!(f, "malformed {k} line"),
        }
    }
}

impl std::error::Error for ParseError {}

impl Line {
    pub fn parse(line: &str) -> Result<Self, ParseError> {
        let line = line.trim_end();
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        if !word.starts_with("SSHTUNE-") {
            return Err(ParseError::NotProtocol);
        }
        let text = |k: &'static str| match rest.trim() {
            "" => Err(ParseError::Malformed(k)),
            t => Ok(t.to_string()),
        };
        let fields = || Fields::parse(rest);
        Ok(match word {
            OK => Self::Ok,
            MISSING => Self::Missing(text(MISSING)?),
            INFO => {
                let (key, value) = rest.split_once('=').ok_or(ParseError::Malformed(INFO))?;
                let key = key.trim();
                if key.is_empty() || key.contains(char::is_whitespace) {
                    return Err(ParseError::Malformed(INFO));
                }
                Self::Info {
                    key: key.to_string(),
                    value: value.trim().to_string(),
                }
            }
            HELLO => Self::Hello,
            READY => Self::Ready(fields()),
            DONE => Self::Done(fields()),
            TCP => Self::Tcp(fields()),
            SINK_LISTENING => Self::SinkListening(fields()),
            SINK_DONE => Self::SinkDone(fields()),
            ERR => Self::Err(text(ERR)?),
            SYNC => {
                let mut w = rest.split_whitespace().map(str::parse::<f64>);
                match (w.next(), w.next(), w.next()) {
                    (Some(Ok(before)), Some(Ok(after)), None) => Self::Sync { before, after },
                    _ => return Err(ParseError::Malformed(SYNC)),
                }
            }
            DISK => Self::Disk(fields()),
            CEIL_ERR => Self::CeilErr(text(CEIL_ERR)?),
            CEIL_LISTEN => Self::CeilListen(fields()),
            CEIL_DONE => Self::CeilDone(fields()),
            other => return Err(ParseError::Unknown(other.to_string())),
        })
    }

    /// The line's keyword.
    pub fn keyword(&self) -> &'static str {
        match self {
            Self::Ok => OK,
            Self::Missing(_) => MISSING,
            Self::Info { .. } => INFO,
            Self::Hello => HELLO,
            Self::Ready(_) => READY,
            Self::Done(_) => DONE,
            Self::Tcp(_) => TCP,
            Self::SinkListening(_) => SINK_LISTENING,
            Self::SinkDone(_) => SINK_DONE,
            Self::Err(_) => ERR,
            Self::Sync { .. } => SYNC,
            Self::Disk(_) => DISK,
            Self::CeilErr(_) => CEIL_ERR,
            Self::CeilListen(_) => CEIL_LISTEN,
            Self::CeilDone(_) => CEIL_DONE,
        }
    }

    /// The fields of a line that has them.
    pub fn fields(&self) -> Option<&Fields> {
        match self {
            Self::Ready(f)
            | Self::Done(f)
            | Self::Tcp(f)
            | Self::SinkListening(f)
            | Self::SinkDone(f)
            | Self::Disk(f)
            | Self::CeilListen(f)
            | Self::CeilDone(f) => Some(f),
            _ => None,
        }
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())?;
        match self {
            Self::Ok | Self::Hello => Ok(()),
            Self::Missing(t) | Self::Err(t) | Self::CeilErr(t) => write!(f, " {t}"),
            Self::Sync { before, after } => write!(f, " {before} {after}"),
            Self::Info { key, value } => write!(f, " {key}={value}"),
            _ => match self.fields() {
                Some(x) if x.0.is_empty() => Ok(()),
                Some(x) => write!(f, " {x}"),
                None => Ok(()),
            },
        }
    }
}

/// Whether a preflight's output says the login worked and commands run.
pub fn said_ok(text: &str) -> bool {
    text.lines().any(|l| Line::parse(l) == Ok(Line::Ok))
}

/// The tools a preflight found missing (`SSHTUNE-MISSING tool` lines).
pub fn missing(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| matches!(Line::parse(l), Ok(Line::Missing(_))))
        .filter_map(|l| Some(l.trim().split_once(' ')?.1.trim()))
        .collect()
}

/// `(key, value)` of one `SSHTUNE-INFO key=value` line, the value trimmed; borrowed from
/// `line`, which `Line::parse` has checked.
pub fn info_line(line: &str) -> Option<(&str, &str)> {
    let Ok(Line::Info { .. }) = Line::parse(line) else {
        return None;
    };
    let (_, rest) = line.split_once(' ')?;
    let (k, v) = rest.split_once('=')?;
    Some((k.trim(), v.trim()))
}

/// The first non-empty value of `key` among the `SSHTUNE-INFO` lines of `text`.
pub fn info<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .filter_map(info_line)
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}

/// The fields of an `SSHTUNE-DONE` line, or None for any other line.
pub fn done(line: &str) -> Option<Fields> {
    match Line::parse(line) {
        Ok(Line::Done(f)) => Some(f),
        _ => None,
    }
}

/// Whether any line of `text` is one of the protocol's (known or not): the remote side ran
/// and spoke, whatever ssh's exit status says.
pub fn spoke(text: &str) -> bool {
    text.lines()
        .any(|l| Line::parse(l) != Err(ParseError::NotProtocol))
}

/// The text of the first `SSHTUNE-ERR` line of `text`.
pub fn refusal(text: &str) -> Option<String> {
    text.lines().find_map(|l| match Line::parse(l) {
        Ok(Line::Err(why)) => Some(why),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_variant() -> Vec<Line> {
        let f = Fields::new()
            .with("bytes", 5)
            .with("cpu", "1,2")
            .with("stat", "");
        vec![
            Line::Ok,
            Line::Missing("wc".into()),
            Line::Info {
                key: "cpu".into(),
                value: "Intel(R) Xeon(R) a=b".into(),
            },
            Line::Info {
                key: "kernel".into(),
                value: String::new(),
            },
            Line::Hello,
            Line::Ready(
                Fields::new()
                    .with("pid", 12)
                    .with("comm", "sshd")
                    .with("tck", 100)
                    .with("quota", ""),
            ),
            Line::Done(f.clone()),
            Line::Done(Fields::new()),
            Line::Tcp(Fields::new().with("port", 4000).with("token", "ab12")),
            Line::SinkListening(Fields::new().with("addr", "::1").with("port", 9)),
            Line::SinkDone(Fields::new().with("bytes", 1).with("seconds", "0.5")),
            Line::Err("missing".into()),
            Line::Err("notwritable Read-only file system".into()),
            Line::Sync {
                before: 10.25,
                after: 1234567.89,
            },
            Line::Disk(Fields::new().with("rc", 0).with("mode", "direct")),
            Line::CeilErr("SSH_CONNECTION is not set".into()),
            Line::CeilListen(Fields::new().with("addr", "10.0.0.1").with("port", 5)),
            Line::CeilDone(
                Fields::new()
                    .word("STRANGER")
                    .with("cpu0", "0m0.00s,0m0.00s"),
            ),
        ]
    }

    #[test]
    fn every_line_reads_back_as_written() {
        for line in every_variant() {
            let text = line.to_string();
            assert_eq!(Line::parse(&text), Ok(line.clone()), "{text}");
            assert_eq!(Line::parse(&format!("{text}\r\n")), Ok(line), "{text}");
        }
    }

    #[test]
    fn malformed_lines_fail_with_their_cause() {
        use ParseError::*;
        assert_eq!(Line::parse(""), Err(NotProtocol));
        assert_eq!(Line::parse("motd: welcome"), Err(NotProtocol));
        assert_eq!(Line::parse("\0\0SSHTUNE-DONE rc=0"), Err(NotProtocol));
        assert_eq!(
            Line::parse("SSHTUNE-BOGUS x=1"),
            Err(Unknown("SSHTUNE-BOGUS".into()))
        );
        assert_eq!(
            Line::parse("SSHTUNE-DONEX rc=0"),
            Err(Unknown("SSHTUNE-DONEX".into()))
        );
        assert_eq!(Line::parse("SSHTUNE-INFO novalue"), Err(Malformed(INFO)));
        assert_eq!(Line::parse("SSHTUNE-INFO =v"), Err(Malformed(INFO)));
        assert_eq!(Line::parse("SSHTUNE-INFO a b=v"), Err(Malformed(INFO)));
        assert_eq!(Line::parse("SSHTUNE-MISSING"), Err(Malformed(MISSING)));
        assert_eq!(Line::parse("SSHTUNE-CEIL-ERR  "), Err(Malformed(CEIL_ERR)));
        assert_eq!(Line::parse("SSHTUNE-ERR"), Err(Malformed(ERR)));
        assert_eq!(Line::parse("SSHTUNE-SYNC 10.25"), Err(Malformed(SYNC)));
        assert_eq!(Line::parse("SSHTUNE-SYNC 1 x"), Err(Malformed(SYNC)));
        assert_eq!(Line::parse("SSHTUNE-SYNC 1 2 3"), Err(Malformed(SYNC)));
        assert!(Line::parse("SSHTUNE-").is_err());
    }

    #[test]
    fn readers_of_a_preflight() {
        let out = "motd\nSSHTUNE-OK\nSSHTUNE-MISSING wc\nSSHTUNE-INFO cores= 4 \n\
                   SSHTUNE-INFO kernel=\nSSHTUNE-INFO cpu=a=b\n";
        assert!(said_ok(out));
        assert!(!said_ok("SSHTUNE-OKAY\n"));
        assert_eq!(missing(out), vec!["wc"]);
        assert_eq!(info(out, "cores"), Some("4"));
        assert_eq!(info(out, "kernel"), None);
        assert_eq!(info(out, "cpu"), Some("a=b"));
        assert!(spoke(out) && spoke("x\nSSHTUNE-BOGUS\n") && !spoke("motd\nSSHTUNE\n"));
        assert_eq!(
            refusal("x\nSSHTUNE-ERR notwritable a: b\n").as_deref(),
            Some("notwritable a: b")
        );
        assert_eq!(refusal(out), None);
        let d = done("SSHTUNE-DONE bytes=5\n").unwrap();
        assert_eq!(d.get("bytes"), Some("5"));
        assert_eq!(done("SSHTUNE-READY"), None);
    }

    #[test]
    fn fields_keep_order_empty_values_and_bare_words() {
        let f = Fields::parse("  STRANGER a= b=1=2 ");
        assert!(f.has_word("STRANGER"));
        assert_eq!(f.get("a"), Some(""));
        assert_eq!(f.get("b"), Some("1=2"));
        assert_eq!(f.get("STRANGER"), None);
        assert_eq!(f.to_string(), "STRANGER a= b=1=2");
    }
}
