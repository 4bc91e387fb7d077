//! The pipeline's remote scripts: small POSIX shell programs that run through ssh, and
//! parsers for what they print (their `SSHTUNE-*` lines are `remote::Line`s). Every script takes its paths as positional arguments
//! (`sh -c 'script' sshtune ARG...`) so no user path is ever spliced into shell code.

use super::rsync::quote;
use crate::remote::line::keyword;
use crate::remote::{Line, MACHINE_FACTS};

/// Checks the destination and reports what backs it. Arguments: DIR, RUN_DIR, RSYNC.
/// Prints `SSHTUNE-ERR <why>` and stops at the first problem, `SSHTUNE-INFO k=v` facts, and
/// `SSHTUNE-OK` when the run directory was created. Whether the directory is writable is
/// tried with a file `mktemp` creates (`O_EXCL`, a random name): the session may be root's,
/// and a guessable name in a directory a user can write could be that user's symlink to
/// any file, which `: > name` would truncate.
const PREFLIGHT: &str = concat!(
    r#"err(){ echo ""#,
    keyword!(ERR),
    r#" $*"; exit 0; }; fact(){ echo ""#,
    keyword!(INFO),
    r#" $1"; };
d=$1; run=$2; rs=$3; case $d in -*) d="./$d";; esac;
[ -d "$d" ] || err missing;
if t=$(mktemp "$d/.sshtune-probe-XXXXXXXXXX" 2>&1); then rm -f -- "$t"; else
 err notwritable "$(printf "%s" "$t" | tail -n1)"; fi;
command -v "$rs" >/dev/null 2>&1 || err norsync;
fact "rsync=$("$rs" --version 2>/dev/null | head -n1)";
fact "cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)";
set -- $(df -Pk "$d" 2>/dev/null | tail -n1);
dev=$1; avail=$4; mnt=$6;
fact "device=$dev"; fact "avail_k=$avail";
while read -r a b c r; do [ "$b" = "$mnt" ] && ft=$c; done < /proc/mounts;
fact "fstype=$ft";
b=$(readlink -f "$dev" 2>/dev/null); b=${b##*/}; i=0;
while [ $i -lt 5 ]; do case "$b" in dm-*) ;; *) break;; esac;
 u=$(cat /sys/block/$b/dm/uuid 2>/dev/null);
 case "$u" in CRYPT-*)
  n=$(cat /sys/block/$b/dm/name 2>/dev/null);
  fact "dm=$b"; fact "dmname=$n";
  fact "sector=$(cat /sys/block/$b/queue/logical_block_size 2>/dev/null)";
  fact "dmtable=$(dmsetup table "$n" 2>/dev/null | head -n1)"; break;;
 esac;
 nb=; for s in /sys/block/$b/slaves/*; do nb=${s##*/}; break; done; b=$nb; i=$((i+1)); done;
mkdir -- "$run" 2>/dev/null || err mkdir;
echo "#,
    keyword!(OK)
);

/// Removes the run directory. Argument: RUN_DIR.
const REMOVE: &str = concat!(r#"rm -rf -- "$1" && echo "#, keyword!(OK));

/// Empties one subdirectory of the run directory. Argument: PATH.
const RESET: &str = concat!(r#"rm -rf -- "$1" && mkdir -- "$1" && echo "#, keyword!(OK));

/// Writes the destination filesystem's dirty data out and times it: a copy is not on the
/// disk (and dm-crypt has not encrypted it) until writeback is done, and a dataset smaller
/// than the page cache would otherwise be timed into memory. `sync -f` flushes that filesystem
/// only; an old `sync` without `-f` flushes all of them. The path arrives as octal escapes
/// (`printf %b`) so the remote shell's command line does not name the run directory: the
/// sampler charges the sshd above any process that does to the pipeline. Argument: PATH.
/// Prints `SSHTUNE-SYNC <uptime before> <uptime after>`.
const FLUSH: &str = concat!(
    r#"d=$(printf "%b" "$1"); read a r < /proc/uptime;
sync -f "$d" 2>/dev/null || sync; read b r < /proc/uptime; echo ""#,
    keyword!(SYNC),
    r#" $a $b""#
);

/// A short sequential write of zeros to a temp file on the destination filesystem, direct I/O
/// when the filesystem allows it, then fsync. Arguments: FILE, MiB. Prints
/// `SSHTUNE-DISK rc=N mode=M`, then dd's last line.
const DISK: &str = concat!(
    r#"f=$1; n=$2; m=direct;
o=$(dd if=/dev/zero of="$f" bs=1M count=$n oflag=direct conv=fsync 2>&1) || {
 m=buffered; o=$(dd if=/dev/zero of="$f" bs=1M count=$n conv=fsync 2>&1); };
r=$?; rm -f -- "$f"; echo ""#,
    keyword!(DISK),
    r#" rc=$r mode=$m"; echo "$o" | tail -n1"#
);

/// The /proc reader loop: one block per tick, `@T uptime`, the aggregate cpu line, dm write
/// counters, every process's stat line, `@R`, `@Q`, `@E`. The client paces it: a tick is a
/// line on the loop's stdin, and the loop ends when its stdin closes or its output does (the
/// next echo fails). `@R` lists the rsync processes whose command line names the run
/// directory (bare pids), so the receiving rsync and its sshd can be told from other
/// sessions. Argument: the run-directory token.
///
/// A tick starts no program: every file is read with the shell's own `read` (dash, bash and
/// busybox sh all drop a command line's NUL separators, so the token is found in the
/// arguments run together; `read` fails at the end of a command line, which has no newline,
/// but keeps what it read), and the pause is the client's, not a `sleep`. The loop's load
/// is load on the machine it measures, and on an emulated board starting a program costs
/// more than reading a file. Lines are written with `printf %s`, never `echo`, which in dash
/// expands backslashes a process could put in its name. Every path read is the kernel's:
/// /proc, /sys/block, and the cgroup files found at the start.
///
/// `@Q QUOTA PERIOD PERIODS THROTTLED` lines are the CPU quotas of the loop's own cgroup and
/// of every group above it (v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`, v2 `cpu.max`; `-1` or
/// `max` without one) with their `cpu.stat` counts of enforcement periods and throttled
/// ones: a board-like destination limited to a fifth of a core is saturated at a fifth, and
/// the verdict must know that; a group throttled in most periods wanted more. The groups are
/// found once (paths without spaces, as cgroup managers name them). The loop's session and
/// the rsync receiver's are children of one sshd, so they share its group (or, under
/// systemd, the user's slice above their scopes, where such a limit is set). On loopback
/// the client's processes match the run's token too, so the receiver's own group could not
/// be picked by its command line.
///
/// `@SELF` names the loop's shell, its parent and grandparent (the session's), and the
/// clock tick; it is found once, before the first tick.
const SAMPLER: &str = r#"k=$1; g=; read -r l < /proc/$PPID/stat && { set -- ${l##*) }; g=$2; };
printf "%s\n" "@SELF $$ $PPID $g $(getconf CLK_TCK 2>/dev/null || echo 100)";
QD=$(while IFS=: read -r n c g; do case ",$c," in *,cpu,*) r=/sys/fs/cgroup/cpu;; ,,) r=/sys/fs/cgroup;; *) continue;; esac;
 while :; do { [ -r "$r$g/cpu.cfs_quota_us" ] || [ -r "$r$g/cpu.max" ]; } && echo "$r$g"; [ -z "$g" ] || [ "$g" = / ] && break; g=${g%/*}; done;
 done < /proc/$$/cgroup 2>/dev/null);
while read -r t; do read -r u x < /proc/uptime; printf "%s\n" "@T $u" || exit 0; read -r c < /proc/stat; printf "%s\n" "$c";
 for s in /sys/block/dm-*/stat; do [ -r "$s" ] && { x=${s%/stat}; read -r v < "$s"; printf "%s\n" "@D ${x##*/} $v"; }; done;
 R=; for f in /proc/[0-9]*/stat; do IFS= read -r l < "$f" || continue; printf "%s\n" "$l";
  case $l in *" (rsync) "*) p=${f#/proc/}; p=${p%/stat}; m=; IFS= read -r m < "/proc/$p/cmdline"; case $m in *"$k"*) R="$R $p";; esac;; esac; done 2>/dev/null;
 printf "%s\n" "@R$R";
 for d in $QD; do a=; b=; np=; nt=; if [ -r "$d/cpu.max" ]; then read -r a b < "$d/cpu.max"; else read -r a < "$d/cpu.cfs_quota_us"; read -r b < "$d/cpu.cfs_period_us"; fi;
 while read -r x y; do case $x in nr_periods) np=$y;; nr_throttled) nt=$y;; esac; done < "$d/cpu.stat"; printf "%s\n" "@Q $a $b $np $nt"; done 2>/dev/null;
 printf "%s\n" "@E" || exit 0; done"#;

pub(crate) fn wrap(script: &str, args: &[&str]) -> String {
    debug_assert!(!script.contains('\''));
    let mut s = format!("sh -c '{}' sshtune", script.replace('\n', " "));
    for a in args {
        s.push(' ');
        s.push_str(&quote(a));
    }
    s
}

/// The destination check, after the machine's facts (`remote::MACHINE_FACTS`).
pub fn preflight(dir: &str, run_dir: &str, rsync: &str) -> String {
    let script = format!("{MACHINE_FACTS}{PREFLIGHT}");
    wrap(&script, &[dir, run_dir, rsync])
}

pub fn remove(run_dir: &str) -> String {
    wrap(REMOVE, &[run_dir])
}

pub fn reset(path: &str) -> String {
    wrap(RESET, &[path])
}

pub fn flush(path: &str) -> String {
    let octal: String = path.bytes().map(|b| format!("\\0{b:03o}")).collect();
    wrap(FLUSH, &[&octal])
}

/// Seconds the flush took, from its `SSHTUNE-SYNC` line (`/proc/uptime`, 10 ms steps).
pub fn parse_flush(out: &str) -> Option<f64> {
    out.lines().find_map(|l| match Line::parse(l) {
        Ok(Line::Sync { before, after }) => Some((after - before).max(0.0)),
        _ => None,
    })
}

pub fn disk(file: &str, mib: u64) -> String {
    wrap(DISK, &[file, &mib.to_string()])
}

/// The remote /proc loop; one line on its stdin asks for one block (`recording.rs` paces it).
pub fn sampler(token: &str) -> String {
    wrap(SAMPLER, &[token])
}

/// `… bytes (…) copied, 0.52 s, 258 MB/s` (GNU dd) → (bytes, seconds).
pub fn parse_dd(line: &str) -> Option<(u64, f64)> {
    let bytes = line.split_whitespace().next()?.parse().ok()?;
    let after = line.split("copied,").nth(1)?;
    let secs = after.split_whitespace().next()?.parse().ok()?;
    Some((bytes, secs))
}

/// The key size in bits from a dm-crypt table's key field: `:64:logon:…` (a keyring key of
/// 64 bytes) or the key itself in hex (zeros without `--showkeys`).
pub fn crypt_key_bits(table: &str) -> Option<u32> {
    let w: Vec<&str> = table.split_whitespace().collect();
    let at = w.iter().position(|x| *x == "crypt")?;
    let key = w.get(at + 2)?;
    match key.strip_prefix(':') {
        Some(rest) => rest.split(':').next()?.parse::<u32>().ok().map(|b| b * 8),
        None => (key.len() > 1).then_some(key.len() as u32 * 4),
    }
}

/// `crypt aes-xts-plain64 :64:logon:… 0 7:0 4096 3 allow_discards sector_size:4096 …`
/// → (cipher, sector size, optional flags).
pub fn parse_crypt_table(table: &str) -> Option<(String, Option<u32>, Vec<String>)> {
    let w: Vec<&str> = table.split_whitespace().collect();
    let at = w.iter().position(|x| *x == "crypt")?;
    let cipher = w.get(at + 1)?.to_string();
    let opts = w.get(at + 6..).unwrap_or_default();
    let mut sector = None;
    let mut flags = Vec::new();
    for o in opts.iter().skip(1) {
        if let Some(v) = o.strip_prefix("sector_size:") {
            sector = v.parse().ok();
        } else if !o.contains(':') {
            flags.push(o.to_string());
        }
    }
    Some((cipher, sector, flags))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_keep_arguments_out_of_the_code() {
        let s = preflight("/data/it's here", "/data/run", "rsync");
        assert!(s.starts_with("sh -c '"));
        assert!(s.ends_with(r"'/data/it'\''s here' /data/run rsync"), "{s}");
        for s in [remove("/x"), reset("/x"), disk("/x", 4), sampler("t")] {
            assert!(s.starts_with("sh -c '"), "{s}");
        }
    }

    /// The sampler loop in every shell at hand (dash, busybox sh, bash): a block per line on
    /// its stdin, a whole block parses, an rsync whose command line names the token is
    /// marked and one that does not is not, and a process named to forge a line cannot. The
    /// loop runs with an empty PATH, so a block that needed a program would come out short.
    #[test]
    fn sampler_loop_reads_proc_and_marks_the_runs_processes() {
        let dir = tempfile::tempdir().unwrap();
        // A process whose name is `rsync` (a script's name becomes its process's).
        let rsync = dir.path().join("rsync");
        std::fs::write(&rsync, "#!/bin/sh\nread x\n").unwrap();
        std::fs::set_permissions(&rsync, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let token = format!("sshtune-sampler-test-{}", std::process::id());
        let spawn = |args: &[&str]| {
            std::process::Command::new(&rsync)
                .args(args)
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let mut ours = spawn(&["--server", &format!("/x/{token}/d")]);
        let mut other = spawn(&["--server", "/x/another-run/d"]);
        // A name that would be two lines, the second a forged mark, if `echo` expanded it.
        let mut forged = std::process::Command::new("sh")
            .args(["-c", r"printf '\\n@R 1' > /proc/self/comm; read x"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let shells = [&["dash"][..], &["busybox", "sh"], &["bash"], &["sh"]];
        let mut ran = 0;
        for shell in shells.into_iter().filter(|s| on_path(s[0])) {
            ran += 1;
            let blocks = sample(shell, &token, 3);
            assert!(blocks[0].starts_with("@SELF "), "{shell:?}: {}", blocks[0]);
            for b in &blocks[1..] {
                let snap = crate::pipeline::sampler::parse_block(b);
                assert!(snap.uptime > 0.0, "{shell:?}: {b}");
                assert!(snap.cpu.len() >= 4, "{shell:?}: {b}");
                assert!(snap.procs.contains_key(&ours.id()), "{shell:?}: {b}");
                assert!(snap.procs.contains_key(&forged.id()), "{shell:?}: {b}");
                assert_eq!(snap.marked, [ours.id()], "{shell:?}: {b}");
            }
        }
        for c in [&mut ours, &mut other, &mut forged] {
            let _ = c.kill();
            let _ = c.wait();
        }
        assert!(ran > 0, "no shell to run the loop in");
    }

    fn on_path(program: &str) -> bool {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
    }

    /// Runs the loop in `shell` with an empty PATH for `n` blocks, the first after `@SELF`
    /// and one more for each line written to its stdin; it must end once stdin closes.
    fn sample(shell: &[&str], token: &str, n: usize) -> Vec<String> {
        use std::io::{BufRead, Write};
        use std::process::{Command, Stdio};
        let program = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|d| d.join(shell[0]))
            .find(|p| p.is_file())
            .unwrap();
        let mut child = Command::new(program)
            .args(&shell[1..])
            .arg("-c")
            .arg(SAMPLER.replace('\n', " "))
            .args(["sshtune", token])
            .env_clear()
            .env("PATH", "/nonexistent")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut blocks = Vec::new();
        let mut block = String::new();
        while blocks.len() < n {
            stdin.write_all(b"\n").unwrap();
            for line in out.by_ref() {
                let line = line.unwrap();
                if line == "@E" {
                    break;
                }
                block.push_str(&line);
                block.push('\n');
            }
            blocks.push(std::mem::take(&mut block));
        }
        drop(stdin);
        let status = child.wait().unwrap();
        assert!(status.success(), "{shell:?}: {status}");
        blocks
    }

    /// What `sh -c cmd` prints.
    fn sh(cmd: &str) -> String {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The flush decodes its octal path back in a real shell, quotes, spaces and UTF-8 included,
    /// and its command line does not carry the path's text.
    #[test]
    fn flush_names_no_path_and_reaches_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run 'x' é");
        std::fs::create_dir(&path).unwrap();
        // The same script with the sync swapped for a check that the decoded path exists.
        let run = |p: &str| {
            let cmd = flush(p);
            assert!(
                !cmd.contains("run") && !cmd.contains("nonexistent"),
                "{cmd}"
            );
            let probe = cmd.replace(
                r#"sync -f "$d" 2>/dev/null || sync"#,
                r#"test -d "$d" || echo MISSING"#,
            );
            assert_ne!(probe, cmd);
            sh(&probe)
        };
        let found = run(path.to_str().unwrap());
        assert!(
            !found.contains("MISSING") && parse_flush(&found).is_some(),
            "{found}"
        );
        assert!(run("/nonexistent/x").contains("MISSING"));
        assert_eq!(parse_flush("x\nSSHTUNE-SYNC 10.25 10.75\n"), Some(0.5));
        assert_eq!(parse_flush("SSHTUNE-SYNC 10.25"), None);
    }

    /// The destination check in a real shell, in a directory where the name a `$$`-based probe
    /// would use is a planted symlink to a file outside: the file keeps its bytes, the link
    /// stays, and the check still creates the run directory. The shell learns its own pid
    /// and then becomes the check (`exec` keeps the pid), so the link is at the very name.
    #[test]
    fn the_writable_check_never_follows_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("dest");
        std::fs::create_dir(&dest).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let run = dest.join("run");
        let check = preflight(dest.to_str().unwrap(), run.to_str().unwrap(), "true");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                r#"ln -s "$1" "$2/.sshtune-probe-$$" && exec {check}"#
            ))
            .args(["sh", victim.to_str().unwrap(), dest.to_str().unwrap()])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "{said}");
        assert!(crate::remote::said_ok(&said) && run.is_dir(), "{said}");
        let left: Vec<_> = std::fs::read_dir(&dest)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "run")
            .collect();
        assert_eq!(left.len(), 1, "only the planted link is left: {left:?}");
        assert!(left[0].starts_with(".sshtune-probe-"), "{left:?}");
    }

    /// The disk write and a refused check in a real shell: their lines read back as the
    /// protocol's.
    #[test]
    fn disk_and_refusal_lines_parse() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        let out = sh(&disk(file.to_str().unwrap(), 1));
        let first = out.lines().next().unwrap_or_default();
        let Ok(Line::Disk(f)) = Line::parse(first) else {
            panic!("{out}");
        };
        assert_eq!(f.get("rc"), Some("0"), "{out}");
        assert!(
            matches!(f.get("mode"), Some("direct" | "buffered")),
            "{out}"
        );
        assert!(!file.exists());
        let gone = dir.path().join("gone");
        let out = sh(&preflight(gone.to_str().unwrap(), "/x", "true"));
        assert_eq!(
            crate::remote::refusal(&out).as_deref(),
            Some("missing"),
            "{out}"
        );
        assert!(!crate::remote::said_ok(&out), "{out}");
    }

    #[test]
    fn parses_dd_and_dm_tables() {
        assert_eq!(
            parse_dd("134217728 bytes (134 MB, 128 MiB) copied, 0.5 s, 268 MB/s"),
            Some((134217728, 0.5))
        );
        let (c, s, f) = parse_crypt_table(
            "0 2097152 crypt aes-xts-plain64 :64:logon:cryptsetup:x-d0 0 7:0 32768 3 allow_discards no_read_workqueue sector_size:4096",
        )
        .unwrap();
        assert_eq!((c.as_str(), s), ("aes-xts-plain64", Some(4096)));
        assert_eq!(f, ["allow_discards", "no_read_workqueue"]);
        let (_, s, f) = parse_crypt_table("0 8 crypt aes-cbc-essiv:sha256 0000 0 7:1 0").unwrap();
        assert_eq!((s, f.len()), (None, 0));
        assert_eq!(
            crypt_key_bits("0 8 crypt aes-xts-plain64 :64:logon:cryptsetup:x-d0 0 7:0 32768"),
            Some(512)
        );
        assert_eq!(
            crypt_key_bits(&format!(
                "0 8 crypt aes-xts-plain64 {} 0 7:0 0",
                "0".repeat(64)
            )),
            Some(256)
        );
        assert_eq!(crypt_key_bits("0 8 linear 7:0 0"), None);
    }
}
