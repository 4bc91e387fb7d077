//! Examples for every command, as data: `--help` ends with them (clap `after_help`) and the
//! man pages print them as their EXAMPLES section, so both show the same lines.

/// One example: the command line as typed, and what it does.
pub type Example = (&'static str, &'static str);

/// The examples of `sshtune` itself, in the order a first-time user walks.
pub const SSHTUNE: &[Example] = &[
    (
        "sshtune bench nas",
        "measure every cipher the NAS's sshd offers",
    ),
    (
        "sshtune bench nas --format json --output run.json",
        "the same, also saved for config and report",
    ),
    (
        "sshtune config --from run.json --check",
        "the sshd line, validated by sshd -t",
    ),
    (
        "sshtune probe nas --fail-on weak",
        "exit 3 when the server offers a weak algorithm",
    ),
];

pub const BENCH: &[Example] = &[
    ("sshtune bench nas", "every cipher the server offers, up and down, with a verdict"),
    (
        "sshtune bench admin@nas -p 2222 --ciphers aes128-gcm@openssh.com,chacha20-poly1305@openssh.com",
        "two ciphers only, on another port and user",
    ),
    ("sshtune bench nas --max-time 30s", "stop refining contenders after 30 seconds"),
    (
        "sshtune bench nas --format json --output run.json",
        "save the report for `sshtune config --from run.json`",
    ),
    ("sshtune bench", "this machine: a private sshd on 127.0.0.1, removed afterwards"),
];

pub const PROBE: &[Example] = &[
    ("sshtune probe nas", "banner and offered algorithms, graded"),
    (
        "sshtune probe nas --fail-on weak",
        "exit 3 when anything offered is weak or broken",
    ),
    ("sshtune probe nas --format json", "the same as JSON"),
];

pub const SERVE: &[Example] = &[
    (
        "sshtune serve --listen 127.0.0.1:2222",
        "the native server on loopback",
    ),
    (
        "sshtune bench 127.0.0.1 -p 2222 --engine native",
        "bench it from this machine",
    ),
];

pub const CONFIG: &[Example] = &[
    (
        "sshtune config --from run.json",
        "drop-in, client Host block and rsync line",
    ),
    (
        "sshtune config --from run.json --check",
        "validate the drop-in with sshd -t",
    ),
    (
        "sudo sshtune config --from run.json --apply /etc/ssh/sshd_config.d/50-sshtune.conf",
        "install it; rolled back if sshd -t rejects the full config",
    ),
    (
        "sshtune config --host nas --client",
        "measure first, print the Host block only",
    ),
];

pub const SPEED: &[Example] = &[
    (
        "sshtune speed",
        "every cipher and MAC on this CPU, beside openssl speed",
    ),
    (
        "sshtune speed --rows cipher --ciphers aes128-gcm@openssh.com,aes128-ctr",
        "two ciphers alone",
    ),
    (
        "sshtune speed --format json --output speed.json",
        "saved for sshtune report",
    ),
];

pub const PIPELINE: &[Example] = &[
    (
        "sshtune pipeline nas:/srv/backup",
        "rsync into /srv/backup on the NAS, stage by stage",
    ),
    (
        "sshtune pipeline nas:/srv/backup --source ./photos --variants whole-file",
        "your own files, one rsync variant",
    ),
    (
        "sshtune pipeline",
        "this machine: a private sshd and a temporary directory",
    ),
];

pub const STORAGE: &[Example] = &[
    (
        "sudo sshtune storage --quick",
        "a quick look at dm-crypt on a loop file",
    ),
    (
        "sudo sshtune storage --no-matrix",
        "capabilities and kernel cipher speed only",
    ),
    (
        "sudo sshtune storage --device /dev/sdX --destroy-data",
        "the matrix on a spare disk (everything on it is destroyed)",
    ),
];

pub const REPORT: &[Example] = &[
    (
        "sshtune report run.json --format markdown",
        "re-render a saved report",
    ),
    (
        "sshtune report old.json new.json --fail-on-drop 10%",
        "exit 3 when a row got significantly slower by more than 10%",
    ),
    (
        "sshtune report nas.json backup.json --compare",
        "two hosts row by row",
    ),
];

/// The examples of one subcommand by name (empty for hidden ones).
pub fn of(command: &str) -> &'static [Example] {
    match command {
        "sshtune" => SSHTUNE,
        "bench" => BENCH,
        "probe" => PROBE,
        "serve" => SERVE,
        "config" => CONFIG,
        "speed" => SPEED,
        "pipeline" => PIPELINE,
        "storage" => STORAGE,
        "report" => REPORT,
        _ => &[],
    }
}

/// The `--help` epilogue: "Examples:" and the command lines with their meaning.
pub fn help(command: &str) -> String {
    let mut s = String::from("Examples:");
    for (line, meaning) in of(command) {
        s.push_str(&format!("\n  {line}\n      {meaning}"));
    }
    s
}

/// `sshtune --help`'s epilogue: the exit statuses, then the examples.
pub fn top_help() -> String {
    format!("{}\n\n{}", crate::exit::help(), help("sshtune"))
}
