//! Docs, comments and tests say what the code does and what was measured; they never narrate
//! the work's own history. A numbered work period ("the ninth" of them, "its figures"), or the
//! "last" or "previous" one, is diary prose: the figures belong in docs/measurements.md with
//! their date, machine and command, and what came before them in git. "Session" otherwise
//! means an SSH session, and those pass: "a fresh session", "the session's sshd", "one session
//! per connection", "a session opened ahead".
//!
//! The check reads every text file under the project's own trees, joins each file's lines
//! (comment markers and heading marks taken off, so a phrase broken over two lines is one
//! phrase) and looks at the words around each "session": the word before it (an ordinal,
//! `last`, `previous`, `this`, ...) and the word after it (`figures`, `release`, `rules`, ...
//! or a verb of the work: `found`, `changed`). An SSH noun after it (`channel`, `slot`,
//! `sshd`, ...) always passes.

use crate::support;
use std::path::{Path, PathBuf};

/// What the check reads, relative to the repository root.
const ROOTS: &[&str] = &[
    "README.md",
    "docs",
    "src",
    "tests",
    "benches",
    "scripts",
    "ciphers",
    "sshd-config",
    "contrib",
    "examples",
];

/// Ordinals nobody numbers SSH sessions by: always a work period.
const PERIOD_ORDINALS: &[&str] = &[
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
];

/// Ordinals an SSH session can have too ("the first session of a pair"): a work period only
/// when capitalised (a heading or a sentence that starts with it), or followed by `:` or by a
/// word of the work.
const SMALL_ORDINALS: &[&str] = &["first", "second", "third"];

/// Words before "session" that make it the work's own past.
const PAST: &[&str] = &["last", "previous", "prior"];

/// Words before "session" that make it a period when a verb of the work follows.
const DEICTIC: &[&str] = &["this", "that", "next", "same"];

/// Words after "session" that belong to a period of work, not to an SSH session.
const WORK_NOUNS: &[&str] = &[
    "figure",
    "figures",
    "release",
    "releases",
    "rule",
    "rules",
    "build",
    "builds",
    "goal",
    "goals",
    "table",
    "tables",
    "measurements",
    "changes",
    "notes",
    "results",
];

/// Verbs after "this/that/next/same session" that tell of the work.
const WORK_VERBS: &[&str] = &[
    "changed", "found", "tried", "measured", "released", "withdrew",
];

/// Words after "session" that make it an SSH session whatever came before.
const SSH_NOUNS: &[&str] = &[
    "channel",
    "channels",
    "slot",
    "slots",
    "sshd",
    "process",
    "processes",
    "token",
    "id",
    "key",
    "keys",
    "window",
    "command",
    "pipe",
    "pipes",
    "login",
];

#[test]
fn docs_comments_and_tests_do_not_narrate_the_work() {
    let _lock = support::shared();
    let root = &support::repo_root();
    let mut found = Vec::new();
    for top in ROOTS {
        for file in text_files(&root.join(top)) {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue; // not UTF-8: an image or a binary fixture
            };
            let lines: Vec<&str> = text.lines().collect();
            for (n, why) in findings(&text) {
                let rel = support::source::relative(&file);
                found.push(format!("{rel}:{n}: {why}: {}", lines[n - 1].trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "diary prose (say the rule, why, and today's figure with its command in \
         docs/measurements.md; history belongs to git):\n{}",
        found.join("\n")
    );
}

/// The check itself, on prose it must flag and prose it must leave alone. `§` stands for the
/// word, so that this file passes its own check.
#[test]
fn diary_prose_is_told_from_ssh_sessions() {
    let _lock = support::shared();
    let flagged = [
        "### Eleventh §: logins during warm-ups",
        "- Thirteenth §: the embedded default at 48.2–58.0 s",
        "the tenth §'s release (f35d963)",
        "as the previous § left it",
        "this §'s figures",
        "cut at three samples, the six comparisons kept from the tenth § agree",
        "Second §: the rule changes",
        "the second §'s rules",
        "### `sshtune speed`, third §: (idle machine)",
        "the 12th § read it",
        "The next § found which side was wrong",
        "where this § changed only the server's pipes",
        "as found: 175.6 s (139.5 s the § before)",
        "the last § measured it",
        "/// the ninth\n/// § showed it",
    ];
    let allowed = [
        "The sampling loop warmed the first § of a pair up",
        "only accepts this §'s token and sends `bytes` bytes",
        "so this §'s command line does not name the run directory",
        "We run one § per connection; further channels are refused",
        "//! One § channel: flow-control windows",
        "a fresh §'s first 4 MiB upload read 44–55 MiB/s",
        "the § sshd above this run's rsync",
        "the last § channel closes",
        "--max-sessions 64",
        "the four § slots",
        "the §'s random token",
        "another aes128-cbc § read 357–410 throughout",
        "a long-lived § per cipher",
        "`server_session`, through a scripted socket",
    ];
    let expand = |s: &str| s.replace('§', "session");
    for text in flagged.iter().map(|s| expand(s)) {
        assert!(!findings(&text).is_empty(), "not flagged: {text}");
    }
    for text in allowed.iter().map(|s| expand(s)) {
        assert_eq!(findings(&text), [], "flagged: {text}");
    }
}

/// The lines (1-based) of `text` that read as a diary of the work, and why.
fn findings(text: &str) -> Vec<(usize, &'static str)> {
    // One string of the whole file, each line without its comment or heading marks; `starts`
    // holds where each line begins in it. ASCII lowercase keeps every byte offset.
    let mut joined = String::new();
    let mut starts = Vec::new();
    for line in text.lines() {
        let content = line
            .trim_start()
            .trim_start_matches(['/', '!', '#', '*', '>'])
            .trim_start();
        starts.push(joined.len());
        joined.push_str(content);
        joined.push(' ');
    }
    let lower = joined.to_ascii_lowercase();
    let mut out: Vec<(usize, &'static str)> = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find("session") {
        let at = from + i;
        from = at + "session".len();
        if let Some(why) = judge(&joined, &lower, at) {
            let line = starts.partition_point(|&s| s <= at);
            if out.last().map(|&(l, _)| l) != Some(line) {
                out.push((line, why));
            }
        }
    }
    out
}

/// Judges the "session" at byte `at` of `lower` (`text` in ASCII lowercase) by its neighbours.
fn judge(text: &str, lower: &str, at: usize) -> Option<&'static str> {
    let before = lower[..at].trim_end();
    // Only the word itself: not "max-sessions", "obsession", "server_session".
    if lower[..at].ends_with(|c: char| c.is_alphanumeric() || "_-.".contains(c)) {
        return None;
    }
    let (rest, possessive) = suffix(&lower[at + "session".len()..])?;
    let prev = before.rsplit(|c: char| !is_word(c)).next().unwrap_or("");
    let capitalised = text[before.len() - prev.len()..].starts_with(|c: char| c.is_uppercase());
    let (next, after_next) = next_word(rest);
    if SSH_NOUNS.contains(&next) {
        return None;
    }
    if PERIOD_ORDINALS.contains(&prev) || is_numeral_ordinal(prev) {
        return Some("a numbered work period");
    }
    if WORK_NOUNS.contains(&next) {
        return Some("a work period's figures or rules");
    }
    if SMALL_ORDINALS.contains(&prev) && (capitalised || rest.starts_with(':')) {
        return Some("a numbered work period");
    }
    if PAST.contains(&prev) {
        return Some("the last or previous work period");
    }
    if DEICTIC.contains(&prev) && WORK_VERBS.contains(&next) {
        return Some("a work period that did something");
    }
    // A period named by the one before it, followed by a figure or the end of a clause.
    let tail = after_next.trim_start();
    let the = before
        .strip_suffix("the")
        .is_some_and(|b| b.is_empty() || b.ends_with(' '));
    if !possessive
        && the
        && next == "before"
        && (tail.is_empty()
            || tail.starts_with(|c: char| c.is_ascii_digit() || ")].,;".contains(c)))
    {
        return Some("the work period before");
    }
    None
}

/// After "session": the text past "s", "'s" or "s'", and whether it was possessive. None when
/// the word goes on ("sessionid").
fn suffix(rest: &str) -> Option<(&str, bool)> {
    for (s, possessive) in [
        ("'s", true),
        ("\u{2019}s", true),
        ("s'", true),
        ("s", false),
        ("", false),
    ] {
        if let Some(r) = rest.strip_prefix(s) {
            if !r.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                return Some((r, possessive));
            }
        }
    }
    None
}

/// The word after a run of spaces (empty when punctuation comes first), and the text after it.
fn next_word(rest: &str) -> (&str, &str) {
    if !rest.starts_with(' ') {
        return ("", rest);
    }
    let r = rest.trim_start_matches(' ');
    let end = r.find(|c: char| !is_word(c)).unwrap_or(r.len());
    (&r[..end], &r[end..])
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '-'
}

/// `10th`, `1st`, `22nd`, `3rd`.
fn is_numeral_ordinal(w: &str) -> bool {
    let digits = w.chars().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && ["st", "nd", "rd", "th"].contains(&&w[digits..])
}

/// Every file under `dir` (or `dir` itself), build output and hidden directories left out.
fn text_files(dir: &Path) -> Vec<PathBuf> {
    if dir.is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            out.extend(text_files(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}
