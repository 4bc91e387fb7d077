//! Cipher speed without storage: the kernel's (what dm-crypt gets), measured by
//! `cryptsetup benchmark` through AF_ALG, or — where AF_ALG is missing — OpenSSL's in this
//! process, labelled as userspace because it says little about the kernel's drivers.

use crate::process::{check_interrupted, last_line};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Ciphers and key sizes (bits, as cryptsetup counts them: XTS keys are two keys) measured.
pub const KERNEL_SET: &[(&str, u32)] = &[
    ("aes-cbc", 128),
    ("aes-cbc", 256),
    ("serpent-cbc", 128),
    ("serpent-cbc", 256),
    ("twofish-cbc", 128),
    ("twofish-cbc", 256),
    ("aes-xts", 256),
    ("aes-xts", 512),
    ("serpent-xts", 256),
    ("serpent-xts", 512),
    ("twofish-xts", 256),
    ("twofish-xts", 512),
    ("xchacha12,aes-adiantum-plain64", 256),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpeedSource {
    /// `cryptsetup benchmark`: AF_ALG, 1 MiB buffer in 64 KiB requests, about 1 s each way.
    KernelCryptsetup,
    /// OpenSSL libcrypto in this process: userspace, not kernel.
    UserspaceOpenssl,
}

impl SpeedSource {
    pub fn describe(self) -> &'static str {
        match self {
            SpeedSource::KernelCryptsetup => {
                "kernel crypto API via `cryptsetup benchmark` (AF_ALG; memory only, no storage I/O)"
            }
            SpeedSource::UserspaceOpenssl => {
                "userspace, not kernel: OpenSSL libcrypto in this process, 64 KiB requests; \
                 dm-crypt uses kernel drivers, which may be slower or faster"
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedRow {
    pub cipher: String,
    pub key_bits: u32,
    pub encrypt_mib_s: Option<f64>,
    pub decrypt_mib_s: Option<f64>,
    /// Samples behind each figure (cryptsetup: 1 run each way).
    pub samples: u32,
    /// Spread of the samples (min–max), when more than one.
    pub encrypt_range: Option<(f64, f64)>,
    pub decrypt_range: Option<(f64, f64)>,
    /// Why there is no figure (cryptsetup's N/A, a cipher OpenSSL lacks...).
    pub note: Option<String>,
}

impl SpeedRow {
    /// A row with no figure, saying why (an N/A, a cipher the source lacks, a build without it).
    pub fn unmeasured(cipher: &str, key_bits: u32, note: String) -> Self {
        Self {
            cipher: cipher.to_string(),
            key_bits,
            encrypt_mib_s: None,
            decrypt_mib_s: None,
            samples: 0,
            encrypt_range: None,
            decrypt_range: None,
            note: Some(note),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedSection {
    pub source: SpeedSource,
    pub method: String,
    pub rows: Vec<SpeedRow>,
}

/// Rows of `cryptsetup benchmark` output. The cipher table's row format is
/// `"%15s  %9zub  %10.1f MiB/s  %10.1f MiB/s"`, or `N/A` for both figures; PBKDF lines and
/// the header are skipped. Columns are split on whitespace so older, narrower layouts parse too.
pub fn parse_cryptsetup(out: &str) -> Vec<SpeedRow> {
    let mut rows = Vec::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 || line.trim_start().starts_with('#') {
            continue;
        }
        let Some(bits) = f[1].strip_suffix('b').and_then(|b| b.parse::<u32>().ok()) else {
            continue;
        };
        let speed = |i: usize| -> Option<f64> {
            (f.get(i + 1) == Some(&"MiB/s"))
                .then(|| f[i].parse().ok())
                .flatten()
        };
        let (enc, dec, note) = if f[2] == "N/A" {
            (
                None,
                None,
                Some("N/A: the kernel lacks this cipher".to_string()),
            )
        } else {
            (speed(2), speed(4), None)
        };
        if enc.is_none() && note.is_none() {
            continue;
        }
        rows.push(SpeedRow {
            cipher: f[0].to_string(),
            key_bits: bits,
            encrypt_mib_s: enc,
            decrypt_mib_s: dec,
            samples: 1,
            encrypt_range: None,
            decrypt_range: None,
            note,
        });
    }
    rows
}

/// One `cryptsetup benchmark -c C -s K` per entry, so a cipher the kernel lacks becomes an N/A
/// row instead of ending the run.
pub fn kernel(set: &[(&str, u32)]) -> Result<SpeedSection> {
    let mut rows = Vec::new();
    for (cipher, bits) in set {
        check_interrupted()?;
        let out = Command::new("cryptsetup")
            .args([
                "benchmark",
                "--cipher",
                cipher,
                "--key-size",
                &bits.to_string(),
            ])
            .stdin(Stdio::null())
            .output()
            .context("running cryptsetup benchmark")?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut parsed = parse_cryptsetup(&text);
        if parsed.is_empty() {
            let err = String::from_utf8_lossy(&out.stderr);
            if err.contains("crypto interface not available") {
                bail!("cryptsetup benchmark: {}", last_line(&err));
            }
            rows.push(SpeedRow::unmeasured(
                cipher,
                *bits,
                format!("not measured: {}", last_line(&format!("{text}\n{err}"))),
            ));
        } else {
            // cryptsetup prints the short name (e.g. `adiantum`); keep the spec we asked for.
            for r in &mut parsed {
                r.cipher = cipher.to_string();
            }
            rows.extend(parsed);
        }
    }
    Ok(SpeedSection {
        source: SpeedSource::KernelCryptsetup,
        method: SpeedSource::KernelCryptsetup.describe().into(),
        rows,
    })
}

/// Without the `openssl` feature there is no userspace OpenSSL to measure: every row says so.
#[cfg(not(feature = "openssl"))]
pub fn userspace(set: &[(&str, u32)], _samples: u32, _per: Duration) -> Result<SpeedSection> {
    let rows = set
        .iter()
        .map(|(name, bits)| {
            SpeedRow::unmeasured(
                name,
                *bits,
                "userspace OpenSSL is not available in this build (no `openssl` feature)".into(),
            )
        })
        .collect();
    Ok(SpeedSection {
        source: SpeedSource::UserspaceOpenssl,
        method: SpeedSource::UserspaceOpenssl.describe().into(),
        rows,
    })
}

/// OpenSSL in userspace: each sample encrypts (decrypts) 64 KiB requests with a fresh IV for
/// `per_sample`; median of `samples`.
#[cfg(feature = "openssl")]
pub fn userspace(set: &[(&str, u32)], samples: u32, per_sample: Duration) -> Result<SpeedSection> {
    use openssl::symm::Cipher;
    let mut rows = Vec::new();
    for (name, bits) in set {
        check_interrupted()?;
        let cipher = match (*name, *bits) {
            ("aes-cbc", 128) => Some(Cipher::aes_128_cbc()),
            ("aes-cbc", 256) => Some(Cipher::aes_256_cbc()),
            ("aes-xts", 256) => Some(Cipher::aes_128_xts()),
            ("aes-xts", 512) => Some(Cipher::aes_256_xts()),
            _ => None,
        };
        let Some(cipher) = cipher else {
            rows.push(SpeedRow::unmeasured(
                name,
                *bits,
                "OpenSSL has no such cipher: not measurable in userspace here".into(),
            ));
            continue;
        };
        let mut enc = Vec::new();
        let mut dec = Vec::new();
        for _ in 0..samples.max(1) {
            enc.push(openssl_rate(
                cipher,
                openssl::symm::Mode::Encrypt,
                per_sample,
            )?);
            dec.push(openssl_rate(
                cipher,
                openssl::symm::Mode::Decrypt,
                per_sample,
            )?);
        }
        rows.push(SpeedRow {
            cipher: name.to_string(),
            key_bits: *bits,
            encrypt_mib_s: crate::stats::median(&enc),
            decrypt_mib_s: crate::stats::median(&dec),
            samples: samples.max(1),
            encrypt_range: crate::stats::range(&enc),
            decrypt_range: crate::stats::range(&dec),
            note: None,
        });
    }
    Ok(SpeedSection {
        source: SpeedSource::UserspaceOpenssl,
        method: SpeedSource::UserspaceOpenssl.describe().into(),
        rows,
    })
}

#[cfg(feature = "openssl")]
const CHUNK: usize = 64 * 1024;

#[cfg(feature = "openssl")]
fn openssl_rate(
    cipher: openssl::symm::Cipher,
    mode: openssl::symm::Mode,
    dur: Duration,
) -> Result<f64> {
    use openssl::symm::Crypter;
    use std::time::Instant;
    let key: Vec<u8> = (0..cipher.key_len()).map(|i| (i * 7 + 1) as u8).collect();
    let input = vec![0x5au8; CHUNK];
    let mut output = vec![0u8; CHUNK + cipher.block_size()];
    let start = Instant::now();
    let mut bytes = 0u64;
    let mut sector = 0u64;
    while start.elapsed() < dur {
        let mut iv = [0u8; 16];
        iv[..8].copy_from_slice(&sector.to_le_bytes());
        sector += 1;
        let mut c = Crypter::new(cipher, mode, &key, Some(&iv)).context("OpenSSL cipher setup")?;
        c.pad(false);
        let n = c.update(&input, &mut output)?;
        std::hint::black_box(&output[..n]);
        bytes += CHUNK as u64;
    }
    Ok(bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64())
}
