//! Hidden `sshtune generate man|completions DIR`: man pages and shell completions made from
//! the same clap definitions the binary parses with, so they cannot drift from `--help`.
//! Packaging runs it (scripts/deb); users do not need it.

use crate::cli::{examples, Cli, GenerateArgs, Generated};
use crate::exit::STATUSES;
use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::Man;
use roff::{bold, roman, Roff};
use std::path::Path;

pub fn run(args: GenerateArgs) -> Result<()> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let written = match args.what {
        Generated::Man => man_pages(&args.dir),
        Generated::Completions => completions(&args.dir),
    }
    .with_context(|| format!("writing into {}", args.dir.display()))?;
    for name in written {
        println!("{}", args.dir.join(name).display());
    }
    Ok(())
}

/// `sshtune.1` with an EXIT STATUS section, and one page per visible subcommand; every page
/// ends with EXAMPLES (the lines `--help` shows), ENVIRONMENT and SEE ALSO.
fn man_pages(dir: &Path) -> Result<Vec<String>> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let pages: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| format!("sshtune-{}", s.get_name()))
        .collect();
    let mut written = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let closing = closing_sections(sub.get_name(), &pages);
        let version = sub.get_version().is_some();
        written.push(man_page(
            dir,
            Man::new(sub.clone()),
            None,
            closing,
            version,
        )?);
    }
    let closing = closing_sections("sshtune", &pages);
    written.push(man_page(
        dir,
        Man::new(cmd),
        Some(exit_status_section()),
        closing,
        true,
    )?);
    Ok(written)
}

/// One page: title, name, synopsis, description and options; the top page's subcommands and
/// `status` section; the `closing` sections, then the version where there is one. Returns the
/// file name written into `dir`.
fn man_page(
    dir: &Path,
    man: Man,
    status: Option<Roff>,
    closing: Roff,
    version: bool,
) -> Result<String> {
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    if let Some(status) = status {
        man.render_subcommands_section(&mut page)?;
        status.to_writer(&mut page)?;
    }
    closing.to_writer(&mut page)?;
    if version {
        man.render_version_section(&mut page)?;
    }
    std::fs::write(dir.join(man.get_filename()), page)?;
    Ok(man.get_filename())
}

/// The `--help` epilogue as a proper man section (clap_mangen would title it EXTRA).
fn exit_status_section() -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in STATUSES {
        roff.control("TP", []);
        roff.text([bold(code.to_string())]);
        roff.text([roman(*meaning)]);
    }
    roff
}

/// Environment variables sshtune reads, and why.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "NO_COLOR",
        "when set and not empty, terminal tables carry no colours unless --color always",
    ),
    (
        "HOME",
        "where ~/.ssh/authorized_keys, known_hosts and ssh's config are found",
    ),
    (
        "XDG_STATE_HOME",
        "serve keeps its host key below it (default ~/.local/state)",
    ),
    (
        "SSH_AUTH_SOCK",
        "the native engine logs in with the agent's keys",
    ),
    (
        "PATH",
        "where ssh, sshd, rsync, openssl, cryptsetup and fio are found",
    ),
];

/// Related pages besides sshtune's own.
const SEE_ALSO: &[&str] = &[
    "ssh(1)",
    "sshd(8)",
    "ssh_config(5)",
    "sshd_config(5)",
    "rsync(1)",
    "cryptsetup(8)",
];

/// EXAMPLES, ENVIRONMENT and SEE ALSO of the page `name` (`sshtune` or a subcommand).
fn closing_sections(name: &str, pages: &[String]) -> Roff {
    let mut roff = Roff::new();
    roff.control("SH", ["EXAMPLES"]);
    for (line, meaning) in examples::of(name) {
        roff.control("TP", []);
        roff.text([bold(*line)]);
        roff.text([roman(*meaning)]);
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for (var, meaning) in ENVIRONMENT {
        roff.control("TP", []);
        roff.text([bold(*var)]);
        roff.text([roman(*meaning)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    let own = std::iter::once("sshtune".to_string())
        .chain(pages.iter().cloned())
        .filter(|p| *p != name && *p != format!("sshtune-{name}"))
        .map(|p| format!("{p}(1)"));
    let all: Vec<String> = own.chain(SEE_ALSO.iter().map(|s| s.to_string())).collect();
    roff.text([roman(all.join(", "))]);
    roff
}

fn completions(dir: &Path) -> Result<Vec<String>> {
    let mut cmd = Cli::command();
    let mut written = Vec::new();
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let path = clap_complete::generate_to(shell, &mut cmd, "sshtune", dir)?;
        written.push(
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn man_pages_carry_the_exit_statuses_and_skip_hidden_commands() {
        let dir = tempfile::tempdir().unwrap();
        let written = man_pages(dir.path()).unwrap();
        assert!(
            written.contains(&"sshtune-config.1".to_string()),
            "{written:?}"
        );
        assert!(!written
            .iter()
            .any(|w| w.contains("tcp-sink") || w.contains("generate")));
        let main = std::fs::read_to_string(dir.path().join("sshtune.1")).unwrap();
        assert!(main.contains(".SH \"EXIT STATUS\""), "{main}");
        assert!(main.contains("policy failure"), "{main}");
        assert!(!main.contains("EXTRA"), "{main}");
        let probe = std::fs::read_to_string(dir.path().join("sshtune-probe.1")).unwrap();
        assert!(probe.contains("fail\\-on"), "{probe}");
        for section in ["EXAMPLES", "ENVIRONMENT", "\"SEE ALSO\""] {
            for page in [&main, &probe] {
                assert!(
                    page.contains(&format!(".SH {section}")),
                    "{section}: {page}"
                );
            }
        }
        assert!(probe.contains("NO_COLOR"), "{probe}");
        assert!(!probe.contains("EXTRA"), "{probe}");
    }

    #[test]
    fn completions_for_three_shells() {
        let dir = tempfile::tempdir().unwrap();
        let mut written = completions(dir.path()).unwrap();
        written.sort();
        assert_eq!(written, ["_sshtune", "sshtune.bash", "sshtune.fish"]);
        let bash = std::fs::read_to_string(dir.path().join("sshtune.bash")).unwrap();
        assert!(bash.contains("complete -F _sshtune"), "{bash}");
        assert!(bash.contains("--fail-on"));
    }
}
