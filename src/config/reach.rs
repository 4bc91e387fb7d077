//! How the benchmarked host was reached, carried into what `config` prints: the client `Host`
//! block gets `Port`, `User`, `IdentityFile` and the `-o` options as keywords, and the rsync
//! line passes the same ssh arguments, so neither silently falls back to port 22 or the
//! default key the bench did not use.

use crate::bench::model::BenchReport;

/// The bench's ssh arguments, with a `user@` from the destination folded into the login.
fn used(report: &BenchReport) -> crate::bench::model::SshArgsUsed {
    let mut a = report.ssh_args.clone();
    if let Some((user, _)) = report.host.rsplit_once('@') {
        if !report.embedded && !user.is_empty() {
            a.login = Some(user.to_string());
        }
    }
    a
}

/// Lines for the client `Host` block after `Ciphers`, indented like it.
pub fn host_lines(report: &BenchReport) -> String {
    let a = used(report);
    let mut s = String::new();
    if let Some(p) = a.port {
        s.push_str(&format!("    Port {p}\n"));
    }
    if let Some(l) = &a.login {
        s.push_str(&format!("    User {l}\n"));
    }
    if let Some(i) = &a.identity {
        s.push_str(&format!("    IdentityFile {}\n", quote(i)));
    }
    for (k, v) in a.option_lines() {
        s.push_str(&format!("    {k} {v}\n"));
    }
    s
}

/// A comment for the client block when the bench read another ssh config file (`-F`): its
/// settings for this host are not repeated here.
pub fn config_file_note(report: &BenchReport) -> Option<String> {
    report.ssh_args.ssh_config.as_ref().map(|f| {
        format!(
            "# the bench ran with -F {f}; what that file sets for this host is not repeated \
             here (the rsync line passes -F too)\n"
        )
    })
}

/// The ssh arguments for rsync's `-e`, leading space included; empty when there are none.
pub fn rsync_ssh_args(report: &BenchReport) -> String {
    used(report)
        .argv()
        .iter()
        .map(|w| format!(" {}", quote(w)))
        .collect()
}

/// A word as rsync's `-e` parser and ssh_config read it: double-quoted when it has spaces or
/// quote characters. The whole `-e` value is single-quoted by the caller, so a `'` is escaped
/// for the shell.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-~".contains(c));
    let w = if plain {
        word.to_string()
    } else {
        format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
    };
    w.replace('\'', "'\\''")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote("~/.ssh/nas_key"), "~/.ssh/nas_key");
        assert_eq!(quote("ProxyJump=gw"), "ProxyJump=gw");
        assert_eq!(quote("my key"), "\"my key\"");
    }
}
