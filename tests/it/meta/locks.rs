//! Every test says whether it measures: it takes `support::exclusive()` or `support::shared()`
//! (support/lock.rs; `support::shared_as_root` takes the shared one, `exclusive_as_root` the
//! exclusive one), itself or through a
//! helper of its file. A test that took neither would
//! run beside a measuring one, and that one's numbers would then depend on which tests happened
//! to overlap it.

use crate::support;
use std::collections::BTreeMap;

/// A function in a test file: where it starts, its body, whether it is a `#[test]`.
struct Function {
    line: usize,
    body: String,
    test: bool,
}

#[test]
fn every_test_takes_the_lock_shared_or_exclusive() {
    let _lock = support::shared();
    let mut missing = Vec::new();
    for file in support::source::repo_rust_files("tests/it") {
        let text = support::source::strip(&std::fs::read_to_string(&file).unwrap());
        let fns = functions(&text);
        for (name, f) in fns.iter().filter(|(_, f)| f.test) {
            if !takes_lock(&f.body, &fns, 2) {
                let file = support::source::relative(&file);
                missing.push(format!("{file}:{}: {name}", f.line));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "tests that take neither support::shared() nor support::exclusive():\n{}",
        missing.join("\n")
    );
}

/// Whether `body` takes the lock, or calls a helper of the file that does (`depth` levels deep).
fn takes_lock(body: &str, fns: &BTreeMap<String, Function>, depth: usize) -> bool {
    body.contains("shared()")
        || body.contains("shared_as_root(")
        || body.contains("exclusive()")
        || body.contains("exclusive_as_root(")
        || depth > 0
            && fns.iter().any(|(name, f)| {
                !f.test && body.contains(&format!("{name}(")) && takes_lock(&f.body, fns, depth - 1)
            })
}

/// Every `fn NAME … { body }` of a file (comments and literals already blanked).
fn functions(text: &str) -> BTreeMap<String, Function> {
    let mut out = BTreeMap::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("fn ").map(|k| k + from) {
        from = at + 3;
        if at > 0 && text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = text[from..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (Some(open), false) = (text[from..].find('{').map(|k| k + from), name.is_empty())
        else {
            continue;
        };
        if text[from..open].contains(';') {
            continue; // a declaration without a body
        }
        let mut depth = 0;
        let mut end = open;
        for (k, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = open + k;
                break;
            }
        }
        let mut start = at.saturating_sub(60);
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let before = &text[start..at];
        let test = before
            .rsplit_once("#[test]")
            .is_some_and(|(_, rest)| !rest.contains('}') && !rest.contains(';'));
        out.insert(
            name,
            Function {
                line: text[..at].matches('\n').count() + 1,
                body: text[open..=end].to_string(),
                test,
            },
        );
    }
    out
}
