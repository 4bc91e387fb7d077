//! Two programs decide what a killed run left: `storage::stale::clean` (Rust, for `sshtune
//! storage` and a local destination) and the pipeline's helper (shell, on a destination that
//! has no sshtune). Each runs on the same planted leftovers, one after the other, and both
//! must remove exactly what the table below says: work directories whose owner's pid is all
//! digits and gone, the loop devices on files directly in them (whatever the file's name, and
//! after the file was deleted), a link of that name but not what it points to, a mount inside
//! such a directory (a directory whose mount stays busy is kept, with its mount), and nothing
//! else. A directory whose `mnt` is a link to a mount elsewhere loses the link, never that
//! mount. The destination's path has a space in it, which the kernel's mount table writes as
//! `\040`. Mappings are the one rule this kernel cannot show (no device-mapper); the VM test
//! plants a killed run's directory and loop for the helper there.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::{output, sshtune, stderr};

/// What is planted under one name in the destination directory.
#[derive(Clone, Copy)]
enum Plant {
    Dir,
    File,
    /// A symlink to a directory outside, holding a file that must survive.
    Link,
    /// A directory with this file in it, attached to a loop device; `true`: the file is
    /// deleted after attaching (the backing file then reads `… (deleted)`).
    Loop(&'static str, bool),
    /// A directory with a tmpfs mounted on its `mnt`; `true`: a file in it is held open, so
    /// the mount is busy.
    Mounted(bool),
    /// A directory whose `mnt` is a symlink to a tmpfs mounted outside (the planted link of
    /// the attack: a root run must not unmount what it points to).
    MntLink,
}

struct Case {
    name: String,
    plant: Plant,
    removed: bool,
}

fn cases() -> Vec<Case> {
    let dead = (4_000_000..4_194_304)
        .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        .unwrap();
    let alive = std::process::id();
    let c = |name: String, plant, removed| Case {
        name,
        plant,
        removed,
    };
    // The usual name: `sshtune-storage-PID-TAIL`.
    let n = |pid: u32, tail: &str| format!("sshtune-storage-{pid}-{tail}");
    vec![
        c(n(dead, "tok"), Plant::Dir, true),
        c(format!("sshtune-storage-{dead}"), Plant::Dir, true),
        c(format!("sshtune-storage-0{dead}-tok"), Plant::Dir, true),
        c(
            format!("sshtune-storage-{}-tok", "9".repeat(24)),
            Plant::Dir,
            true,
        ),
        c(n(alive, "tok"), Plant::Dir, false),
        c("sshtune-storage-abc-tok".into(), Plant::Dir, false),
        c(format!("sshtune-storage--{dead}"), Plant::Dir, false),
        c(format!("sshtune-storage-+{dead}-tok"), Plant::Dir, false),
        c(format!("sshtune-storage-{dead}x-tok"), Plant::Dir, false),
        c(format!("sshtune-storagex{dead}-tok"), Plant::Dir, false),
        c(n(dead, "file"), Plant::File, false),
        c(n(dead, "link"), Plant::Link, true),
        c(n(dead, "a"), Plant::Loop("luks.img", false), true),
        c(n(dead, "b"), Plant::Loop("backing.img", false), true),
        c(n(dead, "c"), Plant::Loop("luks.img", true), true),
        c(n(alive, "d"), Plant::Loop("backing.img", false), false),
        c(n(dead, "m"), Plant::Mounted(false), true),
        c(n(dead, "busy"), Plant::Mounted(true), false),
        c(n(alive, "m"), Plant::Mounted(false), false),
        c(n(dead, "mntlink"), Plant::MntLink, true),
    ]
}

/// The planted tree: the destination, the links' target, the tmpfs mounted outside, the
/// loop device per case, and the files held open in busy mounts.
struct Planted {
    dir: tempfile::TempDir,
    dest: PathBuf,
    outside: PathBuf,
    outside_mnt: PathBuf,
    loops: Vec<Option<String>>,
    held: Vec<std::fs::File>,
}

fn tmpfs(at: &Path) {
    std::fs::create_dir_all(at).unwrap();
    nix::mount::mount(
        Some("sshtune-stale-test"),
        at,
        Some("tmpfs"),
        nix::mount::MsFlags::empty(),
        Some("size=1m"),
    )
    .unwrap_or_else(|e| panic!("mounting a tmpfs on {}: {e}", at.display()));
    std::fs::write(at.join("keep"), b"on a mount").unwrap();
}

fn mounted(at: &Path) -> bool {
    let real = std::fs::canonicalize(at).unwrap_or_else(|_| at.to_path_buf());
    let table = sshtune::storage::mounts::table();
    table.iter().any(|m| m.point == real)
}

fn plant(cases: &[Case]) -> Planted {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("dest dir");
    let outside = dir.path().join("outside");
    let outside_mnt = dir.path().join("outside-mnt");
    std::fs::create_dir(&dest).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("keep"), b"not a run's").unwrap();
    tmpfs(&outside_mnt);
    let mut held = Vec::new();
    let mut loops = Vec::new();
    for c in cases {
        let p = dest.join(&c.name);
        let mut dev = None;
        match c.plant {
            Plant::Dir => std::fs::create_dir(&p).unwrap(),
            Plant::File => std::fs::write(&p, b"a file").unwrap(),
            Plant::Link => std::os::unix::fs::symlink(&outside, &p).unwrap(),
            Plant::Loop(file, delete) => {
                std::fs::create_dir(&p).unwrap();
                let img = p.join(file);
                std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
                let o = output(Command::new("losetup").args(["--find", "--show"]).arg(&img));
                assert!(o.status.success(), "losetup: {}", stderr(&o));
                dev = Some(String::from_utf8_lossy(&o.stdout).trim().to_string());
                if delete {
                    std::fs::remove_file(&img).unwrap();
                }
            }
            Plant::Mounted(busy) => {
                tmpfs(&p.join("mnt"));
                if busy {
                    held.push(std::fs::File::open(p.join("mnt/keep")).unwrap());
                }
            }
            Plant::MntLink => {
                std::fs::create_dir(&p).unwrap();
                std::os::unix::fs::symlink(&outside_mnt, p.join("mnt")).unwrap();
            }
        }
        loops.push(dev);
    }
    Planted {
        dir,
        dest,
        outside,
        outside_mnt,
        loops,
        held,
    }
}

/// Per case: (still there, its loop device still attached to the planted file, a mount on
/// its `mnt` with the planted file in it).
type State = (String, bool, bool, bool);

fn state(p: &Planted, cases: &[Case]) -> Vec<State> {
    cases
        .iter()
        .zip(&p.loops)
        .map(|(c, dev)| {
            let at = p.dest.join(&c.name);
            let there = at.symlink_metadata().is_ok();
            let attached = dev.as_ref().is_some_and(|d| backing(d).contains(&c.name));
            let mnt = at.join("mnt");
            let on =
                !matches!(c.plant, Plant::MntLink) && mounted(&mnt) && mnt.join("keep").exists();
            (c.name.clone(), there, attached, on)
        })
        .collect()
}

/// The mount the planted links point to is still there, with its file.
fn outside_kept(p: &Planted) -> bool {
    mounted(&p.outside_mnt) && p.outside_mnt.join("keep").exists()
}

fn backing(dev: &str) -> String {
    let name = dev.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).unwrap_or_default()
}

/// Detaches and unmounts what is still there, so a failed assertion leaves the machine as it
/// was.
fn unplant(p: Planted, cases: &[Case]) {
    drop(p.held);
    for (c, dev) in cases.iter().zip(&p.loops) {
        if let Some(d) = dev.as_ref().filter(|d| backing(d).contains(&c.name)) {
            let _ = Command::new("losetup").args(["-d", d]).status();
        }
    }
    let root = std::fs::canonicalize(p.dir.path()).unwrap();
    let table = sshtune::storage::mounts::table();
    for m in sshtune::storage::mounts::under(&table, &root) {
        let _ = nix::mount::umount2(&m, nix::mount::MntFlags::MNT_DETACH);
    }
}

fn expected(cases: &[Case]) -> Vec<State> {
    cases
        .iter()
        .map(|c| {
            let attached = matches!(c.plant, Plant::Loop(..)) && !c.removed;
            let on = matches!(c.plant, Plant::Mounted(_)) && !c.removed;
            (c.name.clone(), !c.removed, attached, on)
        })
        .collect()
}

#[test]
fn storage_and_the_pipeline_helper_remove_the_same_leftovers() {
    // Both sweep every loop device on the machine: no other test's may be planted meanwhile.
    let Some(_lock) = support::exclusive_as_root("loop devices need root") else {
        return;
    };
    let cases = cases();

    let p = plant(&cases);
    let said = sshtune::storage::stale::clean(&p.dest);
    let by_storage = state(&p, &cases);
    let link_target_kept = p.outside.join("keep").exists();
    let mount_kept = outside_kept(&p);
    unplant(p, &cases);
    assert!(link_target_kept, "storage followed a link: {said:?}");
    assert!(mount_kept, "storage unmounted through a link: {said:?}");

    // The helper runs where the pipeline's `--luks` starts it, on the destination through
    // ssh; on this kernel it then refuses (no device-mapper), after the sweep.
    let p = plant(&cases);
    let server = sshtune::embedded::EmbeddedSshd::start("").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = output(
        support::pipeline::command(
            sshtune(),
            tmp.path(),
            support::pipeline::remote_dir(&server.target, &p.dest),
        )
        .args(&server.target.options)
        .args(["--size", "1M", "--luks", "--no-ceilings", "-q"]),
    );
    drop(server);
    let by_helper = state(&p, &cases);
    let link_target_kept = p.outside.join("keep").exists();
    let mount_kept = outside_kept(&p);
    unplant(p, &cases);
    let err = stderr(&o);
    assert!(err.contains("--luks needs device-mapper"), "{err}");
    assert!(link_target_kept, "the helper followed a link: {err}");
    assert!(mount_kept, "the helper unmounted through a link: {err}");

    let want = expected(&cases);
    let differ = |got: &[State]| -> Vec<String> {
        got.iter()
            .zip(&want)
            .filter(|(g, w)| g != w)
            .map(|(g, w)| {
                format!(
                    "{}: there {} attached {} mounted {} (want {} {} {})",
                    g.0, g.1, g.2, g.3, w.1, w.2, w.3
                )
            })
            .collect()
    };
    let (storage, helper) = (differ(&by_storage), differ(&by_helper));
    assert!(
        storage.is_empty() && helper.is_empty(),
        "storage::stale: {storage:?}\nthe helper: {helper:?}\nstorage said {said:?}\nthe run said {err}"
    );
}

/// `losetup -d` on a loop device another process still holds open succeeds, yet the device
/// stays attached until that process closes it (udev probing it, say). Cleanup waits for the
/// detach: a run in the test VM once reported its loop device gone while it was still there.
#[test]
fn a_loop_device_held_open_is_gone_when_cleanup_returns() {
    use sshtune::storage::cleanup::{undo, Resource};
    use sshtune::storage::dmcrypt::loop_attached;
    let Some(_lock) = support::shared_as_root("loop devices need root") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("held.img");
    std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
    let o = output(Command::new("losetup").args(["--find", "--show"]).arg(&img));
    assert!(o.status.success(), "losetup: {}", stderr(&o));
    let dev = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    let holder = std::fs::File::open(&dev).unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(400));
        drop(holder);
    });
    let done = undo(&Resource::Loop(dev.clone()));
    let attached = loop_attached(&dev);
    release.join().unwrap();
    if attached {
        let _ = Command::new("losetup").arg("-d").arg(&dev).status();
    }
    assert_eq!(done, Ok(()));
    assert!(
        !attached,
        "{} still attached when cleanup returned",
        dev.display()
    );
}
