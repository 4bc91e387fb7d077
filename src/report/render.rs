//! The one place a saved or fresh report becomes text: which exporter each kind of report uses
//! for each format. Commands and `sshtune report` come here, so a format added once works for
//! every command.

use super::export::{Exporter, Format};
use super::json::Json;
use super::load::Loaded;
use super::{csv, html, markdown, pipeline, probe, speed, storage, table, terminal};
use crate::bench::model::BenchReport;
use crate::pipeline::model::PipelineReport;
use crate::probe::model::ProbeReport;
use crate::speed::model::SpeedReport;
use crate::storage::model::StorageReport;
use anyhow::Result;

pub fn bench(r: &BenchReport, format: Format) -> Result<String> {
    let e: Box<dyn Exporter<BenchReport>> = match format {
        Format::Table => Box::new(table::Table),
        Format::Json => Box::new(Json),
        Format::Csv => Box::new(csv::Csv),
        Format::Markdown => Box::new(markdown::Markdown),
        Format::Html => return Ok(html::bench(r)),
    };
    Ok(prose(format, e.render(r)?))
}

pub fn speed(r: &SpeedReport, format: Format) -> Result<String> {
    let e: Box<dyn Exporter<SpeedReport>> = match format {
        Format::Table => Box::new(speed::table::Table),
        Format::Json => Box::new(Json),
        Format::Csv => Box::new(speed::csv::Csv),
        Format::Markdown => Box::new(speed::markdown::Markdown),
        Format::Html => return Ok(html::speed(r)),
    };
    Ok(prose(format, e.render(r)?))
}

/// A terminal table's text with the lines around its tables wrapped at spaces to the width the
/// tables were fitted to; other formats as they are.
fn prose(format: Format, text: String) -> String {
    match format {
        Format::Table => terminal::wrap_prose(&text),
        _ => text,
    }
}

pub fn storage(r: &StorageReport, format: Format) -> Result<String> {
    Ok(match format {
        Format::Json => Json.render(r)?,
        Format::Csv => storage::csv(r)?,
        Format::Table => prose(format, storage::text(r, false)),
        Format::Markdown => storage::text(r, true),
        Format::Html => html::storage(r),
    })
}

pub fn pipeline(r: &PipelineReport, format: Format) -> Result<String> {
    Ok(match format {
        Format::Json => Json.render(r)?,
        Format::Table => prose(format, pipeline::table(r)),
        Format::Csv => pipeline::csv(r)?,
        Format::Markdown => pipeline::markdown(r),
        Format::Html => html::pipeline(r),
    })
}

pub fn probe(r: &ProbeReport, format: Format) -> Result<String> {
    Ok(match format {
        Format::Json => Json.render(r)?,
        Format::Table => prose(format, probe::text(r)),
        Format::Csv => probe::csv(r)?,
        Format::Markdown => probe::markdown(r),
        Format::Html => probe::html(r),
    })
}

/// Any loaded report. A fleet error record is no report of its own: only a fleet table shows
/// it, so asking to render one alone is an error.
pub fn loaded(doc: &Loaded, format: Format) -> Result<String> {
    match doc {
        Loaded::Bench(r) => bench(r, format),
        Loaded::Speed(r) => speed(r, format),
        Loaded::Storage(r) => storage(r, format),
        Loaded::Pipeline(r) => pipeline(r, format),
        Loaded::Probe(r) => probe(r, format),
        Loaded::FleetError(e) => anyhow::bail!("{} records a failed run, not a report", e.host),
    }
}
