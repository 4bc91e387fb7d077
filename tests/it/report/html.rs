//! `sshtune report --format html` in a real browser: headless Chromium renders the page of each
//! kind of report (from the committed example runs) to a PNG, the page must load without a
//! console message, fetch nothing, and its SVG must hold one bar per result row of the report.
//! Also `report` re-rendering and comparing the examples in the other formats.

use crate::support;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{ok, output, sshtune};

fn example(name: &str) -> PathBuf {
    support::repo_root().join("examples/reports").join(name)
}

fn json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(example(name)).unwrap()).unwrap()
}

/// Whether Chromium is here to render pages (`support::require`: CI fails without it).
fn browser() -> bool {
    support::require_program(
        "chromium",
        "scripts/setup installs the Debian package `chromium`",
    )
}

/// The page of `files` rendered by `sshtune report --format html`.
fn html_of(files: &[&str], dir: &Path, name: &str) -> PathBuf {
    let page = dir.join(format!("{name}.html"));
    let mut args = vec!["report".to_string()];
    args.extend(files.iter().map(|f| example(f).display().to_string()));
    args.extend(["--format", "html", "--output"].map(String::from));
    args.push(page.display().to_string());
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    ok(&output(sshtune().args(&args)));
    page
}

/// What Chromium made of a page: the DOM after loading, and its own log lines.
struct Rendered {
    dom: String,
    log: String,
}

fn chromium(dir: &Path, args: &[String]) -> std::process::Output {
    Command::new("chromium")
        .args([
            "--headless",
            // Tests run as root, where Chromium refuses its sandbox.
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .output()
        .expect("chromium is not installed (scripts/setup installs the Debian package `chromium`)")
}

/// Screenshots `page` to `PNG` and dumps its DOM; fails on a console message or a missing
/// chart.
fn render(page: &Path, png: &Path) -> Rendered {
    let r = load(page, png);
    assert!(r.dom.contains("<svg"), "no SVG in the DOM");
    r
}

/// A page without charts (the fleet table): loaded cleanly, its DOM.
fn render_page(page: &Path, png: &Path) -> String {
    load(page, png).dom
}

fn load(page: &Path, png: &Path) -> Rendered {
    let dir = page.parent().unwrap();
    let url = format!("file://{}", page.display());
    let shot = chromium(
        dir,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1040,2400".into(),
            url.clone(),
        ],
    );
    let bytes = std::fs::read(png).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&shot.stderr)
        )
    });
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert!(bytes.len() > 10_000, "a blank page? {} bytes", bytes.len());
    let dump = chromium(dir, &["--dump-dom".into(), url]);
    let r = Rendered {
        dom: String::from_utf8_lossy(&dump.stdout).into_owned(),
        log: format!(
            "{}{}",
            String::from_utf8_lossy(&shot.stderr),
            String::from_utf8_lossy(&dump.stderr)
        ),
    };
    // Page errors (script, CSS, a failed fetch) are reported as CONSOLE lines.
    let console: Vec<&str> = r.log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    // Self-contained: nothing to run, nothing to fetch.
    for needle in ["<script", "<link", "src=\"http", "href=\"http", "url(http"] {
        assert!(!r.dom.contains(needle), "the page has {needle}");
    }
    r
}

/// Runs `check` on the page of the example report of `kind`, rendered in headless Chromium,
/// and on the report's JSON; returns without where no browser runs (`browser`).
fn on_example_page(kind: &str, check: impl FnOnce(&Rendered, &Value)) {
    let _lock = support::shared();
    if !browser() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = format!("{kind}.json");
    let page = html_of(&[&file], dir.path(), kind);
    let r = render(&page, &dir.path().join(format!("{kind}.png")));
    check(&r, &json(&file));
}

fn count(dom: &str, attr: &str) -> usize {
    dom.matches(&format!(" {attr}=\"")).count()
}

/// How many of a report's `rows` `keep` picks.
fn how_many(rows: &Value, keep: impl Fn(&Value) -> bool) -> usize {
    rows.as_array().unwrap().iter().filter(|r| keep(r)).count()
}

/// How many of a report's `rows` have a median: one bar each on the page.
fn measured(rows: &Value) -> usize {
    how_many(rows, |r| r["median_mib_s"].is_number())
}

#[test]
fn bench_page_has_a_bar_per_measured_row_and_the_ceiling() {
    on_example_page("bench", |r, v| {
        let measured = measured(&v["results"]);
        assert!(measured > 0);
        assert_eq!(
            count(&r.dom, "data-row"),
            measured,
            "one bar per result row"
        );
        // Client and server CPU per measured row.
        assert_eq!(count(&r.dom, "data-cpu"), 2 * measured);
        // The raw-TCP ceiling, one line per chart (engine × direction).
        if v["ceiling"].is_object() {
            assert!(r.dom.contains("data-line=\"raw TCP\""));
        }
        for what in ["warm-up", "samples", "MiB"] {
            assert!(r.dom.contains(what), "the page says how: {what}");
        }
    });
}

#[test]
fn speed_page_has_a_bar_per_row_and_the_openssl_reference_beside_it() {
    on_example_page("speed", |r, v| {
        let measured = measured(&v["rows"]);
        let referenced = how_many(&v["rows"], |r| r["reference"].is_object());
        assert_eq!(count(&r.dom, "data-row"), measured);
        assert_eq!(count(&r.dom, "data-ref"), referenced);
        assert!(referenced > 0, "the example has openssl references");
    });
}

#[test]
fn storage_page_is_a_heat_map_with_a_cell_per_figure() {
    on_example_page("storage", |r, v| {
        let m = &v["matrix"];
        let cells = m["cells"].as_array().unwrap().len() * m["tests"].as_array().unwrap().len();
        assert!(cells > 0);
        assert_eq!(
            count(&r.dom, "data-row"),
            cells,
            "one heat-map cell per cell × test"
        );
        assert!(r.dom.contains("% of baseline"));
    });
}

#[test]
fn pipeline_page_has_a_bar_and_a_cpu_stack_per_row() {
    on_example_page("pipeline", |r, v| {
        let measured = measured(&v["rows"]);
        assert_eq!(count(&r.dom, "data-row"), measured);
        assert_eq!(count(&r.dom, "data-cpu"), measured);
        // The stage ceilings (those with a median) as lines.
        let ceilings = how_many(&v["ceilings"], |c| c["median_mib_s"].is_number());
        assert_eq!(count(&r.dom, "data-line"), ceilings);
    });
}

#[test]
fn comparison_page_pairs_the_bars_of_each_row() {
    let _lock = support::shared();
    if !browser() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = html_of(
        &["bench.json", "bench-cpu-quota.json"],
        dir.path(),
        "compare",
    );
    let r = render(&page, &dir.path().join("compare.png"));
    assert_eq!(
        count(&r.dom, "data-row"),
        measured(&json("bench.json")["results"])
            + measured(&json("bench-cpu-quota.json")["results"])
    );
}

/// The two committed bench runs differ only by a CPU quota of 0.2 cores on the whole
/// benchmark (client, server and ssh in one cgroup): OpenSSH's upload rows, which were
/// CPU-bound without a quota, must come out significantly slower.
#[test]
fn a_cpu_quota_shows_as_significant_slowdowns() {
    let _lock = support::shared();
    let compared = |args: &[&str]| {
        let runs = [example("bench.json"), example("bench-cpu-quota.json")];
        let labels = ["--label", "free", "--label", "quota"];
        ok(&output(
            sshtune().arg("report").args(runs).args(labels).args(args),
        ))
    };
    let out = compared(&["--format", "json"]);
    let c: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(c["schema"], "sshtune.compare/1");
    assert_eq!(c["runs"][1]["label"], "quota");
    let rows = c["rows"].as_array().unwrap();
    let upload: Vec<&Value> = rows
        .iter()
        .filter(|r| r["key"][0] == "openssh" && r["key"][3] == "upload")
        .collect();
    assert_eq!(upload.len(), 3, "{rows:#?}");
    for r in &upload {
        let ch = &r["changes"][1];
        assert_eq!(ch["significant"], true, "{r:#}");
        assert!(ch["pct"].as_f64().unwrap() < -30.0, "{r:#}");
    }
    // Overlapping ranges are never called a change: every significant row's ranges are apart.
    for r in rows {
        let (a, b) = (&r["figures"][0], &r["figures"][1]);
        if r["changes"][1]["significant"] == true {
            let apart = a["max_mib_s"].as_f64() < b["min_mib_s"].as_f64()
                || b["max_mib_s"].as_f64() < a["min_mib_s"].as_f64();
            assert!(apart, "{r:#}");
        }
    }
    let table = compared(&[]);
    assert!(table.contains("Δ quota") && table.contains('≈'), "{table}");
}

#[test]
fn every_example_renders_in_every_format() {
    let _lock = support::shared();
    for f in ["bench.json", "speed.json", "storage.json", "pipeline.json"] {
        for format in ["table", "json", "csv", "markdown", "html"] {
            let out = ok(&output(sshtune().args([
                "report",
                example(f).to_str().unwrap(),
                "--format",
                format,
            ])));
            assert!(!out.trim().is_empty(), "{f} {format}");
        }
        // JSON round-trips to the same report.
        let out = ok(&output(sshtune().args([
            "report",
            example(f).to_str().unwrap(),
            "--format",
            "json",
        ])));
        let again: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(again["schema"], json(f)["schema"], "{f}");
    }
}

#[test]
fn unknown_or_newer_schemas_and_mixed_kinds_are_usage_errors() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema":"sshtune.bench/2","results":[]}"#).unwrap();
    let out = output(sshtune().args(["report", newer.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sshtune.bench/2")
            && err.contains("newer")
            && err.contains("sshtune.pipeline/1"),
        "{err}"
    );
    let out = output(sshtune().args([
        "report",
        example("bench.json").to_str().unwrap(),
        example("speed.json").to_str().unwrap(),
    ]));
    assert_eq!(out.status.code(), Some(2));
    support::assert_has(&support::stderr(&out), "only reports of one kind compare");
}

/// Bench reports of different hosts and a failed host's record make the fleet table: one line
/// per host, the failed one with its error.
#[test]
fn reports_of_several_hosts_make_a_fleet_table_that_keeps_failed_hosts() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    // The record the fleet playbook writes for a host it could not bench.
    let failed = support::fixture("report/board3.error.json");
    let a = support::fixture("config/bench-openssh-9.2.json");
    let b = support::fixture("config/bench-openssh-7.4.json");
    let files = [
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        failed.to_str().unwrap(),
    ];
    let mut args = vec!["report"];
    args.extend(files);
    let table = ok(&output(sshtune().args(&args)));
    assert!(
        table.contains("fleet of 3 hosts") && table.contains("board3"),
        "{table}"
    );
    let boxed = |l: &&str| l.starts_with(['┌', '│', '╞', '└']);
    assert!(
        table
            .lines()
            .filter(boxed)
            .all(|l| l.chars().count() <= 120),
        "{table}"
    );
    // The cells whole, without the table's wrapping.
    let mut csv_args = args.clone();
    csv_args.extend(["--format", "csv"]);
    let csv = ok(&output(sshtune().args(&csv_args)));
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv.contains("No route to host"), "{csv}");
    assert!(csv.contains("Ciphers aes128-gcm@openssh.com"), "{csv}");
    let page = dir.path().join("fleet.html");
    args.extend(["--format", "html", "--output", page.to_str().unwrap()]);
    ok(&output(sshtune().args(&args)));
    if browser() {
        let dom = render_page(&page, &dir.path().join("fleet.png"));
        assert!(dom.contains("board3") && dom.contains("No route to host"));
    }
}

#[test]
fn report_writes_several_formats_at_once_identical_to_separate_renders() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = example("speed.json");
    let (html, md) = (dir.path().join("s.html"), dir.path().join("s.md"));
    let stdout = ok(&output(sshtune().args([
        "report",
        file.to_str().unwrap(),
        "--output",
        html.to_str().unwrap(),
        "--export-markdown",
        md.to_str().unwrap(),
    ])));
    assert_eq!(
        stdout,
        ok(&output(sshtune().args(["report", file.to_str().unwrap()])))
    );
    for (path, format) in [(&html, "html"), (&md, "markdown")] {
        let alone = ok(&output(sshtune().args([
            "report",
            file.to_str().unwrap(),
            "--format",
            format,
        ])));
        assert_eq!(std::fs::read_to_string(path).unwrap(), alone, "{format}");
    }
}
