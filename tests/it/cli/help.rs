//! Every visible command's `--help` ends with examples, and every example parses.

use clap::{CommandFactory, Parser};
use sshtune::cli::Cli;

/// Each visible command with its path from `sshtune`, e.g. `["sshtune", "bench"]`.
fn visible_commands() -> Vec<(Vec<String>, clap::Command)> {
    fn walk(path: Vec<String>, cmd: &clap::Command, out: &mut Vec<(Vec<String>, clap::Command)>) {
        out.push((path.clone(), cmd.clone()));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(p, sub, out);
        }
    }
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(vec!["sshtune".into()], &cmd, &mut out);
    out
}

#[test]
fn every_help_ends_with_examples_that_parse() {
    let _lock = crate::support::shared();
    let commands = visible_commands();
    assert!(commands.len() >= 9, "{}", commands.len());
    for (path, mut cmd) in commands {
        let help = cmd.render_long_help().to_string();
        let at = help
            .rfind("Examples:")
            .unwrap_or_else(|| panic!("{path:?} --help has no Examples:\n{help}"));
        let lines: Vec<&str> = help[at..]
            .lines()
            .skip(1)
            .filter(|l| l.starts_with("  sshtune") || l.starts_with("  sudo sshtune"))
            .collect();
        let own = format!("sshtune {}", path[1..].join(" "));
        assert!(
            lines.iter().any(|l| l.contains(own.trim())),
            "{path:?}: no example of its own\n{help}"
        );
        for line in lines {
            let words: Vec<&str> = line
                .trim()
                .trim_start_matches("sudo ")
                .split_whitespace()
                .collect();
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("{path:?} example does not parse: {line}\n{e}");
            }
        }
    }
}

#[test]
fn host_arguments_complete_as_host_names() {
    let _lock = crate::support::shared();
    let cmd = Cli::command();
    for (sub, arg) in [("bench", "host"), ("probe", "host"), ("config", "host")] {
        let a = cmd
            .find_subcommand(sub)
            .and_then(|s| s.get_arguments().find(|a| a.get_id() == arg))
            .unwrap_or_else(|| panic!("{sub} {arg}"));
        assert_eq!(a.get_value_hint(), clap::ValueHint::Hostname, "{sub} {arg}");
    }
}

#[test]
fn man_pages_end_with_examples_environment_and_see_also() {
    let _lock = crate::support::shared();
    let dir = tempfile::tempdir().unwrap();
    let o = crate::support::output(
        crate::support::sshtune()
            .args(["generate", "man"])
            .arg(dir.path()),
    );
    assert!(o.status.success(), "{}", crate::support::stderr(&o));
    let mut pages = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let page = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for section in [".SH EXAMPLES", ".SH ENVIRONMENT", ".SH \"SEE ALSO\""] {
            assert!(page.contains(section), "{section}:\n{page}");
        }
        assert!(
            page.contains("NO_COLOR") && page.contains("sshd_config(5)"),
            "{page}"
        );
        assert!(!page.contains("EXTRA"), "{page}");
        pages += 1;
    }
    assert!(pages >= 9, "{pages} pages");
}
