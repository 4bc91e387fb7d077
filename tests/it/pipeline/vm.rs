//! The seed's full path inside a VM: rsync → ssh → embedded sshd → ext4 on LUKS (dm-crypt on
//! a loop device). The dm-crypt threads must show up in the CPU breakdown, the mapping must be
//! found from the mount, and the files must arrive byte for byte. The same boot runs the
//! `--luks` matrix (3 SSH ciphers × 3 scratch LUKS settings, the destination's own among
//! them): every cell's copy is checked byte for byte by the run, the model's error per cell
//! is printed, and nothing of the scratch volumes is left (mappings, loops, mounts, files) —
//! including a killed run's leftovers planted before (its directory, loop device, mapping and
//! the ext4 mounted from it), which the run must remove. Before it,
//! a loop file too big for a small destination is refused in one line, and a run stopped
//! with SIGTERM after its first cell exits 130 with nothing left and writes the partial
//! report of that cell, naming the cell it did not measure; a run given a `--max-time` from
//! this boot's speed ends within it (and a margin) and names what it left out. Last, a
//! board-like destination: the VM's sshd in a cgroup held to 30% of a core, 3des-cbc onto the
//! current setting (one small cell: under emulation and the quota it runs at a fifth of a
//! MiB/s), which must be bounded by ssh, the reason naming the server's quota. It costs about
//! four minutes of the boot (234 and 239 s in two runs), most of it in ssh logins and the
//! scratch volume's setup through the quota; the host test
//! `scenario::cpu::pipeline_onto_a_quota_held_server_is_bound_by_its_quota` checks the same
//! rule in seconds, and this one on a real dm-crypt destination.
//! It runs in the storage VM test's boot (`storage/vm.rs`), after the storage scripts.

use crate::support;

use serde_json::Value;
use std::path::Path;
use support::pipeline::make_source;

/// The shell script the VM runs (`sh W/run.sh`, written into `w`, the directory shared with
/// the VM); its exit status goes to `W/rc`. It runs in the same boot as the storage VM
/// test (`storage/vm.rs`): a boot under emulation costs a minute of CI.
pub fn script(w: &Path) -> String {
    make_source(&w.join("src"), 2 << 20);
    let bin = support::SSHTUNE;
    // Inside the VM root is a locked account: the embedded sshd must notice and use PAM, which
    // accepts the key (without PAM sshd refuses a locked account even with a key).
    // The script goes into the shared directory as a file (the harness passes a command as
    // one line). Stage ceilings are skipped: under TCG the SSH-only bench alone would take
    // minutes. `timeout` bounds the run so a hang cannot outlive the VM's budget. Writeback
    // starts at 256 KiB dirty, as it does during a transfer far larger than the page cache, so
    // the encryption happens while rsync runs and not after it.
    let script = format!(
        r#"set -e
modprobe loop
modprobe dm_crypt
echo 262144 > /proc/sys/vm/dirty_background_bytes
grep -q '^root:!' /etc/shadow || {{ echo "root is not locked in the VM: the PAM fallback goes untested" > {w}/stderr; exit 3; }}
head -c 32 /dev/urandom > /tmp/key
truncate -s 320M /tmp/luks.img
cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --cipher aes-xts-plain64 --key-size 256 --sector-size 512 --key-file /tmp/key /tmp/luks.img
cryptsetup open --key-file /tmp/key /tmp/luks.img sshtune-vm
mkfs.ext4 -q /dev/mapper/sshtune-vm
mkdir -p /tmp/mnt
mount /dev/mapper/sshtune-vm /tmp/mnt
mkdir -p /tmp/small
mount -t tmpfs -o size=48m tmpfs /tmp/small
if {bin} pipeline /tmp/small --size 8M --luks --no-ceilings --repeat 1 -q --ciphers aes128-ctr 2> {w}/small.err; then echo "accepted a loop file larger than half the free space" >> {w}/small.err; fi
ls -A /tmp/small > {w}/small.left
umount /tmp/small
tt=$(date +%s)
{bin} pipeline /tmp/mnt --size 2M --ciphers aes128-ctr,aes256-gcm@openssh.com --variants whole-file --repeat 1 --no-ceilings --luks --luks-settings xts256 --no-trim --format json --output {w}/term.json 2> {w}/term.err &
p=$!
i=0; while [ $i -lt 300 ] && ! grep -q "luks:xts256.aes128-ctr/whole-file#1: .*MiB/s" {w}/term.err; do sleep 1; i=$((i+1)); done
tt=$(( $(date +%s) - tt )); kill -TERM $p; t=0; wait $p || t=$?; echo $t > {w}/term.rc
dmsetup ls | grep '^sshtune-[0-9]' > {w}/term.left || true
losetup -a | grep -v '/tmp/luks.img' >> {w}/term.left || true
ls -d /tmp/mnt/sshtune-* >> {w}/term.left 2>/dev/null || true
grep -l -a -s '[C]ontrolMaster=yes' /proc/[0-9]*/cmdline >> {w}/term.left || true
d=$(( tt * 3 / 2 )); [ $d -ge 60 ] || d=60; echo $d > {w}/budget.d
t0=$(date +%s); brc=0
{bin} pipeline /tmp/mnt --size 1M --ciphers aes128-ctr,aes256-gcm@openssh.com --variants whole-file --repeat 2 --no-ceilings --luks --luks-settings xts256,xts256-4k,xts256-nowq --no-trim --max-time ${{d}}s --format json --output {w}/budget.json 2> {w}/budget.err || brc=$?; echo $brc > {w}/budget.rc
echo $(( $(date +%s) - t0 )) > {w}/budget.s
dmsetup ls | grep '^sshtune-[0-9]' > {w}/budget.left || true
ls -d /tmp/mnt/sshtune-* >> {w}/budget.left 2>/dev/null || true
K=/tmp/mnt/sshtune-storage-999999-killed
mkdir $K $K/mnt
truncate -s 8M $K/luks.img
KL=$(losetup -f --show $K/luks.img)
cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 256 --key-file /tmp/key $KL sshtune-999999-0
mkfs.ext4 -q /dev/mapper/sshtune-999999-0
mount /dev/mapper/sshtune-999999-0 $K/mnt
rc=0
timeout 800 {bin} pipeline /tmp/mnt --source {w}/src --ciphers aes128-ctr,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com --variants whole-file --repeat 1 --interval-ms 100 --no-ceilings --keep --luks --luks-settings current,xts256-4k,xts256-nowq --no-trim --format json --output {w}/report.json 2> {w}/stderr || rc=$?
if [ $rc = 0 ]; then diff -r {w}/src /tmp/mnt/sshtune-pipeline-*/data && echo same > {w}/compare; fi
dmsetup ls | grep '^sshtune-[0-9]' > {w}/left || true
losetup -a | grep -v '/tmp/luks.img' >> {w}/left || true
grep sshtune-storage /proc/mounts >> {w}/left || true
ls -d /tmp/mnt/sshtune-storage-* >> {w}/left 2>/dev/null || true
{board}umount /tmp/mnt
cryptsetup close sshtune-vm
exit $rc
"#,
        w = w.display(),
        board = board_script(w)
    );
    std::fs::write(w.join("run.sh"), script).unwrap();
    format!("sh {w}/run.sh; echo $? > {w}/rc", w = w.display())
}

/// The VM's own sshd, and every session it starts, in a cgroup held to 30% of a core, then
/// `pipeline --luks` through it (3des-cbc onto the current setting). It offers aes128-gcm too:
/// the run's helper and sampler sessions take the client's default cipher.
fn board_script(w: &Path) -> String {
    let bin = support::SSHTUNE;
    format!(
        r#"date +%s > {w}/board.t0
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/board
echo "30000 100000" > /sys/fs/cgroup/board/cpu.max
mkdir -p /tmp/board /run/sshd
ssh-keygen -q -t ed25519 -N "" -f /tmp/board/hk
ssh-keygen -q -t ed25519 -N "" -f /tmp/board/id
cp /tmp/board/id.pub /tmp/board/ak
printf '%s\n' "Port 2299" "ListenAddress 127.0.0.1" "HostKey /tmp/board/hk" "PidFile /tmp/board/pid" "AuthorizedKeysFile /tmp/board/ak" "PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM yes" "StrictModes no" "PermitRootLogin prohibit-password" "Ciphers 3des-cbc,aes128-gcm@openssh.com" "SetEnv SHLVL=1" > /tmp/board/cfg
sh -c 'echo $$ > /sys/fs/cgroup/board/cgroup.procs && exec /usr/sbin/sshd -f /tmp/board/cfg'
brc=0
timeout 600 {bin} pipeline root@127.0.0.1:/tmp/mnt -F /dev/null -p 2299 -i /tmp/board/id -o IdentitiesOnly=yes -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no --size 1M --ciphers 3des-cbc --variants whole-file --repeat 1 --interval-ms 100 --no-ceilings --luks --luks-settings current --no-trim --format json --output {w}/board.json 2> {w}/board.err || brc=$?
echo $brc > {w}/board.rc
date +%s > {w}/board.t1
kill $(cat /tmp/board/pid) || true
"#,
        w = w.display()
    )
}

/// `--max-time` of the budget run is 1.5 times the time the SIGTERM run took to its first
/// LUKS cell (the same steps: the stages alone, the first setting's volume and pass, a copy),
/// at least 60 s: this boot's speed, which varies by more than 2× between runs under
/// emulation, sets it. The budget run reaches its plan after about that time, which leaves
/// half of it, less the reserve, for the matrix: room for a setting or less, not for the
/// whole matrix (3 settings × 2 ciphers × 2 copies, about three quarters of that time in a
/// loaded boot where twice the time let all of it run).
const BUDGET_MARGIN_S: u64 = 30;

/// The run with `--max-time`: it ends within it (and the margin), names what it left out
/// and leaves nothing behind; the cells it ran are whole.
fn budget(w: &Path) {
    let err = std::fs::read_to_string(w.join("budget.err")).unwrap_or_default();
    let rc = std::fs::read_to_string(w.join("budget.rc")).unwrap_or_default();
    assert_eq!(rc.trim(), "0", "{err}");
    let secs = |f: &str| -> u64 {
        std::fs::read_to_string(w.join(f))
            .unwrap_or_default()
            .trim()
            .parse()
            .unwrap_or(u64::MAX)
    };
    let (max, took) = (secs("budget.d"), secs("budget.s"));
    eprintln!("--max-time {max}s: the run took {took} s");
    assert!(took <= max + BUDGET_MARGIN_S, "{took} s: {err}");
    let left = std::fs::read_to_string(w.join("budget.left")).unwrap_or_default();
    assert!(left.trim().is_empty(), "left behind: {left}");
    assert!(
        err.contains("LUKS matrix:") && err.contains("estimated"),
        "{err}"
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(w.join("budget.json")).unwrap())
        .unwrap_or_else(|e| panic!("no report ({e}): {err}"));
    let l = &r["luks"];
    eprintln!(
        "budget run: left out {}, timing {}",
        l["left_out"], l["timing"]
    );
    let out = l["left_out"].as_array().cloned().unwrap_or_default();
    assert!(
        out.len() >= 2 && out[0].as_str().unwrap_or("").contains("--max-time"),
        "nothing said left out: {l}"
    );
    assert!(l["timing"]["estimate_s"].is_number(), "{l}");
    let cells = l["cells"].as_array().unwrap();
    assert!(cells.len() < 6, "the whole matrix ran: {cells:?}");
    // What ran is what the plan kept: every cell of a kept setting, each with its copies.
    let ran: Vec<&str> = cells.iter().filter_map(|c| c["setting"].as_str()).collect();
    for st in &ran {
        assert!(
            !out.iter()
                .any(|o| o.as_str() == Some(&format!("setting {st} (every cipher)"))),
            "{st} both ran and was left out: {l}"
        );
    }
    for c in cells {
        assert!(c["row"]["error"].is_null(), "{c}");
    }
    let table = std::process::Command::new(support::SSHTUNE)
        .arg("report")
        .arg(w.join("budget.json"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&table.stdout).contains("LEFT OUT"));
}

/// The checks on what the script left in `w`; `console` is the VM's, for failure messages.
pub fn check(w: &Path, console: &str) {
    let bin = support::SSHTUNE;
    let stderr = std::fs::read_to_string(w.join("stderr")).unwrap_or_default();
    let rc = std::fs::read_to_string(w.join("rc")).unwrap_or_default();
    assert_eq!(rc.trim(), "0", "VM run failed: {stderr}\n{console}");
    // 8 MiB of data fits in a 48 MiB tmpfs, but its loop file (8 × 1.25 + 64 MiB) is more
    // than half: refused in one line before anything is measured, nothing left.
    let small = std::fs::read_to_string(w.join("small.err")).unwrap_or_default();
    assert!(
        small.trim().lines().count() == 1
            && small.contains("--luks needs")
            && small.contains("loop file"),
        "{small}"
    );
    let left = std::fs::read_to_string(w.join("small.left")).unwrap_or_default();
    assert!(
        left.trim().is_empty(),
        "left in the small destination: {left}"
    );
    interrupted(w);
    budget(w);
    assert_eq!(
        std::fs::read_to_string(w.join("compare"))
            .unwrap_or_default()
            .trim(),
        "same",
        "destination differs from the source"
    );
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(w.join("report.json")).unwrap()).unwrap();
    // The human table, for docs/pipeline.md.
    let table = std::process::Command::new(bin)
        .arg("report")
        .arg(w.join("report.json"))
        .output()
        .unwrap();
    eprintln!("{}", String::from_utf8_lossy(&table.stdout));
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
    // With a 2 MiB copy one run may end before writeback encrypts anything; over every run of
    // the report (this one and the matrix's nine) the dm-crypt threads must have shown up.
    let dm_cpu = |row: &Value| {
        row["cpu"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["side"] == "server")
            .filter(|c| c["group"] == "kcryptd" || c["group"] == "dmcrypt_write")
            .filter_map(|c| c["pct"].as_f64())
            .sum::<f64>()
    };
    let all_rows = r["rows"].as_array().unwrap().iter().chain(
        r["luks"]["cells"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| &c["row"]),
    );
    let dm_total: f64 = all_rows.map(dm_cpu).sum();
    assert!(
        dm_total > 0.0,
        "no dm-crypt thread CPU in any run; first: {}",
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

    // The LUKS matrix.
    eprintln!("matrix timing: {}", r["luks"]["timing"]);
    let left = std::fs::read_to_string(w.join("left")).unwrap_or_default();
    assert!(left.trim().is_empty(), "left behind: {left}");
    let l = &r["luks"];
    let stale = l["stale_removed"].as_array().unwrap();
    for what in [
        "unmounted /tmp/mnt/sshtune-storage-999999-killed/mnt",
        "closed mapping sshtune-999999-0",
        "removed /tmp/mnt/sshtune-storage-999999-killed",
    ] {
        assert!(
            stale.iter().any(|s| s.as_str().unwrap().contains(what)),
            "the killed run's leftovers were not removed ({what}): {stale:?}"
        );
    }
    let settings = l["settings"].as_array().unwrap();
    assert_eq!(settings.len(), 3, "{settings:?}");
    assert_eq!(settings[0]["name"], "current");
    assert_eq!(settings[0]["cipher"], "aes-xts-plain64");
    for s in settings {
        assert!(s["error"].is_null() && s["trimmed"].is_null(), "{s}");
        assert!(s["dm_crypt_mib_s"].as_f64().unwrap_or(0.0) > 0.0, "{s}");
    }
    let cells = l["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 9, "3 ciphers × 3 settings");
    for c in cells {
        let row = &c["row"];
        // An error here includes the run's own byte-for-byte check of the copy.
        assert!(row["error"].is_null(), "{}: {row}", c["setting"]);
        assert!(row["median_mib_s"].as_f64().unwrap_or(0.0) > 0.0, "{row}");
        assert!(!c["bound_by"].as_str().unwrap().is_empty(), "{c}");
        let dm = row["cpu"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["side"] == "server")
            .any(|s| s["group"] == "kcryptd" || s["group"] == "dmcrypt_write");
        assert!(dm, "no dm-crypt group in the cell's CPU split: {row}");
        eprintln!(
            "model {:>14} {:>32}: measured {:>6} predicted {:>6} error {:>6}% bound {}",
            c["setting"].as_str().unwrap(),
            row["cipher"].as_str().unwrap(),
            row["median_mib_s"],
            c["predicted_mib_s"],
            c["error_pct"],
            c["bound_by"].as_str().unwrap()
        );
    }
    board(w);
    // The drop-in is `sshtune config`'s, policy-checked against the server's release as
    // the pipeline's probe saw it, with the recommended cipher first.
    let rec = &l["recommendation"];
    let dropin = rec["sshd_dropin"].as_str().unwrap_or_default();
    let line = dropin
        .lines()
        .find(|l| l.starts_with("Ciphers "))
        .unwrap_or_default();
    assert!(dropin.contains("policy secure"), "{rec}");
    assert_eq!(
        line.trim_start_matches("Ciphers ").split(',').next(),
        rec["cipher"].as_str(),
        "{rec}"
    );
}

/// The board-like destination: the VM's own sshd, and every session it starts, in a cgroup
/// held to 30% of a core. The server's CPU split carries the quota, and the 3des-cbc cell is
/// bounded by ssh, the reason naming that quota.
fn board(w: &Path) {
    let err = std::fs::read_to_string(w.join("board.err")).unwrap_or_default();
    let rc = std::fs::read_to_string(w.join("board.rc")).unwrap_or_default();
    assert_eq!(rc.trim(), "0", "the board run failed: {err}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(w.join("board.json")).unwrap()).unwrap();
    let t = |n: &str| -> u64 {
        let text = std::fs::read_to_string(w.join(n)).unwrap_or_default();
        text.trim().parse().unwrap_or(0)
    };
    eprintln!(
        "board run: {} s in the VM",
        t("board.t1").saturating_sub(t("board.t0"))
    );
    let cells = r["luks"]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "3des-cbc × the current setting");
    for c in cells {
        let row = &c["row"];
        assert!(row["error"].is_null(), "{row}");
        let server = |g: &str| support::pipeline::cpu_pct(row, "server", g);
        eprintln!(
            "board {:>24}: measured {:>6} MiB/s, sshd {:?}%, rsync-receiver {:?}%, kcryptd {:?}%, throttled {:?}%; bound {}: {}",
            row["cipher"].as_str().unwrap(),
            row["median_mib_s"],
            server("sshd"),
            server("rsync-receiver"),
            server("kcryptd"),
            server("cpu-throttled"),
            c["bound_by"].as_str().unwrap(),
            c["reason"].as_str().unwrap()
        );
        assert_eq!(server("cpu-quota"), Some(30.0), "{row}");
        assert_eq!(c["bound_by"], "ssh", "{c}");
        assert!(c["reason"].as_str().unwrap().contains("CPU quota"), "{c}");
    }
}

/// The run stopped with SIGTERM after its first cell: exit 130, nothing of it left (its ssh
/// control master included), and the report of the cell it measured, marked partial, naming
/// the cell it did not.
fn interrupted(w: &Path) {
    let err = std::fs::read_to_string(w.join("term.err")).unwrap_or_default();
    let rc = std::fs::read_to_string(w.join("term.rc")).unwrap_or_default();
    assert_eq!(rc.trim(), "130", "{err}");
    let left = std::fs::read_to_string(w.join("term.left")).unwrap_or_default();
    assert!(left.trim().is_empty(), "left after SIGTERM: {left}\n{err}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(w.join("term.json")).unwrap_or_default())
            .unwrap_or_else(|e| panic!("no partial report ({e}): {err}"));
    let l = &r["luks"];
    let partial = l["partial"].as_str().unwrap_or_default();
    assert!(
        partial.contains("xts256: aes256-gcm@openssh.com"),
        "{partial}\n{err}"
    );
    let cells = l["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "{cells:#?}");
    assert_eq!(cells[0]["row"]["cipher"], "aes128-ctr");
    assert!(cells[0]["row"]["median_mib_s"].as_f64().unwrap() > 0.0);
    // The table of the same file says so too.
    let table = std::process::Command::new(support::SSHTUNE)
        .arg("report")
        .arg(w.join("term.json"))
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("PARTIAL"), "{table}");
}
