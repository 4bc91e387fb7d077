use super::cells::{backend_cell, footer, rate_cell, ratio_cell, reference_cell, what};
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
        t.set_header([
            "kind".to_string(),
            "algorithm".into(),
            "grade".into(),
            "backend".into(),
            unit.label().into(),
            format!("openssl speed {}", unit.label()),
            "ratio".into(),
        ]);
        for r in &report.rows {
            t.add_row([
                r.kind.to_string(),
                what(r),
                r.grade.clone(),
                backend_cell(r),
                rate_cell(r, unit),
                reference_cell(r, unit),
                ratio_cell(r),
            ]);
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
