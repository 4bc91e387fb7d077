//! Planning the matrix: presets cover the seed's tables, overrides replace dimensions, bad
//! input is refused with a clear message.

use crate::support;
use sshtune::storage::plan::{self, Layer, Overrides, Perf, Preset, Test, ALL_TESTS};

#[test]
fn quick_preset_is_one_cipher_on_the_raw_device_plus_baseline() {
    let _lock = support::shared();
    let p = plan::build(Preset::Quick, &Overrides::default()).unwrap();
    assert_eq!(p.targets.len(), 2);
    assert!(
        p.targets[1].crypt.is_none(),
        "baseline last, as in the seed"
    );
    let c = p.targets[0].crypt.as_ref().unwrap();
    assert_eq!(
        (c.cipher.as_str(), c.key_bits, c.sector_size),
        ("aes-xts-plain64", 256, 4096)
    );
    assert_eq!(p.targets[0].layers, vec![Layer::Raw]);
    assert_eq!(p.steps(), 2 * 6);
}

#[test]
fn seed_preset_covers_the_seed_tables() {
    let _lock = support::shared();
    let p = plan::build(Preset::Seed, &Overrides::default()).unwrap();
    let specs: Vec<(String, u32)> = p
        .targets
        .iter()
        .filter_map(|t| t.crypt.as_ref().map(|c| (c.cipher.clone(), c.key_bits)))
        .collect();
    // Every row of the seed's 128b/256b tables (XTS "128b" = two 128-bit keys = 256).
    for (c, k) in [
        ("aes-cbc-plain", 128),
        ("aes-cbc-plain64", 256),
        ("aes-cbc-essiv:sha256", 128),
        ("aes-xts-plain", 256),
        ("aes-xts-plain64", 512),
        ("aes-xts-essiv:sha256", 256),
        ("twofish-cbc-essiv:sha256", 256),
        ("twofish-xts-plain", 512),
    ] {
        assert!(specs.contains(&(c.to_string(), k)), "{c} {k} missing");
    }
    assert!(specs.iter().any(|(c, _)| c.starts_with("serpent")));
    assert!(p
        .targets
        .iter()
        .all(|t| t.layers == vec![Layer::Raw, Layer::Ext4]));
    assert_eq!(p.tests, ALL_TESTS.to_vec());
    // hdparm has no ext4 column, as in the seed.
    assert!(!Test::BufferedRead.applies_to(Layer::Ext4));
}

#[test]
fn default_preset_compares_queueing_and_includes_adiantum() {
    let _lock = support::shared();
    let p = plan::build(Preset::Default, &Overrides::default()).unwrap();
    let crypt: Vec<_> = p.targets.iter().filter_map(|t| t.crypt.as_ref()).collect();
    assert!(crypt.iter().any(|c| c.perf == Perf::NoWorkqueue));
    assert!(crypt.iter().any(|c| c.perf == Perf::Default));
    assert!(crypt
        .iter()
        .any(|c| c.cipher == "xchacha12,aes-adiantum-plain64"));
    assert!(crypt.iter().all(|c| c.sector_size == 4096));
}

#[test]
fn overrides_replace_dimensions() {
    let _lock = support::shared();
    let o = Overrides {
        ciphers: vec!["aes-cbc-essiv:sha256".into(), "aes-xts-plain64:256".into()],
        sector_sizes: vec![512, 4096],
        perf: vec![Perf::Default, Perf::NoWorkqueue],
        layers: vec![Layer::Ext4],
        tests: vec![Test::Rd, Test::WrS, Test::BufferedRead],
        repeat: Some(3),
    };
    let p = plan::build(Preset::Quick, &o).unwrap();
    assert_eq!(p.targets.len(), 1 + 2 * 2 * 2);
    let essiv = p.targets[0].crypt.as_ref().unwrap();
    assert_eq!(
        essiv.cipher, "aes-cbc-essiv:sha256",
        "the colon of essiv is not a key size"
    );
    assert_eq!(essiv.key_bits, 256);
    assert_eq!(p.targets[4].crypt.as_ref().unwrap().key_bits, 256);
    assert_eq!(p.repeat, 3);
    // Tests keep the seed's column order whatever order they were given in.
    assert_eq!(p.tests, vec![Test::BufferedRead, Test::WrS, Test::Rd]);
    // 8 targets + baseline × ext4 tests without hdparm (2) × 3 samples.
    assert_eq!(p.steps(), 9 * 2 * 3);
}

#[test]
fn bad_cipher_and_sector_are_refused() {
    let _lock = support::shared();
    let bad = |o: Overrides| plan::build(Preset::Default, &o).unwrap_err();
    let e = bad(Overrides {
        ciphers: vec!["rot13".into()],
        ..Default::default()
    });
    assert!(e.contains("not a cryptsetup cipher spec"), "{e}");
    let e = bad(Overrides {
        ciphers: vec!["aes-xts-plain64:7".into()],
        ..Default::default()
    });
    assert!(e.contains("key size"), "{e}");
    let e = bad(Overrides {
        sector_sizes: vec![3000],
        ..Default::default()
    });
    assert!(e.contains("sector size 3000"), "{e}");
}
