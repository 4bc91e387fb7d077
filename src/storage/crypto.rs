//! `/proc/crypto`: which kernel driver dm-crypt will get for a cipher, and what kind of
//! engine that driver is. The seed's `acc` column (HW / ARM / SW) is this class.

use serde::{Deserialize, Serialize};

use crate::sysinfo::proc_crypto::Algorithm;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriverClass {
    /// A separate crypto engine (the seed's "HW"): marvell_cesa, caam, safexcel, qat...
    Offload,
    /// The CPU's own crypto instructions or an optimised assembler implementation (the
    /// seed's "ARM"): aesni, aes-ce, neon, avx...
    CpuInstructions,
    /// Portable C (the seed's "SW").
    Generic,
}

impl DriverClass {
    pub fn label(self) -> &'static str {
        match self {
            DriverClass::Offload => "offload",
            DriverClass::CpuInstructions => "cpu-instr",
            DriverClass::Generic => "generic",
        }
    }
}

impl std::fmt::Display for DriverClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Engines that live outside the CPU cores. Matched against driver and module names.
const OFFLOAD: &[&str] = &[
    "marvell_cesa",
    "mv_cesa",
    "mv-",
    "caam",
    "safexcel",
    "qat",
    "ccp",
    "talitos",
    "sun8i-ce",
    "sun4i-ss",
    "omap-",
    "atmel",
    "stm32",
    "hisi",
    "nx-",
    "s5p",
];

/// CPU instruction sets and optimised assembler implementations.
const CPU: &[&str] = &[
    "aesni", "aes-ce", "aes_ce", "-ce", "neon", "avx", "sse2", "sse3", "vaes", "3way", "_arm",
    "-arm", "-asm", "x86_64", "ppc", "s390", "vmx", "riscv",
];

pub fn classify(driver: &str, module: &str) -> DriverClass {
    let hay = [driver.to_ascii_lowercase(), module.to_ascii_lowercase()];
    let has = |needles: &[&str]| hay.iter().any(|h| needles.iter().any(|n| h.contains(n)));
    if has(OFFLOAD) {
        DriverClass::Offload
    } else if has(CPU) {
        DriverClass::CpuInstructions
    } else {
        DriverClass::Generic
    }
}

/// The driver the kernel would choose for a dm-crypt cipher, and how we found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverChoice {
    /// cryptsetup's cipher spec, e.g. `aes-xts-plain64`.
    pub spec: String,
    /// The kernel algorithm name dm-crypt asks for, e.g. `xts(aes)`.
    pub kernel_name: String,
    pub driver: Option<String>,
    pub module: Option<String>,
    pub priority: Option<i64>,
    pub class: DriverClass,
    /// How the driver was determined (templates appear in /proc/crypto only after first use).
    pub basis: String,
}

/// `aes-xts-plain64` → (`xts(aes)`, `aes`); `xchacha12,aes-adiantum-plain64` →
/// (`adiantum(xchacha12,aes)`, `aes`).
pub fn kernel_name(spec: &str) -> (String, String) {
    if let Some((stream, rest)) = spec.split_once(',') {
        let mut p = rest.split('-');
        let block = p.next().unwrap_or("aes");
        let mode = p.next().unwrap_or("adiantum");
        return (format!("{mode}({stream},{block})"), block.to_string());
    }
    let mut p = spec.split('-');
    let cipher = p.next().unwrap_or(spec);
    let mode = p.next().unwrap_or("cbc");
    (format!("{mode}({cipher})"), cipher.to_string())
}

/// Highest-priority entry for the full algorithm; else for the base block cipher, which is
/// what an instantiated template would wrap.
pub fn choose(spec: &str, algs: &[Algorithm]) -> DriverChoice {
    let (full, base) = kernel_name(spec);
    let best = |name: &str| {
        algs.iter()
            .filter(|a| a.name == name)
            .max_by_key(|a| a.priority)
            .cloned()
    };
    let (found, basis) = match best(&full) {
        Some(a) => (Some(a), format!("/proc/crypto entry for {full}")),
        None => match best(&base) {
            Some(a) => (
                Some(a),
                format!("{full} not instantiated yet; class of the base cipher {base}"),
            ),
            None => (None, format!("neither {full} nor {base} in /proc/crypto")),
        },
    };
    DriverChoice {
        spec: spec.to_string(),
        kernel_name: full,
        class: found
            .as_ref()
            .map_or(DriverClass::Generic, |a| classify(&a.driver, &a.module)),
        driver: found.as_ref().map(|a| a.driver.clone()),
        module: found.as_ref().map(|a| a.module.clone()),
        priority: found.as_ref().map(|a| a.priority),
        basis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(kernel_name("aes-xts-plain64").0, "xts(aes)");
        assert_eq!(kernel_name("aes-cbc-essiv:sha256").0, "cbc(aes)");
        assert_eq!(
            kernel_name("xchacha12,aes-adiantum-plain64").0,
            "adiantum(xchacha12,aes)"
        );
    }

    #[test]
    fn classes() {
        assert_eq!(classify("mv-cbc-aes", "marvell_cesa"), DriverClass::Offload);
        assert_eq!(
            classify("xts-aes-aesni", "aesni_intel"),
            DriverClass::CpuInstructions
        );
        assert_eq!(
            classify("cbc-aes-ce", "kernel"),
            DriverClass::CpuInstructions
        );
        assert_eq!(
            classify("xts(ecb(aes-generic))", "kernel"),
            DriverClass::Generic
        );
        assert_eq!(
            classify("cbc(ecb(aes-fixed-time))", "kernel"),
            DriverClass::Generic
        );
    }
}
