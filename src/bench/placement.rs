//! Where a transfer's processes run, and what else the machine does meanwhile.
//!
//! On a machine of few cores the scheduler decides, per run, whether `ssh` and the server's
//! session process share a core or not, and that decision lasts: every sample of the run
//! moves together, and the ranges that decide "significant" cannot see it. So each OpenSSH
//! sample records the CPU `ssh`, the server's session process and our feeding thread ran on
//! (`/proc/PID/stat` field 39, read every `EVERY` and at the sample's end) and the machine's
//! busy CPU beyond our own processes; and when the server is this machine, the run pins the
//! two ends to two fixed, distinct CPUs (`Pin`), so no run differs from the next by placement.
//! The native engine against its in-process server does the same with two threads of this
//! process: our client's and the server's session thread (`plan_threads`, `Watch::start_threads`).
//! Affinity goes through `nix::sched`; the `/proc` fields through `sysinfo`.

use crate::sysinfo;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the CPU fields are read during a sample: often enough that a 0.25 s sample gets
/// a dozen readings, rare enough that the reader costs nothing measurable.
const EVERY: Duration = Duration::from_millis(20);

/// Where one sample's processes ran (JSON `results[].sample_placement[]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SamplePlacement {
    /// The CPU `ssh` last ran on at the sample's end.
    pub ssh_cpu: Option<u32>,
    /// The CPU the server's session process last ran on; null when it runs on another machine.
    pub sshd_cpu: Option<u32>,
    /// The CPU of this process's thread that fed (upload) or drained (download) `ssh`.
    pub feeder_cpu: Option<u32>,
    /// Readings taken: one every 20 ms and one at the end.
    pub readings: u32,
    /// Share of the readings in which `ssh` and the session process showed the same CPU.
    pub ssh_sshd_shared: Option<f64>,
    /// Readings in which any of the three showed another CPU than at the reading before.
    pub moves: u32,
    /// This machine's busy CPU during the sample beyond `ssh`, this process and (when the
    /// server is this machine) the session process and its shell, in cores.
    pub other_load_cores: Option<f64>,
}

/// How a run placed the two ends (JSON `settings.placement[]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Placement {
    pub engine: String,
    /// Both ends held to one CPU each for the whole run.
    pub pinned: bool,
    /// The CPU of `ssh` and our feeding thread, when pinned.
    pub client_cpu: Option<u32>,
    /// The CPU of the server's session process and its children, when pinned.
    pub server_cpu: Option<u32>,
    /// In words, as the report prints it.
    pub note: String,
}

/// Two fixed CPUs, one per end.
#[derive(Debug, Clone)]
pub struct Pin {
    client: usize,
    server: usize,
}

/// What a pinned run's figures are, said in its note: on a busy machine the scheduler can put
/// both ends of a user's own `cmd | ssh` on one core, which pinning never does
/// (docs/measurements.md, "Pinned against free, alternating").
const PINNED_MEANS: &str = " (each end on a core of its own; a pipe left to the scheduler on a \
    busy machine may share one and read less)";

/// Set to `free` to leave placement to the scheduler (to measure what pinning removes).
pub const FREE_ENV: &str = "SSHTUNE_PLACEMENT";

/// The run's placement: pinned when the server is this machine (`same_machine`) and this
/// process may use two CPUs or more; otherwise why not.
pub fn plan(engine: &str, same_machine: Option<bool>) -> (Option<Pin>, Placement) {
    let not = |why: &str| {
        (
            None,
            Placement {
                engine: engine.into(),
                note: format!("not pinned: {why}"),
                ..Placement::default()
            },
        )
    };
    match same_machine {
        Some(true) => {}
        Some(false) => return not("remote server"),
        None => return not("the server's machine is unknown"),
    }
    if std::env::var(FREE_ENV).as_deref() == Ok("free") {
        return not(&format!("{FREE_ENV}=free"));
    }
    let allowed = allowed_cpus();
    let [client, server, ..] = allowed[..] else {
        return not("one CPU");
    };
    (
        Some(Pin { client, server }),
        Placement {
            engine: engine.into(),
            pinned: true,
            client_cpu: Some(client as u32),
            server_cpu: Some(server as u32),
            note: format!(
                "pinned: ssh and its feeder → cpu{client}, sshd and its session → \
                 cpu{server}{PINNED_MEANS}"
            ),
        },
    )
}

/// The run's placement for an engine whose server may run inside this process (the native
/// engine's in-process server): pinned when it does, its session threads to the server CPU and
/// the client's thread to the client CPU; a server in another process is left to the scheduler.
pub fn plan_threads(
    engine: &str,
    in_process: bool,
    same_machine: Option<bool>,
) -> (Option<Pin>, Placement) {
    if !in_process {
        let why = match same_machine {
            Some(true) => "the server is another process on this machine",
            Some(false) => "remote server",
            None => "the server's machine is unknown",
        };
        return (
            None,
            Placement {
                engine: engine.into(),
                note: format!("not pinned: {why}"),
                ..Placement::default()
            },
        );
    }
    let (pin, mut placement) = plan(engine, Some(true));
    if let Some(p) = &pin {
        placement.note = format!(
            "pinned: our client's thread → cpu{}, the in-process server's session threads → \
             cpu{}{PINNED_MEANS}",
            p.client, p.server
        );
    }
    (pin, placement)
}

/// The name the in-process server gives its session threads (`serve::server`), as
/// `/proc/self/task/TID/comm` shows it.
const SESSION_THREAD: &str = "sshtune-session";

/// The CPUs this thread may run on.
fn allowed_cpus() -> Vec<usize> {
    let Ok(set) = sched_getaffinity(Pid::from_raw(0)) else {
        return Vec::new();
    };
    (0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect()
}

fn only(cpu: usize) -> Option<CpuSet> {
    let mut set = CpuSet::new();
    set.set(cpu).ok()?;
    Some(set)
}

impl Pin {
    /// Holds the client's process (`ssh`) to the client CPU.
    pub fn client_process(&self, pid: u32) {
        if let Some(set) = only(self.client) {
            let _ = sched_setaffinity(Pid::from_raw(pid as i32), &set);
        }
    }

    /// Holds the server's session process and everything it has started (the remote shell,
    /// its sink or source) to the server CPU; later children inherit it. Returns the children.
    pub fn server_session(&self, pid: u32) -> Vec<u32> {
        let Some(set) = only(self.server) else {
            return Vec::new();
        };
        let _ = sched_setaffinity(Pid::from_raw(pid as i32), &set);
        // Twice: a child forked between the first listing and its parent's pinning.
        for _ in 0..2 {
            for c in crate::process::descendants(pid as i32) {
                let _ = sched_setaffinity(Pid::from_raw(c), &set);
            }
        }
        session_children(pid)
    }

    /// Holds this process's in-process server session threads to the server CPU (a keystream
    /// helper a session started before keeps its own placement). Returns their thread ids.
    pub fn server_threads(&self) -> Vec<u32> {
        let tids = session_threads();
        if let Some(set) = only(self.server) {
            for &t in &tids {
                let _ = sched_setaffinity(Pid::from_raw(t as i32), &set);
            }
        }
        tids
    }

    /// Holds the calling thread to the client CPU until the guard drops.
    pub fn feeder(&self) -> FeederPin {
        let before = sched_getaffinity(Pid::from_raw(0)).ok();
        if let Some(set) = only(self.client) {
            let _ = sched_setaffinity(Pid::from_raw(0), &set);
        }
        FeederPin { before }
    }
}

/// The calling thread's CPUs before `Pin::feeder`, restored on drop.
pub struct FeederPin {
    before: Option<CpuSet>,
}

impl Drop for FeederPin {
    fn drop(&mut self) {
        if let Some(set) = self.before {
            let _ = sched_setaffinity(Pid::from_raw(0), &set);
        }
    }
}

/// The children of the server's session process, whose CPU is ours too.
pub fn session_children(pid: u32) -> Vec<u32> {
    crate::process::descendants(pid as i32)
        .into_iter()
        .map(|c| c as u32)
        .collect()
}

/// The thread ids of this process's in-process server sessions.
pub fn session_threads() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        (comm.trim_end() == SESSION_THREAD)
            .then(|| e.file_name().to_str()?.parse().ok())
            .flatten()
    })
    .collect()
}

/// Whether `pid` on this machine is an SSH server's session process (a pid from a server in
/// another pid namespace names some other process here).
pub fn is_local_session(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.starts_with("sshd") || c.starts_with("sshtune"))
}

/// The processes one sample watches.
#[derive(Debug, Clone)]
pub struct Watched {
    pub ssh: u32,
    /// The session process, when it runs on this machine.
    pub sshd: Option<u32>,
    /// Its children (shell, sink/source), when it runs on this machine.
    pub session: Vec<u32>,
}

/// Reads placement during one sample; `finish` at its end.
pub struct Watch {
    stop: Sender<()>,
    reader: Option<JoinHandle<Tally>>,
    /// The processes, or None for two threads of this process (`start_threads`).
    watched: Option<Watched>,
    /// `/proc` stat files of the client, the server (empty when not on this machine), the feeder.
    paths: [String; 3],
    /// Whether the server end is watched, so that sharing a CPU can be told.
    server_watched: bool,
    started: Instant,
    busy0: Option<u64>,
    ours0: Option<u64>,
}

/// What the readings found.
#[derive(Debug, Default, Clone)]
struct Tally {
    readings: u32,
    shared: u32,
    moves: u32,
    last: [Option<u32>; 3],
}

impl Tally {
    fn read(&mut self, paths: &[String; 3]) {
        let now = [0, 1, 2].map(|i| sysinfo::last_cpu(&paths[i]));
        if self.readings > 0
            && now
                .iter()
                .zip(&self.last)
                .any(|(a, b)| a.is_some() && a != b)
        {
            self.moves += 1;
        }
        if now[0].is_some() && now[0] == now[1] {
            self.shared += 1;
        }
        self.readings += 1;
        self.last = now;
    }
}

impl Watch {
    /// Starts reading; the calling thread is the feeder.
    pub fn start(watched: Watched) -> Self {
        let feeder = format!("/proc/self/task/{}/stat", nix::unistd::gettid());
        let paths = [
            format!("/proc/{}/stat", watched.ssh),
            watched
                .sshd
                .map_or_else(String::new, |p| format!("/proc/{p}/stat")),
            feeder,
        ];
        Self::reading(paths, Some(watched))
    }

    /// Starts reading two threads of this process: the client's (the calling thread, which is
    /// also the feeder) and the in-process server's session thread. The other load is the
    /// machine's beyond this whole process.
    pub fn start_threads(server_tid: Option<u32>) -> Self {
        let task = |t: u32| format!("/proc/self/task/{t}/stat");
        let me = task(nix::unistd::gettid().as_raw() as u32);
        let paths = [me.clone(), server_tid.map_or_else(String::new, task), me];
        Self::reading(paths, None)
    }

    /// `watched` None: the watched ends are threads of this process.
    fn reading(paths: [String; 3], watched: Option<Watched>) -> Self {
        let (stop, rx) = channel::<()>();
        let server_watched = !paths[1].is_empty();
        let read = paths.clone();
        let reader = std::thread::spawn(move || {
            let mut t = Tally::default();
            while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(EVERY) {
                t.read(&read);
            }
            t
        });
        Self {
            stop,
            reader: Some(reader),
            busy0: sysinfo::machine_busy_ticks(),
            ours0: ours_ticks(watched.as_ref()),
            watched,
            paths,
            server_watched,
            started: Instant::now(),
        }
    }

    /// Stops reading, takes the last reading and sums up.
    pub fn finish(mut self) -> SamplePlacement {
        let seconds = self.started.elapsed().as_secs_f64();
        let busy1 = sysinfo::machine_busy_ticks();
        let ours1 = ours_ticks(self.watched.as_ref());
        let _ = self.stop.send(());
        let mut t = self
            .reader
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        t.read(&self.paths);
        let tck = sysinfo::clock_ticks().max(1) as f64;
        let other = match (self.busy0, busy1, self.ours0, ours1) {
            (Some(b0), Some(b1), Some(o0), Some(o1)) if seconds > 0.0 => {
                let beyond = b1.saturating_sub(b0) as f64 - o1.saturating_sub(o0) as f64;
                Some((beyond / tck / seconds).max(0.0))
            }
            _ => None,
        };
        SamplePlacement {
            ssh_cpu: t.last[0],
            sshd_cpu: t.last[1],
            feeder_cpu: t.last[2],
            readings: t.readings,
            ssh_sshd_shared: self
                .server_watched
                .then(|| f64::from(t.shared) / f64::from(t.readings.max(1))),
            moves: t.moves,
            other_load_cores: other,
        }
    }
}

/// CPU ticks of our processes so far: `ssh`, this process, and where the server is this
/// machine its session process and children (with the ones they reaped); with no `Watched`
/// (both ends are threads here), this process alone.
fn ours_ticks(w: Option<&Watched>) -> Option<u64> {
    let read = |p: String| std::fs::read_to_string(p).ok();
    let me = sysinfo::stat_ticks(&read("/proc/self/stat".into())?)?;
    let Some(w) = w else {
        return Some(me);
    };
    let mut sum = me + sysinfo::stat_ticks(&read(format!("/proc/{}/stat", w.ssh))?)?;
    if let Some(p) = w.sshd {
        sum += read(format!("/proc/{p}/stat"))
            .and_then(|s| sysinfo::stat_ticks(&s))
            .unwrap_or(0);
    }
    for c in &w.session {
        sum += read(format!("/proc/{c}/stat"))
            .and_then(|s| sysinfo::stat_ticks_with_children(&s))
            .unwrap_or(0);
    }
    Some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_server_is_never_pinned() {
        let (pin, p) = plan("openssh", Some(false));
        assert!(pin.is_none() && !p.pinned);
        assert_eq!(p.note, "not pinned: remote server");
        let (_, p) = plan("openssh", None);
        assert!(p.note.starts_with("not pinned"));
    }

    #[test]
    fn a_local_server_is_pinned_to_two_distinct_cpus_where_there_are_two() {
        let (pin, p) = plan("openssh", Some(true));
        if allowed_cpus().len() < 2 || std::env::var(FREE_ENV).is_ok() {
            assert!(pin.is_none());
            return;
        }
        let pin = pin.unwrap();
        assert_ne!(pin.client, pin.server);
        assert!(p.pinned && p.note.contains(&format!("cpu{}", pin.server)));
        // The feeder's pin holds while the guard lives, and is undone after.
        let before = allowed_cpus();
        {
            let _g = pin.feeder();
            assert_eq!(allowed_cpus(), vec![pin.client]);
        }
        assert_eq!(allowed_cpus(), before);
    }

    #[test]
    fn a_watch_reads_the_cpus_of_real_processes() {
        let mut child = std::process::Command::new("sleep")
            .arg("1")
            .spawn()
            .unwrap();
        let w = Watch::start(Watched {
            ssh: child.id(),
            sshd: Some(child.id()),
            session: Vec::new(),
        });
        std::thread::sleep(Duration::from_millis(70));
        let p = w.finish();
        let _ = child.kill();
        let _ = child.wait();
        assert!(p.readings >= 2, "{p:?}");
        assert!(p.ssh_cpu.is_some() && p.feeder_cpu.is_some());
        // One process watched as both ends always shares its CPU with itself.
        assert_eq!(p.ssh_sshd_shared, Some(1.0));
        assert!(p.other_load_cores.is_some_and(|c| c >= 0.0));
    }

    #[test]
    fn the_native_engine_pins_only_a_server_in_this_process() {
        let (pin, p) = plan_threads("native", false, Some(true));
        assert!(pin.is_none());
        assert_eq!(
            p.note,
            "not pinned: the server is another process on this machine"
        );
        let (_, p) = plan_threads("native", false, Some(false));
        assert_eq!(p.note, "not pinned: remote server");
        let (pin, p) = plan_threads("native", true, None);
        if allowed_cpus().len() < 2 || std::env::var(FREE_ENV).is_ok() {
            assert!(pin.is_none());
            return;
        }
        assert!(p.pinned && p.note.contains("in-process server's session threads"));
    }

    #[test]
    fn a_session_thread_is_found_pinned_and_watched() {
        let (tx, rx) = channel::<()>();
        let (named, started) = channel::<u32>();
        let session = std::thread::Builder::new()
            .name(SESSION_THREAD.into())
            .spawn(move || {
                // The name is set inside the new thread: it shows once the thread runs.
                let _ = named.send(nix::unistd::gettid().as_raw() as u32);
                let _ = rx.recv();
            })
            .unwrap();
        let tid = started.recv().unwrap();
        // Other tests may run sessions of their own meanwhile.
        assert!(session_threads().contains(&tid));
        if let Some(pin) = plan_threads("native", true, None).0 {
            assert!(pin.server_threads().contains(&tid));
            let allowed = sched_getaffinity(Pid::from_raw(tid as i32)).unwrap();
            assert!(allowed.is_set(pin.server).unwrap() && !allowed.is_set(pin.client).unwrap());
        }
        let w = Watch::start_threads(Some(tid));
        std::thread::sleep(Duration::from_millis(50));
        let p = w.finish();
        let _ = tx.send(());
        session.join().unwrap();
        assert!(p.ssh_cpu.is_some() && p.sshd_cpu.is_some() && p.ssh_sshd_shared.is_some());
        assert_eq!(p.ssh_cpu, p.feeder_cpu);
        assert!(p.other_load_cores.is_some_and(|c| c >= 0.0));
    }
}
