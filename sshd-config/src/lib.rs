//! Reading and editing `sshd_config` and `ssh_config`.
//!
//! The full parser arrives with the config issue; for now the crate offers the list-syntax
//! evaluation the bench needs to report what a `Ciphers` line means.
#![forbid(unsafe_code)]

pub mod list;
