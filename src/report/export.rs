//! The shape every report format takes: an `Exporter` renders one kind of report to text. Each
//! kind's formats implement it (`table.rs`, `csv.rs`, `markdown.rs` for bench, `speed/` for
//! speed; JSON once for every kind in `json.rs`); `render.rs` picks one per kind and format.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
    /// One self-contained page with inline SVG charts.
    Html,
}

impl Format {
    /// The name `--format` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Html => "html",
        }
    }
}

/// Renders a report of kind `R` in one format.
pub trait Exporter<R> {
    fn render(&self, report: &R) -> anyhow::Result<String>;
}
