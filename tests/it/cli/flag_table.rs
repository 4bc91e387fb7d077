//! docs/cli.md lists every flag of every command, so the table stays true.

use clap::CommandFactory;
use sshtune::cli::Cli;

#[test]
fn docs_cli_names_every_visible_flag_of_every_command() {
    let _lock = crate::support::shared();
    let doc = crate::support::read_text(&crate::support::repo_root().join("docs/cli.md"));
    let cli = Cli::command();
    let mut missing = Vec::new();
    for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
        let section = doc
            .split("\n## ")
            .find(|s| s.starts_with(&format!("sshtune {}\n", sub.get_name())))
            .unwrap_or_else(|| panic!("docs/cli.md has no section for {}", sub.get_name()));
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                let named = format!("`--{long}`");
                if !section.contains(&named) && long != "color" {
                    missing.push(format!("{} {named}", sub.get_name()));
                }
                if arg.get_help().is_none() {
                    missing.push(format!("{} {named} has no help text", sub.get_name()));
                }
            }
        }
    }
    assert!(missing.is_empty(), "docs/cli.md lacks {missing:?}");
    assert!(
        doc.contains("`500ms`") && doc.contains("`30s`"),
        "the duration grammar"
    );
}
