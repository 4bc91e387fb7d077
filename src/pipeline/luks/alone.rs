//! The model's stages measured alone, before any volume exists: SSH alone per cipher (the
//! dataset's bytes through `ssh -c CIPHER` into `cat`) and rsync alone (into a local temp
//! directory); SSH alone again right before each setting's cells (`matrix.rs`). Their CPU
//! cost per MiB comes later from the samplers' intervals (`costs.rs`).

use super::step::round1;
use super::verify::files;
use crate::pipeline::model::{AloneStage, Stage};
use crate::pipeline::setup::Setup;
use crate::pipeline::{stages, MIB};
use crate::process::check_interrupted;
use crate::target::SshLog;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Instant;

/// rsync without ssh, into a local temp directory: the model's rsync stage, `--repeat`
/// times.
pub fn rsync_local(s: &Setup) -> Result<AloneStage> {
    (s.say)("LUKS model: rsync without ssh, into a local temp directory");
    s.shared.set_phase(Some("luks-alone:rsync-local".into()));
    let scratch = s.dataset.scratch()?;
    // `--repeat` copies, as the cells: one copy of a small dataset under a loaded machine
    // varies by half, and the model's rsync stage is its median.
    let r = stages::rsync_local(
        &s.dataset.rsync_source(),
        scratch.path(),
        s.dataset.bytes,
        s.opts.repeat.max(1),
    );
    drop(scratch);
    s.shared.set_phase(Some("between".into()));
    // Every copy's bytes: the phase's CPU covers all of them, and the cost per MiB divides
    // by what moved (one copy's bytes read the cost `--repeat` times too high).
    let copies = r.samples.len().max(1) as u64;
    Ok(AloneStage {
        bytes: Some(s.dataset.bytes * copies),
        stage: Stage::RsyncLocal,
        cipher: None,
        setting: None,
        mib_s: r.median_mib_s,
        cpu_s_per_mib: None,
        method: r.method,
        error: r.error,
    })
}

/// The most of the dataset SSH alone holds in memory; a larger dataset is sent as passes
/// over these bytes until as many as a copy moves have gone.
const ALONE_MAX_BYTES: u64 = 64 << 20;

/// The writes SSH alone makes: `total` bytes (one copy's, the dataset once) out of a buffer
/// of `held` bytes, whole passes over it and then what is left. The count is fixed by the
/// dataset, never by the clock: the first megabytes of a session run slower than the rest
/// (on an emulated 2-vCPU machine the first 8 MiB through a fresh ssh session read 4.4–11.3
/// MiB/s, a second or third pass through the same session 10–28; docs/measurements.md), so
/// a stage that sent the dataset again whenever its first pass was quick read faster than
/// a copy, which sends it once, could.
pub fn writes(total: u64, held: usize) -> Vec<usize> {
    if held == 0 {
        return Vec::new();
    }
    let full = (total / held as u64) as usize;
    let rest = (total % held as u64) as usize;
    let mut w = vec![held; full];
    if rest > 0 {
        w.push(rest);
    }
    w
}

/// SSH alone: the dataset's bytes piped through `ssh -c CIPHER` into `cat > /dev/null` on
/// the destination — the bench's upload, with this run's data and samplers, so its CPU cost
/// per MiB is measured the same way as every other stage's. One session carries the
/// dataset's bytes once, as a copy does (`writes`). The bytes are read into memory first (up
/// to `ALONE_MAX_BYTES`): reading the source is rsync's work, measured in rsync-local, and
/// stays out of this stage. The remote side prints a marker
/// when its `cat` starts and another when it has read everything: the clock and the
/// sampler's phase run from the first to ssh's exit (a copy's window, too, ends when rsync
/// and its ssh exit), so process start, handshake and login are neither timed nor charged (subtracting a separate empty session's login instead was off by as
/// much as the transfer itself on a slow board, whose logins vary by seconds).
/// `beside`: the setting whose cells follow (none before the matrix).
pub fn ssh_alone(
    s: &Setup,
    cipher: &str,
    beside: Option<&str>,
    logins: &mut Vec<f64>,
) -> Result<AloneStage> {
    check_interrupted()?;
    (s.say)(&format!(
        "LUKS model: SSH alone with {cipher}{}",
        beside.map_or(String::new(), |st| format!(", beside {st}'s cells"))
    ));
    // Read once, outside the clock: the passes only send.
    let data = load(&files(s.dataset.root()), ALONE_MAX_BYTES);
    let data = match data {
        Ok(d) if !d.is_empty() => d,
        Ok(_) => bail!("the dataset is empty: nothing to send through ssh alone"),
        Err(e) => return Err(e).context("reading the dataset for ssh alone"),
    };
    // A login of its own (`ControlPath=none`): the measured session shares no connection.
    let mut cmd = s.end.target.ssh_command(
        Some(cipher),
        None,
        SshLog::ErrorsOnly,
        "echo SSHTUNE-READY; cat > /dev/null; echo SSHTUNE-DONE",
    );
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let login = Instant::now();
    s.control.measured_login();
    let mut child = crate::process::ChildGuard::spawn(&mut cmd, "ssh")?;
    let stderr = crate::process::drain_stderr(child.child_mut());
    let mut stdin = child.child_mut().stdin.take().context("ssh stdin")?;
    let mut lines = BufReader::new(child.child_mut().stdout.take().context("ssh stdout")?).lines();
    let mut wait_for = |marker: &str| {
        lines
            .by_ref()
            .map_while(|l| l.ok())
            .any(|l| l.trim() == marker)
    };
    let mut sent = 0u64;
    let mut secs = 0.0;
    let mut error = None;
    let mut started = None;
    if wait_for("SSHTUNE-READY") {
        logins.push(login.elapsed().as_secs_f64());
        s.shared.set_phase(Some(ssh_phase(cipher, beside)));
        started = Some(Instant::now());
        for n in writes(s.dataset.bytes, data.len()) {
            if let Err(e) = stdin.write_all(&data[..n]) {
                error = Some(e.to_string());
                break;
            }
            sent += n as u64;
        }
        drop(stdin);
        if !wait_for("SSHTUNE-DONE") && error.is_none() {
            error = Some("the remote cat ended before it read everything".into());
        }
    } else {
        drop(stdin);
    }
    let status = child
        .wait_timeout(std::time::Duration::from_secs(30))
        .context("waiting for ssh")?;
    // The window ends when ssh has exited, as a copy's ends when rsync and its ssh have:
    // the session's end (channel close, the remote shell's exit) is in both.
    if let Some(t) = started {
        secs = t.elapsed().as_secs_f64();
        s.shared.set_phase(Some("between".into()));
    }
    let stderr = stderr.text(std::time::Duration::from_secs(5));
    if !status.success() || secs == 0.0 {
        // ssh's own message says more than a broken pipe does.
        error = Some(crate::process::last_line(&stderr))
            .filter(|l| !l.is_empty())
            .or(error)
            .or(Some(format!("ssh exited with {status}")));
    }
    Ok(AloneStage {
        stage: Stage::Ssh,
        cipher: Some(cipher.into()),
        setting: beside.map(String::from),
        bytes: Some(sent),
        mib_s: error
            .is_none()
            .then(|| round1(sent as f64 / MIB / secs.max(1e-6))),
        cpu_s_per_mib: None,
        method: format!(
            "the dataset's bytes once, as a copy sends them (read into memory first, at most {} MiB, sent again until the dataset's size has gone), through ssh -c {cipher} into cat > /dev/null, timed from the remote cat's start marker to ssh's exit",
            ALONE_MAX_BYTES >> 20
        ),
        error,
    })
}

/// The samplers' phase of SSH alone with `cipher`, before the matrix or beside `setting`.
pub fn ssh_phase(cipher: &str, setting: Option<&str>) -> String {
    match setting {
        None => format!("luks-alone:ssh:{cipher}"),
        Some(st) => format!("luks-alone@{st}:ssh:{cipher}"),
    }
}

/// How long SSH alone's window lasted, seconds (its bytes over its rate).
pub fn window_s(a: &AloneStage) -> Option<f64> {
    let r = a.mib_s.filter(|r| *r > 0.0)?;
    Some(a.bytes? as f64 / MIB / r)
}

/// The files' bytes in order, at most `cap` of them.
fn load(files: &[std::path::PathBuf], cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    for f in files {
        let left = cap.saturating_sub(out.len() as u64);
        if left == 0 {
            break;
        }
        std::fs::File::open(f)?.take(left).read_to_end(&mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::writes;

    /// One copy's bytes, never more: a dataset that fits is sent once whatever the clock
    /// says; a larger one cycles through the held bytes until its size has gone.
    #[test]
    fn ssh_alone_sends_one_copys_bytes() {
        assert_eq!(writes(8 << 20, 8 << 20), [8 << 20]);
        assert_eq!(writes(1 << 20, 1 << 20), [1 << 20]);
        assert_eq!(writes(150, 64), [64, 64, 22]);
        assert_eq!(writes(128, 64), [64, 64]);
        assert_eq!(writes(0, 64), Vec::<usize>::new());
        assert_eq!(writes(64, 0), Vec::<usize>::new());
        for (total, held) in [(8u64 << 20, 8usize << 20), (100 << 20, 64 << 20), (7, 3)] {
            assert_eq!(writes(total, held).iter().sum::<usize>() as u64, total);
        }
    }
}
