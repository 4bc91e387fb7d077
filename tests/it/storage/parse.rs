//! Parsing real tool output (fixtures captured from cryptsetup, fio and /proc/crypto; see
//! tests/fixtures/storage/README.md) and running fio and the sequential tests on a plain file.

use crate::support;

use sshtune::storage::crypto::{self, DriverClass};
use sshtune::storage::plan::Test;
use sshtune::storage::{fio, kspeed, seqio};
use sshtune::sysinfo::proc_crypto;
use std::time::Duration;
use support::fixture_text;

#[test]
fn cryptsetup_benchmark_table_parses() {
    let _lock = support::shared();
    let rows = kspeed::parse_cryptsetup(&fixture_text("storage/cryptsetup_benchmark_vm.txt"));
    assert_eq!(rows.len(), 12, "{rows:?}");
    let first = &rows[0];
    assert_eq!((first.cipher.as_str(), first.key_bits), ("aes-cbc", 128));
    assert_eq!(first.encrypt_mib_s, Some(0.7));
    assert_eq!(first.decrypt_mib_s, Some(11.7));
    let last = rows.last().unwrap();
    assert_eq!((last.cipher.as_str(), last.key_bits), ("twofish-xts", 512));
    assert_eq!(last.decrypt_mib_s, Some(7.3));
    // PBKDF and argon2 lines are not cipher rows.
    assert!(rows.iter().all(|r| !r.cipher.starts_with("PBKDF")));
}

#[test]
fn cryptsetup_adiantum_row_parses() {
    let _lock = support::shared();
    let rows = kspeed::parse_cryptsetup(&fixture_text(
        "storage/cryptsetup_benchmark_adiantum_vm.txt",
    ));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].cipher, "xchacha12,aes-adiantum");
    assert_eq!(rows[0].key_bits, 256);
    assert_eq!(rows[0].decrypt_mib_s, Some(3.6));
}

#[test]
fn cryptsetup_without_af_alg_gives_no_rows() {
    let _lock = support::shared();
    let rows = kspeed::parse_cryptsetup(&fixture_text(
        "storage/cryptsetup_benchmark_no_afalg.stdout",
    ));
    assert!(rows.is_empty(), "{rows:?}");
    assert!(fixture_text("storage/cryptsetup_benchmark_no_afalg.stderr")
        .contains("Required kernel crypto interface not available"));
}

#[test]
fn cryptsetup_na_row_is_kept_with_a_reason() {
    let _lock = support::shared();
    // cryptsetup prints N/A for both figures when the kernel lacks a cipher (same printf
    // layout as the numeric rows; this line is written from that format).
    let rows = kspeed::parse_cryptsetup(
        "    serpent-xts        512b               N/A               N/A\n",
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].encrypt_mib_s, None);
    assert!(rows[0].note.as_deref().unwrap().contains("N/A"));
}

#[test]
fn proc_crypto_of_a_machine_without_glue_drivers_is_generic() {
    let _lock = support::shared();
    let algs = proc_crypto::parse(&fixture_text("storage/proc_crypto_host.txt"));
    assert!(algs.len() > 20);
    let c = crypto::choose("aes-xts-plain64", &algs);
    assert_eq!(c.class, DriverClass::Generic);
    assert_eq!(
        c.driver.as_deref(),
        Some("aes-fixed-time"),
        "highest priority aes"
    );
    assert!(c.basis.contains("not instantiated"), "{}", c.basis);
}

#[test]
fn proc_crypto_in_the_vm_picks_highest_priority_driver() {
    let _lock = support::shared();
    let algs = proc_crypto::parse(&fixture_text("storage/proc_crypto_vm.txt"));
    let xts = crypto::choose("aes-xts-plain64", &algs);
    assert_eq!(xts.driver.as_deref(), Some("xts-aes-aesni"));
    assert_eq!(xts.priority, Some(401));
    assert_eq!(xts.class, DriverClass::CpuInstructions);
    let twofish = crypto::choose("twofish-cbc-essiv:sha256", &algs);
    assert_eq!(twofish.driver.as_deref(), Some("cbc-twofish-avx"));
    let serpent = crypto::choose("serpent-cbc-plain64", &algs);
    assert_eq!(serpent.driver.as_deref(), Some("cbc-serpent-avx2"));
    assert_eq!(serpent.class, DriverClass::CpuInstructions);
    let adiantum = crypto::choose("xchacha12,aes-adiantum-plain64", &algs);
    assert_eq!(adiantum.kernel_name, "adiantum(xchacha12,aes)");
    assert_eq!(adiantum.class, DriverClass::CpuInstructions);
}

#[test]
fn offload_engine_from_the_seed_is_classified_offload() {
    let _lock = support::shared();
    // The seed's Armada board: marvell_cesa registers cbc(aes) above the ARM assembler one.
    let text = "name         : cbc(aes)\ndriver       : mv-cbc-aes\nmodule       : marvell_cesa\npriority     : 300\ntype         : skcipher\n\n\
                name         : cbc(aes)\ndriver       : cbc(aes-arm)\nmodule       : kernel\npriority     : 200\ntype         : skcipher\n";
    let c = crypto::choose("aes-cbc-essiv:sha256", &proc_crypto::parse(text));
    assert_eq!(c.driver.as_deref(), Some("mv-cbc-aes"));
    assert_eq!(c.class, DriverClass::Offload);
}

#[test]
fn fio_json_fixture_parses() {
    let _lock = support::shared();
    let f = fio::parse(&fixture_text("storage/fio_randrw_4k_host.json")).unwrap();
    assert!(f.read_mib_s > 0.0 && f.write_mib_s > 0.0, "{f:?}");
    assert!(f.read_iops > f.write_iops, "75/25 mix reads more");
    assert!(f.read_bytes > 0 && f.runtime_ms > 0);
    assert!(f.read_clat_p99_us.is_some());
    assert!(f.raw.get("job options").is_some(), "raw job kept");
}

#[test]
fn fio_runs_on_a_plain_file_and_parses() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("target.dat");
    std::fs::write(&file, vec![0u8; 8 << 20]).unwrap();
    let f = fio::run(
        Test::RandRw64k,
        &file,
        8 << 20,
        Duration::from_secs(1),
        dir.path(),
    )
    .expect("fio runs on a file");
    assert!(f.read_bytes + f.write_bytes > 0, "{f:?}");
    assert_eq!(
        f.raw["job options"]["rwmixread"].as_str(),
        Some("75"),
        "the job we asked for"
    );
    assert!(
        !dir.path().join("fio-randrw-64k.json").exists(),
        "report file removed"
    );
}

#[test]
fn sequential_tests_run_on_a_plain_file() {
    let Some(_lock) = support::shared_as_root("dropping caches needs root") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seq.dat");
    let mut buf = seqio::Buffer::new();
    for t in [Test::Wr, Test::WrS, Test::Rd, Test::BufferedRead] {
        let v = seqio::run(t, &file, 32 << 20, &mut buf).unwrap();
        assert!(v > 0.0, "{t:?}");
    }
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 32 << 20);
}

#[test]
fn userspace_speed_is_labelled_not_kernel() {
    let _lock = support::shared();
    let s = kspeed::userspace(
        &[("aes-xts", 256), ("serpent-xts", 256)],
        1,
        Duration::from_millis(20),
    )
    .unwrap();
    assert!(s.method.contains("userspace, not kernel"));
    assert!(s.rows[0].encrypt_mib_s.is_some());
    assert!(s.rows[1].encrypt_mib_s.is_none() && s.rows[1].note.is_some());
}
