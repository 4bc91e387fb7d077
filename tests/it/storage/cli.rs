//! `sshtune storage` outside a VM: capabilities and what they rule out, cipher speed from
//! whatever the kernel offers, refusals for bad input and unsafe devices.

use crate::support;

use std::path::Path;
use std::process::Command;
use support::{output, sshtune, stderr, stdout};

#[test]
fn capabilities_report_device_mapper_state_and_what_is_ruled_out() {
    let _lock = support::shared();
    let o = output(sshtune().args(["storage", "--quick", "--format", "json", "--quiet"]));
    let v = support::ok_json(&o);
    assert_eq!(v["schema"], "sshtune.storage/1");
    let dm = v["capabilities"]["device_mapper"].as_bool().unwrap();
    assert_eq!(dm, Path::new("/dev/mapper/control").exists());
    let ruled: Vec<String> = v["ruled_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    if !dm {
        // This machine's kernel: the matrix cannot run, and the report says so.
        assert!(
            ruled.iter().any(|l| l.contains("no device-mapper")),
            "{ruled:?}"
        );
        assert!(v["matrix"].is_null());
    }
    // Cipher speed is always there: kernel or, clearly labelled, userspace.
    let speed = &v["kernel_speed"];
    match speed["source"].as_str().unwrap() {
        "userspace-openssl" => {
            assert!(speed["method"]
                .as_str()
                .unwrap()
                .contains("userspace, not kernel"));
            assert!(!v["capabilities"]["af_alg"].as_bool().unwrap());
        }
        "kernel-cryptsetup" => assert!(v["capabilities"]["af_alg"].as_bool().unwrap()),
        other => panic!("unknown source {other}"),
    }
    assert!(speed["rows"][0]["encrypt_mib_s"].as_f64().unwrap() > 0.0);
}

/// `sshtune storage --quick --no-speed --quiet`: the capabilities and no measuring.
fn quick_storage() -> std::process::Command {
    let mut c = sshtune();
    c.args(["storage", "--quick", "--no-speed", "--quiet"]);
    c
}

#[test]
fn table_output_names_what_is_missing() {
    let _lock = support::shared();
    let o = output(&mut quick_storage());
    let out = support::ok(&o);
    assert!(out.contains("Capabilities:"), "{out}");
    if !Path::new("/dev/mapper/control").exists() {
        assert!(out.contains("no device-mapper"), "{out}");
        assert!(out.contains("Ruled out here:"), "{out}");
    }
}

#[test]
fn bad_input_is_one_line_and_nonzero() {
    let _lock = support::shared();
    for args in [
        vec!["storage", "--ciphers", "rot13"],
        vec!["storage", "--size", "1M"],
        vec!["storage", "--sector-sizes", "1000"],
        vec!["storage", "--dir", "/nonexistent/dir"],
    ] {
        let o = output(sshtune().args(&args));
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: {e}");
        assert!(e.starts_with("sshtune: "), "{e}");
    }
    // clap refuses --destroy-data without --device.
    let o = output(sshtune().args(["storage", "--destroy-data"]));
    assert!(!o.status.success());
}

/// A loop device over a temp file with ext4 on it, detached on drop.
struct LoopWithFs {
    dev: String,
    _dir: tempfile::TempDir,
    mnt: Option<std::path::PathBuf>,
}

impl LoopWithFs {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(32 << 20)
            .unwrap();
        let mk = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&img)
            .output()
            .unwrap();
        assert!(mk.status.success());
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&img)
            .output()
            .unwrap();
        assert!(o.status.success(), "losetup: {}", stderr(&o));
        Self {
            dev: stdout(&o).trim().to_string(),
            _dir: dir,
            mnt: None,
        }
    }
}

impl Drop for LoopWithFs {
    fn drop(&mut self) {
        if let Some(m) = &self.mnt {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn device_with_data_is_refused() {
    let Some(_lock) = support::shared_as_root("loop devices need root") else {
        return;
    };
    let lo = LoopWithFs::new();
    // Without --destroy-data: refused.
    let o = output(sshtune().args(["storage", "--device", &lo.dev]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--destroy-data"), "{}", stderr(&o));
    // A filesystem signature: refused unless --force.
    let o = output(sshtune().args(["storage", "--device", &lo.dev, "--destroy-data"]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("ext4 signature"), "{}", stderr(&o));
    let (_, f) = sshtune::storage::device::inspect(Path::new(&lo.dev)).unwrap();
    assert!(f.mounted.is_empty() && !f.busy);
    assert!(sshtune::storage::device::check(Path::new(&lo.dev), true, true).is_ok());
}

#[test]
fn mounted_device_is_refused_even_with_force() {
    let Some(_lock) = support::shared_as_root("loop devices need root") else {
        return;
    };
    // Declared first so it is removed last, after the loop device's drop unmounts it.
    let mnt = tempfile::tempdir().unwrap();
    let mut lo = LoopWithFs::new();
    let m = Command::new("mount")
        .arg(&lo.dev)
        .arg(mnt.path())
        .output()
        .unwrap();
    assert!(m.status.success(), "mount: {}", stderr(&m));
    lo.mnt = Some(mnt.path().to_path_buf());
    let o = output(sshtune().args(["storage", "--device", &lo.dev, "--destroy-data", "--force"]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("mounted"), "{}", stderr(&o));
}

/// `--device` is pinned from the check to the end of the run, because formatting starts
/// minutes later. A path that leads to another disk by then (a node replaced, as a hot-plug
/// that reuses a name does) is caught before anything is written; and while the pin is
/// held, the checked loop device cannot be detached and handed to another file.
#[test]
fn a_device_swapped_after_the_check_is_caught_before_any_write() {
    use nix::sys::stat::{mknod, Mode, SFlag};
    use std::os::unix::fs::MetadataExt;
    let Some(_lock) = support::shared_as_root("loop devices need root") else {
        return;
    };
    let (mut a, b) = (LoopWithFs::new(), LoopWithFs::new());
    let nodes = tempfile::tempdir().unwrap();
    let node = nodes.path().join("disk");
    let node_of = |dev: &str, at: &Path| {
        let rdev = std::fs::metadata(dev).unwrap().rdev();
        mknod(at, SFlag::S_IFBLK, Mode::from_bits_truncate(0o600), rdev).unwrap();
    };
    node_of(&a.dev, &node);
    let pinned = sshtune::storage::device::check(&node, true, true).unwrap();
    pinned.verify().unwrap();
    node_of(&b.dev, &nodes.path().join("new"));
    std::fs::rename(nodes.path().join("new"), &node).unwrap();
    let e = format!("{:#}", pinned.verify().unwrap_err());
    assert!(e.contains("no longer the device that was checked"), "{e}");

    let dev = std::mem::take(&mut a.dev);
    let backing = format!(
        "/sys/block/{}/loop/backing_file",
        dev.trim_start_matches("/dev/")
    );
    let o = output(Command::new("losetup").args(["-d", &dev]));
    assert!(o.status.success(), "losetup -d: {}", stderr(&o));
    assert!(Path::new(&backing).exists(), "detached while pinned");
    let other = nodes.path().join("other.img");
    std::fs::File::create(&other)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let o = output(Command::new("losetup").arg(&dev).arg(&other));
    assert!(!o.status.success(), "{dev} took another file while pinned");
    drop(pinned);
    let gone = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        !Path::new(&backing).exists()
    });
    assert!(gone, "{dev} stayed attached after the pin was dropped");
}

/// Regression: busybox's blkid (no `-p`) counted as "no signature", so `--destroy-data` went
/// ahead on a disk with ext4 on it.
#[test]
fn device_needs_util_linux_blkid() {
    let Some(_lock) = support::shared_as_root("loop devices need root") else {
        return;
    };
    let lo = LoopWithFs::new();
    let bin = tempfile::tempdir().unwrap();
    let busybox = sshtune::process::find_program("busybox").expect("busybox (scripts/setup)");
    std::os::unix::fs::symlink(&busybox, bin.path().join("blkid")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    for extra in [&[][..], &["--force"][..]] {
        let o = output(
            sshtune()
                .env("PATH", &path)
                .args(["storage", "--quick", "--no-speed", "--no-matrix"])
                .args(["--device", &lo.dev, "--destroy-data"])
                .args(extra),
        );
        let e = stderr(&o);
        assert!(!o.status.success(), "{extra:?}: {e}");
        assert!(e.contains("util-linux"), "{extra:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
}

#[test]
fn several_outputs_are_written_and_a_bad_one_fails_before_anything_runs() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    // Outputs named relative to the working directory, as typed in a shell.
    let o = output(
        quick_storage()
            .args([
                "--export-html",
                "missing/storage.html",
                "--output",
                "storage.json",
            ])
            .current_dir(dir.path()),
    );
    let status = o.status.code();
    assert_eq!(status, Some(sshtune::exit::OUTPUT.into()), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let o = output(
        quick_storage()
            .args(["--output", "storage.json", "--output", "storage.md"])
            .current_dir(dir.path()),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Capabilities:"), "{}", stdout(&o));
    let v = support::read_json(&p("storage.json"));
    assert_eq!(v["schema"], "sshtune.storage/1");
    assert!(support::read_text(&p("storage.md")).contains("Capabilities"));
}

#[test]
fn the_table_fits_120_columns_without_colours_off_a_terminal() {
    let _lock = support::shared();
    let o = output(quick_storage().env_remove("NO_COLOR"));
    let out = support::ok(&o);
    assert!(!out.contains('\x1b'), "{out:?}");
    for line in out.lines().filter(|l| l.starts_with(['│', '┌', '╞', '└'])) {
        assert!(line.chars().count() <= 120, "{line}");
    }
}
