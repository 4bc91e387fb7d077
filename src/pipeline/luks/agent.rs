//! The scratch volumes on the destination, made and removed by a helper that runs there: one
//! POSIX-sh program in one session of the control connection (`control.rs`), reading one
//! command per line and answering each with `SSHTUNE-OK …` or `SSHTUNE-ERR …`. The destination needs root, cryptsetup, util-linux and
//! e2fsprogs, and nothing of sshtune: a NAS with plain OpenSSH is enough. A local destination
//! goes the same way, through the embedded server (root logs in to it), so one program is
//! tested for both.
//!
//! What it makes: a work directory `sshtune-storage-<pid>-<token>` in the destination
//! directory (same filesystem, so the same disk underneath; `<pid>` is the helper's own, and
//! the token makes the samplers count the processes writing under it as this run's), a loop
//! file in it written once with zeros, a LUKS2 mapping `sshtune-<pid>-<n>` per setting with
//! ext4 mounted on `mnt`. It removes everything when its input ends — the run closing it, the
//! ssh connection dropping, or this process killed outright — and on SIGHUP/SIGTERM, and says
//! what it could not remove. At start it removes what helpers and `sshtune storage` runs that
//! died without cleaning up left (their pid no longer exists), by `storage::stale`'s rules
//! (written there); `tests/it/storage/stale_rules.rs` runs both on the same leftovers and compares.
//! Mounts are found in `/proc/self/mountinfo` as `storage::mounts` finds them: a mapping's by
//! its device number, a work directory's by a mount point inside its real path. Nothing asks
//! a path in the destination directory whether it is mounted, and nothing unmounts through
//! one: a user who can write there could make `…/mnt` a link to any mount on the machine. A
//! mount that stays (busy) keeps its directory. Once made, the work directory is the
//! helper's current directory (checked to be root's), and every file it writes there is
//! named relative to it: renaming the directory away and planting links in its place
//! redirects nothing of root's.
//! Loop devices are found in sysfs as `storage::dmcrypt::loops` finds them, so a backing file
//! that was deleted (`… (deleted)`) or is `sshtune storage`'s `backing.img` counts too. A loop
//! device is detached once sysfs no longer lists it: `losetup -d` on one another process holds
//! open only marks it, so the helper waits up to 2 s for it to go (`storage::cleanup` waits
//! as long in each of its tries).
//!
//! Why not storage's Rust code run over ssh: it needs sshtune on the destination, which the
//! hosts this is for do not have. Keys never appear on a command line: they travel on the
//! helper's input as octal escapes and reach cryptsetup through the shell's builtin `printf`.

use crate::pipeline::control::Control;
use crate::pipeline::scripts::wrap;
use crate::wire::sanitize::peer_text;
use anyhow::{anyhow, bail, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Arguments: DIR, TOKEN. Joined into one line by `wrap`, so every statement ends in `;`
/// (or a keyword that needs none) and there are no comments: the commands are documented on
/// `Agent`'s methods.
const AGENT: &str = r#"d=$1; tok=$2; trap "" PIPE;
w="$d/sshtune-storage-$$-$tok"; m=mnt; f=luks.img; W=; lp=; maps=; made=;
left() { echo "SSHTUNE-LEFT $*"; };
dead() { case $1 in ""|*[!0-9]*) return 1;; esac; [ ! -d "/proc/$1" ]; };
gone() { lb=/sys/block/${1#/dev/}/loop/backing_file; li=0; while [ -e "$lb" ] && [ $li -lt 20 ]; do sleep 0.1; li=$((li+1)); done; [ ! -e "$lb" ]; };
err() { echo "SSHTUNE-ERR $(tail -n1 err 2>/dev/null)"; };
dec() { printf "%b" "$(printf "%s" "$1" | sed "s/\\\\/\\\\0/g")"; };
last() { u=; [ -n "$2" ] || return 1; while read -r q1 q2 q3 q4 q5 qr; do case $q5 in *\\*) q5=$(dec "$q5");; esac;
 case $1 in dev) [ "$q3" = "$2" ] && u=$q5;; *) case $q5 in "$2"|"$2"/*) u=$q5;; esac;; esac; done < /proc/self/mountinfo; [ -n "$u" ]; };
unm() { j=0; while last "$1" "$2"; do [ $j -lt 16 ] && umount "$u" 2>/dev/null || return 1; [ -z "$3" ] || echo "$3 unmounted $u"; j=$((j+1)); done; };
devof() { z=$(readlink -f "/dev/mapper/$1") && [ -r "/sys/block/${z##*/}/dev" ] && read -r mm < "/sys/block/${z##*/}/dev"; };
down() { trap "" HUP INT TERM;
 for n in $maps; do if devof "$n"; then unm dev "$mm" || left "mount $u"; fi;
  cryptsetup close "$n" 2>/dev/null || { sleep 1; cryptsetup close "$n" 2>/dev/null; } || left "mapping $n"; done; maps=;
 if [ -n "$lp" ]; then { losetup -d "$lp" 2>/dev/null && gone "$lp"; } || left "loop device $lp"; lp=; fi;
 if [ -n "$made" ]; then cd /; if last dir "$W"; then left "directory $W"; else rm -rf -- "$W" || left "directory $W"; fi; made=; fi;
 echo SSHTUNE-BYE; };
[ -d "$d" ] || { echo "SSHTUNE-ERR nodir $d"; exit 0; };
[ "$(id -u)" = 0 ] || { echo "SSHTUNE-ERR notroot"; exit 0; };
for t in cryptsetup losetup mkfs.ext4 sha256sum dd; do command -v "$t" >/dev/null 2>&1 || { echo "SSHTUNE-ERR notool $t"; exit 0; }; done;
D=$(cd -P -- "$d" && pwd -P && echo x) && D=${D%?x} || D=;
for s in /sys/block/dm-*/dm/name; do [ -r "$s" ] || continue; read -r n < "$s";
 case $n in sshtune-[0-9]*-*) ;; *) continue;; esac; p=${n#sshtune-}; dead "${p%%-*}" || continue;
 read -r mm < "${s%/dm/name}/dev"; unm dev "$mm" SSHTUNE-STALE || echo "SSHTUNE-STALE could not unmount $u";
 cryptsetup close "$n" 2>/dev/null && echo "SSHTUNE-STALE closed mapping $n" || echo "SSHTUNE-STALE could not close mapping $n"; done;
for s in /sys/block/loop*/loop/backing_file; do [ -r "$s" ] || continue; read -r b < "$s"; x=${b%/*}; x=${x##*/};
 case $x in sshtune-storage-*) ;; *) continue;; esac; p=${x#sshtune-storage-}; dead "${p%%-*}" || continue;
 l=${s#/sys/block/}; l="/dev/${l%%/*}";
 losetup -d "$l" 2>/dev/null && gone "$l" && echo "SSHTUNE-STALE detached $l" || echo "SSHTUNE-STALE could not detach $l"; done;
[ -n "$D" ] && for x in "$d"/sshtune-storage-*; do [ -d "$x" ] || continue; p=${x##*/sshtune-storage-}; dead "${p%%-*}" || continue;
 if [ ! -L "$x" ]; then unm dir "$D/${x##*/}" SSHTUNE-STALE || { echo "SSHTUNE-STALE could not unmount $u"; continue; }; fi;
 rm -rf -- "$x" && echo "SSHTUNE-STALE removed $x" || echo "SSHTUNE-STALE could not remove $x"; done;
[ -e /dev/mapper/control ] || { echo "SSHTUNE-ERR nodm"; exit 0; };
mkdir -- "$w" || { echo "SSHTUNE-ERR mkdir"; exit 0; }; made=1;
cd -P -- "$w" && [ -O . ] && W=$(pwd -P && echo x) && W=${W%?x} && mkdir "$m" || { W=; echo "SSHTUNE-ERR mkdir"; exit 0; };
trap "down; exit 0" HUP INT TERM;
echo "SSHTUNE-WORK $W"; echo SSHTUNE-OK;
while read -r c a1 a2 a3 a4 a5 rest; do case $c in
 create) if dd if=/dev/zero of="$f" bs=1M count="$a1" conv=fsync 2>err; then
   lp=$(losetup --find --show -- "$f" 2>err) && echo "SSHTUNE-OK $lp" || { lp=; err; }; else echo "SSHTUNE-ERR $(head -n1 err)"; fi;;
 crypto) cat /proc/crypto; echo SSHTUNE-OK;;
 size) case $a1 in dm-[0-9]*) cat "/sys/block/$a1/size" 2>/dev/null;; esac; echo SSHTUNE-OK;;
 map) n="sshtune-$$-$a1"; kb=$((a3/8));
  if printf "%b" "$a5" | cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --cipher "$a2" --key-size "$a3" --sector-size "$a4" --key-file - --keyfile-size "$kb" "$lp" 2>err
   && printf "%b" "$a5" | cryptsetup open --batch-mode --key-file - --keyfile-size "$kb" $rest "$lp" "$n" 2>err; then
   maps="$maps $n"; x=$(readlink -f "/dev/mapper/$n"); echo "SSHTUNE-OK ${x##*/}"; else err; fi;;
 mount) n="sshtune-$$-$a1";
  if mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "/dev/mapper/$n" >err 2>&1 && mount -t ext4 "/dev/mapper/$n" "$m" 2>err; then echo SSHTUNE-OK; else err; fi;;
 pass) k=0; r=; while [ "$k" -le "$a2" ]; do rm -f -- "$m/pass"; sync -f "$m" 2>/dev/null || sync;
   times > t; read -r t0 x < /proc/uptime;
   dd if=/dev/zero of="$m/pass" bs=1M count="$a1" 2>err || { r=1; break; };
   times > u; sync -f "$m/pass" 2>/dev/null || sync; read -r t1 x < /proc/uptime; k=$((k+1)); done;
  if [ -n "$r" ]; then echo "SSHTUNE-ERR $(head -n1 err)"; else
   { read -r x; read -r c0; } < t; { read -r x; read -r c1; } < u; rm -f -- "$m/pass"; echo "SSHTUNE-OK $t0 $t1 $c0 $c1"; fi;;
 empty) if rm -rf -- "$m/data" 2>err && mkdir -- "$m/data" 2>err; then echo SSHTUNE-OK; else err; fi;;
 flush) read -r t0 x < /proc/uptime; sync -f "$m" 2>/dev/null || sync; read -r t1 x < /proc/uptime; echo "SSHTUNE-OK $t0 $t1";;
 sums) if [ -d "$m/data" ]; then (cd "$m/data" && find . -type f -exec sha256sum -- {} +) 2>/dev/null; fi; echo SSHTUNE-OK;;
 unmap) n="sshtune-$$-$a1";
  if devof "$n"; then unm dev "$mm" || { echo "SSHTUNE-ERR could not unmount $u"; continue; }; fi;
  cryptsetup close "$n" 2>err || { sleep 1; cryptsetup close "$n" 2>err; } || { err; continue; };
  maps=$(for x in $maps; do [ "$x" = "$n" ] || printf "%s " "$x"; done); echo SSHTUNE-OK;;
 *) echo "SSHTUNE-ERR unknown command";; esac; done;
down; exit 0"#;

/// How long closing waits for the helper to say it removed everything.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(300);

/// The helper's session. Its ssh runs in a process group of its own and is not in the
/// registry Ctrl-C empties: an interrupted run closes it (its input ends) and waits for the
/// helper to confirm the removal, instead of killing the one process that can remove things.
pub struct Agent {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: crate::process::StderrDrain,
    label: String,
    /// The work directory on the destination, and the mount point in it.
    pub work: String,
    pub mnt: String,
    /// What the start removed of dead runs (`SSHTUNE-STALE` lines), kept apart from the
    /// replies because they come before the start's answer, error or not.
    stale: Vec<String>,
}

/// One answer: the lines before it, and the `SSHTUNE-OK` line's rest.
struct Reply {
    lines: Vec<String>,
    ok: String,
}

/// A dm-crypt pass as the helper timed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pass {
    pub mib_s: f64,
    /// CPU seconds `dd` spent writing into the page cache (before the sync).
    pub writer_cpu_s: Option<f64>,
}

impl Agent {
    /// Starts the helper on the destination: it checks root and the tools, removes what dead
    /// runs left (said and returned, one line each, also when it then refuses) and makes its
    /// work directory in `dir`.
    pub fn start(
        control: &Control,
        label: &str,
        dir: &str,
        token: &str,
        say: &dyn Fn(&str),
    ) -> Result<(Self, Vec<String>)> {
        crate::process::check_interrupted()?;
        let mut cmd = control.command(&wrap(AGENT, &[dir, token]));
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| anyhow!("cannot run ssh (apt-get install openssh-client): {e}"))?;
        let stderr = crate::process::drain_stderr(&mut child);
        let stdin = child.stdin.take();
        let out = child.stdout.take().context("ssh stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(|l| l.ok()) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut a = Agent {
            child: Some(child),
            stdin,
            lines: rx,
            stderr,
            label: label.to_string(),
            work: String::new(),
            mnt: String::new(),
            stale: Vec::new(),
        };
        let reply = a.reply(None);
        let stale: Vec<String> = std::mem::take(&mut a.stale)
            .iter()
            .map(|l| format!("{}: {}", a.label, peer_text(l.as_bytes(), 300)))
            .collect();
        stale.iter().for_each(|l| say(l));
        match reply {
            Ok(r) => {
                let work = r.lines.iter().find_map(|l| l.strip_prefix("SSHTUNE-WORK "));
                a.work = work.unwrap_or_default().to_string();
                a.mnt = format!("{}/mnt", a.work);
                Ok((a, stale))
            }
            Err(e) => {
                let _ = a.close();
                Err(e)
            }
        }
    }

    /// Writes the loop file (`mib` MiB of zeros, so no setting pays for turning unwritten
    /// extents into written ones) and attaches it.
    pub fn create(&mut self, mib: u64) -> Result<()> {
        self.call(&format!("create {mib}")).map(|_| ())
    }

    /// The destination's `/proc/crypto`.
    pub fn crypto(&mut self) -> Result<String> {
        Ok(self.call("crypto")?.lines.join("\n"))
    }

    /// Size in bytes of the destination's block device `dm-N`.
    pub fn device_bytes(&mut self, dm: &str) -> Option<u64> {
        if !is_dm(dm) {
            return None;
        }
        let r = self.call(&format!("size {dm}")).ok()?;
        r.lines.first()?.trim().parse::<u64>().ok().map(|s| s * 512)
    }

    /// LUKS2 on the loop device as mapping `n` (a fresh random key), opened with `flags`
    /// (`--perf-…` options). Returns its `dm-N`.
    pub fn map(
        &mut self,
        n: usize,
        cipher: &str,
        key_bits: u32,
        sector: u32,
        flags: &[String],
    ) -> Result<String> {
        use rand::RngCore;
        let word = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
        };
        if !word(cipher) || !flags.iter().all(|f| word(f)) || key_bits % 8 != 0 || key_bits == 0 {
            bail!("not a LUKS setting the helper can pass on: {cipher} {key_bits} {flags:?}");
        }
        let mut key = vec![0u8; (key_bits / 8) as usize];
        rand::thread_rng().fill_bytes(&mut key);
        let dm = self
            .call(&format!(
                "map {n} {cipher} {key_bits} {sector} {} {}",
                octal(&key),
                flags.join(" ")
            ))?
            .ok;
        if !is_dm(&dm) {
            bail!("mapping {n} on {} has no dm device", self.label);
        }
        Ok(dm)
    }

    /// ext4 made on mapping `n` and mounted on `mnt`.
    pub fn mount(&mut self, n: usize) -> Result<()> {
        self.call(&format!("mount {n}")).map(|_| ())
    }

    /// Unmounts and closes mapping `n`.
    pub fn unmap(&mut self, n: usize) -> Result<()> {
        self.call(&format!("unmap {n}")).map(|_| ())
    }

    /// `mib` MiB of zeros written into a file on the mounted volume by `dd` (into the page
    /// cache), then `sync -f` (the volume's writeback: the encryption and the disk). Timed
    /// from before the write to after the sync on the destination's `/proc/uptime` (10 ms
    /// steps). With `warm`, the pass is written once untimed first.
    pub fn pass(&mut self, mib: u64, warm: bool) -> Result<Pass> {
        let r = self.call(&format!("pass {mib} {}", u8::from(warm)))?;
        parse_pass(&r.ok, mib).ok_or_else(|| anyhow!("unreadable pass timing from {}", self.label))
    }

    /// Empties the volume's `data` directory (made when missing): where every copy starts.
    pub fn empty(&mut self) -> Result<()> {
        self.call("empty").map(|_| ())
    }

    /// Writes the volume's dirty pages out (`sync -f`, so dm-crypt encrypts them); seconds
    /// it took on the destination's `/proc/uptime` (10 ms steps).
    pub fn flush(&mut self) -> Result<f64> {
        let r = self.call("flush")?;
        parse_flush(&r.ok).ok_or_else(|| anyhow!("unreadable flush timing from {}", self.label))
    }

    /// SHA-256 of every file under the volume's `data` directory, by path relative to it.
    pub fn sums(&mut self) -> Result<Vec<(String, String)>> {
        let r = self.call("sums")?;
        Ok(r.lines.iter().filter_map(|l| parse_sum(l)).collect())
    }

    /// Ends the helper's input and waits until it says it removed everything. Whatever it
    /// could not remove, or a helper that ended without saying, is the error.
    pub fn close(&mut self) -> Result<()> {
        drop(self.stdin.take());
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let deadline = Instant::now() + CLOSE_TIMEOUT;
        let mut left = Vec::new();
        let mut bye = false;
        while !bye {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(l) if l == "SSHTUNE-BYE" => bye = true,
                Ok(l) => {
                    if let Some(x) = l.strip_prefix("SSHTUNE-LEFT ") {
                        left.push(peer_text(x.as_bytes(), 300));
                    }
                }
                Err(_) => break,
            }
        }
        if !bye {
            let _ = child.kill();
        }
        let _ = child.wait();
        if !left.is_empty() {
            bail!("left on {}: {}", self.label, left.join(", "));
        }
        if !bye && !self.work.is_empty() {
            bail!(
                "the LUKS helper on {} ended before it confirmed removing {} ({}); the next --luks run there removes what is left",
                self.label,
                self.work,
                self.ssh_error()
            );
        }
        Ok(())
    }

    fn call(&mut self, line: &str) -> Result<Reply> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("the LUKS helper on {} is closed", self.label))?;
        if writeln!(stdin, "{line}")
            .and_then(|_| stdin.flush())
            .is_err()
        {
            bail!(
                "the LUKS helper on {} ended ({})",
                self.label,
                self.ssh_error()
            );
        }
        self.reply(line.split_whitespace().next())
    }

    /// Reads up to the next `SSHTUNE-OK` or `SSHTUNE-ERR`.
    fn reply(&mut self, what: Option<&str>) -> Result<Reply> {
        let mut lines = Vec::new();
        loop {
            match self.lines.recv_timeout(Duration::from_secs(3600)) {
                Ok(l) => {
                    if let Some(ok) = l.strip_prefix("SSHTUNE-OK").map(str::trim) {
                        return Ok(Reply {
                            lines,
                            ok: ok.to_string(),
                        });
                    }
                    if let Some(e) = l.strip_prefix("SSHTUNE-ERR").map(str::trim) {
                        return Err(self.error(what, e));
                    }
                    match l.strip_prefix("SSHTUNE-STALE ") {
                        Some(x) => self.stale.push(x.to_string()),
                        None => lines.push(l),
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    bail!(
                        "the LUKS helper on {} did not answer within an hour",
                        self.label
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    bail!(
                        "the LUKS helper on {} ended ({})",
                        self.label,
                        self.ssh_error()
                    )
                }
            }
        }
    }

    fn error(&self, what: Option<&str>, e: &str) -> anyhow::Error {
        let why = peer_text(e.as_bytes(), 300);
        let on = &self.label;
        match e.split_whitespace().next().unwrap_or("") {
            "notroot" => anyhow!("--luks needs root on {on} (it creates loop devices, LUKS2 mappings and mounts): log in as root"),
            "notool" => anyhow!(
                "--luks needs {} on {on}: not found (apt-get install cryptsetup-bin util-linux e2fsprogs coreutils)",
                why.split_whitespace().nth(1).unwrap_or("a tool")
            ),
            "nodm" => anyhow!("--luks needs device-mapper on {on}: its kernel has none (/dev/mapper/control is missing)"),
            "nodir" => anyhow!(
                "destination directory {} does not exist on {on}",
                why.split_once(' ').map_or("", |(_, d)| d)
            ),
            "mkdir" => anyhow!("--luks could not make its work directory on {on}"),
            _ => match what {
                Some(w) => anyhow!("LUKS helper on {on}, {w}: {why}"),
                None => anyhow!("LUKS helper on {on}: {why}"),
            },
        }
    }

    fn ssh_error(&self) -> String {
        let l = crate::process::last_line(&self.stderr.text(Duration::from_secs(2)));
        if l.is_empty() {
            "no message".into()
        } else {
            l
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn is_dm(s: &str) -> bool {
    s.strip_prefix("dm-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Bytes as `\0ooo` escapes, which the shell's `printf %b` turns back into bytes.
fn octal(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("\\0{b:03o}")).collect()
}

/// `T0 T1 CU0 CS0 CU1 CS1`: uptime before and after, and the shell's children's user and
/// system times before and after the write (`times`, e.g. `0m0.072000s`).
fn parse_pass(ok: &str, mib: u64) -> Option<Pass> {
    let w: Vec<&str> = ok.split_whitespace().collect();
    let (t0, t1) = (
        w.first()?.parse::<f64>().ok()?,
        w.get(1)?.parse::<f64>().ok()?,
    );
    let secs = (t1 - t0).max(0.01);
    let cpu = |a: usize| Some(times_secs(w.get(a)?)? + times_secs(w.get(a + 1)?)?);
    let writer = cpu(4)
        .zip(cpu(2))
        .map(|(b, a)| ((b - a).max(0.0) * 1000.0).round() / 1000.0);
    Some(Pass {
        mib_s: mib as f64 / secs,
        writer_cpu_s: writer,
    })
}

/// `T0 T1` (uptime before and after) → seconds.
fn parse_flush(ok: &str) -> Option<f64> {
    let mut w = ok.split_whitespace().map(|x| x.parse::<f64>().ok());
    let (a, b) = (w.next()??, w.next()??);
    Some((b - a).max(0.0))
}

/// `1m2.500000s` → 62.5.
fn times_secs(s: &str) -> Option<f64> {
    let (m, rest) = s.strip_suffix('s')?.split_once('m')?;
    Some(m.parse::<f64>().ok()? * 60.0 + rest.parse::<f64>().ok()?)
}

/// `HASH  ./path` (sha256sum) → (path, hash). Names sha256sum had to escape are left out,
/// so such a file reads as missing.
fn parse_sum(l: &str) -> Option<(String, String)> {
    let (h, p) = l.split_once("  ")?;
    let p = p.strip_prefix("./")?;
    (h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| (p.to_string(), h.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_reads_its_rate_and_the_writers_cpu() {
        let p = parse_pass(
            "100.00 102.00 0m0.010000s 0m0.020000s 0m0.050000s 0m0.180000s",
            16,
        )
        .unwrap();
        assert_eq!(p.mib_s, 8.0);
        assert_eq!(p.writer_cpu_s, Some(0.2));
        let q = parse_pass("5.5 5.5 x y", 16).unwrap();
        assert_eq!(
            q.mib_s, 1600.0,
            "a pass shorter than the clock's step reads as one step"
        );
        assert_eq!(q.writer_cpu_s, None);
        assert_eq!(times_secs("1m2.500s"), Some(62.5));
        assert_eq!(parse_flush("10.25 10.75"), Some(0.5));
        assert_eq!(parse_flush("10.25"), None);
    }

    #[test]
    fn keys_travel_as_octal_escapes_and_sums_as_relative_paths() {
        assert_eq!(octal(&[0, 10, 255]), "\\0000\\0012\\0377");
        let h = "a".repeat(64);
        assert_eq!(
            parse_sum(&format!("{h}  ./d/f")),
            Some(("d/f".to_string(), h.clone()))
        );
        assert_eq!(parse_sum(&format!("\\{h}  ./a\\nb")), None);
        assert!(is_dm("dm-12") && !is_dm("dm-") && !is_dm("loop0"));
    }
}
