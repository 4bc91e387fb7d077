//! What a legacy cipher would gain. A row of a cipher the catalog marks `legacy` (arcfour,
//! blowfish-cbc, 3des-cbc, ...) is measured when asked for and graded, but never recommended;
//! the question it answers is whether it would still be worth it on this pair of machines. The
//! answer is its median against the fastest recommended row (not legacy, grade `ok`) of the
//! same engine and direction, as one line of the report.

use super::model::ResultRow;
use ciphers::Grade;

fn legacy(r: &ResultRow) -> bool {
    ciphers::cipher(&r.cipher).is_some_and(|c| c.legacy)
}

fn recommended(r: &ResultRow) -> bool {
    !legacy(r) && ciphers::grade_of(&r.cipher, r.mac.as_deref()) == Some(Grade::Ok)
}

/// One line per measured legacy row that has a measured recommended row beside it:
/// `arcfour (legacy, broken: never recommended) would move R× chacha20-poly1305@openssh.com,
/// the fastest recommended cipher (native upload: A against B MiB/s)`.
pub fn gains(results: &[ResultRow]) -> Vec<String> {
    let mut out = Vec::new();
    for r in results.iter().filter(|r| legacy(r)) {
        let Some(mine) = r.median_mib_s else { continue };
        let best = results
            .iter()
            .filter(|b| b.engine == r.engine && b.direction == r.direction && recommended(b))
            .filter_map(|b| Some((b, b.median_mib_s?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((b, theirs)) = best else { continue };
        let grade = r.grade.as_deref().unwrap_or("not ok");
        out.push(format!(
            "{} (legacy, {grade}: never recommended) would move {:.2}× {}, the fastest \
             recommended cipher ({} {}: {mine:.1} against {theirs:.1} MiB/s)",
            r.cipher,
            mine / theirs,
            b.cipher,
            r.engine,
            r.direction
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::Direction;

    fn row(cipher: &str, mac: Option<&str>, engine: &str, median: Option<f64>) -> ResultRow {
        let mut r: ResultRow = serde_json::from_value(serde_json::json!({
            "engine": engine, "cipher": cipher, "mac": mac, "grade": null,
            "direction": "upload", "bytes": 0, "samples": [], "median_mib_s": median,
            "min_mib_s": null, "max_mib_s": null, "client_cpu_pct": null,
            "server_cpu_pct": null, "server_total_cpu_pct": null, "verdict": null,
            "verdict_reason": null, "error": null
        }))
        .unwrap();
        r.grade = ciphers::grade_of(cipher, mac).map(|g| g.to_string());
        r.direction = Direction::Upload;
        r
    }

    #[test]
    fn a_legacy_row_is_set_against_the_fastest_recommended_row_of_its_engine() {
        let rows = [
            row("chacha20-poly1305@openssh.com", None, "native", Some(20.0)),
            row("aes128-gcm@openssh.com", None, "native", Some(10.0)),
            // Faster, but weak: not a cipher config would recommend.
            row(
                "aes128-cbc",
                Some("hmac-sha2-256-etm@openssh.com"),
                "native",
                Some(90.0),
            ),
            row("chacha20-poly1305@openssh.com", None, "openssh", Some(99.0)),
            row(
                "arcfour",
                Some("hmac-sha2-256-etm@openssh.com"),
                "native",
                Some(30.0),
            ),
            row(
                "3des-cbc",
                Some("hmac-sha2-256-etm@openssh.com"),
                "native",
                Some(5.0),
            ),
            row(
                "blowfish-cbc",
                Some("hmac-sha2-256-etm@openssh.com"),
                "native",
                None,
            ),
        ];
        let lines = gains(&rows);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(lines[0].starts_with("arcfour (legacy, broken: never recommended) would move 1.50× chacha20-poly1305@openssh.com"), "{}", lines[0]);
        assert!(
            lines[0].ends_with("(native upload: 30.0 against 20.0 MiB/s)"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].contains("3des-cbc") && lines[1].contains("0.25×"),
            "{}",
            lines[1]
        );
        assert!(
            gains(&rows[4..]).is_empty(),
            "no recommended row: nothing to set against"
        );
    }
}
