//! Value parsers of flags that take a bounded duration, size or name: the range is checked
//! where the user typed it.

use crate::units::parse_size;
use std::time::Duration;

pub fn parse_openssh_version(s: &str) -> Result<ciphers::OpenSshVersion, String> {
    ciphers::OpenSshVersion::parse(s)
        .ok_or_else(|| format!("not an OpenSSH version: {s:?} (expected e.g. 9.2 or 7.4p1)"))
}

/// A duration flag's value (`30s`, `500ms`, `2m`; a bare number is seconds) within `lo..=hi` seconds.
pub(super) fn duration_within(s: &str, lo: f64, hi: f64, range: &str) -> Result<Duration, String> {
    let v = crate::units::parse_duration(s)?;
    if !(lo..=hi).contains(&v) {
        return Err(format!("{s:?} is outside {range}"));
    }
    Ok(Duration::from_secs_f64(v))
}

pub(super) fn parse_step_timeout(s: &str) -> Result<Duration, String> {
    duration_within(s, 1.0, 3600.0, "1s–1h")
}

pub(super) fn parse_sink_timeout(s: &str) -> Result<Duration, String> {
    duration_within(s, 1.0, 600.0, "1s–10m")
}

pub(super) fn parse_idle_timeout(s: &str) -> Result<Duration, String> {
    duration_within(s, 1.0, f64::from(u32::MAX), "1s and more")
}

pub(super) fn parse_interval(s: &str) -> Result<Duration, String> {
    duration_within(s, 0.05, 5.0, "50ms–5s")
}

pub(super) fn parse_packet_size(s: &str) -> Result<u32, String> {
    let v = parse_size(s)?;
    if !(1024..=128 * 1024).contains(&v) {
        return Err("--packet-size must be between 1K and 128K".into());
    }
    Ok(v as u32)
}

pub(super) fn parse_window(s: &str) -> Result<u32, String> {
    let v = parse_size(s)?;
    if !(64 * 1024..=1 << 30).contains(&v) {
        return Err("--window must be between 64K and 1G".into());
    }
    Ok(v as u32)
}

/// A login name for `serve --user`: not empty, no whitespace, control characters or `:`.
pub fn parse_user_name(s: &str) -> Result<String, String> {
    if s.is_empty()
        || s.chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == ':')
    {
        return Err(format!("{s:?} is not a user name"));
    }
    Ok(s.to_string())
}
