//! One end's machine in words, as every report's header and page shows it: CPU model, cores,
//! architecture and the crypto features the ciphers depend on (`sysinfo::CRYPTO_FEATURES`).

use crate::sysinfo::MachineInfo;

/// `AMD EPYC 7B13, 2 cores, x86_64; crypto: has aes, pclmulqdq, …; lacks vaes`.
pub fn line(m: &MachineInfo) -> String {
    let mut s = format!(
        "{}, {} cores",
        m.cpu_model.as_deref().unwrap_or("CPU model unknown"),
        m.cores.map_or("?".into(), |c| c.to_string())
    );
    if let Some(a) = &m.arch {
        s.push_str(&format!(", {a}"));
    }
    s.push_str("; ");
    s.push_str(&crypto(m));
    s
}

/// The crypto features: which the CPU has and lacks, led by "no AES instructions" when it
/// lacks AES; "none known for ARCH" where the catalog has none for the architecture, and
/// "CPU features cannot be read" when its flags could not be read.
pub fn crypto(m: &MachineInfo) -> String {
    let Some(features) = &m.cpu_features else {
        return "CPU features cannot be read".into();
    };
    if features.is_empty() {
        return format!(
            "crypto features: none known for {}",
            m.arch.as_deref().unwrap_or("this architecture")
        );
    }
    let listed = m.features_in_order();
    let pick = |want: bool| {
        listed
            .iter()
            .filter(|(_, has)| *has == want)
            .map(|(f, _)| *f)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (has, lacks) = (pick(true), pick(false));
    let mut parts = Vec::new();
    if m.has_aes() == Some(false) {
        parts.push("no AES instructions".to_string());
    }
    if !has.is_empty() {
        parts.push(format!("has {has}"));
    }
    if !lacks.is_empty() {
        parts.push(format!("lacks {lacks}"));
    }
    format!("crypto: {}", parts.join("; "))
}

/// The two header lines of a report with both ends: `client: …` and `server: …`.
pub fn both(client: &MachineInfo, server: &MachineInfo) -> [String; 2] {
    [
        format!("client: {}", line(client)),
        format!("server: {}", server_line(server)),
    ]
}

/// The server's line, saying so when nothing of its CPU could be read.
fn server_line(m: &MachineInfo) -> String {
    if m.cpu_model.is_none() && m.cores.is_none() && m.cpu_features.is_none() {
        "its CPU cannot be read".into()
    } else {
        line(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::crypto_features;

    fn m(arch: &str, flags: &str) -> MachineInfo {
        MachineInfo {
            cpu_model: Some("QEMU TCG".into()),
            cores: Some(2),
            kernel: None,
            arch: Some(arch.into()),
            cpu_features: crypto_features(Some(arch), flags),
        }
    }

    #[test]
    fn a_cpu_without_aes_says_so_first() {
        let s = line(&m("x86_64", "sse2 ssse3 avx2"));
        assert_eq!(
            s,
            "QEMU TCG, 2 cores, x86_64; crypto: no AES instructions; has avx2, ssse3; \
             lacks aes, pclmulqdq, vaes, vpclmulqdq, sha_ni"
        );
        let s = crypto(&m("aarch64", "fp asimd aes pmull sha2"));
        assert_eq!(s, "crypto: has aes, pmull, sha2");
        assert_eq!(
            crypto(&m("riscv64", "rv64")),
            "crypto features: none known for riscv64"
        );
        assert_eq!(crypto(&m("x86_64", "")), "CPU features cannot be read");
        let [_, server] = both(&m("x86_64", "aes"), &MachineInfo::default());
        assert_eq!(server, "server: its CPU cannot be read");
    }
}
