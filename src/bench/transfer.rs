//! One timed transfer over any data pipe: wait for the remote's READY line, push or drain the
//! bytes, read its DONE line, check the count, and build the sample. Engines differ only in
//! what the pipe is (an `ssh` child's stdin/stdout, our own client's channel) and in how they
//! name a failure, so the protocol and the checks live here once.

use super::executor::{Job, Sample};
use super::model::Direction;
use super::placement::Watch;
use crate::process;
use crate::remote::{self, Fields, Ready, RemoteCounters, Request};
use std::time::Instant;

/// The remote command's stdin and stdout as an engine sees them.
pub trait DataPipe {
    type Error: std::fmt::Display;
    /// The next line of stdout, None at its end.
    fn read_line(&mut self) -> Result<Option<String>, Self::Error>;
    fn write_all(&mut self, data: &[u8]) -> Result<(), Self::Error>;
    /// Ends the remote command's stdin.
    fn close_input(&mut self) -> Result<(), Self::Error>;
    /// Reads and discards up to `bytes` bytes of stdout; returns how many came before its end.
    fn drain(&mut self, bytes: u64) -> Result<u64, Self::Error>;
    /// The client CPU clock this engine reports (seconds), read at both ends of the window.
    fn client_cpu_s(&self) -> Option<f64>;
    /// The user-space part of that clock, when the engine can split it.
    fn client_user_cpu_s(&self) -> Option<f64> {
        None
    }
    /// Called once READY has arrived (e.g. to stop a login watchdog).
    fn on_ready(&mut self) {}
    /// Starts watching where the transfer's processes run, given the server's session process
    /// as its READY line names it; None where the engine does not watch.
    fn watch(&mut self, _server_pid: Option<u32>) -> Option<Watch> {
        None
    }
    /// Whether this pipe carries many transfers (`remote::session_script`): each starts with a
    /// request line, an upload ends after its byte count instead of at the end of input, and
    /// its DONE line carries the sink's status instead of a count.
    fn framed(&self) -> bool {
        false
    }
}

/// Why a transfer stopped; each engine turns it into its `SshError`.
#[derive(Debug)]
pub enum Step<E> {
    /// The remote never said ready: its output ended (None) or reading it failed.
    NotReady(Option<E>),
    /// The pipe failed mid-transfer.
    Lost(E),
    /// The transfer stopped for a reason said in words (interrupted, stream ended early).
    Ended(String),
    /// The remote answered, but the answer is wrong (byte count, exit code).
    Bad(String),
}

/// Runs `job` over `pipe`, writing `payload` repeatedly on upload.
pub fn drive<P: DataPipe>(
    pipe: &mut P,
    job: &Job,
    payload: &[u8],
) -> Result<Sample, Step<P::Error>> {
    if pipe.framed() {
        let request = match job.direction {
            Direction::Upload => Request::Up(job.bytes),
            Direction::Download => Request::Down(job.bytes),
        };
        pipe.write_all(request.to_string().as_bytes())
            .map_err(Step::Lost)?;
    }
    let (ready, server_pid) = loop {
        match pipe.read_line() {
            Ok(Some(l)) => {
                if let Some(r) = Ready::parse(&l) {
                    break (r, server_pid(&l));
                }
            }
            Ok(None) => return Err(Step::NotReady(None)),
            Err(e) => return Err(Step::NotReady(Some(e))),
        }
    };
    pipe.on_ready();
    let watch = pipe.watch(server_pid);
    let mut sample = timed(pipe, job, payload, &ready)?;
    sample.placement = watch.map(Watch::finish);
    Ok(sample)
}

/// The session process a READY line names (`pid=`).
fn server_pid(line: &str) -> Option<u32> {
    match remote::Line::parse(line) {
        Ok(remote::Line::Ready(f)) => f.get("pid")?.parse().ok(),
        _ => None,
    }
}

/// The timed window of `drive`, from READY to DONE.
fn timed<P: DataPipe>(
    pipe: &mut P,
    job: &Job,
    payload: &[u8],
    ready: &Ready,
) -> Result<Sample, Step<P::Error>> {
    let c0 = Clocks::read(pipe);
    let t0 = Instant::now();
    let (seconds, c1, done) = match job.direction {
        Direction::Upload => {
            let mut left = job.bytes;
            while left > 0 {
                if process::interrupted() {
                    return Err(Step::Ended("interrupted".into()));
                }
                let n = left.min(payload.len() as u64) as usize;
                pipe.write_all(&payload[..n]).map_err(Step::Lost)?;
                left -= n as u64;
            }
            if !pipe.framed() {
                pipe.close_input().map_err(Step::Lost)?;
            }
            let done = read_done(pipe)?;
            let seconds = t0.elapsed().as_secs_f64();
            let c1 = Clocks::read(pipe);
            if pipe.framed() {
                if done.get("rc") != Some("0") {
                    return Err(Step::Bad(format!("remote sink failed: {done}")));
                }
                return Ok(sample(job.bytes, seconds, c1.since(&c0), ready, &done));
            }
            let counted: Option<u64> = done.get("bytes").and_then(|v| v.parse().ok());
            if counted != Some(job.bytes) {
                return Err(Step::Bad(format!(
                    "remote counted {} bytes, {} were sent",
                    counted.map_or("no".into(), |c| c.to_string()),
                    job.bytes
                )));
            }
            (seconds, c1, done)
        }
        Direction::Download => {
            if !pipe.framed() {
                pipe.close_input().map_err(Step::Lost)?;
            }
            let got = pipe.drain(job.bytes).map_err(Step::Lost)?;
            if got < job.bytes {
                return Err(Step::Ended(format!(
                    "stream ended after {got} of {} bytes",
                    job.bytes
                )));
            }
            let seconds = t0.elapsed().as_secs_f64();
            let c1 = Clocks::read(pipe);
            let done = read_done(pipe)?;
            if done.get("rc") != Some("0") {
                return Err(Step::Bad(format!("remote source failed: {done}")));
            }
            (seconds, c1, done)
        }
    };
    Ok(sample(job.bytes, seconds, c1.since(&c0), ready, &done))
}

/// The client's CPU clocks at one end of the timed window: all of it, and its user part.
struct Clocks {
    all: Option<f64>,
    user: Option<f64>,
}

impl Clocks {
    fn read<P: DataPipe>(pipe: &P) -> Self {
        Self {
            all: pipe.client_cpu_s(),
            user: pipe.client_user_cpu_s(),
        }
    }

    /// CPU seconds since `start`: (all, user).
    fn since(&self, start: &Clocks) -> (Option<f64>, Option<f64>) {
        let d = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| b - a);
        (d(start.all, self.all), d(start.user, self.user))
    }
}

fn read_done<P: DataPipe>(pipe: &mut P) -> Result<Fields, Step<P::Error>> {
    loop {
        match pipe.read_line() {
            Ok(Some(l)) => {
                if let Some(fields) = remote::done(&l) {
                    return Ok(fields);
                }
            }
            Ok(None) => {
                return Err(Step::Ended(
                    "connection closed before the remote reported".into(),
                ))
            }
            Err(e) => return Err(Step::Ended(e.to_string())),
        }
    }
}

/// The sample one remote-script transfer yields: our clock and client CPU, the server's CPU
/// from the counters its READY and DONE lines carried.
fn sample(
    bytes: u64,
    seconds: f64,
    (client_cpu_s, client_user_cpu_s): (Option<f64>, Option<f64>),
    ready: &Ready,
    done: &Fields,
) -> Sample {
    let tck = ready.ticks_per_s.max(1) as f64;
    let after = RemoteCounters::parse(done);
    let delta = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) if b >= a => Some((b - a) as f64 / tck),
        _ => None,
    };
    Sample {
        bytes,
        seconds,
        client_cpu_s,
        client_user_cpu_s,
        server_cpu_s: delta(ready.counters.proc_ticks, after.proc_ticks),
        server_busy_s: delta(ready.counters.busy_ticks, after.busy_ticks),
        server_quota_cores: ready.quota_cores,
        placement: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remote that answers from a script: it tests the protocol handling, not a transport.
    struct Scripted {
        lines: Vec<String>,
        written: u64,
        stdout_bytes: u64,
    }

    impl DataPipe for Scripted {
        type Error = String;
        fn read_line(&mut self) -> Result<Option<String>, String> {
            Ok((!self.lines.is_empty()).then(|| self.lines.remove(0)))
        }
        fn write_all(&mut self, data: &[u8]) -> Result<(), String> {
            self.written += data.len() as u64;
            Ok(())
        }
        fn close_input(&mut self) -> Result<(), String> {
            Ok(())
        }
        fn drain(&mut self, bytes: u64) -> Result<u64, String> {
            Ok(bytes.min(self.stdout_bytes))
        }
        fn client_cpu_s(&self) -> Option<f64> {
            Some(0.0)
        }
    }

    fn job(direction: Direction) -> Job<'static> {
        Job {
            cipher: "aes128-ctr",
            mac: None,
            direction,
            bytes: 3000,
        }
    }

    fn pipe(done: &str, stdout_bytes: u64) -> Scripted {
        Scripted {
            lines: vec![
                "banner".into(),
                "SSHTUNE-READY pid=1 comm=sshd tck=100 cpu=1,1 stat= quota=".into(),
                done.into(),
            ],
            written: 0,
            stdout_bytes,
        }
    }

    #[test]
    fn upload_checks_the_count() {
        let mut p = pipe("SSHTUNE-DONE bytes=3000 cpu=2,2 stat=", 0);
        let s = drive(&mut p, &job(Direction::Upload), &[0; 1024]).unwrap();
        assert_eq!(p.written, 3000);
        assert_eq!(s.server_cpu_s, Some(0.02));
        let mut p = pipe("SSHTUNE-DONE bytes=10 cpu=2,2 stat=", 0);
        let e = drive(&mut p, &job(Direction::Upload), &[0; 1024]).unwrap_err();
        assert!(matches!(e, Step::Bad(m) if m.contains("remote counted 10 bytes")));
    }

    #[test]
    fn download_checks_length_and_status() {
        let mut p = pipe("SSHTUNE-DONE rc=0 cpu=2,2 stat=", 3000);
        assert!(drive(&mut p, &job(Direction::Download), &[]).is_ok());
        let mut p = pipe("SSHTUNE-DONE rc=0", 10);
        let e = drive(&mut p, &job(Direction::Download), &[]).unwrap_err();
        assert!(matches!(e, Step::Ended(m) if m.contains("after 10 of 3000")));
        let mut p = pipe("SSHTUNE-DONE rc=1", 3000);
        let e = drive(&mut p, &job(Direction::Download), &[]).unwrap_err();
        assert!(matches!(e, Step::Bad(_)));
        let mut p = pipe("x", 0);
        p.lines.remove(1);
        let e = drive(&mut p, &job(Direction::Download), &[]).unwrap_err();
        assert!(matches!(e, Step::NotReady(None)));
    }
}
