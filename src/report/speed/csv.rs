use crate::report::export::Exporter;
use crate::speed::model::SpeedReport;

pub struct Csv;

impl Exporter<SpeedReport> for Csv {
    fn render(&self, report: &SpeedReport) -> anyhow::Result<String> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "kind",
            "cipher",
            "mac",
            "grade",
            "backend",
            "default_backend",
            "samples_mib_s",
            "median_mib_s",
            "min_mib_s",
            "max_mib_s",
            "cpu_share",
            "openssl_median_mib_s",
            "openssl_min_mib_s",
            "openssl_max_mib_s",
            "ratio",
            "reference_note",
            "error",
        ])?;
        let f = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        for r in &report.rows {
            let samples: Vec<String> = r
                .stats
                .iter()
                .flat_map(|s| s.samples_mib_s.iter().map(|x| format!("{x:.3}")))
                .collect();
            let refs = r.reference.as_ref().map(|x| &x.stats);
            w.write_record([
                r.kind.to_string(),
                r.cipher.clone().unwrap_or_default(),
                r.mac.clone().unwrap_or_default(),
                r.grade.clone(),
                r.backend.clone(),
                r.default_backend.to_string(),
                samples.join(";"),
                f(r.stats.as_ref().map(|s| s.median_mib_s)),
                f(r.stats.as_ref().map(|s| s.min_mib_s)),
                f(r.stats.as_ref().map(|s| s.max_mib_s)),
                f(r.cpu_share),
                f(refs.map(|s| s.median_mib_s)),
                f(refs.map(|s| s.min_mib_s)),
                f(refs.map(|s| s.max_mib_s)),
                f(r.ratio),
                r.reference_note.clone().unwrap_or_default(),
                r.error.clone().unwrap_or_default(),
            ])?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}
