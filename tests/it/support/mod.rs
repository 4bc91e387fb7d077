//! Fixtures shared by the integration tests. Each area adds its own submodule file here; what
//! every area uses (the binary, its output, fixture files, short bench arguments) is below.

pub mod lock;
pub mod native;
pub mod require;
pub mod source;

pub use lock::{exclusive, shared};
pub use require::{exclusive_as_root, require, require_program, require_root, shared_as_root};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `sshtune` binary built for this test run.
pub const SSHTUNE: &str = env!("CARGO_BIN_EXE_sshtune");

/// The `sshtune` binary built for this test run, as a command.
pub fn sshtune() -> Command {
    Command::new(SSHTUNE)
}

/// `sshtune` with the arguments of `line`, split at spaces as a shell would split it:
/// `sshtune_with("bench --engine native --streams 2")`. A path or an argument holding a space
/// is added after with `.arg`.
pub fn sshtune_with(line: &str) -> Command {
    let mut c = sshtune();
    c.args(line.split_whitespace());
    c
}

/// `program` run through `prefix` (`ip netns exec NS`, a cgroup wrapper that execs its
/// arguments), or directly when `prefix` is empty.
pub fn under(prefix: &[String], program: &str) -> Command {
    match prefix.split_first() {
        Some((p, rest)) => {
            let mut c = Command::new(p);
            c.args(rest).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// Runs a command and returns its output, failing the test with stderr if it cannot start.
pub fn output(cmd: &mut Command) -> Output {
    cmd.output().expect("command starts")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The stdout of a command that must have succeeded; otherwise fails the test with its exit
/// status, stderr and stdout.
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr: {}\nstdout: {}",
        o.status,
        stderr(o),
        stdout(o)
    );
    stdout(o)
}

/// Fails the test, showing `text`, unless `part` is in it.
#[track_caller]
pub fn assert_has(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in:\n{text}");
}

/// The stdout of a command that must have succeeded, read as JSON.
pub fn ok_json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(o)).expect("stdout is JSON")
}

/// The row of a bench report's `results` for `cipher`; fails the test, showing the report, when
/// there is none.
pub fn result_row(report: &serde_json::Value, cipher: &str) -> serde_json::Value {
    report["results"]
        .as_array()
        .expect("a results array")
        .iter()
        .find(|r| r["cipher"] == cipher)
        .unwrap_or_else(|| panic!("no {cipher} row: {report}"))
        .clone()
}

/// A JSON row's `(min_mib_s, median_mib_s, max_mib_s)`; fails the test, showing the row, when
/// one of them is missing.
pub fn spread(row: &serde_json::Value) -> (f64, f64, f64) {
    let f = |k: &str| row[k].as_f64().unwrap_or_else(|| panic!("no {k}: {row:#}"));
    (f("min_mib_s"), f("median_mib_s"), f("max_mib_s"))
}

/// A JSON array of numbers (a row's `samples`, `sample_seconds`); fails the test, showing
/// it, when it is not one.
pub fn numbers(v: &serde_json::Value) -> Vec<f64> {
    let all = v
        .as_array()
        .and_then(|a| a.iter().map(|x| x.as_f64()).collect());
    all.unwrap_or_else(|| panic!("not an array of numbers: {v}"))
}

/// A JSON gain's `(min, median, max)`; fails the test, showing it, when one is missing.
pub fn gain(g: &serde_json::Value) -> (f64, f64, f64) {
    let f = |k: &str| g[k].as_f64().unwrap_or_else(|| panic!("no {k}: {g:#}"));
    (f("min"), f("median"), f("max"))
}

/// A CSV report's lines, each as column name → cell.
pub fn csv_lines(text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let head = r.headers().expect("a CSV header").clone();
    r.records()
        .map(|l| {
            let l = l.expect("a CSV line");
            head.iter()
                .zip(l.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// Text with every run of spaces made one: Markdown tables pad their cells to the column's
/// width, so an assertion on a row reads the same whatever the widths.
pub fn squeeze(text: &str) -> String {
    text.lines()
        .map(|l| {
            l.split(' ')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The repository root (where `scripts/`, `examples/` and `contrib/` live).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file (or folder) under tests/fixtures/: `fixture("config/odd-sshd_config")`.
pub fn fixture(path: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(path)
}

/// The text of a fixture file; a missing one fails the test naming its path.
pub fn fixture_text(path: &str) -> String {
    read_text(&fixture(path))
}

/// The text of a file a test or a run wrote; a missing one fails the test naming its path.
pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON file a run wrote (a report's `--output`), read.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = read_text(path);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", path.display()))
}

/// The arguments of a short `sshtune bench` that checks what a run does, not its speed:
/// `ciphers` on `size` bytes per transfer, one sample, no warm-up. Tests add the rest
/// (`--format json`, `--direction`, `--engine`, `-q`).
pub fn quick_bench(ciphers: &str, size: &str) -> [String; 8] {
    [
        "--ciphers",
        ciphers,
        "--size",
        size,
        "--repeat",
        "1",
        "--warmup",
        "0",
    ]
    .map(String::from)
}

/// A fresh unencrypted ed25519 key pair at `path` (and `path.pub`), made by ssh-keygen.
pub fn keygen(path: &Path) -> PathBuf {
    keygen_with(path, &["-t", "ed25519"])
}

/// A fresh unencrypted key pair at `path` (and `path.pub`) of the kind `args` ask ssh-keygen
/// for (`-t rsa -b 3072`, `-C comment`).
pub fn keygen_with(path: &Path, args: &[&str]) -> PathBuf {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-N", ""])
        .args(args)
        .arg("-f")
        .arg(path)
        .status()
        .expect("ssh-keygen runs");
    assert!(
        st.success(),
        "ssh-keygen {args:?} failed for {}",
        path.display()
    );
    path.to_path_buf()
}

/// The value that follows `flag` (`-p`, `-i`, `-l`) in ssh options; fails the test when the
/// flag is not there.
pub fn option_value<'a>(options: &'a [String], flag: &str) -> &'a str {
    let at = options.iter().position(|o| o == flag);
    let at = at.unwrap_or_else(|| panic!("no {flag} in {options:?}"));
    &options[at + 1]
}

/// A loopback port nobody listens on now (bound, read, released): a connect to it is refused.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The name of the user running the tests.
pub fn user_name() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .name
}

pub fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

pub mod bare;
pub mod cgroup;
pub mod netns;
pub mod pipeline;
pub mod procs;
pub mod scenario;
pub mod vm;
