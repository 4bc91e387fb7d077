//! A configuration as OpenSSH reads it: the main file with every `Include` expanded in place,
//! each directive tagged with the section (`Match`/`Host` block) it sits in.
//!
//! A block opened in an included file ends with that file, as in OpenSSH (each file is parsed
//! with its own "active" state); an included file starts in the section of its `Include` line.

use crate::directive::{Directive, Flavor, Section};
use crate::parse::{Document, LineKind};
use std::fmt;
use std::path::{Path, PathBuf};

/// OpenSSH refuses nesting deeper than this (READCONF_MAX_DEPTH / SERVCONF_MAX_DEPTH).
const MAX_DEPTH: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: Include nested more than {MAX_DEPTH} deep")]
    TooDeep { path: PathBuf },
    #[error("bad Include pattern {pattern:?}: {message}")]
    Pattern { pattern: String, message: String },
}

#[derive(Debug, Clone)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub doc: Document,
}

/// Where a directive was read: file and 1-based line number, as sshd prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub path: PathBuf,
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} line {}", self.path.display(), self.line)
    }
}

/// One directive in evaluation order.
#[derive(Debug, Clone)]
pub struct Entry {
    pub file: usize,
    pub line: usize,
    pub section: Section,
}

#[derive(Debug, Clone)]
pub struct ConfigSet {
    pub flavor: Flavor,
    /// Directory relative `Include` paths are resolved against.
    pub base: PathBuf,
    pub files: Vec<ConfigFile>,
    pub entries: Vec<Entry>,
}

impl ConfigSet {
    /// Reads `path` and everything it includes. `base` is /etc/ssh for sshd and the system
    /// ssh_config, ~/.ssh for a user's ssh_config; tests point it at a temp directory.
    pub fn load(path: &Path, flavor: Flavor, base: &Path) -> Result<Self, LoadError> {
        let text = read(path)?;
        Self::from_text(path, &text, flavor, base)
    }

    /// Like [`ConfigSet::load`] for a main file already in memory; includes are still read
    /// from disk.
    pub fn from_text(
        path: &Path,
        text: &str,
        flavor: Flavor,
        base: &Path,
    ) -> Result<Self, LoadError> {
        let mut set = Self {
            flavor,
            base: base.to_path_buf(),
            files: vec![ConfigFile {
                path: path.to_path_buf(),
                doc: Document::parse(text),
            }],
            entries: Vec::new(),
        };
        set.walk(0, Section::Global, 0)?;
        Ok(set)
    }

    pub fn directive(&self, e: &Entry) -> &Directive {
        match &self.files[e.file].doc.lines[e.line].kind {
            LineKind::Directive(d) => d,
            _ => unreachable!("entries point at directive lines"),
        }
    }

    pub fn origin(&self, e: &Entry) -> Origin {
        Origin {
            path: self.files[e.file].path.clone(),
            line: e.line + 1,
        }
    }

    /// Every file read, the main one first.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|f| f.path.as_path())
    }

    fn walk(&mut self, file: usize, start: Section, depth: usize) -> Result<(), LoadError> {
        if depth > MAX_DEPTH {
            return Err(LoadError::TooDeep {
                path: self.files[file].path.clone(),
            });
        }
        let mut section = start.clone();
        let directives: Vec<(usize, Directive)> = self.files[file]
            .doc
            .directives()
            .map(|(i, d)| (i, d.clone()))
            .collect();
        for (line, d) in directives {
            if let Some(s) = Section::opened_by(&d, self.flavor) {
                section = s;
            }
            self.entries.push(Entry {
                file,
                line,
                section: section.clone(),
            });
            if d.is("include") {
                for arg in &d.args {
                    for path in self.expand(arg)? {
                        let text = read(&path)?;
                        self.files.push(ConfigFile {
                            path,
                            doc: Document::parse(&text),
                        });
                        let idx = self.files.len() - 1;
                        self.walk(idx, section.clone(), depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Resolves one Include argument to the files it names, sorted as glob(3) sorts them.
    fn expand(&self, arg: &str) -> Result<Vec<PathBuf>, LoadError> {
        let expanded = match (self.flavor, arg.strip_prefix("~/")) {
            (Flavor::Ssh, Some(rest)) => std::env::var_os("HOME")
                .map(|h| Path::new(&h).join(rest))
                .unwrap_or_else(|| PathBuf::from(arg)),
            _ => PathBuf::from(arg),
        };
        let full = if expanded.is_absolute() {
            expanded
        } else {
            self.base.join(expanded)
        };
        let pattern = full.to_string_lossy().into_owned();
        let paths = glob::glob(&pattern).map_err(|e| LoadError::Pattern {
            pattern: pattern.clone(),
            message: e.to_string(),
        })?;
        let mut out: Vec<PathBuf> = paths
            .filter_map(Result::ok)
            .filter(|p| p.is_file())
            .collect();
        out.sort();
        Ok(out)
    }
}

fn read(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })
}
