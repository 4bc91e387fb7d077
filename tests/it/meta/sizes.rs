//! No file under `src/` is longer than 800 lines: a file past that holds more than one job, and
//! a newcomer reads it end to end to find the one they need. A folder of small files, one job
//! each, reads as its own table of contents.

use crate::support;

/// The most lines a file under `src/` may have.
const MAX_LINES: usize = 800;

#[test]
fn no_source_file_is_longer_than_800_lines() {
    let _lock = support::shared();
    let long: Vec<String> = support::source::repo_rust_files("src")
        .iter()
        .map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (support::source::relative(f), lines)
        })
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(f, lines)| format!("{f}: {lines} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them into a folder, one job a file):\n{}",
        long.join("\n")
    );
}
