//! Whether the CPU does AES and GCM's carry-less multiply in hardware: the one fact the choice
//! of backend depends on.
//!
//! With AES instructions (x86 `aes` + `pclmulqdq`, ARMv8 `aes` + `pmull`) ring's AES-GCM seals
//! packets faster than libcrypto. Without them ring falls back to portable constant-time code
//! for both AES and GHASH, slower than libcrypto's software AES-GCM (docs/boards.md), so the AES-GCM ciphers' backend follows this fact
//! ([`CipherSpec::default_backend`](crate::CipherSpec::default_backend)).
//!
//! The running CPU is read with `std::arch`'s feature detection (the same CPUID / auxiliary
//! vector bits the kernel lists in `/proc/cpuinfo`), once per process. Another machine's
//! feature names (a server's `/proc/cpuinfo`) go through [`AesHardware::from_features`].

use serde::Serialize;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AesHardware {
    /// AES rounds and carry-less multiply are CPU instructions.
    Present,
    /// At least one of them runs in software (or the architecture has none this crate knows).
    Absent,
}

impl AesHardware {
    /// From the kernel's feature names (`flags` on x86, `Features` on ARM): AES and a
    /// carry-less multiply, `pclmulqdq` on x86 or `pmull` on ARMv8. An architecture with
    /// neither name is `Absent`: ring has no AES instructions for it either.
    pub fn from_features(has: impl Fn(&str) -> bool) -> AesHardware {
        if has("aes") && (has("pclmulqdq") || has("pmull")) {
            AesHardware::Present
        } else {
            AesHardware::Absent
        }
    }

    /// This CPU, read once per process.
    pub fn this_cpu() -> AesHardware {
        static CPU: OnceLock<AesHardware> = OnceLock::new();
        *CPU.get_or_init(|| AesHardware::from_features(detected))
    }

    /// The feature names that decide it on this architecture, for messages.
    pub fn features(arch: &str) -> &'static str {
        match arch {
            "aarch64" | "arm64" | "arm" => "aes, pmull",
            _ => "aes, pclmulqdq",
        }
    }
}

#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn detected(name: &str) -> bool {
    match name {
        "aes" => std::arch::is_x86_feature_detected!("aes"),
        "pclmulqdq" => std::arch::is_x86_feature_detected!("pclmulqdq"),
        _ => false,
    }
}

#[cfg(target_arch = "aarch64")]
fn detected(name: &str) -> bool {
    match name {
        "aes" => std::arch::is_aarch64_feature_detected!("aes"),
        "pmull" => std::arch::is_aarch64_feature_detected!("pmull"),
        _ => false,
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
fn detected(_: &str) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::AesHardware::{self, *};

    fn of(flags: &str) -> AesHardware {
        AesHardware::from_features(|f| flags.split_whitespace().any(|x| x == f))
    }

    #[test]
    fn both_instructions_are_needed() {
        assert_eq!(of("fpu sse2 ssse3 aes pclmulqdq avx2"), Present);
        assert_eq!(of("fp asimd aes pmull sha1 sha2"), Present);
        // qemu64, a Cortex-A72 (Raspberry Pi 4), AES without carry-less multiply.
        assert_eq!(of("fpu sse sse2 sse3"), Absent);
        assert_eq!(of("fp asimd evtstrm crc32 cpuid"), Absent);
        assert_eq!(of("sse2 aes"), Absent);
        assert_eq!(of("sse2 pclmulqdq"), Absent);
        assert_eq!(of(""), Absent);
    }
}
