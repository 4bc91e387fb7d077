//! Reading our own Rust source as text, for the tests that check rules about it (layers.rs,
//! locks.rs, sizes.rs): a few rules about which name appears where need no parser, only the code without
//! its comments and literals.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every `.rs` file under the repository's folder `dir` (`src`, `tests/it`), sorted.
pub fn repo_rust_files(dir: &str) -> Vec<PathBuf> {
    rust_files(&super::repo_root().join(dir))
}

/// `file` relative to the repository root, as docs and messages name it (`src/cli.rs`).
pub fn relative(file: &Path) -> String {
    let root = super::repo_root();
    file.strip_prefix(&root)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// The source with comments and the contents of string and char literals blanked, lines kept.
pub fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let ident = |k: usize| k > 0 && (c[k - 1].is_alphanumeric() || c[k - 1] == '_');
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut nest = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    nest += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    nest -= 1;
                    i += 2;
                    if nest == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (!ident(i) || (i > 0 && c[i - 1] == 'b' && !ident(i - 1)))
            && matches!(c.get(i + 1), Some('"' | '#'))
        {
            // Raw string: r"…", r#"…"#, br#"…"#.
            let mut j = i + 1;
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            out.push('"');
            j += 1;
            while j < c.len() {
                if c[j] == '"' && (1..=hashes).all(|h| c.get(j + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                blank(&mut out, c[j]);
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c[i] == '"' {
            out.push('"');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            // Escaped char literal: '\n', '\'', '\u{…}'.
            out.push(' ');
            i += 2;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            out.push(' ');
            i += 3;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}
