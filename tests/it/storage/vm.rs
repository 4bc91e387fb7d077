//! The real dm-crypt path, inside a VM (scripts/vm-run): a quick matrix end to end, LUKS2 and
//! ext4, cleanup after SIGTERM, SIGINT and SIGKILL (the last one by the next run), and the
//! `--device` refusals for loop devices that hold data blkid reports in different ways. The
//! same boot then runs the pipeline onto LUKS (`pipeline/vm.rs`).

use crate::support;

use std::path::Path;
use support::vm::{self, Vm, VmOutput};

/// Shell that writes what a run may have left behind to `$OUT/<name>.left` (empty: nothing).
const LEFTOVERS: &str = r#"leftovers() {
  { for n in /sys/block/dm-*/dm/name; do [ -e "$n" ] && grep -H sshtune- "$n"; done
    losetup -a | grep sshtune-storage-
    ls -d /tmp/sshtune-storage-* 2>/dev/null
    grep sshtune-storage- /proc/mounts
    pgrep -x fio
  } > "$OUT/$1.left" 2>/dev/null || true
}
"#;

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Everything the VM wrote, for the failure message.
fn dump(dir: &Path) -> String {
    let mut s = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(8).collect();
        s.push_str(&format!("== {}\n", e.file_name().to_string_lossy()));
        for l in tail.iter().rev() {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

fn script(out: &Path, body: &str) -> String {
    format!(
        "set -u\nmodprobe loop; modprobe dm_crypt\nOUT={}\nBIN={}\n{LEFTOVERS}{body}",
        out.display(),
        support::SSHTUNE
    )
}

/// `--device` swapped mid-run, as a hot-plug that renames would: a cryptsetup in front of
/// the real one (on PATH) runs `$SWAP` once, right after the first mapping is closed, before
/// the baseline writes to the device itself. Once the node the user named is replaced by one
/// for another disk, and once the checked loop device is detached and another file attached
/// under its name. `b.img` is the other disk: it must keep its bytes.
const SWAPS: &str = r#"
W=/tmp/swap; mkdir -p $W/bin
printf '#!/bin/sh\n%s "$@"; rc=$?\nif [ "$1" = close ] && [ ! -e "$SWAP.done" ]; then : > "$SWAP.done"; sh "$SWAP" > "$SWAP.out" 2>&1; echo $? >> "$SWAP.out"; fi\nexit $rc\n' "$(command -v cryptsetup)" > $W/bin/cryptsetup
chmod +x $W/bin/cryptsetup
swap_run() {
  truncate -s 48M $W/a.img; yes sshtune-other-disk | head -c 48M > $W/b.img
  sha256sum < $W/b.img > $OUT/swap-$1.before
  LA=$(losetup --find --show $W/a.img); LB=$(losetup --find --show $W/b.img); export LA LB
  rm -f $W/disk; mknod $W/disk b $(stat -L -c '%t %T' $LA | sed 's/^/0x/; s/ / 0x/')
  echo "$2" > $W/swap-$1; rm -f $W/swap-$1.done $W/swap-$1.out
  [ $1 = node ] && D=$W/disk || D=$LA
  SWAP=$W/swap-$1 PATH=$W/bin:$PATH $BIN storage --quick --no-speed --layers raw --tests wr -q --device $D --destroy-data > /dev/null 2> $OUT/swap-$1.err
  echo $? > $OUT/swap-$1.rc
  cp $W/swap-$1.out $OUT/swap-$1.swap 2>/dev/null
  sha256sum < $W/b.img > $OUT/swap-$1.after
  losetup -d $LA $LB 2>/dev/null; losetup -j $W/b.img | cut -d: -f1 | xargs -r losetup -d
  leftovers swap-$1
}
swap_run node "mknod $W/new b \$(stat -L -c '%t %T' \$LB | sed 's/^/0x/; s/ / 0x/') && mv -f $W/new $W/disk"
swap_run loop "losetup -d \$LA && losetup \$LA $W/b.img"
"#;

/// The device refusals first (seconds, where the matrix takes minutes under emulation), then
/// the quick matrix end to end, then LUKS2 and ext4.
const MATRIX: &str = r#"
S=/tmp/safety; mkdir -p $S
truncate -s 32M $S/fs; mkfs.ext4 -q -F $S/fs
truncate -s 4M $S/bfs; mkfs.bfs $S/bfs > /dev/null 2>&1
truncate -s 32M $S/amb; mkfs.ext4 -q -F $S/amb
dd if=$S/bfs of=$S/amb bs=512 count=1 conv=notrunc 2> /dev/null
truncate -s 32M $S/pt
printf '\000\040\041\000\203\212\010\004\000\010\000\000\000\370\000\000' | dd of=$S/pt bs=1 seek=446 conv=notrunc 2> /dev/null
printf '\125\252' | dd of=$S/pt bs=1 seek=510 conv=notrunc 2> /dev/null
for k in fs amb pt; do
  L=$(losetup --find --show $S/$k)
  blkid -p $L > /dev/null 2>&1; echo $? > $OUT/safety-$k.before
  $BIN storage --quick --no-speed --no-matrix --device $L --destroy-data > /dev/null 2> $OUT/safety-$k.err
  echo $? > $OUT/safety-$k.rc
  blkid -p $L > /dev/null 2>&1; echo $? > $OUT/safety-$k.after
  [ $k = amb ] && { $BIN storage --quick --no-speed --no-matrix --device $L --destroy-data --force > /dev/null 2> $OUT/safety-force.err; echo $? > $OUT/safety-force.rc; }
  losetup -d $L
done
$BIN storage --quick --size 64M --fio-runtime 2 --format json --output $OUT/quick.json 2> $OUT/quick.err
echo $? > $OUT/quick.rc
leftovers quick
$BIN storage --quick --luks2 --no-speed --layers raw,ext4 --size 64M --fio-runtime 1 --format csv --output $OUT/luks.csv 2> $OUT/luks.err
echo $? > $OUT/luks.rc
leftovers luks
"#;

/// The baseline runs last, so a mapping exists within seconds of the start. SIGTERM lands
/// while fio (a child) runs, SIGINT and SIGKILL during the in-process sequential tests; the
/// next run removes what SIGKILL left.
const SIGNALS: &str = r#"
wait_for() {
  for i in $(seq 1 900); do
    cat /sys/block/dm-*/dm/name 2>/dev/null | grep -q sshtune- && { [ -z "${1:-}" ] || pgrep -x "$1" >/dev/null; } && return 0
    sleep 0.1
  done
  return 1
}
run() {
  $BIN storage --quick --no-speed "$@" > /dev/null &
}
run --size 64M --tests randrw-4k --fio-runtime 120 2> $OUT/TERM.err
P=$!; wait_for fio; echo $? > $OUT/TERM.mapped
kill -TERM $P; wait $P; echo $? > $OUT/TERM.rc
leftovers TERM
run --size 256M --tests wr,wr-s,wr-ds,rd 2> $OUT/INT.err
P=$!; wait_for; echo $? > $OUT/INT.mapped
sleep 0.5; kill -INT $P; wait $P; echo $? > $OUT/INT.rc
leftovers INT
run --size 256M --tests wr,wr-s,wr-ds,rd 2> /dev/null
P=$!; wait_for; echo $? > $OUT/KILL.mapped
kill -KILL $P; wait $P
leftovers KILL
$BIN storage --quick --no-matrix --no-speed --format json --output $OUT/stale.json 2> $OUT/stale.err
echo $? > $OUT/stale.rc
leftovers stale
"#;

/// One VM boot for the storage scripts and the pipeline's (`pipeline/vm.rs`): a boot under
/// emulation costs a minute of CI. Each writes into its own shared directory.
#[test]
fn vm_storage_matrix_signals_and_pipeline_onto_luks() {
    let _lock = support::exclusive();
    if !vm::require() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let pipe = tempfile::tempdir().unwrap();
    // Emulated CPUs are slow and CI machines busy: generous, but bounded.
    let vm = Vm {
        timeout: std::time::Duration::from_secs(1620),
        ..Vm::default()
    };
    let storage = script(out.path(), &format!("{SWAPS}{MATRIX}{SIGNALS}"));
    let pipeline = crate::pipeline::vm::script(pipe.path());
    let r = vm
        .rwdir(out.path())
        .rwdir(pipe.path())
        .run(&format!("{storage}\n{pipeline}"));
    let d = out.path();
    device_swaps(d);
    matrix_and_luks2(d, &r);
    signals_and_stale(d);
    crate::pipeline::vm::check(pipe.path(), &r.console());
}

fn device_swaps(d: &Path) {
    for case in ["node", "loop"] {
        let f = |x: &str| read(d, &format!("swap-{case}.{x}"));
        let (err, swap) = (f("err"), f("swap"));
        assert_eq!(
            f("before"),
            f("after"),
            "{case}: the other disk was written: {err}"
        );
        assert_eq!(f("left"), "", "{case}: left behind");
        // The swap ran: it either took (the node case always does) and the run stopped, or
        // the pin held the loop device and the run went on to the end on the checked disk.
        let took = swap.trim().ends_with("\n0") || swap.trim() == "0";
        if case == "node" || took {
            assert_ne!(
                f("rc").trim(),
                "0",
                "{case}: went on after the swap: {swap}"
            );
            assert!(
                err.contains("no longer the device that was checked"),
                "{case}: {err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{case}: {err}");
        } else {
            assert!(!swap.is_empty(), "{case}: the swap never ran");
            assert_eq!(f("rc").trim(), "0", "{case}: {err}\nswap: {swap}");
        }
    }
}

fn matrix_and_luks2(d: &Path, r: &VmOutput) {
    // Regression: blkid's exit 8 (ambivalent) counted as "no signature". Each kind of data is
    // refused without --force and left as it was; blkid's exit code before: 0 signature, 8
    // ambivalent.
    for (kind, blkid, why) in [
        ("fs", "0", "ext4 signature"),
        ("amb", "8", "ambivalent"),
        ("pt", "0", "dos partition table"),
    ] {
        let err = read(d, &format!("safety-{kind}.err"));
        assert_eq!(
            read(d, &format!("safety-{kind}.before")).trim(),
            blkid,
            "{kind}"
        );
        assert_ne!(
            read(d, &format!("safety-{kind}.rc")).trim(),
            "0",
            "{kind}: {err}"
        );
        assert!(
            err.contains(why) && err.contains("--force"),
            "{kind}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{kind}: {err}");
        assert_eq!(
            read(d, &format!("safety-{kind}.after")).trim(),
            blkid,
            "{kind}"
        );
    }
    assert_eq!(
        read(d, "safety-force.rc").trim(),
        "0",
        "{}",
        read(d, "safety-force.err")
    );
    assert_eq!(
        r.code,
        Some(0),
        "VM run failed:\n{}\n{}",
        r.console(),
        dump(d)
    );
    assert_eq!(read(d, "quick.rc").trim(), "0", "{}", read(d, "quick.err"));
    assert!(
        read(d, "quick.err").contains("ETA"),
        "progress with ETA on stderr"
    );
    let v: serde_json::Value = serde_json::from_str(&read(d, "quick.json")).unwrap();
    assert_eq!(v["schema"], "sshtune.storage/1");
    assert_eq!(v["capabilities"]["device_mapper"], true);
    assert_eq!(v["kernel_speed"]["source"], "kernel-cryptsetup");
    let m = &v["matrix"];
    assert_eq!(m["complete"], true);
    let cells = m["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "aes-xts-plain64 + baseline");
    assert_eq!(cells[0]["cipher"], "aes-xts-plain64");
    assert!(cells[1]["cipher"].is_null(), "baseline last");
    assert!(
        cells[0]["acc"].is_string(),
        "driver class from /proc/crypto"
    );
    for c in cells {
        assert!(c["error"].is_null(), "{c}");
        let results = c["results"].as_array().unwrap();
        assert_eq!(results.len(), 6);
        for t in results {
            assert!(t["error"].is_null(), "{t}");
            assert!(t["median_mib_s"].as_f64().unwrap() > 0.0, "{t}");
        }
        let fio = results.iter().find(|t| t["test"] == "randrw-4k").unwrap();
        assert_eq!(
            fio["fio"]["raw"]["job options"]["rwmixread"], "75",
            "raw fio kept"
        );
    }
    for t in cells[0]["results"].as_array().unwrap() {
        assert!(t["pct_of_baseline"].as_f64().unwrap() > 0.0, "{t}");
    }
    assert_eq!(read(d, "quick.left"), "", "quick run left something behind");

    assert_eq!(read(d, "luks.rc").trim(), "0", "{}", read(d, "luks.err"));
    let csv = read(d, "luks.csv");
    assert!(
        csv.lines()
            .any(|l| l.starts_with("ext4,aes-xts-plain64,256,4096")),
        "{csv}"
    );
    assert!(csv.lines().any(|l| l.starts_with("raw,none")), "{csv}");
    assert!(
        csv.lines().skip(1).all(|l| l.ends_with(',')),
        "no error column filled: {csv}"
    );
    assert_eq!(
        read(d, "luks.left"),
        "",
        "LUKS2/ext4 run left something behind"
    );
}

fn signals_and_stale(d: &Path) {
    for sig in ["TERM", "INT"] {
        assert_eq!(
            read(d, &format!("{sig}.mapped")).trim(),
            "0",
            "a mapping appeared"
        );
        assert_eq!(
            read(d, &format!("{sig}.rc")).trim(),
            "130",
            "SIG{sig}: {}",
            read(d, &format!("{sig}.err"))
        );
        assert!(read(d, &format!("{sig}.err")).contains("interrupted"));
        assert_eq!(
            read(d, &format!("{sig}.left")),
            "",
            "SIG{sig} left something behind"
        );
    }
    // SIGKILL cannot be caught: the mapping stays until the next run removes it.
    assert_eq!(read(d, "KILL.mapped").trim(), "0");
    assert!(
        read(d, "KILL.left").contains("sshtune-"),
        "{}",
        read(d, "KILL.left")
    );
    assert_eq!(read(d, "stale.rc").trim(), "0", "{}", read(d, "stale.err"));
    let v: serde_json::Value = serde_json::from_str(&read(d, "stale.json")).unwrap();
    let stale = v["stale_cleanup"].as_array().unwrap();
    assert!(
        stale
            .iter()
            .any(|s| s.as_str().unwrap().contains("removed stale mapping")),
        "{stale:?}"
    );
    assert!(
        stale
            .iter()
            .all(|s| s.as_str().unwrap().starts_with("removed")),
        "{stale:?}"
    );
    assert_eq!(
        read(d, "stale.left"),
        "",
        "stale cleanup left something behind"
    );
}
