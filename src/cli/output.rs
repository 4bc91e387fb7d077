//! `--output` and `--export-*`: the files a report is written to besides stdout.

use super::values::{parser, FormatArg};
use crate::report::outputs::{self, Outputs};
use crate::report::Format;
use clap::Args;
use std::path::PathBuf;

/// Where a report is written besides stdout: as many files as asked, so one long run gives
/// JSON for scripts and a page for people without measuring twice.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// What stdout shows: a terminal table, JSON, CSV, Markdown, or one self-contained HTML
    /// page.
    #[arg(long, value_parser = parser::<FormatArg, Format>(), default_value = "table")]
    pub format: Format,
    /// Also write the report to FILE (repeatable). Its format comes from the extension
    /// (.json .csv .md .html .txt/.table); any other name takes --format. Stdout keeps
    /// --format unless a file already receives it. Every FILE is checked writable before
    /// anything is measured.
    #[arg(long, value_name = "FILE")]
    pub output: Vec<PathBuf>,
    /// Write the report as JSON to FILE, whatever its name (repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_json: Vec<PathBuf>,
    /// Write the report as CSV to FILE (repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Vec<PathBuf>,
    /// Write the report as Markdown to FILE (repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Vec<PathBuf>,
    /// Write the report as one self-contained HTML page to FILE (repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_html: Vec<PathBuf>,
}

impl OutputArgs {
    /// Every output of the command, planned and checked writable before anything is measured.
    pub fn plan(&self) -> anyhow::Result<Outputs> {
        outputs::plan(&self.requests(), self.format)
    }

    /// Every requested file with its explicit format (`None`: from the extension).
    pub fn requests(&self) -> Vec<(PathBuf, Option<Format>)> {
        let mut all: Vec<(PathBuf, Option<Format>)> =
            self.output.iter().map(|p| (p.clone(), None)).collect();
        for (paths, f) in [
            (&self.export_json, Format::Json),
            (&self.export_csv, Format::Csv),
            (&self.export_markdown, Format::Markdown),
            (&self.export_html, Format::Html),
        ] {
            all.extend(paths.iter().map(|p| (p.clone(), Some(f))));
        }
        all
    }
}
