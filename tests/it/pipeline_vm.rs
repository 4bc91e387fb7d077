//! The seed's full path inside a VM: rsync → ssh → embedded sshd → ext4 on LUKS (dm-crypt on
//! a loop device). The dm-crypt threads must show up in the CPU breakdown, the mapping must be
//! found from the mount, and the files must arrive byte for byte.

use crate::support;

use serde_json::Value;
use std::time::Duration;
use support::pipeline::make_source;
use support::vm::{self, Vm};

#[test]
fn rsync_onto_luks_shows_dm_crypt_threads_and_copies_exactly() {
    let _lock = support::exclusive();
    if !vm::require() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    make_source(&w.join("src"), 16 << 20);
    let bin = env!("CARGO_BIN_EXE_sshtune");
    // Inside the VM root is a locked account: the embedded sshd must notice and use PAM, which
    // accepts the key (without PAM sshd refuses a locked account even with a key).
    // The script goes into the shared directory as a file (the harness passes a command as
    // one line). Stage ceilings are skipped: under TCG the SSH-only bench alone would take
    // minutes. `timeout` bounds the run so a hang cannot outlive the VM's budget. Writeback
    // starts at 1 MiB dirty, as it does during a transfer far larger than the page cache, so
    // the encryption happens while rsync runs and not after it.
    let script = format!(
        r#"set -e
modprobe loop
modprobe dm_crypt
echo 1048576 > /proc/sys/vm/dirty_background_bytes
grep -q '^root:!' /etc/shadow || {{ echo "root is not locked in the VM: the PAM fallback goes untested" > {w}/stderr; exit 3; }}
head -c 32 /dev/urandom > /tmp/key
truncate -s 128M /tmp/luks.img
cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --cipher aes-xts-plain64 --key-size 256 --sector-size 512 --key-file /tmp/key /tmp/luks.img
cryptsetup open --key-file /tmp/key /tmp/luks.img sshtune-vm
mkfs.ext4 -q /dev/mapper/sshtune-vm
mkdir -p /tmp/mnt
mount /dev/mapper/sshtune-vm /tmp/mnt
rc=0
timeout 300 {bin} pipeline /tmp/mnt --source {w}/src --ciphers aes128-ctr --variants whole-file --repeat 1 --interval-ms 100 --no-ceilings --keep --format json --output {w}/report.json 2> {w}/stderr || rc=$?
if [ $rc = 0 ]; then diff -r {w}/src /tmp/mnt/sshtune-pipeline-*/data && echo same > {w}/compare; fi
umount /tmp/mnt
cryptsetup close sshtune-vm
exit $rc
"#,
        w = w.display()
    );
    std::fs::write(w.join("run.sh"), script).unwrap();
    let out = Vm {
        timeout: Duration::from_secs(420),
        ..Vm::default()
    }
    .rwdir(w)
    .run(&format!("sh {}/run.sh", w.display()));
    let stderr = std::fs::read_to_string(w.join("stderr")).unwrap_or_default();
    assert_eq!(
        out.code,
        Some(0),
        "VM run failed: {stderr}\n{}",
        out.console()
    );
    assert_eq!(
        std::fs::read_to_string(w.join("compare"))
            .unwrap_or_default()
            .trim(),
        "same",
        "destination differs from the source"
    );
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(w.join("report.json")).unwrap()).unwrap();
    let st = &r["storage"];
    assert_eq!(st["dm_name"], "sshtune-vm", "{st}");
    assert_eq!(st["crypt_cipher"], "aes-xts-plain64", "{st}");
    let row = &r["rows"][0];
    assert!(row["error"].is_null(), "{row}");
    let server = |g: &str| {
        row["cpu"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["side"] == "server" && c["group"] == g)
            .filter_map(|c| c["pct"].as_f64())
            .sum::<f64>()
    };
    assert!(
        server("kcryptd") + server("dmcrypt_write") > 0.0,
        "no dm-crypt thread CPU in {}",
        row["cpu"]
    );
    assert!(
        server("sshd") > 0.0 && server("rsync-receiver") > 0.0,
        "{}",
        row["cpu"]
    );
    // The series saw the mapping's writes.
    assert!(r["series"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["side"] == "server" && t["dm_write_bytes_s"].as_f64().unwrap_or(0.0) > 0.0));
    eprintln!("{}", serde_json::to_string_pretty(&r["verdict"]).unwrap());
}
