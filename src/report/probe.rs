//! A probe report as text (the terminal's lines), Markdown, CSV and an HTML page; JSON is the
//! report itself (`json.rs`).

use super::html::shell::{esc, page, table};
use crate::probe::model::{Graded, ProbeReport};

/// The header facts: (label, value).
fn facts(r: &ProbeReport) -> Vec<(&'static str, String)> {
    let p = &r.probe;
    let k = &p.kexinit;
    vec![
        (
            "software",
            format!(
                "{}{}",
                p.software,
                p.openssh_version
                    .as_ref()
                    .map(|v| format!(" (OpenSSH {v})"))
                    .unwrap_or_default()
            ),
        ),
        (
            "strict kex",
            if p.strict_kex {
                "yes (Terrapin countermeasure)".into()
            } else {
                "no (Terrapin: chacha20-poly1305 and CBC+EtM are attackable)".into()
            },
        ),
        ("kex", k.kex.to_string()),
        ("host keys", k.host_key.to_string()),
        ("compression", k.compression_s2c.to_string()),
    ]
}

fn grade(g: &Graded) -> String {
    g.grade.map_or("unknown".to_string(), |g| g.to_string())
}

fn reason(g: &Graded) -> &str {
    g.reason.as_deref().unwrap_or("not in the catalog")
}

fn sections(r: &ProbeReport) -> [(&'static str, &[Graded]); 2] {
    [("ciphers", &r.ciphers), ("macs", &r.macs)]
}

/// The terminal's form: the banner, the facts, then each list with grade and reason.
pub fn text(r: &ProbeReport) -> String {
    let mut s = format!("{}:{}  {}\n", r.probe.host, r.probe.port, r.probe.banner);
    for (label, value) in facts(r) {
        s.push_str(&format!("{label:<12} {value}\n"));
    }
    for (title, rows) in sections(r) {
        s.push_str(&format!("{title}\n"));
        for g in rows {
            s.push_str(&format!("  {:<32} {:<7} {}\n", g.name, grade(g), reason(g)));
        }
    }
    s
}

pub fn markdown(r: &ProbeReport) -> String {
    let mut s = format!(
        "# {}:{}\n\n`{}`\n\n",
        r.probe.host, r.probe.port, r.probe.banner
    );
    for (label, value) in facts(r) {
        s.push_str(&format!("- **{label}**: {value}\n"));
    }
    for (title, rows) in sections(r) {
        s.push_str(&format!(
            "\n## {title}\n\n| name | grade | why |\n|---|---|---|\n"
        ));
        for g in rows {
            s.push_str(&format!(
                "| `{}` | {} | {} |\n",
                g.name,
                grade(g),
                reason(g)
            ));
        }
    }
    s
}

/// One line per offered cipher and MAC.
pub fn csv(r: &ProbeReport) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(["host", "port", "kind", "name", "grade", "reason"])?;
    for (title, rows) in sections(r) {
        for g in rows {
            let kind = if title == "ciphers" { "cipher" } else { "mac" };
            w.write_record([
                r.probe.host.as_str(),
                &r.probe.port.to_string(),
                kind,
                &g.name,
                &grade(g),
                reason(g),
            ])?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

pub fn html(r: &ProbeReport) -> String {
    let title = format!("sshtune probe: {}:{}", r.probe.host, r.probe.port);
    let mut body = format!(
        "<h1>{}</h1>\n<p class=\"meta\">{}</p>\n",
        esc(&title),
        esc(&r.probe.banner)
    );
    let rows: Vec<Vec<String>> = facts(r)
        .into_iter()
        .map(|(l, v)| vec![l.to_string(), v])
        .collect();
    body.push_str(&table(&["", ""], &rows));
    for (title, list) in sections(r) {
        body.push_str(&format!("<h2>{title}</h2>\n"));
        let rows: Vec<Vec<String>> = list
            .iter()
            .map(|g| vec![g.name.clone(), grade(g), reason(g).to_string()])
            .collect();
        body.push_str(&table(&["name", "grade", "why"], &rows));
    }
    page(&title, &body)
}
