//! The key exchange of the OpenSSH engine's own sessions. Every cipher row logs in afresh, and
//! on this project's loopback reference a login with OpenSSH 9's default, the post-quantum
//! hybrid `sntrup761x25519-sha512`, took about 0.23 s against 0.135 s with
//! `curve25519-sha256`: a second of every ten-cipher run (not measured on a board, where the
//! CPU is slower at both). No figure contains the handshake (every sample starts after the remote side says it is
//! ready), so the exchange changes how long a run takes, never what it reports.
//!
//! The preference is put first only where nobody chose: when the key exchanges `ssh -G`
//! resolves for the destination are the client's built-in defaults. A `KexAlgorithms` line in
//! any ssh_config or a `-o KexAlgorithms=...` is kept as it is. The sessions carry generated
//! data and the bench's own scripts; `sshtune config`, `pipeline` and every command the user
//! is given keep the client's defaults.

/// The exchange measuring sessions prefer when the user chose none.
pub const PREFERRED: &str = "curve25519-sha256";

/// The `-o` value that puts `PREFERRED` first, or None: the user (or the system config) chose
/// the key exchanges, the client does not offer `PREFERRED`, or it is already first.
pub fn measuring_option(resolved: &[String], defaults: &[String]) -> Option<String> {
    let untouched = !resolved.is_empty() && resolved == defaults;
    let offered = resolved.iter().any(|k| k == PREFERRED);
    let first = resolved.first().is_some_and(|k| k == PREFERRED);
    (untouched && offered && !first).then(|| format!("KexAlgorithms=^{PREFERRED}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &str) -> Vec<String> {
        s.split(',').map(String::from).collect()
    }

    #[test]
    fn only_the_clients_defaults_are_reordered() {
        let defaults =
            list("sntrup761x25519-sha512@openssh.com,curve25519-sha256,ecdh-sha2-nistp256");
        assert_eq!(
            measuring_option(&defaults, &defaults).as_deref(),
            Some("KexAlgorithms=^curve25519-sha256")
        );
        // A config or -o chose: kept.
        let chosen = list("sntrup761x25519-sha512@openssh.com");
        assert_eq!(measuring_option(&chosen, &defaults), None);
        let reordered = list("ecdh-sha2-nistp256,curve25519-sha256");
        assert_eq!(measuring_option(&reordered, &defaults), None);
        // Already first, or not offered at all.
        let first = list("curve25519-sha256,ecdh-sha2-nistp256");
        assert_eq!(measuring_option(&first, &first), None);
        let without = list("ecdh-sha2-nistp256");
        assert_eq!(measuring_option(&without, &without), None);
        assert_eq!(measuring_option(&[], &[]), None);
    }
}
