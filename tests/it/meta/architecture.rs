//! docs/ARCHITECTURE.md names every file under `src/`: a newcomer looking for where something
//! lives finds each file there, by its path (`bench/remote.rs`) or inside its directory's row
//! (the `report/` row naming `cells.rs` or `html/shell.rs`). A `mod.rs` is named by its
//! directory.

use crate::support;

/// Whether `doc` names `file` (relative to `src/`, `/`-separated).
fn named(doc: &str, rows: &[&str], file: &str) -> bool {
    let file = file
        .strip_suffix("/mod.rs")
        .map_or(file.to_string(), |d| format!("{d}/"));
    let quoted = |s: &str| format!("`{s}`");
    if doc.contains(&quoted(&file)) || doc.contains(&format!("{file}`")) {
        return true;
    }
    // Inside the row of an enclosing directory: by the rest of its path (`html/shell.rs`), or
    // each part named on its own (`html/` … `shell.rs`).
    let parts: Vec<String> = file
        .trim_end_matches('/')
        .split('/')
        .map(String::from)
        .collect();
    let dir_only = file.ends_with('/');
    (1..parts.len()).any(|k| {
        let dir = format!("| `{}/", parts[..k].join("/"));
        let mut tokens: Vec<String> = parts[k..].iter().map(|p| format!("{p}/")).collect();
        if !dir_only {
            tokens.pop();
            tokens.push(parts[parts.len() - 1].clone());
        }
        let rest = tokens.concat();
        rows.iter()
            .filter(|r| r.starts_with(&dir))
            .any(|r| r.contains(&quoted(&rest)) || tokens.iter().all(|t| r.contains(&quoted(t))))
    })
}

#[test]
fn every_source_file_is_named_in_the_architecture_page() {
    let _lock = support::shared();
    let root = support::repo_root();
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
    let missing: Vec<String> = support::source::rust_files(&root.join("src"))
        .iter()
        .map(|f| {
            f.strip_prefix(root.join("src"))
                .unwrap()
                .display()
                .to_string()
        })
        .filter(|f| !named(&doc, &rows, f))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md does not name {} file(s) of src/: {}",
        missing.len(),
        missing.join(", ")
    );
}
