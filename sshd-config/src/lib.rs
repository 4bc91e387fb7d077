//! Reading and editing `sshd_config` and `ssh_config` the way OpenSSH reads them.
//!
//! The parser is lossless (every byte outside an edited line survives), follows OpenSSH's
//! tokenizer (case-insensitive keywords, `key value` or `key=value`, quotes, comments), expands
//! `Include` globs, tracks `Match`/`Host` blocks and answers which line decides a setting
//! (first value wins). Algorithm lists use OpenSSH's `+`/`-`/`^` syntax and are checked
//! against the `ciphers` catalog for a given OpenSSH release. The real `sshd -T` / `ssh -G`
//! stay the authority where they are installed; this crate explains and edits.
#![forbid(unsafe_code)]

pub mod catalog;
pub mod directive;
pub mod edit;
pub mod effective;
pub mod include;
pub mod list;
pub mod parse;
pub mod pattern;
pub mod render;

pub use directive::{Directive, Flavor, Section};
pub use edit::Edit;
pub use effective::{Occurrence, Setting};
pub use include::{ConfigSet, LoadError, Origin};
pub use list::ListSpec;
pub use parse::{Document, Line, LineKind};
