//! `--color`: grades coloured into a pipe only when asked, never in a file.

use crate::support::{ok, output, repo_root, sshtune};

fn bench_example() -> String {
    let p = repo_root().join("examples/reports/bench.json");
    p.to_string_lossy().into_owned()
}

fn escapes(text: &str) -> usize {
    text.matches('\x1b').count()
}

#[test]
fn colours_into_a_pipe_only_with_color_always() {
    let _lock = crate::support::shared();
    let plain = ok(&output(sshtune().args(["report", &bench_example()])));
    assert_eq!(escapes(&plain), 0, "a pipe gets no colours by default");
    let always = ok(&output(
        sshtune()
            .args(["report", &bench_example(), "--color", "always"])
            .env("NO_COLOR", "1"),
    ));
    assert!(
        escapes(&always) > 0,
        "--color always colours a pipe:\n{always}"
    );
    let never = ok(&output(sshtune().args([
        "report",
        &bench_example(),
        "--color",
        "never",
    ])));
    assert_eq!(escapes(&never), 0);
}

#[test]
fn a_file_never_carries_colours() {
    let _lock = crate::support::shared();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("run.txt");
    ok(&output(
        sshtune()
            .args(["report", &bench_example(), "--color", "always", "--output"])
            .arg(&file),
    ));
    let text = std::fs::read_to_string(&file).expect("report written");
    assert_eq!(escapes(&text), 0, "{text}");
}
