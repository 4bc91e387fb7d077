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
    assert_eq!((b.min_duration, b.max_time), (0.5, Some(120.0)));
    let Command::Probe(p) = parse("sshtune probe h --timeout 1500ms") else {
        panic!()
    };
    assert_eq!(p.timeout, Duration::from_millis(1500));
    let Command::Speed(s) = parse("sshtune speed --min-time 250ms --repeat 5") else {
        panic!()
    };
    assert_eq!((s.min_time, s.repeat), (0.25, 5));
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
    assert_eq!((s.repeat, s.min_time), (4, 1.0));
    let Command::Pipeline(p) = parse("sshtune pipeline --interval-ms 300 --no-ceilings") else {
        panic!()
    };
    assert_eq!((p.interval_ms, p.no_ceiling), (Some(300), true));
    let Command::Bench(b) = parse("sshtune bench --no-ceilings --min-duration 2") else {
        panic!()
    };
    assert!(b.no_ceiling && b.min_duration == 2.0);
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
