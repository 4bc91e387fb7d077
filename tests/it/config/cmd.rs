//! `sshtune config` end to end: every policy's drop-in passes the real `sshd -t`, names the
//! target rejects are dropped and said so, order follows the direction, `--check` reports the
//! real sshd's verdict, `--apply` writes with a backup and rolls back when sshd says no.
//! The bench inputs are hand-written fixtures (tests/fixtures/config/*.json), not measurements.

use crate::support;

use super::scratch::Scratch;
use sshd_config::{ConfigSet, Flavor, ListSpec};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{assert_has, fixture, ok, output, sshtune, stderr, stdout};

/// sshd run as root needs /run/sshd even for `-t`. Several sshtune processes run at once in
/// this binary; creating it up front (it is openssh-server's own runtime directory) keeps one
/// of them from removing it under another.
fn privsep() {
    if support::is_root() {
        std::fs::create_dir_all("/run/sshd").expect("creating /run/sshd");
    }
}

fn config(args: &[&str]) -> Output {
    privsep();
    output(sshtune().arg("config").args(args))
}

/// `sshtune config --from REPORT ARGS...`: the config a saved bench report gives.
fn config_from(report: &str, args: &[&str]) -> Output {
    config(&[&["--from", report], args].concat())
}

/// The value of the Ciphers line in an emitted drop-in, read back with our parser.
fn ciphers_of(dropin: &str) -> Vec<String> {
    let set = ConfigSet::from_text(
        Path::new("drop-in"),
        dropin,
        Flavor::Sshd,
        Path::new("/nonexistent"),
    )
    .unwrap();
    let value = set
        .effective("Ciphers")
        .expect("drop-in sets Ciphers")
        .value;
    ListSpec::parse(&value).names().to_vec()
}

/// A scratch sshd config like Debian's, and where sshtune's drop-in goes in it.
struct Debian {
    s: Scratch,
    /// The main config: host key, the lines asked for, then the drop-in directory
    /// `sshd_config.d`.
    main: PathBuf,
    /// `sshd_config.d/50-sshtune.conf`, not written yet.
    dropin: PathBuf,
}

/// A [`Debian`] config with `extra_before` ahead of its drop-in directory.
fn debian(extra_before: &str) -> Debian {
    let s = Scratch::new();
    let main = s.main_config(extra_before, "sshd_config.d", "UsePAM no\n");
    let dropin = s.path("sshd_config.d/50-sshtune.conf");
    Debian { s, main, dropin }
}

/// The path of the report fixture `tests/fixtures/config/NAME`, as an argument.
fn report(name: &str) -> String {
    fixture(&format!("config/{name}")).display().to_string()
}

/// `sshtune config --from REPORT --apply DROPIN --sshd-config MAIN ARGS...` of the report
/// fixture `name`.
fn apply(name: &str, dropin: &Path, main: &Path, args: &[&str]) -> Output {
    let (dropin, main) = (dropin.to_str().unwrap(), main.to_str().unwrap());
    let apply = ["--apply", dropin, "--sshd-config", main];
    config_from(&report(name), &[&apply, args].concat())
}

/// `sshd -t -f MAIN` run here directly, independent of the code under test.
fn sshd_t_main(main: &Path) -> (bool, String) {
    privsep();
    let o = Command::new("sshd")
        .arg("-t")
        .arg("-f")
        .arg(main)
        .output()
        .expect("sshd runs");
    (o.status.success(), stderr(&o).trim().to_string())
}

/// Fails the test, saying `what` and sshd's message, unless `sshd -t -f MAIN` passes.
fn sshd_accepts(main: &Path, what: &str) {
    let (passed, msg) = sshd_t_main(main);
    assert!(passed, "{what}: {msg}");
}

/// `sshd -t` of a Debian-like config with `dropin` in its drop-in directory.
fn sshd_t(dropin: &str) -> (bool, String) {
    let d = debian("");
    std::fs::write(&d.dropin, dropin).unwrap();
    sshd_t_main(&d.main)
}

#[test]
fn every_policy_passes_the_real_sshd_t() {
    let _lock = support::shared();
    let accepted = sshd_config::catalog::accepted_ciphers(ciphers::OpenSshVersion::new(9, 2));
    for fx in ["bench-openssh-9.2.json", "bench-legacy-ciphers.json"] {
        for policy in ["secure", "compatible", "legacy"] {
            let o = config_from(&report(fx), &["--policy", policy, "--server", "--check"]);
            let dropin = ok(&o);
            let err = stderr(&o);
            assert!(err.contains("check: PASS"), "{fx} {policy}: {err}");
            let (passed, msg) = sshd_t(&dropin);
            assert!(passed, "{fx} {policy}: sshd -t said {msg}");
            println!("{fx} --policy {policy}: sshd -t exit 0, message {msg:?}");
            let names = ciphers_of(&dropin);
            assert!(
                names.iter().all(|n| accepted.contains(&n.as_str())),
                "{names:?}"
            );
            match policy {
                "secure" => assert!(names.iter().all(|n| !n.ends_with("-cbc")), "{names:?}"),
                "compatible" => {
                    assert!(names.contains(&"aes128-cbc".to_string()));
                    assert!(!names.contains(&"3des-cbc".to_string()));
                    assert_has(&dropin, "# aes128-cbc: WARNING: graded weak");
                }
                _ => {
                    assert!(names.contains(&"3des-cbc".to_string()));
                    assert_has(&dropin, "# 3des-cbc: RISK: graded broken");
                }
            }
            if fx == "bench-legacy-ciphers.json" {
                for gone in ["arcfour", "arcfour256", "blowfish-cbc", "cast128-cbc"] {
                    assert!(!names.contains(&gone.to_string()));
                    let why = format!(
                        "{gone}: the target sshd (OpenSSH 9.2) rejects it: removed in OpenSSH 7.6"
                    );
                    assert!(dropin.contains(&format!("#   {why}")), "{policy}: {dropin}");
                    assert!(err.contains(&format!("dropped {why}")), "{policy}: {err}");
                }
                assert_has(&err, "dropped seed-cbc@ssh.com: no successful measurement");
            }
        }
    }
}

#[test]
fn order_follows_the_chosen_direction() {
    let _lock = support::shared();
    let fx = &report("bench-openssh-9.2.json");
    for (dir, first) in [
        ("upload", "aes128-gcm@openssh.com"),
        ("download", "aes128-cbc"),
        ("both", "aes128-gcm@openssh.com"),
    ] {
        let out = ok(&config_from(
            fx,
            &["--policy", "compatible", "--direction", dir],
        ));
        let server = out.split("# =====").nth(1).unwrap();
        assert_eq!(ciphers_of(server)[0], first, "{dir}");
        assert_has(
            &out,
            &format!("Host server.example\n    Ciphers ^{first}\n"),
        );
        // The fixture's destination is bench@server.example: the user is kept.
        assert_has(&out, &format!("rsync -a --info=progress2 -e 'ssh -c {first} -o Compression=no -l bench' SRC/ server.example:DEST/"));
    }
    // Upload order, fastest first, as measured in the fixture.
    let dropin = ok(&config_from(fx, &["--direction", "upload", "--server"]));
    assert_eq!(
        ciphers_of(&dropin),
        [
            "aes128-gcm@openssh.com",
            "aes256-gcm@openssh.com",
            "aes128-ctr",
            "aes192-ctr",
            "chacha20-poly1305@openssh.com",
            "aes256-ctr"
        ]
    );
    assert!(
        dropin.contains("# sshtune ") && dropin.contains("sshd Ciphers for bench@server.example")
    );
    assert_has(
        &dropin,
        "#   aes128-gcm@openssh.com         ok     400.0 (388.0-408.0, n=3)",
    );
}

#[test]
fn chacha20_carries_a_terrapin_note_unless_both_ends_do_strict_kex() {
    let _lock = support::shared();
    let weak = ok(&config_from(
        &report("bench-openssh-9.2.json"),
        &["--server"],
    ));
    assert_has(
        &weak,
        "# chacha20-poly1305@openssh.com: Terrapin (CVE-2023-48795)",
    );
    let strict = ok(&config_from(
        &report("bench-openssh-9.6-strict.json"),
        &["--server"],
    ));
    assert!(!strict.contains("CVE-2023-48795"), "{strict}");
    assert!(ciphers_of(&strict).contains(&"chacha20-poly1305@openssh.com".to_string()));
}

#[test]
fn an_old_target_gets_its_legacy_names_and_the_local_sshd_refuses_them() {
    let _lock = support::shared();
    let fx = &report("bench-openssh-7.4.json");
    let dropin = ok(&config_from(fx, &["--policy", "legacy", "--server"]));
    let names = ciphers_of(&dropin);
    assert!(
        names.contains(&"arcfour".to_string()) && names.contains(&"blowfish-cbc".to_string()),
        "{names:?}"
    );
    assert!(dropin.contains("target sshd OpenSSH 7.4"));
    assert!(dropin.contains("# arcfour: RISK: graded broken"));
    // The real sshd here is 9.2, not the 7.4 target: --check must say so, in sshd's words,
    // as a policy failure (status 3), on one line, and print no drop-in.
    let o = config_from(fx, &["--policy", "legacy", "--server", "--check"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("REJECTS the drop-in") && err.contains("Bad SSH2 cipher spec"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.contains("sshd -t")).count(),
        1,
        "{err}"
    );
    assert_eq!(stdout(&o), "", "a rejected drop-in is not printed");
    // The same results for a 9.2 target drop them.
    let dropin = ok(&config_from(
        fx,
        &[
            "--policy",
            "legacy",
            "--server",
            "--openssh-version",
            "9.2p1",
        ],
    ));
    assert!(!ciphers_of(&dropin).iter().any(|n| n.starts_with("arcfour")));
}

/// The OpenSSH rows of a report ordered as `--direction both` orders them (slower direction),
/// computed here from the JSON, independently of the code under test.
fn openssh_order(report: &serde_json::Value) -> Vec<String> {
    let mut scores: Vec<(String, f64)> = Vec::new();
    for row in report["results"].as_array().unwrap() {
        if row["engine"] != "openssh" {
            continue;
        }
        let name = row["cipher"].as_str().unwrap().to_string();
        let median = row["median_mib_s"].as_f64().unwrap();
        match scores.iter_mut().find(|(n, _)| *n == name) {
            Some((_, s)) => *s = s.min(median),
            None => scores.push((name, median)),
        }
    }
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    scores.into_iter().map(|(n, _)| n).collect()
}

#[test]
fn a_report_of_both_engines_is_ranked_by_the_openssh_rows() {
    let _lock = support::shared();
    // A real `bench --engine both` run on loopback: the native pair ranks aes128-ctr above
    // chacha20-poly1305, the OpenSSH pair (the programs the config is for) the other way.
    let fx = fixture("config/bench-both-engines.json");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fx).unwrap()).unwrap();
    let want = openssh_order(&report);
    let o = config_from(fx.to_str().unwrap(), &["--server"]);
    let dropin = ok(&o);
    assert_eq!(ciphers_of(&dropin), want, "{dropin}");
    assert_has(
        &dropin,
        "# figures: the OpenSSH engine's (the real ssh and sshd) rows",
    );
    assert_has(&dropin, "native-engine rows are not used");
    assert!(stderr(&o).contains("figures: the OpenSSH engine's"));
    // The header table shows the OpenSSH figures, never a native one.
    for row in report["results"].as_array().unwrap() {
        let median = format!("{:.1} (", row["median_mib_s"].as_f64().unwrap());
        assert_eq!(
            dropin.contains(&median),
            row["engine"] == "openssh",
            "{median} {}: {dropin}",
            row["engine"]
        );
    }
    // The client block prefers the OpenSSH pair's fastest.
    let client = ok(&config_from(fx.to_str().unwrap(), &["--client"]));
    assert_has(&client, &format!("    Ciphers ^{}\n", want[0]));
}

#[test]
fn from_dash_reads_the_report_on_stdin() {
    let _lock = support::shared();
    use std::io::Write;
    use std::process::Stdio;
    let fx = fixture("config/bench-openssh-9.2.json");
    let run = |input: &[u8]| {
        let mut child = sshtune()
            .args(["config", "--from", "-", "--server"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    };
    let piped = ok(&run(&std::fs::read(&fx).unwrap()));
    let named = ok(&config_from(fx.to_str().unwrap(), &["--server"]));
    assert_eq!(ciphers_of(&piped), ciphers_of(&named));
    // The same report gives the same output, byte for byte (no clock time in the header).
    assert_eq!(piped, named);

    let o = run(b"{ not json");
    assert_eq!(
        o.status.code(),
        Some(2),
        "not a report is a command-line mistake"
    );
    let err = stderr(&o);
    assert_has(&err, "standard input is not a sshtune bench report");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn the_bench_ssh_arguments_reach_the_rsync_line_and_host_block() {
    let _lock = support::shared();
    let mut report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("config/bench-openssh-9.2.json")).unwrap(),
    )
    .unwrap();
    report["host"] = "nas".into();
    report["ssh_args"] = serde_json::json!({
        "port": 2222, "login": "admin", "identity": "~/.ssh/nas_ed25519",
        "ssh_config": null, "options": ["ProxyJump=gw"]
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.json");
    std::fs::write(&path, report.to_string()).unwrap();
    let out = ok(&config_from(
        path.to_str().unwrap(),
        &["--direction", "upload"],
    ));
    assert_has(
        &out,
        "-o Compression=no -p 2222 -l admin -i ~/.ssh/nas_ed25519 -o ProxyJump=gw' SRC/ nas:DEST/",
    );
    assert_has(
        &out,
        "Host nas\n    Ciphers ^aes128-gcm@openssh.com\n    Port 2222\n    User admin\n    \
             IdentityFile ~/.ssh/nas_ed25519\n    ProxyJump gw\n",
    );
}

#[test]
fn bad_input_gives_one_clear_line() {
    let _lock = support::shared();
    for (args, want) in [
        (
            vec!["--from", "/nonexistent/bench.json"],
            "reading /nonexistent/bench.json",
        ),
        (
            vec!["--from", &report("debian-sshd_config")],
            "is not a sshtune bench report",
        ),
        (vec!["--from", &report("bench-dropbear.json")], "Dropbear"),
    ] {
        let o = config(&args);
        assert!(!o.status.success(), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    // Argument errors come from clap, with its usual hint line.
    let o = config_from(
        &report("bench-openssh-9.2.json"),
        &["--openssh-version", "x"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not an OpenSSH version"));
}

/// `--from a.json b.json`: one host's runs pooled. Run b reads aes128-gcm lower, so that its
/// lead over aes256-gcm in run a alone is not a lead across both runs; every pooled row holds
/// the samples of both runs. Runs of different hosts are refused.
#[test]
fn several_runs_of_one_host_are_pooled() {
    let _lock = support::shared();
    let fx = fixture("config/bench-openssh-9.2.json");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fx).unwrap()).unwrap();
    let rows = report["results"].as_array_mut().unwrap();
    for row in rows.iter_mut() {
        if row["cipher"] == "aes128-gcm@openssh.com" && row["direction"] == "upload" {
            let low: Vec<f64> = row["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() * 0.85)
                .collect();
            row["samples"] = serde_json::json!(low);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b.json");
    std::fs::write(&b, serde_json::to_string(&report).unwrap()).unwrap();
    let args = |second: &Path| {
        config_from(
            fx.to_str().unwrap(),
            &[
                second.to_str().unwrap(),
                "--direction",
                "upload",
                "--server",
            ],
        )
    };
    let alone = ok(&config_from(
        fx.to_str().unwrap(),
        &["--direction", "upload", "--server"],
    ));
    assert!(alone.contains("n=3)"), "{alone}");
    let o = args(&b);
    let dropin = ok(&o);
    assert!(stderr(&o).contains("pooled 2 runs"), "{}", stderr(&o));
    assert!(
        dropin.contains("n=6)") && !dropin.contains("n=3)"),
        "{dropin}"
    );
    let line = ciphers_of(&dropin);
    assert_eq!(line.len(), 6, "{line:?}");
    assert!(
        dropin.contains("aes128-gcm@openssh.com") && dropin.contains("tied"),
        "the pooled lead is not significant: {dropin}"
    );
    report["host"] = "bench@other.example".into();
    std::fs::write(&b, serde_json::to_string(&report).unwrap()).unwrap();
    let o = args(&b);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_has(&err, "different hosts");
    assert_eq!(err.trim().lines().count(), 2, "pooled line + cause: {err}");
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn apply_backs_up_writes_and_passes_sshd_t() {
    let _lock = support::shared();
    let Debian { s, main, dropin } = debian("");
    std::fs::write(&dropin, "# older settings\nCiphers aes256-ctr\n").unwrap();
    let o = apply("bench-legacy-ciphers.json", &dropin, &main, &["--quiet"]);
    ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("passes") && err.contains("systemctl reload"),
        "{err}"
    );
    let written = std::fs::read_to_string(&dropin).unwrap();
    assert_eq!(ciphers_of(&written)[0], "aes128-gcm@openssh.com");
    let files = files_in(&s.path("sshd_config.d"));
    assert_eq!(files.len(), 2, "{files:?}");
    let backup = files
        .iter()
        .find(|f| f.contains(".sshtune-backup-"))
        .expect("backup kept");
    assert_eq!(
        std::fs::read_to_string(s.path("sshd_config.d").join(backup)).unwrap(),
        "# older settings\nCiphers aes256-ctr\n"
    );
    sshd_accepts(&main, "after the apply");
}

#[test]
fn apply_rolls_back_when_sshd_rejects_the_result() {
    let _lock = support::shared();
    let Debian { s, main, dropin } = debian("");
    let old = "Ciphers aes256-ctr # keep me\n";
    std::fs::write(&dropin, old).unwrap();
    // Results claimed for an OpenSSH 7.4 target yield arcfour & co, which this 9.2 sshd refuses.
    let legacy = |d: &Path| apply("bench-openssh-7.4.json", d, &main, &["--policy", "legacy"]);
    let o = legacy(&dropin);
    // sshd's "no", cleanly rolled back: a policy failure.
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "a rolled-back drop-in is not printed");
    let err = stderr(&o);
    assert!(
        err.contains("Bad SSH2 cipher spec") && err.contains("rolled back"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&dropin).unwrap(), old);
    assert_eq!(files_in(&s.path("sshd_config.d")), ["50-sshtune.conf"]);

    // With nothing there before, rolling back means removing it again.
    let fresh = s.path("sshd_config.d/60-new.conf");
    let o = legacy(&fresh);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!fresh.exists());
    sshd_accepts(&main, "the config is left as sshd accepted it");
}

#[test]
fn apply_refuses_a_file_sshd_would_not_read_or_a_config_already_broken() {
    let _lock = support::shared();
    let Debian { s, main, dropin } = debian("");
    let stray = s.path("stray.conf");
    let o = apply("bench-openssh-9.2.json", &stray, &main, &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("does not Include"), "{}", stderr(&o));
    assert!(!stray.exists());

    let broken = s.path("broken_config");
    std::fs::write(
        &broken,
        format!("HostKey {}\nCiphers arcfour\n", s.key.display()),
    )
    .unwrap();
    let o = apply("bench-openssh-9.2.json", &dropin, &broken, &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("already rejected by sshd"),
        "{}",
        stderr(&o)
    );
    assert!(!dropin.exists());
}

#[test]
fn apply_explains_when_an_earlier_line_decides_ciphers() {
    let _lock = support::shared();
    let Debian {
        s: _scratch,
        main,
        dropin,
    } = debian("Ciphers aes256-ctr\n");
    let o = apply("bench-openssh-9.2.json", &dropin, &main, &[]);
    ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("decided earlier")
            && err.contains("sshd_config line 2")
            && err.contains("effective Ciphers is aes256-ctr"),
        "{err}"
    );
}

#[test]
fn live_host_runs_the_bench_first() {
    let _lock = support::shared();
    privsep();
    let server = sshtune::embedded::EmbeddedSshd::start("").expect("embedded sshd starts");
    let mut args: Vec<String> = vec!["config".into(), "--host".into(), "127.0.0.1".into()];
    args.extend(server.target.options.iter().cloned());
    args.extend(
        [
            "--ciphers",
            "aes128-ctr,aes128-gcm@openssh.com",
            "--size",
            "4M",
            "--check",
            "--quiet",
            "--client-host",
            "loop",
        ]
        .map(String::from),
    );
    let o = output(sshtune().args(&args));
    let out = ok(&o);
    assert!(stderr(&o).contains("check: PASS"), "{}", stderr(&o));
    assert_has(&out, "Host loop\n    Ciphers ^aes128-");
    // The port the bench reached the server on is kept (recorded in the report, then emitted).
    let port = support::option_value(&server.target.options, "-p");
    assert_has(&out, &format!("    Port {port}\n"));
    assert_has(&out, &format!(" -p {port} "));
    let server_part = out.split("# =====").nth(1).unwrap();
    let mut names = ciphers_of(server_part);
    names.sort();
    assert_eq!(names, ["aes128-ctr", "aes128-gcm@openssh.com"]);
    assert_has(server_part, "n=3");
}

#[test]
fn format_json_is_one_object_with_the_line_the_reasons_and_the_outputs() {
    let _lock = support::shared();
    let fx = &report("bench-openssh-9.2.json");
    let text = ok(&config_from(fx, &["--direction", "upload"]));
    let o = config_from(fx, &["--direction", "upload", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    assert_eq!(v["schema"], "sshtune.config/1");
    let line: Vec<&str> = v["ciphers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let server = v["outputs"]["server"].as_str().unwrap();
    assert_eq!(ciphers_of(server), line);
    assert_eq!(v["first"], line[0]);
    assert_eq!(v["chosen"][0]["tier"], 1);
    // The three outputs are the text form's, byte for byte.
    for part in ["server", "client", "rsync"] {
        assert!(
            text.contains(v["outputs"][part].as_str().unwrap()),
            "{part}"
        );
    }
    // --json is the same, and a format config has no form for is refused by clap.
    let alias = config_from(fx, &["--direction", "upload", "--json"]);
    assert_eq!(ok(&alias), ok(&o));
    assert_eq!(config_from(fx, &["--format", "csv"]).status.code(), Some(2));
}
