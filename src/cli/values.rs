//! The words the command line takes for the domain's enums. The domain types carry no clap
//! derive: each gets a clap-side mirror here (its names and the help `--help` lists) that maps
//! one to one onto it, and `parser` hands clap a value parser that yields the domain type, so
//! the argument structs hold `Format`, `Policy`, … directly.

use crate::bench::model::Directions;
use crate::config::policy::Policy;
use crate::pipeline::dataset::DatasetKind;
use crate::pipeline::rsync::Variant;
use crate::report::rate_unit::RateUnit;
use crate::report::Format;
use crate::speed::model::RowKind;
use crate::speed::options::BackendChoice;
use crate::storage::plan::{Layer, Perf, Preset, Test};
use clap::builder::{EnumValueParser, TypedValueParser};
use clap::ValueEnum;

/// The value parser of a domain enum `D` through its mirror `A`: clap lists `A`'s names and
/// help, the field gets a `D`.
pub fn parser<A, D>() -> impl TypedValueParser<Value = D>
where
    A: ValueEnum + Clone + Send + Sync + 'static,
    D: From<A> + Clone + Send + Sync + 'static,
{
    EnumValueParser::<A>::new().map(D::from)
}

/// A clap enum with the variants of a domain enum, and its mapping onto it.
macro_rules! mirror {
    ($(#[$meta:meta])* $arg:ident => $domain:ty {
        $($(#[$vmeta:meta])* $variant:ident),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
        pub enum $arg {
            $($(#[$vmeta])* $variant),+
        }

        impl From<$arg> for $domain {
            fn from(v: $arg) -> Self {
                match v {
                    $($arg::$variant => <$domain>::$variant),+
                }
            }
        }
    };
}

mirror!(
    /// `--format`.
    FormatArg => Format {
        Table,
        Json,
        Csv,
        Markdown,
        /// One self-contained page with inline SVG charts.
        Html,
    }
);

mirror!(
    /// `--units`.
    RateUnitArg => RateUnit {
        /// Mebibytes (2^20 bytes) per second, as measured.
        #[value(name = "MiB/s", alias = "mib")]
        MibS,
        /// Megabits (10^6 bits) per second, as link speeds and iperf3 count.
        #[value(name = "Mbit/s", alias = "mbit")]
        MbitS,
        /// Megabytes (10^6 bytes) per second.
        #[value(name = "MB/s", alias = "mb")]
        MbS,
    }
);

mirror!(
    /// `--direction`.
    DirectionsArg => Directions {
        Upload,
        Download,
        Both,
    }
);

mirror!(
    /// `config --policy`.
    PolicyArg => Policy {
        /// AEAD and CTR ciphers graded ok by the catalog.
        Secure,
        /// Secure plus AES-CBC, with a warning comment.
        Compatible,
        /// Everything the target sshd still accepts (3DES, and on old releases Blowfish, CAST,
        /// RC4), with a comment stating the risk.
        Legacy,
    }
);

mirror!(
    /// `pipeline --dataset`.
    DatasetArg => DatasetKind {
        /// One large file: the seed's case, streaming throughput.
        Big,
        /// Many 64 KiB files: per-file overhead dominates.
        Small,
        /// Half the size in one file, half in small files.
        Mixed,
    }
);

mirror!(
    /// `pipeline --variants`.
    VariantArg => Variant {
        /// Fresh destination, `--whole-file`: no delta algorithm, the plain copy speed.
        WholeFile,
        /// Existing destination, `--no-whole-file --ignore-times`: every file goes through the
        /// rolling-checksum delta, as a re-sync of touched files does.
        Delta,
        /// As `delta` with `--checksum-choice=md5` instead of the negotiated default (xxh*).
        DeltaMd5,
        /// Fresh destination, `--whole-file -z`: what compression costs on incompressible data.
        Compress,
    }
);

mirror!(
    /// `storage --preset`.
    PresetArg => Preset {
        /// The seed's tables: AES/Twofish/Serpent in CBC and XTS with plain, plain64 and ESSIV
        /// IVs, both key sizes, 512-byte sectors, raw and ext4, all tests.
        Seed,
        /// A few fast, modern choices × sector size 4096 × both perf settings, raw and ext4.
        Default,
        /// One cipher, raw device only, a first look in about a minute.
        Quick,
    }
);

mirror!(
    /// `storage --layers`.
    LayerArg => Layer {
        /// The mapped block device itself.
        Raw,
        /// A file on ext4 made on the mapped device.
        Ext4,
    }
);

mirror!(
    /// `storage --perf`.
    PerfArg => Perf {
        /// dm-crypt's default queueing (kcryptd workqueues).
        Default,
        /// `--perf-no_read_workqueue --perf-no_write_workqueue` (kernel ≥ 5.9): crypto inline.
        NoWorkqueue,
    }
);

mirror!(
    /// `storage --tests`.
    TestArg => Test {
        /// Like `hdparm -t`: buffered sequential read of the block device in 2 MiB requests.
        BufferedRead,
        /// Like `dd bs=16M`: buffered write, clock stops when the last write returns.
        Wr,
        /// Like `dd bs=16M conv=fsync`: buffered write, clock stops after fsync.
        #[value(name = "wr-s")]
        WrS,
        /// Like `dd bs=16M oflag=direct,dsync`: direct synchronous writes.
        #[value(name = "wr-ds")]
        WrDs,
        /// Like `dd bs=16M` reading back: buffered sequential read after dropping caches.
        Rd,
        /// fio random 75 % read / 25 % write, 4 KiB, direct I/O.
        #[value(name = "randrw-4k")]
        RandRw4k,
        /// The same with 64 KiB requests.
        #[value(name = "randrw-64k")]
        RandRw64k,
    }
);

mirror!(
    /// `speed --rows`.
    RowsArg => RowKind {
        /// Each cipher alone (AEADs seal whole SSH packets).
        Cipher,
        /// Each MAC alone.
        Mac,
        /// Cipher + MAC sealing SSH packets.
        Pair,
    }
);

mirror!(
    /// `speed --crypto`.
    CryptoArg => BackendChoice {
        Openssl,
        Rust,
        Both,
    }
);
