//! Exit statuses, so scripts and CI can tell "it ran and the answer is no" from "it could not
//! run". Commands return a typed error; `main.rs` only maps it to a number. The same table is
//! shown by `--help` and in the man page, so it lives here once.

use crate::process::{Interrupted, InterruptedUnclean};

/// Everything went as asked.
pub const SUCCESS: u8 = 0;
/// sshtune could not do what was asked (bad input file, unreachable host, a tool missing...).
pub const ERROR: u8 = 1;
/// The command line itself was wrong; clap uses this status for its own errors.
pub const USAGE: u8 = 2;
/// It ran, and the answer is a refusal: the real `sshd -t` rejected `config --check`'s drop-in
/// (or `--apply`'s result, rolled back), or `probe --fail-on` found an algorithm of that grade
/// on the server.
pub const POLICY: u8 = 3;
/// An output file (`--output`, `--export-*`) cannot be written; found before anything was
/// measured, so no run was lost.
pub const OUTPUT: u8 = 4;
/// Stopped by Ctrl-C (SIGINT) or SIGTERM, after cleaning up (128 + SIGINT, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// Every status with its meaning: the `Exit status` section of `--help` and the man page.
pub const STATUSES: &[(u8, &str)] = &[
    (SUCCESS, "success"),
    (
        ERROR,
        "error: sshtune could not do what was asked (the message says why)",
    ),
    (USAGE, "usage: the command line is wrong"),
    (
        POLICY,
        "policy failure: sshd -t rejected `config --check`/`--apply`, or `probe --fail-on` \
         matched",
    ),
    (
        OUTPUT,
        "output: an --output/--export-* file cannot be written (checked before measuring)",
    ),
    (INTERRUPTED, "interrupted (Ctrl-C), after cleaning up"),
];

/// The `Exit status` section of `--help`.
pub fn help() -> String {
    let mut s = String::from("Exit status:");
    for (code, meaning) in STATUSES {
        s.push_str(&format!("\n  {code:<4} {meaning}"));
    }
    s
}

/// The run worked and its verdict is "no". Carries the one-line reason the user sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyFailure(pub String);

/// The command line is wrong in a way only known after parsing (e.g. a cipher name the local
/// ssh does not know). Carries the one-line reason the user sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// An output file cannot be written. Carries the one-line reason the user sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OutputError(pub String);

/// The status for an error a command returned.
pub fn code_for(err: &anyhow::Error) -> u8 {
    if err.is::<Interrupted>() || err.is::<InterruptedUnclean>() {
        INTERRUPTED
    } else if err.downcast_ref::<UsageError>().is_some() {
        USAGE
    } else if err.downcast_ref::<PolicyFailure>().is_some() {
        POLICY
    } else if err.downcast_ref::<OutputError>().is_some() {
        OUTPUT
    } else {
        ERROR
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_errors_map_to_their_status_even_with_context() {
        use anyhow::Context as _;
        let policy: anyhow::Result<()> = Err(PolicyFailure("rejected".into()).into());
        let policy = policy.context("config --check").unwrap_err();
        assert_eq!(code_for(&policy), POLICY);
        assert_eq!(code_for(&anyhow::Error::new(Interrupted)), INTERRUPTED);
        let usage = anyhow::Error::new(UsageError("unknown cipher".into()));
        assert_eq!(code_for(&usage), USAGE);
        assert_eq!(code_for(&anyhow::anyhow!("no such file")), ERROR);
        assert_eq!(code_for(&OutputError("unwritable".into()).into()), OUTPUT);
    }

    #[test]
    fn the_help_table_lists_every_status() {
        let help = help();
        for code in [SUCCESS, ERROR, USAGE, POLICY, OUTPUT, INTERRUPTED] {
            assert!(help.contains(&format!("\n  {code} ")), "{code}: {help}");
        }
    }
}
