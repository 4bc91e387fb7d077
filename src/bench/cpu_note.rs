//! What each end's CPU features say about a cipher: AES ciphers run in software on a CPU
//! without AES instructions, and AES-GCM's GHASH without a carry-less multiply. The notes lead
//! the reasons of rows bound by that end's CPU, and `--explain` and `config`'s summary use them.

use super::model::{ResultRow, Verdict};
use super::verdict::Side;
use crate::sysinfo::MachineInfo;
use ciphers::Primitive;

/// Whether `cipher` runs on AES (CTR, CBC and GCM modes).
pub fn uses_aes(cipher: &str) -> bool {
    ciphers::cipher(cipher)
        .is_some_and(|c| matches!(c.primitive, Primitive::Aes | Primitive::AesGcm))
}

/// What `m` lacks that `cipher` would run on, as (what is missing, what runs in software);
/// None when it lacks nothing known or its features cannot be read.
pub fn lacks(cipher: &str, m: &MachineInfo) -> Option<(&'static str, &'static str)> {
    if !uses_aes(cipher) {
        return None;
    }
    if m.has_aes() == Some(false) {
        return Some(("no AES instructions", "AES ciphers run"));
    }
    let gcm = ciphers::cipher(cipher).is_some_and(|c| c.primitive == Primitive::AesGcm);
    let clmul = ["pclmulqdq", "pmull"]
        .iter()
        .find_map(|f| m.cpu_features.as_ref()?.get(*f).copied());
    (gcm && clmul == Some(false))
        .then_some(("no carry-less multiply instruction", "AES-GCM's GHASH runs"))
}

/// `the server has no AES instructions, AES ciphers run in software there`, or None.
pub fn note(who: &str, cipher: &str, m: &MachineInfo) -> Option<String> {
    let (what, runs) = lacks(cipher, m)?;
    Some(format!("the {who} has {what}, {runs} in software there"))
}

/// Leads the reason of every row bound by one end's CPU with what that CPU lacks for the
/// row's cipher (`note`); a row of both ends on one machine gets this machine's.
pub fn annotate(rows: &mut [ResultRow], client: &MachineInfo, server: &MachineInfo) {
    for r in rows.iter_mut() {
        let why = match r.verdict {
            Some(Verdict::ServerCpu) => note(Side::Server.as_str(), &r.cipher, server),
            Some(Verdict::ClientCpu) => note(Side::Client.as_str(), &r.cipher, client),
            Some(Verdict::CpuShared) => note("machine", &r.cipher, client),
            _ => None,
        };
        if let (Some(why), Some(reason)) = (why, r.verdict_reason.as_mut()) {
            *reason = format!("{why}; {reason}");
        }
    }
}

/// `--explain`'s line for an AES cipher: whether each end runs AES in hardware.
pub fn aes_line(cipher: &str, client: &MachineInfo, server: &MachineInfo) -> Option<String> {
    if !uses_aes(cipher) {
        return None;
    }
    let one = |who: &str, m: &MachineInfo| match (m.has_aes(), lacks(cipher, m)) {
        (_, Some((what, runs))) => format!("{who} has {what} ({runs} in software)"),
        (Some(true), None) => format!("{who} has AES instructions"),
        (_, None) => format!("{who}'s AES instructions unknown"),
    };
    Some(format!(
        "AES on the CPUs: {}; {}",
        one("client", client),
        one("server", server)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::crypto_features;

    fn cpu(flags: &str) -> MachineInfo {
        MachineInfo {
            arch: Some("x86_64".into()),
            cpu_features: crypto_features(Some("x86_64"), flags),
            ..MachineInfo::default()
        }
    }

    #[test]
    fn a_server_without_aes_leads_the_reason_of_its_aes_rows() {
        let (host, board) = (cpu("aes pclmulqdq avx2"), cpu("ssse3 avx2"));
        let mut rows = Vec::new();
        for c in ["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"] {
            let mut r = ResultRow::failed(
                "openssh",
                c,
                None,
                super::super::model::Direction::Upload,
                String::new(),
            );
            r.error = None;
            r.verdict = Some(Verdict::ServerCpu);
            r.verdict_reason = Some("server CPU 99% of one core".into());
            rows.push(r);
        }
        annotate(&mut rows, &host, &board);
        assert_eq!(
            rows[0].verdict_reason.as_deref(),
            Some(
                "the server has no AES instructions, AES ciphers run in software there; \
                 server CPU 99% of one core"
            )
        );
        assert_eq!(
            rows[1].verdict_reason.as_deref(),
            Some("server CPU 99% of one core")
        );
        // AES without PCLMULQDQ: GCM's GHASH in software, CTR unaffected.
        let half = cpu("aes ssse3");
        assert!(note("server", "aes256-gcm@openssh.com", &half)
            .unwrap()
            .contains("GHASH"));
        assert_eq!(note("server", "aes128-ctr", &half), None);
        // Features that cannot be read say nothing.
        assert_eq!(note("server", "aes128-ctr", &MachineInfo::default()), None);
        let line = aes_line("aes128-ctr", &host, &board).unwrap();
        assert!(line.contains("client has AES instructions"), "{line}");
        assert!(line.contains("server has no AES instructions"), "{line}");
        assert_eq!(
            aes_line("chacha20-poly1305@openssh.com", &host, &board),
            None
        );
    }
}
