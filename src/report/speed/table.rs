use super::cells::{footer, header, row};
use crate::report::export::Exporter;
use crate::speed::model::SpeedReport;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table as Ct};

pub struct Table;

impl Exporter<SpeedReport> for Table {
    fn render(&self, report: &SpeedReport) -> anyhow::Result<String> {
        let mut t = Ct::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        crate::report::terminal::fit(&mut t);
        let unit = crate::report::rate_unit::current();
        t.set_header(header(unit));
        for r in &report.rows {
            t.add_row(row(r, unit));
        }
        // The reference and its ratio, then the kind (the name shows it) go before a word
        // would split.
        crate::report::terminal::keep_words(&mut t, &[5, 6, 0]);
        let mut out = format!(
            "sshtune speed: {}\n{t}\n",
            crate::report::machine::line(&report.machine)
        );
        for f in footer(report, unit) {
            out.push_str(&f);
            out.push('\n');
        }
        Ok(out)
    }
}
