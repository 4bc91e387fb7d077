//! Every integration test, one module per area, linked into one binary: a binary per test file
//! would link the whole library again for each, and that linking was most of the suite's build
//! time. Tests run in parallel on the harness's threads; `support::lock` keeps the ones that
//! measure apart from all others. A folder per area, a file per subject; one area:
//! `cargo test --release --test it -- native::`, one file: `-- cli::bench::`.
//!
//! A test that needs what a machine may lack (root, the VM, Chromium) asks `support` first
//! (`require_root`, `vm::require`, `require_program`): outside CI it skips saying why; with `CI`
//! set it fails.

mod support;

/// `sshtune bench`, `speed` and `probe` end to end through the binary, on loopback.
mod cli {
    mod bench;
    mod closed_pipe;
    mod errors;
    mod flag_table;
    mod grammar;
    mod help;
    mod probe;
    mod pty;
    mod speed;
    mod streams;
}

/// The sshd-config parser and `sshtune config` against the real sshd and ssh.
mod config {
    mod cmd;
    mod list_prop;
    mod parser;
    mod scratch;
}

/// The native transport against OpenSSH, Dropbear and AsyncSSH.
mod interop {
    mod asyncssh;
    mod dropbear;
    mod openssh;
}

/// Checks over the tree itself: the layer table, prose in docs and comments, the test lock, file
/// sizes, the architecture page.
mod meta {
    mod architecture;
    mod docs_prose;
    mod layers;
    mod locks;
    mod sizes;
}

/// The native client and server: bench's native engine, client against `sshtune serve` in one
/// process, the keystream threads, hostile input.
mod native {
    mod bench;
    mod malformed;
    mod pair;
    mod threads;
}

/// `sshtune pipeline`: loopback, its errors and cleanup, the VM (dm-crypt).
mod pipeline {
    mod errors;
    mod jobs;
    mod loopback;
    pub mod vm;
}

/// `sshtune report` rendered in headless Chromium, and re-rendered in every format.
mod report {
    mod colour;
    mod fail_on_drop;
    mod footers;
    mod html;
    mod units;
}

/// Known situations (CPU quotas, shaped links, a jump host, an Ansible fleet) and the verdicts
/// bench must reach in them; most need root and measure.
mod scenario {
    mod board_vm;
    mod cpu;
    mod faults_mid_run;
    mod fleet_ansible;
    mod forwarded_server;
    mod jump_host;
    mod loopback;
    mod network;
    mod plain_pipe;
    mod tcp_sink;
}

/// `sshtune serve`: authentication against sshd's own decisions, and every pre-auth limit.
mod serve {
    mod auth;
    mod limits;
    mod unit;
}

/// `sshtune storage` and the cleanup of what a killed run left, here and in the VM.
mod storage {
    mod cli;
    mod parse;
    mod plan;
    mod stale_rules;
    mod vm;
}
