//! What one finished bench row says on the progress display (the bar or the log line is
//! `crate::progress`'s job; the figures themselves go into the report).

use super::model::ResultRow;

/// `aes128-ctr upload: 412.3 MiB/s (3 samples)`, or the row's error.
pub fn row_line(row: &ResultRow) -> String {
    match (&row.error, row.median_mib_s) {
        (Some(e), _) => format!("{} {}: {e}", row.cipher, row.direction),
        (None, Some(m)) => format!(
            "{} {}: {m:.1} MiB/s ({} samples)",
            row.cipher,
            row.direction,
            row.samples.len()
        ),
        _ => format!("{} {}: no result", row.cipher, row.direction),
    }
}
