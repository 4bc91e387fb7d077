//! The layer rules of docs/ARCHITECTURE.md ("Layers"), checked against the code: every
//! `crate::…`, `super::…` and `self::…` path in src/ (in `use` lines and inline) is resolved to
//! the file it names. A reference the table does not allow fails with its file:line, and so
//! does any import cycle between files. Reading the source is enough: the rules are about
//! which file names which, not about types.

use crate::support;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use support::source::relative;

/// References the table forbids that the code still has, while a refactoring removes them:
/// (from file, to file). Each is ignored until then; an entry whose reference is gone fails the
/// test, so the list only shrinks. Empty; keep it so.
const KNOWN_REFERENCES: &[(&str, &str)] = &[];

/// Import cycles the code still has while a refactoring breaks them: the files of one strongly
/// connected component, sorted. An entry that no longer is exactly a component fails the test.
/// Empty; keep it so.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// One `crate::`/`super::`/`self::` path as written: where, and its segments.
struct Reference {
    line: usize,
    /// The inline modules (`mod tests { … }`) around it, innermost last.
    inline: Vec<String>,
    /// Inside a `#[cfg(test)]` module: checked against the table, but no part of a cycle
    /// (a unit test may build its fixtures with a neighbour the code itself never calls).
    test_only: bool,
    path: Vec<String>,
}

/// Where a file names another: the first line, and whether every such reference is test-only.
struct Edge {
    line: usize,
    test_only: bool,
}

#[test]
fn src_follows_the_layer_table_and_has_no_import_cycle() {
    let _lock = support::shared();
    let table = layer_table(&support::repo_root().join("docs/ARCHITECTURE.md"));
    let files = support::source::repo_rust_files("src");
    let names: BTreeSet<String> = files.iter().map(|f| relative(f)).collect();

    let mut edges: BTreeMap<(String, String), Edge> = BTreeMap::new();
    for file in &files {
        let from = relative(file);
        let text = std::fs::read_to_string(file).unwrap();
        for r in references(&text, from == "src/main.rs") {
            let mut here = module_path(&from);
            here.extend(r.inline);
            let Some(abs) = absolute(&here, &r.path) else {
                continue;
            };
            let to = resolve(&names, &abs);
            if to == from {
                continue;
            }
            let e = edges.entry((from.clone(), to)).or_insert(Edge {
                line: r.line,
                test_only: true,
            });
            if !r.test_only && e.test_only {
                *e = Edge {
                    line: r.line,
                    test_only: false,
                };
            }
        }
    }

    let mut problems = Vec::new();
    let known: BTreeSet<(String, String)> = KNOWN_REFERENCES
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    for (from, to) in &known {
        if !edges.contains_key(&(from.clone(), to.clone())) {
            problems.push(format!(
                "{from} no longer names {to}: delete its entry in KNOWN_REFERENCES"
            ));
        }
    }
    for ((from, to), e) in &edges {
        let (a, b) = (layer(from), layer(to));
        let Some(allowed) = table.get(&a) else {
            problems.push(format!(
                "{from}: module `{a}` has no row in the Layers table"
            ));
            continue;
        };
        let ok = b == "lib.rs" || a == b || allowed.contains("*") || allowed.contains(&b);
        if !ok && !known.contains(&(from.clone(), to.clone())) {
            problems.push(format!(
                "{from}:{}: `{a}` may not import `{b}` ({to}); see Layers in docs/ARCHITECTURE.md",
                e.line
            ));
        }
    }
    let graph: BTreeMap<&str, Vec<&str>> =
        edges
            .iter()
            .filter(|(_, e)| !e.test_only)
            .fold(BTreeMap::new(), |mut g, ((a, b), _)| {
                g.entry(a.as_str()).or_default().push(b.as_str());
                g
            });
    let components = components(&graph);
    for known in KNOWN_CYCLES {
        if !components.iter().any(|c| c.iter().eq(known.iter())) {
            problems.push(format!(
                "{known:?} is no longer one import cycle: update its entry in KNOWN_CYCLES"
            ));
        }
    }
    for c in &components {
        if KNOWN_CYCLES.iter().any(|k| c.iter().eq(k.iter())) {
            continue;
        }
        let steps: Vec<String> = edges
            .iter()
            .filter(|((a, b), e)| !e.test_only && c.contains(a.as_str()) && c.contains(b.as_str()))
            .map(|((a, b), e)| format!("{a}:{} → {b}", e.line))
            .collect();
        problems.push(format!("import cycle: {}", steps.join(", ")));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The "Layers" section's table: module → what it may import (`*`: anything).
fn layer_table(doc: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(doc).unwrap();
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .expect("docs/ARCHITECTURE.md has a Layers section");
    let mut table = BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').collect();
        if cells.len() < 3 || !cells[1].contains('`') {
            continue; // header and separator
        }
        let module = cells[1].trim().trim_matches('`').to_string();
        let allowed = cells[2].split('`').skip(1).step_by(2).map(String::from);
        table.insert(module, allowed.collect());
    }
    assert!(!table.is_empty(), "the Layers table has no rows");
    table
}

/// `src/bench/run.rs` → `bench`; `src/cli.rs` → `cli`; `src/main.rs` → `main.rs`.
fn layer(file: &str) -> String {
    let rest = file.strip_prefix("src/").unwrap();
    match rest.split_once('/') {
        Some((dir, _)) => dir.to_string(),
        None if rest == "main.rs" || rest == "lib.rs" => rest.to_string(),
        None => rest.trim_end_matches(".rs").to_string(),
    }
}

/// The module path a file defines: `src/bench/run.rs` → [bench, run]; `src/bench/mod.rs` → [bench].
fn module_path(file: &str) -> Vec<String> {
    let rest = file.strip_prefix("src/").unwrap().trim_end_matches(".rs");
    let mut segs: Vec<String> = rest.split('/').map(String::from).collect();
    if matches!(
        segs.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segs.pop();
    }
    segs
}

/// A written path made absolute (from the crate root); `None` for paths that leave the crate.
/// The last segment of `here` may be an inline module (`mod tests { use super::*; }`).
fn absolute(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut segs = path.iter().peekable();
    let mut base: Vec<String> = match segs.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segs.next();
            Vec::new()
        }
        Some("self") => {
            segs.next();
            here.to_vec()
        }
        Some("super") => here.to_vec(),
        _ => return None,
    };
    while segs.peek().is_some_and(|s| *s == "super") {
        segs.next();
        base.pop()?;
    }
    base.extend(segs.cloned());
    Some(base)
}

/// The file an absolute path lands in: the longest prefix that is a file (`lib.rs` for none).
fn resolve(files: &BTreeSet<String>, abs: &[String]) -> String {
    for k in (1..=abs.len()).rev() {
        let p = format!("src/{}", abs[..k].join("/"));
        for candidate in [format!("{p}.rs"), format!("{p}/mod.rs")] {
            if files.contains(&candidate) {
                return candidate;
            }
        }
    }
    "src/lib.rs".to_string()
}

/// The strongly connected components of more than one file: the import cycles.
fn components<'a>(graph: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<BTreeSet<&'a str>> {
    let reach = |start: &'a str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start];
        while let Some(n) = todo.pop() {
            for &m in graph.get(n).into_iter().flatten() {
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<&str>> = graph.keys().map(|&n| (n, reach(n))).collect();
    let mut out: Vec<BTreeSet<&str>> = Vec::new();
    for (&n, from_n) in &reaches {
        if !from_n.contains(n) || out.iter().any(|c| c.contains(n)) {
            continue;
        }
        let c: BTreeSet<&str> = from_n
            .iter()
            .copied()
            .filter(|m| reaches.get(m).is_some_and(|r| r.contains(n)))
            .collect();
        out.push(c);
    }
    out
}

/// Every `crate::`/`super::`/`self::` path in `src` (and `sshtune::` in the binary, which
/// reaches the library under that name), with the inline modules (`mod tests { … }`) it sits
/// in, so `super::` resolves from the right place.
fn references(src: &str, binary: bool) -> Vec<Reference> {
    let tokens = tokens(&support::source::strip(src));
    let children = child_modules(&tokens);
    let mut out = Vec::new();
    // Inline modules we are inside: (name, brace depth of their body, under `#[cfg(test)]`).
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut pending_mod: Option<(String, bool)> = None;
    let mut depth = 0;
    let mut i = 0;
    let mut push = |line: usize, inline: &[(String, usize, bool)], mut path: Vec<String>| {
        if binary && path[0] == "sshtune" {
            path[0] = "crate".to_string();
        }
        if inline.is_empty() && children.contains(&path[0]) {
            path.insert(0, "self".to_string());
        }
        if matches!(path[0].as_str(), "crate" | "self" | "super") {
            out.push(Reference {
                line,
                inline: inline.iter().map(|(n, _, _)| n.clone()).collect(),
                test_only: inline.iter().any(|(_, _, t)| *t),
                path,
            });
        }
    };
    while i < tokens.len() {
        let (line, tok) = (tokens[i].0, tokens[i].1.as_str());
        let after_path_start = i
            .checked_sub(1)
            .is_some_and(|p| matches!(tokens[p].1.as_str(), "::" | "$" | "in"));
        match tok {
            "{" => {
                depth += 1;
                if let Some((name, test)) = pending_mod.take() {
                    inline.push((name, depth, test));
                }
            }
            "}" => {
                if inline.last().is_some_and(|(_, d, _)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            "mod" if tokens.get(i + 2).is_some_and(|t| t.1 == "{") => {
                let attr: Vec<&str> = tokens[i.saturating_sub(7)..i]
                    .iter()
                    .map(|t| t.1.as_str())
                    .collect();
                let test = attr == ["#", "[", "cfg", "(", "test", ")", "]"];
                pending_mod = Some((tokens[i + 1].1.clone(), test));
            }
            "use" => {
                let mut paths = Vec::new();
                let mut j = i + 1;
                use_tree(&tokens, &mut j, Vec::new(), &mut paths);
                for path in paths {
                    push(line, &inline, path);
                }
                while tokens.get(j).is_some_and(|t| t.1 != ";") {
                    j += 1;
                }
                i = j + 1;
                continue;
            }
            t if (matches!(t, "crate" | "super" | "self" | "sshtune")
                || children.iter().any(|c| c == t))
                && tokens.get(i + 1).is_some_and(|t| t.1 == "::")
                && !after_path_start =>
            {
                let mut path = vec![tok.to_string()];
                let mut j = i + 1;
                while tokens.get(j).is_some_and(|t| t.1 == "::")
                    && tokens.get(j + 1).is_some_and(|t| is_ident(&t.1))
                {
                    path.push(tokens[j + 1].1.clone());
                    j += 2;
                }
                push(line, &inline, path);
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The modules a file declares at its top level (`mod table;`, `pub(crate) mod csv;`): a path
/// starting with one of them (`table::Table`, also in a `pub use`) is a reference to that file,
/// so a `mod.rs` that re-exports a child and a child that reaches back into the `mod.rs` form
/// a cycle like any other.
fn child_modules(tokens: &[(usize, String)]) -> Vec<String> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (i, (_, t)) in tokens.iter().enumerate() {
        match t.as_str() {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "mod" if depth == 0 && tokens.get(i + 2).is_some_and(|t| t.1 == ";") => {
                out.push(tokens[i + 1].1.clone());
            }
            _ => {}
        }
    }
    out
}

/// One use tree (`a::b::{c, d::e as f, self, *}`) into full paths; leaves `j` on the token
/// after it (`,`, `}` or `;`).
fn use_tree(
    tokens: &[(usize, String)],
    j: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) {
    let mut path = prefix;
    while let Some((_, t)) = tokens.get(*j) {
        match t.as_str() {
            "::" => *j += 1,
            "{" => {
                *j += 1;
                while tokens.get(*j).is_some_and(|t| t.1 != "}") {
                    use_tree(tokens, j, path.clone(), out);
                    if tokens.get(*j).is_some_and(|t| t.1 == ",") {
                        *j += 1;
                    }
                }
                *j += 1;
                return;
            }
            "*" => {
                *j += 1;
                break;
            }
            // `{self, …}` names the prefix itself.
            "self" if !path.is_empty() => *j += 1,
            "as" => *j += 2,
            s if is_ident(s) => {
                path.push(s.to_string());
                *j += 1;
            }
            _ => break,
        }
    }
    if !path.is_empty() {
        out.push(path);
    }
}

fn is_ident(s: &str) -> bool {
    s.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::` and single punctuation characters, each with its line.
fn tokens(text: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((line, chars[start..i].iter().collect()));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((line, "::".to_string()));
            i += 2;
        } else {
            out.push((line, c.to_string()));
            i += 1;
        }
    }
    out
}
