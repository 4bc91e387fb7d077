//! Which backend the native pair uses on this CPU, and why: the `*` rows of `sshtune speed`.
//!
//! The choice itself is catalog data (`ciphers::Preference`, keyed by
//! `ciphers::AesHardware`); this module only says it in words for the report.

use crate::speed::model::BackendChoice;
use ciphers::{AesHardware, Backend, CIPHERS};

/// The choice on this CPU, as the native client and `sshtune serve` make it.
pub fn this_cpu() -> BackendChoice {
    let arch = std::env::consts::ARCH;
    explain(AesHardware::this_cpu(), AesHardware::features(arch))
}

/// The choice for a CPU with or without AES instructions (`features`: the names that decide it).
pub fn explain(cpu: AesHardware, features: &str) -> BackendChoice {
    let varying: Vec<&str> = CIPHERS
        .iter()
        .filter(|c| c.backends.depends_on_cpu())
        .map(|c| c.name)
        .collect();
    let backend = CIPHERS
        .iter()
        .find(|c| c.backends.depends_on_cpu())
        .map(|c| c.backends.on(cpu));
    let has = match cpu {
        AesHardware::Present => "has",
        AesHardware::Absent => "has no",
    };
    let reason = match backend {
        None => "one backend for every algorithm whatever the CPU".to_string(),
        Some(_) if !Backend::Openssl.is_available() => {
            "this build has only the rust backend (no `openssl` feature)".to_string()
        }
        Some(b) => {
            let why = match (cpu, b) {
                (AesHardware::Present, Backend::Rust) => {
                    "ring's AES-GCM outruns libcrypto's with those instructions"
                }
                (AesHardware::Absent, Backend::Openssl) => {
                    "libcrypto's software AES-GCM outruns ring's portable constant-time code"
                }
                _ => "the faster backend measured for such CPUs",
            };
            format!(
                "this CPU {has} AES instructions ({features}): {} sealed with {b} ({why}); \
                 every other algorithm with openssl",
                varying.join(", ")
            )
        }
    };
    BackendChoice {
        aes_hardware: cpu == AesHardware::Present,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "openssl")]
    #[test]
    fn the_reason_names_the_backend_each_cpu_gets() {
        let with = explain(AesHardware::Present, "aes, pclmulqdq");
        assert!(with.aes_hardware);
        assert!(
            with.reason.contains("has AES instructions"),
            "{}",
            with.reason
        );
        assert!(with.reason.contains("sealed with rust"), "{}", with.reason);
        let without = explain(AesHardware::Absent, "aes, pmull");
        assert!(!without.aes_hardware);
        assert!(without
            .reason
            .contains("has no AES instructions (aes, pmull)"));
        assert!(
            without
                .reason
                .contains("aes128-gcm@openssh.com, aes256-gcm@openssh.com sealed with openssl"),
            "{}",
            without.reason
        );
    }
}
