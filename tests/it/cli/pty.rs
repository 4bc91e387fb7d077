//! `sshtune report` on a real pseudo-terminal: at 80 columns, and at 0 columns (what a serial
//! console reports, laid out at 120), no line is wider than the terminal and no name, number or
//! range is split across lines. A word counts as whole when the same report on a terminal wide
//! enough for everything has it too; a cipher+MAC name may break after its `+`.

use crate::support::{repo_root, SSHTUNE};
use nix::pty::{openpty, Winsize};
use std::collections::HashSet;
use std::io::Read;
use std::process::{Command, Stdio};

const EXAMPLES: [&str; 5] = [
    "bench.json",
    "bench-cpu-quota.json",
    "speed.json",
    "storage.json",
    "pipeline.json",
];

/// What `sshtune report EXAMPLE...` (one file, or several compared) prints on a terminal
/// `columns` wide.
fn on_terminal(example: &str, columns: u16) -> String {
    let size = Winsize {
        ws_row: 50,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&size), None).expect("a pseudo-terminal");
    let paths = example
        .split(' ')
        .map(|e| repo_root().join("examples/reports").join(e));
    let mut child = Command::new(SSHTUNE)
        .arg("report")
        .args(paths)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .stdout(pty.slave.try_clone().expect("dup"))
        .stderr(pty.slave)
        .spawn()
        .expect("sshtune starts");
    let mut master = std::fs::File::from(pty.master);
    let mut bytes = Vec::new();
    // Reading ends in EIO once the child has closed the terminal's last open end.
    let _ = master.read_to_end(&mut bytes);
    assert!(child.wait().expect("wait").success(), "report {example}");
    String::from_utf8_lossy(&bytes).replace('\r', "")
}

/// The words of `text` outside the table borders.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "│┆┌┐└┘├┤┬┴┼─═╞╡╪".contains(c))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

fn check(example: &str, columns: u16, width: usize, whole: &HashSet<String>) {
    let out = on_terminal(example, columns);
    assert!(out.lines().count() > 3, "{example} at {columns}:\n{out}");
    for line in out.lines() {
        assert!(
            line.chars().count() <= width,
            "{example} at {columns} columns: a line of {} characters:\n{line}\n\n{out}",
            line.chars().count()
        );
    }
    for w in words(&out) {
        assert!(
            whole.contains(&w),
            "{example} at {columns} columns: `{w}` is part of a split word:\n{out}"
        );
    }
}

/// The words of `example` on a terminal wide enough for every line; a `cipher+mac` pair may
/// also break after its `+`.
fn whole_words(example: &str) -> HashSet<String> {
    let mut whole: HashSet<String> = words(&on_terminal(example, 1000)).into_iter().collect();
    let pairs: Vec<String> = whole.iter().filter(|w| w.contains('+')).cloned().collect();
    for p in pairs {
        let (cipher, mac) = p.split_once('+').expect("a +");
        whole.insert(format!("{cipher}+"));
        whole.insert(mac.to_string());
    }
    whole
}

#[test]
fn no_word_is_split_at_80_or_0_columns() {
    let _lock = crate::support::shared();
    for example in EXAMPLES {
        let whole = whole_words(example);
        check(example, 80, 80, &whole);
        check(example, 0, 120, &whole);
    }
}

#[test]
fn a_comparison_keeps_its_words_at_80_and_0_columns() {
    let _lock = crate::support::shared();
    let both = "bench.json bench-cpu-quota.json";
    let whole = whole_words(both);
    check(both, 80, 80, &whole);
    check(both, 0, 120, &whole);
}
