//! Every place one report goes: the files asked for (`--output`, `--export-FORMAT`), each in
//! its own format, and stdout in `--format`. Planned before measuring so a path that cannot be
//! written fails the command before a long run is spent; written by one function after, each
//! format rendered once through `report::render`.

use super::Format;
use crate::exit::{OutputError, UsageError};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The checked destinations of one report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outputs {
    files: Vec<(PathBuf, Format)>,
    stdout: Option<Format>,
}

/// The format a file name asks for by its extension; `None` for any other name.
pub fn format_of(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "json" => Format::Json,
        "csv" => Format::Csv,
        "md" | "markdown" => Format::Markdown,
        "html" | "htm" => Format::Html,
        "txt" | "table" => Format::Table,
        _ => return None,
    })
}

/// Resolves each file's format (explicit, else its extension, else `stdout_format`) and checks
/// every file writable, leaving nothing behind. Stdout keeps `stdout_format` unless a file
/// already receives that format, so `--format json --output run.json` prints nothing.
pub fn plan(requests: &[(PathBuf, Option<Format>)], stdout_format: Format) -> Result<Outputs> {
    let mut files: Vec<(PathBuf, Format)> = Vec::new();
    for (path, explicit) in requests {
        if files.iter().any(|(p, _)| p == path) {
            return Err(
                UsageError(format!("{} is named twice as an output", path.display())).into(),
            );
        }
        let format = explicit
            .or_else(|| format_of(path))
            .unwrap_or(stdout_format);
        files.push((path.clone(), format));
    }
    for ((path, _), (_, explicit)) in files.iter().zip(requests) {
        // The message names the flag the user typed.
        let flag = match explicit {
            None => "--output",
            Some(Format::Json) => "--export-json",
            Some(Format::Csv) => "--export-csv",
            Some(Format::Markdown) => "--export-markdown",
            Some(Format::Html) => "--export-html",
            Some(_) => "--output",
        };
        crate::outfile::check_writable(path)
            .map_err(|e| OutputError(e.to_string().replacen("--output", flag, 1)))?;
    }
    let stdout = (!files.iter().any(|(_, f)| *f == stdout_format)).then_some(stdout_format);
    Ok(Outputs { files, stdout })
}

impl Outputs {
    /// The format printed on stdout, if any.
    pub fn stdout(&self) -> Option<Format> {
        self.stdout
    }

    /// The files and their formats, in the order asked.
    pub fn files(&self) -> &[(PathBuf, Format)] {
        &self.files
    }

    /// The same files, nothing on stdout (`bench --json-stream` prints its own lines there).
    pub fn files_only(mut self) -> Self {
        self.stdout = None;
        self
    }

    /// Renders each needed format once with `render` and writes every file, then stdout.
    pub fn write(&self, render: impl Fn(Format) -> Result<String>) -> Result<()> {
        let mut texts: HashMap<Format, String> = HashMap::new();
        // A format stdout prints goes nowhere else (see `plan`), so every other one is
        // rendered as for a file: no colours, the fixed width.
        for &(_, format) in &self.files {
            if let std::collections::hash_map::Entry::Vacant(slot) = texts.entry(format) {
                slot.insert(super::terminal::for_file(|| render(format))?);
            }
        }
        if let Some(format) = self.stdout {
            texts.insert(format, render(format)?);
        }
        for (path, format) in &self.files {
            std::fs::write(path, &texts[format])
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if let Some(format) = self.stdout {
            print!("{}", texts[&format]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_come_from_extensions_then_explicit_then_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        let o = plan(
            &[
                (p("a.json"), None),
                (p("b.HTML"), None),
                (p("c.md"), None),
                (p("d"), None),
                (p("e.txt"), Some(Format::Csv)),
            ],
            Format::Table,
        )
        .unwrap();
        let got: Vec<Format> = o.files().iter().map(|(_, f)| *f).collect();
        use Format::*;
        assert_eq!(got, [Json, Html, Markdown, Table, Csv]);
        // A file already gets the table, so stdout does not repeat it.
        assert_eq!(o.stdout(), None);
        let o = plan(&[(p("a.json"), None)], Table).unwrap();
        assert_eq!(o.stdout(), Some(Table));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn one_bad_path_fails_the_plan_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let e = plan(
            &[
                (dir.path().join("ok.json"), None),
                (dir.path().join("no/such.html"), None),
            ],
            Format::Table,
        )
        .unwrap_err();
        assert_eq!(crate::exit::code_for(&e), crate::exit::OUTPUT);
        assert!(!e.to_string().contains('\n'), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let twice = dir.path().join("x.json");
        let e = plan(&[(twice.clone(), None), (twice, None)], Format::Table).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), crate::exit::USAGE);
    }

    #[test]
    fn every_file_gets_its_own_format_rendered_once() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        let o = plan(&[(a.clone(), None), (b.clone(), None)], Format::Json).unwrap();
        let calls = std::cell::Cell::new(0);
        o.write(|f| {
            calls.set(calls.get() + 1);
            Ok(format!("{f:?}"))
        })
        .unwrap();
        assert_eq!(calls.get(), 1);
        assert_eq!(std::fs::read_to_string(a).unwrap(), "Json");
        assert_eq!(std::fs::read_to_string(b).unwrap(), "Json");
    }
}
