//! Sizes and rates as people type them. Admins read link speeds in bits per second (SI, from
//! the NIC or iperf3) and throughput in MiB/s (binary bytes, as sshtune reports); a bare `M`
//! means different things to each. One module owns every unit so the CLI and the protocol
//! builtins agree, and a rate says which of the four (bit/byte × SI/binary) it was read as.

use std::path::Path;

const MIB: f64 = (1u64 << 20) as f64;

/// `64M`, `1G`, `512k`, `1048576`: a byte count, binary units (`K` = 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => {
            let unit = s[i..].to_ascii_lowercase();
            let mult = match unit.trim_end_matches("ib").trim_end_matches('b') {
                "" => 1,
                "k" => 1 << 10,
                "m" => 1 << 20,
                "g" => 1 << 30,
                "t" => 1u64 << 40,
                _ => return Err(format!("unknown size unit {:?} (use K, M, G)", &s[i..])),
            };
            (&s[..i], mult)
        }
        None => (s, 1),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {s:?}"))?;
    if n.is_nan() || n <= 0.0 {
        return Err("size must be positive".into());
    }
    Ok((n * mult as f64) as u64)
}

/// A duration a flag takes, shown in the grammar it is typed in (`2s`, `500ms`): what `--help`
/// prints as a default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds(pub f64);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 < 1.0 {
            write!(f, "{}ms", (self.0 * 1000.0).round())
        } else {
            write!(f, "{}s", self.0)
        }
    }
}

/// [`parse_duration`] for a flag of type [`Seconds`].
pub fn parse_seconds(s: &str) -> Result<Seconds, String> {
    parse_duration(s).map(Seconds)
}

/// `30s`, `2m`, `1m30s`, `500ms`, `1h`, or a bare number of seconds: a duration in seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim().to_ascii_lowercase();
    if let Ok(n) = t.parse::<f64>() {
        return positive_seconds(n, s);
    }
    let mut total = 0.0;
    let mut rest = t.as_str();
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{s:?}: a number needs a unit (s, m, h, ms)"))?;
        let n: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("not a duration: {s:?}"))?;
        let unit_len = rest[digits..]
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len() - digits);
        let scale = match &rest[digits..digits + unit_len] {
            "ms" => 0.001,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            u => return Err(format!("unknown duration unit {u:?} (use ms, s, m, h)")),
        };
        total += n * scale;
        rest = &rest[digits + unit_len..];
    }
    positive_seconds(total, s)
}

fn positive_seconds(n: f64, s: &str) -> Result<f64, String> {
    if n.is_finite() && n > 0.0 {
        Ok(n)
    } else {
        Err(format!("duration must be positive: {s:?}"))
    }
}

/// A throughput the user supplied, in MiB/s, with how it was read (goes into the report).
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub mib_s: f64,
    /// e.g. `940Mbit = 940×10^6 bit/s = 112.1 MiB/s`.
    pub read_as: String,
}

/// A rate per second: a bare number is MiB/s (sshtune's own unit); otherwise the unit says
/// bits or bytes and SI or binary: `940Mbit`, `1Gbit`, `117MB` (10^6 bytes), `110MiB`,
/// `100Mibit`. A trailing `/s` or `ps` is accepted.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("/s")
        .or_else(|| t.strip_suffix("ps"))
        .unwrap_or(t);
    let split = t
        .char_indices()
        .find(|(_, c)| c.is_ascii_alphabetic())
        .map_or(t.len(), |(i, _)| i);
    let (num, unit) = (t[..split].trim(), &t[split..]);
    let n: f64 = num.parse().map_err(|_| {
        format!("not a rate: {s:?} (e.g. 940Mbit, 1Gbit, 117MB, 110MiB; a bare number is MiB/s)")
    })?;
    if !n.is_finite() || n <= 0.0 {
        return Err(format!("rate must be positive: {s:?}"));
    }
    if unit.is_empty() {
        return Ok(Rate {
            mib_s: n,
            read_as: format!("{n} MiB/s"),
        });
    }
    let (bytes_per_unit, words) = rate_unit(unit).ok_or_else(|| {
        format!(
            "unknown rate unit {unit:?} in {s:?} (bits: bit, Kbit, Mbit, Gbit; bytes: B, KB, MB, \
             GB (SI) or KiB, MiB, GiB (binary))"
        )
    })?;
    let mib_s = n * bytes_per_unit / MIB;
    Ok(Rate {
        mib_s,
        read_as: format!("{} = {n} {words}/s = {mib_s:.1} MiB/s", s.trim()),
    })
}

/// Bytes in one unit, and the unit in words. Case matters only for `b` (bit) vs `B` (byte)
/// when the unit is a bare letter pair like `Mb`; `bit` spelled out is always bits.
fn rate_unit(unit: &str) -> Option<(f64, String)> {
    let lower = unit.to_ascii_lowercase();
    let (prefix, bits) = if let Some(p) = lower.strip_suffix("bit") {
        (p.to_string(), true)
    } else if let Some(p) = unit.strip_suffix('B') {
        (p.to_ascii_lowercase(), false)
    } else if let Some(p) = unit.strip_suffix('b') {
        (p.to_ascii_lowercase(), true)
    } else {
        return None;
    };
    let (scale, name): (f64, &str) = match prefix.as_str() {
        "" => (1.0, ""),
        "k" => (1e3, "10^3 "),
        "m" => (1e6, "10^6 "),
        "g" => (1e9, "10^9 "),
        "ki" => (1024.0, "2^10 "),
        "mi" => (MIB, "2^20 "),
        "gi" => (MIB * 1024.0, "2^30 "),
        _ => return None,
    };
    let (per, what) = if bits { (0.125, "bit") } else { (1.0, "bytes") };
    Some((scale * per, format!("{name}{what}")))
}

/// The receiver-side rate of an iperf3 `-J` report: `end.sum_received.bits_per_second`.
pub fn iperf3_rate(path: &Path) -> Result<Rate, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON (iperf3 -J output): {e}", path.display()))?;
    let bps = v
        .pointer("/end/sum_received/bits_per_second")
        .and_then(|b| b.as_f64())
        .ok_or_else(|| {
            format!(
                "{} has no end.sum_received.bits_per_second (is it `iperf3 -J` output of a \
                 TCP test?)",
                path.display()
            )
        })?;
    if !bps.is_finite() || bps <= 0.0 {
        return Err(format!(
            "{}: end.sum_received.bits_per_second is {bps}, not a positive rate",
            path.display()
        ));
    }
    let mib_s = bps / 8.0 / MIB;
    Ok(Rate {
        mib_s,
        read_as: format!(
            "iperf3 {}: end.sum_received.bits_per_second = {:.1} Mbit/s = {mib_s:.1} MiB/s",
            path.display(),
            bps / 1e6
        ),
    })
}

/// `--ceiling`: a rate, or `@FILE` naming an iperf3 `-J` report.
pub fn parse_ceiling(s: &str) -> Result<Rate, String> {
    match s.strip_prefix('@') {
        Some(path) => iperf3_rate(Path::new(path)),
        None => parse_rate(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_show_in_the_typed_grammar() {
        for (v, shown) in [(2.0, "2s"), (0.5, "500ms"), (1.5, "1.5s")] {
            assert_eq!(Seconds(v).to_string(), shown);
            assert_eq!(parse_seconds(shown), Ok(Seconds(v)));
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(30.0));
        assert_eq!(parse_duration("45"), Ok(45.0));
        assert_eq!(parse_duration("1m30s"), Ok(90.0));
        assert_eq!(parse_duration("500ms"), Ok(0.5));
        assert_eq!(parse_duration("2M"), Ok(120.0));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("s").is_err());
    }

    fn mib(s: &str) -> f64 {
        parse_rate(s).unwrap().mib_s
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.max(1.0)
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("0").is_err());
        assert!(parse_size("5Q").is_err());
    }

    #[test]
    fn bits_and_bytes_si_and_binary() {
        assert!(close(mib("940Mbit"), 940e6 / 8.0 / MIB));
        assert!(close(mib("1Gbit"), 1e9 / 8.0 / MIB));
        assert!(close(mib("117MB"), 117e6 / MIB));
        assert!(close(mib("110MiB"), 110.0));
        assert!(close(mib("110MiB/s"), 110.0));
        assert!(close(mib("940Mbps"), 940e6 / 8.0 / MIB));
        assert!(close(mib("940Mb"), 940e6 / 8.0 / MIB));
        assert!(close(mib("1Gibit"), 1024.0 / 8.0));
        assert!(close(mib("112.5"), 112.5), "a bare number stays MiB/s");
    }

    #[test]
    fn read_as_says_which_unit() {
        let r = parse_rate("940Mbit").unwrap();
        assert!(r.read_as.contains("10^6 bit/s"), "{}", r.read_as);
        let r = parse_rate("117MB").unwrap();
        assert!(r.read_as.contains("10^6 bytes/s"), "{}", r.read_as);
        let r = parse_rate("110MiB").unwrap();
        assert!(r.read_as.contains("2^20 bytes/s"), "{}", r.read_as);
    }

    #[test]
    fn bad_rates_are_refused_with_a_cause() {
        for bad in [
            "", "fast", "0", "-5Mbit", "940Xbit", "940Q", "NaNMbit", "inf",
        ] {
            let e = parse_rate(bad).unwrap_err();
            assert!(!e.contains('\n'), "{bad}: {e}");
        }
        assert!(parse_rate("940Xbit")
            .unwrap_err()
            .contains("unknown rate unit"));
    }

    #[test]
    fn iperf3_json_takes_the_received_sum() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("i.json");
        std::fs::write(
            &p,
            r#"{"end":{"sum_sent":{"bits_per_second":2e9},"sum_received":{"bits_per_second":9.4e8}}}"#,
        )
        .unwrap();
        let r = parse_ceiling(&format!("@{}", p.display())).unwrap();
        assert!(close(r.mib_s, 9.4e8 / 8.0 / MIB));
        assert!(r.read_as.contains("sum_received"), "{}", r.read_as);
        std::fs::write(&p, r#"{"end":{}}"#).unwrap();
        assert!(iperf3_rate(&p).unwrap_err().contains("sum_received"));
        std::fs::write(&p, "not json").unwrap();
        assert!(iperf3_rate(&p).unwrap_err().contains("not JSON"));
        assert!(iperf3_rate(&dir.path().join("missing")).is_err());
    }
}
