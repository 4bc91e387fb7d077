//! `sshtune bench` end to end: the real binary, the real OpenSSH client, a real sshd.

use crate::support;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use sshtune::embedded::EmbeddedSshd;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::{output, sshtune, sshtune_with, stderr, stdout};

/// `sshtune bench` aimed at a test server through ordinary ssh options, as a user would.
fn bench_against(server: &EmbeddedSshd) -> Command {
    let mut cmd = sshtune();
    cmd.arg("bench")
        .args(&server.target.options)
        .arg(&server.target.destination);
    cmd
}

/// One OpenSSH-engine upload row of `ciphers`: the quickest real bench.
fn upload_row(server: &EmbeddedSshd, ciphers: &str) -> Command {
    let mut cmd = bench_against(server);
    cmd.args(["--engine", "openssh", "--ciphers", ciphers])
        .args(["--direction", "upload"]);
    cmd
}

/// [`upload_row`] without a ceiling.
fn one_upload(server: &EmbeddedSshd, ciphers: &str) -> Command {
    let mut cmd = upload_row(server, ciphers);
    cmd.arg("--no-ceiling");
    cmd
}

/// `bench` run for one sample of `size` a row, the report as JSON on stdout.
fn one_json_sample(bench: &mut Command, size: &str) -> Output {
    output(bench.args(["--size", size, "--repeat", "1", "--format", "json", "-q"]))
}

/// `sshtune bench ARGS -F /dev/null no-such-host.invalid`: a host that cannot be resolved, so
/// what is checked before connecting ends in status 2 and what gets further in status 1.
fn bench_nowhere(args: &[&str]) -> Output {
    output(
        sshtune()
            .arg("bench")
            .args(args)
            .args(["-F", "/dev/null", "no-such-host.invalid"]),
    )
}

/// A native-engine run of aes128-ctr on 8 MiB transfers, no ceiling, quiet: a run whose
/// output is the subject, not its speed.
const NATIVE_RUN: &str = "bench --size 8M --ciphers aes128-ctr --engine native --no-ceiling -q";

/// `sshtune bench 127.0.0.1` with the test server's ssh options, each one passed through
/// `edit` (given the option before it): `Some` replaces the option, `None` keeps it.
fn bench_edited(server: &EmbeddedSshd, edit: impl Fn(&str, &str) -> Option<String>) -> Output {
    let opts = &server.target.options;
    let edited = opts.iter().enumerate().map(|(i, o)| {
        let before = if i == 0 { "" } else { &opts[i - 1] };
        edit(before, o).unwrap_or_else(|| o.clone())
    });
    output(sshtune().arg("bench").args(edited).arg("127.0.0.1"))
}

/// An output file refused: the output status and the one-line error naming `expect`.
fn refused_output(o: &Output, expect: &str) {
    let status = o.status.code();
    assert_eq!(status, Some(sshtune::exit::OUTPUT.into()), "{}", stderr(o));
    one_line_error(o, expect);
}

/// A fresh key pair, `NAME` and `NAME.pub`, in a folder of its own (removed when dropped).
fn new_key(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let key = support::keygen(&dir.path().join(name));
    (dir, key)
}

fn one_line_error(o: &Output, expect: &str) {
    assert!(!o.status.success(), "should fail: {}", stdout(o));
    let err = stderr(o);
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(last.starts_with("sshtune: "), "{err}");
    assert!(last.contains(expect), "expected {expect:?} in {last:?}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Fails if a process whose command line matches `pattern` (pgrep -f) is still running.
fn no_process_matches(pattern: &str, what: &str) {
    let left = stdout(&output(Command::new("pgrep").args(["-f", pattern])));
    assert!(left.is_empty(), "{what} left: {left}");
}

#[test]
fn embedded_default_measures_every_cipher_both_ways_with_cpu() {
    let _lock = support::exclusive();
    let o = output(sshtune().args([
        "bench", "--format", "json", "--size", "16M", "--repeat", "3", "-q",
    ]));
    let v = support::ok_json(&o);
    assert_eq!(v["schema"], "sshtune.bench/1");
    assert_eq!(v["embedded"], true);
    assert!(v["server"]["banner"].as_str().unwrap().contains("OpenSSH"));
    assert!(v["client"]["ssh_version"]
        .as_str()
        .unwrap()
        .contains("OpenSSH"));
    let local: Vec<String> = String::from_utf8(
        Command::new("ssh")
            .args(["-Q", "cipher"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .lines()
    .map(String::from)
    .collect();
    let results = v["results"].as_array().unwrap();
    let mut busy_server = false;
    for cipher in &local {
        for dir in ["upload", "download"] {
            let row = results
                .iter()
                .find(|r| {
                    r["engine"] == "openssh"
                        && r["cipher"] == cipher.as_str()
                        && r["direction"] == dir
                })
                .unwrap_or_else(|| panic!("no openssh {cipher} {dir} row"));
            assert!(row["error"].is_null(), "{cipher} {dir}: {}", row["error"]);
            assert_eq!(row["engine"], "openssh");
            assert_eq!(row["bytes"], 16 << 20);
            let samples = row["samples"].as_array().unwrap();
            assert_eq!(samples.len(), 3, "{cipher} {dir}");
            let (lo, med, hi) = (
                row["min_mib_s"].as_f64().unwrap(),
                row["median_mib_s"].as_f64().unwrap(),
                row["max_mib_s"].as_f64().unwrap(),
            );
            assert!(
                lo > 0.0 && lo <= med && med <= hi,
                "{cipher} {dir}: {lo} {med} {hi}"
            );
            let client = row["client_cpu_pct"].as_f64().expect("client CPU measured");
            let server = row["server_cpu_pct"].as_f64().expect("server CPU measured");
            // CPU time comes in 10 ms ticks, read at each end of a sample: a short transfer may
            // honestly read 0, or up to two ticks a sample more than its wall time.
            let wall: f64 = support::numbers(&row["sample_seconds"]).iter().sum();
            let most = 110.0 + 100.0 * 0.02 * samples.len() as f64 / wall;
            assert!(
                (0.0..=most).contains(&client),
                "client CPU {client}, at most {most:.0}"
            );
            assert!(
                (0.0..=most).contains(&server),
                "server CPU {server}, at most {most:.0}"
            );
            busy_server |= server > 0.0;
            assert!(row["verdict"].is_string());
            assert_ne!(row["verdict"], "network", "loopback is never network-bound");
            let aead = cipher.contains("gcm") || cipher.contains("chacha");
            assert_eq!(
                row["mac"].is_null(),
                aead,
                "{cipher}: MAC only for non-AEAD"
            );
        }
    }
    assert!(busy_server, "the session sshd's CPU was seen at least once");
    // With sshd installed, the embedded default also runs the native engine, legacy ciphers
    // included (measured, graded, never recommended).
    assert_eq!(
        v["settings"]["engines"],
        serde_json::json!(["openssh", "native"])
    );
    for spec in ciphers::CIPHERS.iter().filter(|c| c.name != "none") {
        for dir in ["upload", "download"] {
            let row = results
                .iter()
                .find(|r| {
                    r["engine"] == "native" && r["cipher"] == spec.name && r["direction"] == dir
                })
                .unwrap_or_else(|| panic!("no native {} {dir} row", spec.name));
            assert!(
                row["error"].is_null(),
                "native {} {dir}: {}",
                spec.name,
                row["error"]
            );
            assert_eq!(row["samples"].as_array().unwrap().len(), 3);
            // A cipher with a MAC takes the weaker grade of the two.
            let grade = ciphers::grade_of(spec.name, row["mac"].as_str()).expect("in the catalog");
            assert_eq!(row["grade"], grade.as_str());
        }
    }
    assert!(v["ceiling"]["mib_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn table_csv_and_markdown_render_the_same_rows() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").unwrap();
    for (format, marker) in [
        ("table", "aes128-ctr"),
        ("csv", "engine,cipher,mac"),
        ("markdown", "| engine |"),
    ] {
        let o = output(
            bench_against(&server)
                .args(support::quick_bench("aes128-ctr", "2M"))
                .args(["-q", "--format", format, "--explain"]),
        );
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(support::squeeze(&text).contains(marker), "{format}: {text}");
        let both = text.clone() + &stderr(&o);
        assert!(
            both.contains("Evidence behind each verdict"),
            "--explain: {both}"
        );
    }
}

#[test]
fn a_cipher_the_server_refuses_is_a_row_not_a_crash() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("Ciphers aes128-ctr\n").unwrap();
    let out = tempfile::NamedTempFile::new().unwrap();
    let o = output(
        bench_against(&server)
            .args(["--ciphers", "aes128-ctr,aes256-gcm@openssh.com"])
            .args("--size 2M --repeat 3 -q --format json --output".split(' '))
            .arg(out.path()),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = support::read_json(out.path());
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        if r["cipher"] == "aes256-gcm@openssh.com" {
            assert!(r["error"].as_str().unwrap().contains("not offered"), "{r}");
            assert!(r["samples"].as_array().unwrap().is_empty());
        } else {
            assert!(r["error"].is_null(), "{r}");
            assert_eq!(r["samples"].as_array().unwrap().len(), 3);
        }
    }
}

#[test]
fn unreachable_and_unknown_hosts_fail_in_one_line() {
    let _lock = support::shared();
    let port = support::free_port();
    let o = output(&mut sshtune_with(&format!(
        "bench -F /dev/null -p {port} 127.0.0.1"
    )));
    one_line_error(&o, "Connection refused");
    one_line_error(&bench_nowhere(&[]), "resolve");
}

#[test]
fn refused_authentication_fails_in_one_line() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").unwrap();
    let (_dir, stranger) = new_key("stranger");
    let o = bench_edited(&server, |before, _| {
        (before == "-i").then(|| stranger.display().to_string())
    });
    one_line_error(&o, "authentication");
}

#[test]
fn a_changed_host_key_is_refused_not_ignored() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").unwrap();
    let (dir, other) = new_key("other");
    let pubkey = support::read_text(&other.with_extension("pub"));
    let key: Vec<&str> = pubkey.split_whitespace().take(2).collect();
    let kh = dir.path().join("known_hosts");
    std::fs::write(
        &kh,
        format!("[127.0.0.1]:{} {}\n", server.port, key.join(" ")),
    )
    .unwrap();
    let o = bench_edited(&server, |_, o| {
        let known = o.starts_with("UserKnownHostsFile=");
        known.then(|| format!("UserKnownHostsFile={}", kh.display()))
    });
    one_line_error(&o, "host key");
    assert!(stderr(&o).contains("changed"), "{}", stderr(&o));
}

#[test]
fn missing_remote_tools_are_named() {
    let _lock = support::shared();
    // A PATH with a shell but without cat/wc/head: the remote side of the bench cannot work.
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.path().join("sh")).unwrap();
    let server = server_with_path(bin.path().display().to_string());
    let o = output(bench_against(&server).args(["--ciphers", "aes128-ctr", "--size", "1M"]));
    one_line_error(&o, "lacks cat");
}

/// An embedded sshd whose sessions run with `path` as their PATH.
fn server_with_path(path: String) -> EmbeddedSshd {
    EmbeddedSshd::start_with(&sshtune::embedded::Options {
        env: vec![("PATH".into(), path)],
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn a_remote_command_that_never_answers_is_named_not_waited_for() {
    let _lock = support::shared();
    // The server's `sh` hangs, as a login whose shell startup file waits on something does.
    let bin = tempfile::tempdir().unwrap();
    let sh = bin.path().join("sh");
    std::fs::write(&sh, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&sh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let server = server_with_path(format!("{}:/usr/bin:/bin", bin.path().display()));
    let o = output(bench_against(&server).args(["--ciphers", "aes128-ctr", "--size", "1M"]));
    one_line_error(&o, "no answer within");
}

#[test]
fn a_server_killed_mid_run_gives_one_line_and_leaves_nothing() {
    let _lock = support::shared();
    let mut server = EmbeddedSshd::start("").unwrap();
    let mut child = bench_against(&server)
        .args(support::quick_bench("aes128-ctr", "64G"))
        .args(["--direction", "upload"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    server.kill();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "bench did not notice the server died"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let o = child.wait_with_output().unwrap();
    assert!(!status.success());
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    let last = err.trim().lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("sshtune: "), "{err}");
    assert!(
        last.contains("connection") || last.contains("Connection") || last.contains("measured"),
        "{last}"
    );
    no_process_matches(&format!("ssh .*-p {} ", server.port), "ssh processes");
}

#[test]
fn ctrl_c_stops_the_run_and_removes_the_embedded_server() {
    let _lock = support::shared();
    let tmp = tempfile::tempdir().unwrap();
    let mut child = sshtune()
        .arg("bench")
        .args(support::quick_bench("aes128-ctr", "64G"))
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the embedded server exists (its directory appears), then a little more so the
    // transfer is under way.
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir(tmp.path()).unwrap().next().is_none() {
        assert!(Instant::now() < deadline, "embedded server never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(3));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let stderr_pipe = child.stderr.take().unwrap();
    let lines: Vec<String> = BufReader::new(stderr_pipe)
        .lines()
        .map_while(Result::ok)
        .collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{lines:?}");
    assert!(lines.last().unwrap().contains("interrupted"), "{lines:?}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    no_process_matches(&tmp.path().display().to_string(), "processes");
}

#[test]
fn an_alias_from_an_ssh_config_file_is_resolved_like_ssh_does() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").unwrap();
    let opt = |flag: &str| support::option_value(&server.target.options, flag);
    let known = server
        .target
        .options
        .iter()
        .find_map(|o| o.strip_prefix("UserKnownHostsFile="))
        .unwrap()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config");
    std::fs::write(
        &cfg,
        format!(
            "Host benchbox\n  HostName 127.0.0.1\n  Port {}\n  User {}\n  IdentityFile {}\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n",
            server.port,
            opt("-l"),
            opt("-i"),
        ),
    )
    .unwrap();
    let o = output(
        sshtune()
            .arg("bench")
            .arg("-F")
            .arg(&cfg)
            .arg("benchbox")
            .args(support::quick_bench("aes128-ctr", "2M"))
            .args(["-q", "--format", "json"]),
    );
    let v = support::ok_json(&o);
    assert_eq!(v["host"], "benchbox");
    assert!(v["results"][0]["error"].is_null(), "{}", v["results"][0]);
}

#[test]
fn exit_statuses_tell_a_failed_run_from_a_wrong_command_line() {
    let _lock = support::shared();
    // It could not run: 1, with the one-line cause.
    let o = bench_nowhere(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The command line is wrong: clap's 2.
    let o = output(sshtune().args(["bench", "--repeat", "0"]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // The table is in --help.
    let help = stdout(&output(sshtune().arg("--help")));
    for line in [
        "Exit status:",
        "  1    error",
        "  2    usage",
        "  3    policy failure",
    ] {
        assert!(help.contains(line), "{line:?} missing from {help}");
    }
}

#[test]
fn no_ceiling_measures_none_and_says_so() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").expect("sshd starts");
    let o = one_json_sample(&mut one_upload(&server, "aes128-ctr"), "8M");
    let v = support::ok_json(&o);
    assert!(v["ceiling"].is_null(), "{}", v["ceiling"]);
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("--no-ceiling"), "{warnings}");
    assert!(
        v["results"][0]["verdict_rule"].is_string(),
        "{}",
        v["results"][0]
    );
    // The ssh arguments are in the report, for `sshtune config`.
    let port: u64 = support::option_value(&server.target.options, "-p")
        .parse()
        .unwrap();
    assert_eq!(v["ssh_args"]["port"], port, "{}", v["ssh_args"]);
    assert_eq!(v["ssh_args"]["ssh_config"], "/dev/null");
    assert!(v["ssh_args"]["options"]
        .as_array()
        .unwrap()
        .contains(&"IdentitiesOnly=yes".into()));
    let o = output(bench_against(&server).args(["--no-ceiling", "--ceiling", "5"]));
    assert!(
        !o.status.success(),
        "--ceiling and --no-ceiling together are refused"
    );
}

#[test]
fn a_ceiling_with_units_or_an_iperf3_file_is_read_and_said_how() {
    let _lock = support::shared();
    // The part of an iperf3 client's JSON that is read: 1.0e9 bit/s sent, 9.4e8 received.
    let iperf = support::fixture("bench/iperf3-client.json");
    let server = EmbeddedSshd::start("").expect("sshd starts");
    for (ceiling, mib_s, said) in [
        (
            format!("@{}", iperf.display()),
            9.4e8 / 8.0 / 1048576.0,
            "sum_received",
        ),
        ("940Mbit".to_string(), 940e6 / 8.0 / 1048576.0, "10^6 bit/s"),
        ("110MiB".to_string(), 110.0, "2^20 bytes/s"),
    ] {
        let o = one_json_sample(
            upload_row(&server, "aes128-ctr").args(["--ceiling", &ceiling]),
            "1M",
        );
        assert!(o.status.success(), "{ceiling}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let got = v["ceiling"]["mib_s"].as_f64().unwrap();
        assert!((got - mib_s).abs() < 1e-6, "{ceiling}: {got} vs {mib_s}");
        let method = v["ceiling"]["method"].as_str().unwrap();
        assert!(method.contains(said), "{ceiling}: {method}");
    }
}

#[test]
fn bad_ceiling_values_are_usage_errors_in_one_line() {
    let _lock = support::shared();
    for (bad, want) in [
        ("940Q", "unknown rate unit"),
        ("fast", "not a rate"),
        ("-3Mbit", "rate must be positive"),
        ("@/nonexistent/iperf.json", "cannot read"),
    ] {
        let o = bench_nowhere(&[&format!("--ceiling={bad}")]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{bad}: {}", stderr(&o));
    }
}

#[test]
fn a_misspelt_cipher_or_mac_is_refused_before_connecting_with_a_suggestion() {
    let _lock = support::shared();
    // The host cannot be resolved: reaching it would fail with status 1, so status 2 and the
    // suggestion show the names were checked first.
    for (args, want) in [
        (
            vec!["--ciphers", "aes128-ctr,aes128-gmc@openssh.com"],
            "unknown cipher \"aes128-gmc@openssh.com\" (not in `ssh -Q cipher`); did you mean \
             aes128-gcm@openssh.com?",
        ),
        (
            vec!["--engine", "native", "--macs", "hmac-sha2-257"],
            "did you mean hmac-sha2-256?",
        ),
        (vec!["--ciphers", "aes999"], "unknown cipher \"aes999\""),
    ] {
        let o = bench_nowhere(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        one_line_error(&o, want);
    }
}

#[test]
fn an_unwritable_output_fails_before_measuring_and_leaves_nothing() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir/report.json");
    let o = bench_nowhere(&["--output", missing.to_str().unwrap()]);
    // The output is refused, not the host: nothing was tried before the check.
    refused_output(&o, "--output");
    assert!(!stderr(&o).contains("no-such-host"), "{}", stderr(&o));
    let o = bench_nowhere(&["--output", dir.path().to_str().unwrap()]);
    one_line_error(&o, "is a directory");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The default mode: samples sized by stability, rows raced. Every row keeps a median, a
/// spread and the length of each sample; a row whose sampling ended early says why. 3des-cbc
/// is an order of magnitude slower than aes128-gcm, so its place is decided early.
#[test]
fn adaptive_mode_records_sample_lengths_and_why_rows_stopped() {
    let _lock = support::exclusive();
    let server = EmbeddedSshd::start("").expect("sshd starts");
    let o = output(
        bench_against(&server)
            .args(["--ciphers", "aes128-gcm@openssh.com,3des-cbc"])
            .args("--direction upload --format json -q".split(' ')),
    );
    let v = support::ok_json(&o);
    assert_eq!(v["settings"]["mode"], "adaptive");
    for r in v["results"].as_array().unwrap() {
        assert!(r["error"].is_null(), "{r}");
        let n = r["samples"].as_array().unwrap().len();
        assert!(n >= 2, "{r}");
        let secs = r["sample_seconds"].as_array().unwrap();
        assert_eq!(secs.len(), n, "{r}");
        // OpenSSH's CPU figures count ticks, and a row's CPU share pools its samples: 50
        // ticks of a core, half a second, in every row's samples together (each is sized to
        // a quarter second; one that ran faster than its sizing is a little shorter).
        let pooled: f64 = secs.iter().map(|s| s.as_f64().unwrap()).sum();
        assert!(pooled >= 0.45, "{r}");
        // Every row's first round is visit 0, and every row is visited again midway: its
        // samples come from two visits at least.
        let visits = support::numbers(&r["sample_visits"]);
        assert_eq!(visits.len(), n, "{r}");
        assert_eq!(visits[0], 0.0, "{r}");
        assert!(visits.iter().any(|&v| v > 0.0), "{r}");
        assert!(r["median_mib_s"].as_f64().is_some() && r["min_mib_s"].as_f64().is_some());
        match r["stopped"].as_str() {
            None => assert_eq!(n, 5, "only a row sampled in full says nothing: {r}"),
            Some(why) => assert!(
                ["decided", "ordered", "tied", "max-time"].contains(&why),
                "{r}"
            ),
        }
    }
    let slow = support::result_row(&v, "3des-cbc");
    // Its place is decided as soon as its own samples agree, or ordered by its median after
    // three visits; a disturbance on a busy machine can keep it open longer, but then only while its
    // spread says so.
    let rates = support::numbers(&slow["samples"]);
    let spread = sshtune::stats::relative_spread(&rates).unwrap();
    if slow["stopped"] == "decided" || slow["stopped"] == "ordered" {
        // Two first-round samples, one midway, and a third visit when those two disagree.
        assert!(rates.len() <= 5, "{slow}");
    } else {
        assert_eq!(rates.len(), 5, "{slow}");
        assert!(spread > sshtune::bench::adaptive::NOISE_FLOOR, "{slow}");
    }
    // --thorough is the reference run: the adaptive mode's alias and a time cap contradict it.
    for args in [
        &["bench", "--thorough", "--adaptive"][..],
        &["bench", "--thorough", "--max-time", "30s"][..],
    ] {
        let o = output(sshtune().args(args));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn one_run_writes_every_asked_format_and_stdout_keeps_the_table() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    // Outputs named relative to the working directory, as typed in a shell.
    let outputs = "--output run.json --output run.html --output run.md --export-csv run.data";
    let o = output(
        sshtune_with(NATIVE_RUN)
            .args(["--repeat", "2"])
            .args(outputs.split(' '))
            .current_dir(dir.path()),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("aes128-ctr"), "{}", stdout(&o));
    // The files are what `report` renders from the run's own JSON: one run, every format.
    for (file, format) in [
        ("run.html", "html"),
        ("run.md", "markdown"),
        ("run.data", "csv"),
    ] {
        let again = output(
            sshtune()
                .arg("report")
                .arg(p("run.json"))
                .args(["--format", format]),
        );
        assert!(again.status.success(), "{}", stderr(&again));
        let written = support::read_text(&p(file));
        assert_eq!(written, stdout(&again), "{file}");
    }
    assert!(support::read_text(&p("run.html")).starts_with("<!DOCTYPE html>"));
}

#[test]
fn one_unwritable_output_among_several_fails_first_and_leaves_nothing() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let o = output(
        sshtune_with(NATIVE_RUN)
            .args([
                "--output",
                "run.json",
                "--export-html",
                "no-such-dir/run.html",
            ])
            .current_dir(dir.path()),
    );
    refused_output(&o, "no-such-dir/run.html");
    // Refused before measuring: no progress, no table, no file.
    assert_eq!(stdout(&o), "");
    assert!(!stderr(&o).contains("embedded"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The bench's stdout through a pseudo-terminal (`script`, 160 columns wide), progress silenced.
fn bench_on_a_terminal(no_color: Option<&str>) -> String {
    let line = format!(
        "stty cols 160; {} {NATIVE_RUN} --repeat 2",
        support::SSHTUNE
    );
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .env_remove("NO_COLOR");
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    let o = output(&mut cmd);
    support::ok(&o)
}

#[test]
fn grades_are_coloured_only_on_a_terminal_without_no_color() {
    let _lock = support::shared();
    assert!(bench_on_a_terminal(None).contains("\x1b["));
    let plain = bench_on_a_terminal(Some("1"));
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(plain.contains("aes128-ctr"), "{plain}");
    let o = output(
        sshtune_with(NATIVE_RUN)
            .args(["--repeat", "2"])
            .env_remove("NO_COLOR"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains('\x1b'), "{}", stdout(&o));
}

#[test]
fn dash_v_shows_ssh_debug_output_and_the_run_still_reads_its_errors() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("Ciphers aes128-ctr\n").expect("sshd starts");
    let o = one_json_sample(
        one_upload(&server, "aes128-ctr,aes256-ctr").args(["--thorough", "-v"]),
        "4M",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("debug1: "), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let row = |c: &str| support::result_row(&v, c);
    assert!(row("aes128-ctr")["error"].is_null());
    // A cipher the server refuses is still read from ssh's error line, not lost among the
    // debug lines.
    let error = row("aes256-ctr")["error"].to_string();
    assert!(error.contains("not offered"), "{error}");
    assert!(!error.contains("debug1"), "{error}");
}

#[test]
fn json_stream_prints_each_sample_each_row_and_the_report_as_lines() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").expect("sshd starts");
    let o = output(one_upload(&server, "aes128-ctr").args(["--json-stream", "-q"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let events: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    let samples = kinds.iter().filter(|k| **k == "sample").count();
    assert!(samples >= 2, "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| **k == "row").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(kinds.last(), Some(&"end"), "{kinds:?}");
    let sample = events.iter().find(|e| e["event"] == "sample").unwrap();
    assert_eq!(sample["cipher"], "aes128-ctr");
    assert!(sample["mib_s"].as_f64().unwrap() > 0.0, "{sample}");
    let report = &events.last().unwrap()["report"];
    assert_eq!(report["schema"], "sshtune.bench/1");
    // Every sample streamed is one of the report's.
    let kept = report["results"][0]["samples"].as_array().unwrap().len();
    assert_eq!(samples, kept, "{report}");
}
