//! What every HTML page shares: escaping, the style sheet and page frame, lists, tables and the
//! grade colours.

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;color:#222;padding:0 12px}
h1{font-size:1.4em;margin-bottom:4px}h2{font-size:1.15em;margin-top:28px}
.meta{color:#555;font-size:.9em;margin:2px 0}
figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}
svg text{font-size:12px;font-family:inherit}svg .label{fill:#222}svg .value{fill:#222;font-weight:600}
svg .note{fill:#444}svg .tick{fill:#555;font-size:11px}svg .error{fill:#c62828}
svg .axis{stroke:#888;fill:none}svg .whisker{stroke:#111;stroke-width:1.2;fill:none}
svg .ceiling{stroke:#1565c0;stroke-width:2;stroke-dasharray:6 4;fill:none}svg .ceiling-label{fill:#1565c0;font-size:11px}
.ok{fill:#43a047}.weak{fill:#fb8c00}.broken{fill:#e53935}.unknown{fill:#9e9e9e}.ref{fill:#90a4ae}
.cpu-client{fill:#5c6bc0}.cpu-server{fill:#26a69a}
.run0{fill:#78909c}.run1{fill:#1e88e5}.run2{fill:#8e24aa}.run3{fill:#f4511e}.run4{fill:#00897b}.run5{fill:#6d4c41}
.s0{fill:#5c6bc0}.s1{fill:#42a5f5}.s2{fill:#26a69a}.s3{fill:#9ccc65}.s4{fill:#ffa726}.s5{fill:#ef5350}.s6{fill:#bdbdbd}
table{border-collapse:collapse;font-size:.9em;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 7px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f5f5f5}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
ul.how{color:#333;font-size:.9em}.warn{color:#b71c1c}.sig{font-weight:600}
"#;

/// The whole page around `body`.
pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}\n<p class=\"meta\">Written by sshtune {}.</p>\n</body></html>\n",
        esc(title),
        env!("CARGO_PKG_VERSION")
    )
}

/// A bulleted list of plain lines (how the figures were obtained, warnings).
pub(crate) fn list(class: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut s = format!("<ul class=\"{class}\">");
    for l in lines {
        s.push_str(&format!("<li>{}</li>", esc(l)));
    }
    s.push_str("</ul>\n");
    s
}

/// A table with a header row; cells are plain text, escaped here.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<table><tr>");
    for h in header {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr>");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            let numeric = c.starts_with(|ch: char| ch.is_ascii_digit());
            s.push_str(&format!(
                "<td{}>{}</td>",
                if numeric { " class=\"num\"" } else { "" },
                esc(c)
            ));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>\n");
    s
}

/// CSS class of a grade: the bar colour.
pub(crate) fn grade_class(grade: Option<&str>) -> &'static str {
    match grade {
        Some("ok") => "ok",
        Some("weak") => "weak",
        Some("broken") => "broken",
        _ => "unknown",
    }
}

/// The legend of the grade colours.
pub(crate) fn grade_legend() -> &'static str {
    "<p class=\"legend\"><span><i class=\"ok\" style=\"background:#43a047\"></i>grade ok</span><span><i style=\"background:#fb8c00\"></i>weak</span><span><i style=\"background:#e53935\"></i>broken</span><span>whiskers: min–max of the samples</span></p>\n"
}

/// `aes128-ctr+hmac-sha2-256` or the AEAD cipher alone.
pub(crate) fn cipher_mac(cipher: &str, mac: Option<&str>) -> String {
    match mac {
        Some(m) => format!("{cipher}+{m}"),
        None => cipher.to_string(),
    }
}
