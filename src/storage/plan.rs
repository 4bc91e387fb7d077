//! The matrix as data: which cipher settings, layers and tests a run covers. Presets are
//! tables here, not branches in the runner.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    /// The mapped block device itself.
    Raw,
    /// A file on ext4 made on the mapped device.
    Ext4,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Perf {
    /// dm-crypt's default queueing (kcryptd workqueues).
    Default,
    /// `--perf-no_read_workqueue --perf-no_write_workqueue` (kernel ≥ 5.9): crypto inline.
    NoWorkqueue,
}

impl Perf {
    pub fn label(self) -> &'static str {
        match self {
            Perf::Default => "default",
            Perf::NoWorkqueue => "no-wq",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Like `hdparm -t`: buffered sequential read of the block device in 2 MiB requests.
    BufferedRead,
    /// Like `dd bs=16M`: buffered write, clock stops when the last write returns.
    Wr,
    /// Like `dd bs=16M conv=fsync`: buffered write, clock stops after fsync.
    #[serde(rename = "wr-s")]
    WrS,
    /// Like `dd bs=16M oflag=direct,dsync`: direct synchronous writes.
    #[serde(rename = "wr-ds")]
    WrDs,
    /// Like `dd bs=16M` reading back: buffered sequential read after dropping caches.
    Rd,
    /// fio random 75 % read / 25 % write, 4 KiB, direct I/O.
    #[serde(rename = "randrw-4k")]
    RandRw4k,
    /// The same with 64 KiB requests.
    #[serde(rename = "randrw-64k")]
    RandRw64k,
}

pub const ALL_TESTS: &[Test] = &[
    Test::BufferedRead,
    Test::Wr,
    Test::WrS,
    Test::WrDs,
    Test::Rd,
    Test::RandRw4k,
    Test::RandRw64k,
];

impl Test {
    /// Column title, as in the seed's tables.
    pub fn label(self) -> &'static str {
        match self {
            Test::BufferedRead => "hdparm",
            Test::Wr => "WR",
            Test::WrS => "WR S",
            Test::WrDs => "WR DS",
            Test::Rd => "RD",
            Test::RandRw4k => "4k rw",
            Test::RandRw64k => "64k rw",
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Test::BufferedRead => "buffered-read",
            Test::Wr => "wr",
            Test::WrS => "wr-s",
            Test::WrDs => "wr-ds",
            Test::Rd => "rd",
            Test::RandRw4k => "randrw-4k",
            Test::RandRw64k => "randrw-64k",
        }
    }

    /// Exactly how the figure is produced (printed in the report and docs/storage.md).
    pub fn how(self) -> &'static str {
        match self {
            Test::BufferedRead => "caches dropped; read() of 2 MiB blocks through the page cache from offset 0 of the block device, up to the I/O size or 3 s, whichever comes first (like hdparm -t)",
            Test::Wr => "caches dropped; write() of 16 MiB blocks through the page cache; clock stops when the last write() returns, so it includes page-cache speed (like dd bs=16M); an untimed fsync follows",
            Test::WrS => "caches dropped; write() of 16 MiB blocks through the page cache, then fsync(); clock stops after fsync returns (like dd bs=16M conv=fsync)",
            Test::WrDs => "caches dropped; write() of 16 MiB blocks with O_DIRECT|O_DSYNC from an aligned buffer (like dd bs=16M oflag=direct,dsync)",
            Test::Rd => "caches dropped; read() of 16 MiB blocks through the page cache of the data just written (like dd bs=16M of=/dev/null)",
            Test::RandRw4k => "sync and the target's cached pages dropped (fadvise DONTNEED); fio --rw=randrw --rwmixread=75 --bs=4k --direct=1 --ioengine=psync --iodepth=1, over the I/O size, capped by the fio runtime; figure = read + write MiB/s",
            Test::RandRw64k => "sync and the target's cached pages dropped (fadvise DONTNEED); fio --rw=randrw --rwmixread=75 --bs=64k --direct=1 --ioengine=psync --iodepth=1, over the I/O size, capped by the fio runtime; figure = read + write MiB/s",
        }
    }

    pub fn is_fio(self) -> bool {
        matches!(self, Test::RandRw4k | Test::RandRw64k)
    }

    /// hdparm reads a block device; on ext4 the seed has no such column.
    pub fn applies_to(self, layer: Layer) -> bool {
        !(self == Test::BufferedRead && layer == Layer::Ext4)
    }
}

/// One dm-crypt setting. `key_bits` is what cryptsetup's `--key-size` gets: XTS splits it into
/// two keys, so the seed's "128b key" XTS rows are `key_bits = 256`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CryptSpec {
    pub cipher: String,
    pub key_bits: u32,
    pub sector_size: u32,
    pub perf: Perf,
}

/// A setting (None: the unencrypted baseline) with the layers and tests it gets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub crypt: Option<CryptSpec>,
    pub layers: Vec<Layer>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// The seed's tables: AES/Twofish/Serpent in CBC and XTS with plain, plain64 and ESSIV IVs,
    /// both key sizes, 512-byte sectors, raw and ext4, all tests.
    Seed,
    /// A few fast, modern choices × sector size 4096 × both perf settings, raw and ext4.
    Default,
    /// One cipher, raw device only, a first look in about a minute.
    Quick,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub preset: Preset,
    pub targets: Vec<Target>,
    pub tests: Vec<Test>,
    pub repeat: u32,
}

/// Overrides from the command line; empty means "the preset's".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `cipher` or `cipher:keybits`.
    pub ciphers: Vec<String>,
    pub sector_sizes: Vec<u32>,
    pub perf: Vec<Perf>,
    pub layers: Vec<Layer>,
    pub tests: Vec<Test>,
    pub repeat: Option<u32>,
}

/// (cipher, key bits) of each preset.
const SEED_CIPHERS: &[(&str, &[u32])] = &[
    ("aes-cbc-plain", &[128, 256]),
    ("aes-cbc-plain64", &[128, 256]),
    ("aes-cbc-essiv:sha256", &[128, 256]),
    ("aes-xts-plain", &[256, 512]),
    ("aes-xts-plain64", &[256, 512]),
    ("aes-xts-essiv:sha256", &[256, 512]),
    ("twofish-cbc-plain", &[128, 256]),
    ("twofish-cbc-essiv:sha256", &[128, 256]),
    ("twofish-xts-plain", &[256, 512]),
    ("twofish-xts-essiv:sha256", &[256, 512]),
    ("serpent-cbc-plain64", &[128, 256]),
    ("serpent-xts-plain64", &[256, 512]),
];

const DEFAULT_CIPHERS: &[(&str, &[u32])] = &[
    ("aes-xts-plain64", &[256, 512]),
    ("aes-cbc-essiv:sha256", &[256]),
    ("xchacha12,aes-adiantum-plain64", &[256]),
];

const QUICK_CIPHERS: &[(&str, &[u32])] = &[("aes-xts-plain64", &[256])];

/// Default key size of a cipher named without one: XTS needs two keys, Adiantum 256 bits.
pub fn default_key_bits(cipher: &str) -> u32 {
    if cipher.contains("-xts-") {
        512
    } else {
        256
    }
}

pub fn build(preset: Preset, o: &Overrides) -> Result<Plan, String> {
    let (ciphers, sectors, perf, layers, tests): (_, &[u32], &[Perf], &[Layer], &[Test]) =
        match preset {
            Preset::Seed => (
                SEED_CIPHERS,
                &[512],
                &[Perf::Default],
                &[Layer::Raw, Layer::Ext4],
                ALL_TESTS,
            ),
            Preset::Default => (
                DEFAULT_CIPHERS,
                &[4096],
                &[Perf::Default, Perf::NoWorkqueue],
                &[Layer::Raw, Layer::Ext4],
                ALL_TESTS,
            ),
            Preset::Quick => (
                QUICK_CIPHERS,
                &[4096],
                &[Perf::Default],
                &[Layer::Raw],
                // Every test but the 64 KiB random one.
                &ALL_TESTS[..ALL_TESTS.len() - 1],
            ),
        };
    let mut pairs: Vec<(String, u32)> = Vec::new();
    if o.ciphers.is_empty() {
        for (c, keys) in ciphers {
            pairs.extend(keys.iter().map(|k| (c.to_string(), *k)));
        }
    } else {
        for c in &o.ciphers {
            pairs.push(parse_cipher(c)?);
        }
    }
    let sectors = if o.sector_sizes.is_empty() {
        sectors.to_vec()
    } else {
        o.sector_sizes.clone()
    };
    for s in &sectors {
        if ![512, 1024, 2048, 4096].contains(s) {
            return Err(format!(
                "sector size {s} is not one of 512, 1024, 2048, 4096"
            ));
        }
    }
    let perf = if o.perf.is_empty() {
        perf.to_vec()
    } else {
        o.perf.clone()
    };
    let layers = if o.layers.is_empty() {
        layers.to_vec()
    } else {
        o.layers.clone()
    };
    let mut targets = Vec::new();
    for (cipher, key_bits) in &pairs {
        for &sector_size in &sectors {
            for &p in &perf {
                targets.push(Target {
                    crypt: Some(CryptSpec {
                        cipher: cipher.clone(),
                        key_bits: *key_bits,
                        sector_size,
                        perf: p,
                    }),
                    layers: layers.clone(),
                });
            }
        }
    }
    // The baseline last, as in the seed's tables; ratios are computed after the run.
    targets.push(Target {
        crypt: None,
        layers,
    });
    let tests = if o.tests.is_empty() {
        tests.to_vec()
    } else {
        ALL_TESTS
            .iter()
            .copied()
            .filter(|t| o.tests.contains(t))
            .collect()
    };
    Ok(Plan {
        preset,
        targets,
        tests,
        repeat: o.repeat.unwrap_or(1).max(1),
    })
}

/// `aes-xts-plain64` or `aes-xts-plain64:512`.
pub fn parse_cipher(s: &str) -> Result<(String, u32), String> {
    let (c, k) = match s.rsplit_once(':') {
        // `essiv:sha256` also contains a colon: only a number after it is a key size.
        Some((c, k)) if k.chars().all(|ch| ch.is_ascii_digit()) && !k.is_empty() => {
            (c, k.parse::<u32>().map_err(|e| e.to_string())?)
        }
        _ => (s, default_key_bits(s)),
    };
    let valid = c
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || "-:,_".contains(ch));
    if c.is_empty() || !valid || !c.contains('-') {
        return Err(format!(
            "{s:?} is not a cryptsetup cipher spec like aes-xts-plain64 or aes-xts-plain64:512"
        ));
    }
    if k == 0 || k % 8 != 0 || k > 1024 {
        return Err(format!(
            "key size {k} must be a positive multiple of 8, at most 1024"
        ));
    }
    Ok((c.to_string(), k))
}

impl Plan {
    /// Measurements the run will make (for progress and ETA).
    pub fn steps(&self) -> usize {
        self.targets
            .iter()
            .map(|t| {
                t.layers
                    .iter()
                    .map(|l| self.tests.iter().filter(|x| x.applies_to(*l)).count())
                    .sum::<usize>()
            })
            .sum::<usize>()
            * self.repeat as usize
    }

    pub fn cipher_specs(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for t in &self.targets {
            if let Some(c) = &t.crypt {
                if !v.contains(&c.cipher) {
                    v.push(c.cipher.clone());
                }
            }
        }
        v
    }
}
