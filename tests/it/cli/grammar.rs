//! One grammar for flags: every duration takes `30s`, `500ms`, `2m` (a bare number stays
//! seconds), sample counts are `--repeat`, and the old spellings still parse.

use clap::Parser;
use sshtune::cli::{Cli, Command};
use std::time::Duration;

fn parse(line: &str) -> Command {
    match Cli::try_parse_from(line.split_whitespace()) {
        Ok(cli) => cli.command,
        Err(e) => panic!("{line}: {e}"),
    }
}

#[test]
fn every_duration_flag_takes_the_suffixed_form() {
    let _lock = crate::support::shared();
    let Command::Bench(b) = parse("sshtune bench --min-duration 500ms --max-time 2m") else {
        panic!()
    };
    assert_eq!((b.min_duration.0, b.max_time), (0.5, Some(120.0)));
    let Command::Probe(p) = parse("sshtune probe h --timeout 1500ms") else {
        panic!()
    };
    assert_eq!(p.timeout, Duration::from_millis(1500));
    let Command::Speed(s) = parse("sshtune speed --min-time 250ms --repeat 5") else {
        panic!()
    };
    assert_eq!((s.min_time.0, s.repeat), (0.25, 5));
    let Command::Serve(s) = parse("sshtune serve --login-grace-time 1m --idle-timeout 10s") else {
        panic!()
    };
    assert_eq!(
        (s.login_grace_time, s.idle_timeout),
        (Duration::from_secs(60), Duration::from_secs(10))
    );
    let Command::Storage(s) = parse("sshtune storage --fio-runtime 30s --luks") else {
        panic!()
    };
    assert_eq!(
        (s.fio_runtime, s.luks2),
        (Some(Duration::from_secs(30)), true)
    );
    let Command::Pipeline(p) = parse("sshtune pipeline --interval 500ms --no-ceiling --luks")
    else {
        panic!()
    };
    assert_eq!(
        (p.interval, p.no_ceiling, p.luks),
        (Duration::from_millis(500), true, true)
    );
}

#[test]
fn bare_numbers_and_old_names_keep_working() {
    let _lock = crate::support::shared();
    let Command::Probe(p) = parse("sshtune probe h --timeout 10") else {
        panic!()
    };
    assert_eq!(p.timeout, Duration::from_secs(10));
    let Command::Speed(s) = parse("sshtune speed --samples 4 --min-time 1.0") else {
        panic!()
    };
    assert_eq!((s.repeat, s.min_time.0), (4, 1.0));
    let Command::Pipeline(p) = parse("sshtune pipeline --interval-ms 300 --no-ceilings") else {
        panic!()
    };
    assert_eq!((p.interval_ms, p.no_ceiling), (Some(300), true));
    let Command::Bench(b) = parse("sshtune bench --no-ceilings --min-duration 2") else {
        panic!()
    };
    assert!(b.no_ceiling && b.min_duration.0 == 2.0);
}

#[test]
fn out_of_range_and_unknown_units_are_refused() {
    let _lock = crate::support::shared();
    for line in [
        "sshtune pipeline --interval 10ms",
        "sshtune probe h --timeout 2d",
        "sshtune speed --min-time 11m",
    ] {
        assert!(
            Cli::try_parse_from(line.split_whitespace()).is_err(),
            "{line}"
        );
    }
}

fn parse_cli(line: &str) -> Result<Command, String> {
    let cli = Cli::try_parse_from(line.split_whitespace()).map_err(|e| e.to_string())?;
    let mut command = cli.command;
    if cli.json {
        command.use_json()?;
    }
    Ok(command)
}

#[test]
fn json_is_format_json_in_every_command_that_prints_a_report() {
    let _lock = crate::support::shared();
    for line in [
        "sshtune bench --json",
        "sshtune probe h --json",
        "sshtune config --from r.json --json",
        "sshtune speed --json",
        "sshtune pipeline --json",
        "sshtune storage --json",
        "sshtune report r.json --json",
        "sshtune --json speed",
    ] {
        let mut c = parse_cli(line).unwrap();
        assert!(c.prints_json(), "{line}");
    }
    for (line, says) in [
        ("sshtune serve --json", "prints no report"),
        (
            "sshtune bench --json --format csv",
            "conflicts with --format csv",
        ),
        ("sshtune config --from r.json --format csv", "table or json"),
    ] {
        let e = parse_cli(line).err().unwrap_or_default();
        assert!(e.contains(says), "{line}: {e}");
    }
}

#[test]
fn openssh_habits_pass_through_as_the_options_they_stand_for() {
    let _lock = crate::support::shared();
    let Command::Bench(b) = parse("sshtune bench nas -J u@gw:2022 -4 -vv -o Port=2") else {
        panic!()
    };
    let argv = b.ssh.to_ssh_options().join(" ");
    assert_eq!(
        argv,
        "-o Port=2 -o ProxyJump=u@gw:2022 -o AddressFamily=inet -v -v"
    );
    // What a derived Host block carries: the options, not the verbosity.
    let used = b.ssh.used();
    assert_eq!(
        used.options,
        ["Port=2", "ProxyJump=u@gw:2022", "AddressFamily=inet"]
    );
    let Command::Pipeline(p) = parse("sshtune pipeline nas:/d -6") else {
        panic!()
    };
    assert!(p
        .ssh
        .to_ssh_options()
        .contains(&"AddressFamily=inet6".to_string()));
    assert!(Cli::try_parse_from(["sshtune", "probe", "h", "-4", "-6"]).is_err());
}
