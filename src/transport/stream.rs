//! The byte stream a transport runs over: a TCP connection, or the stdin/stdout of a proxy
//! process (`ssh -W` to a jump host, or the user's `ProxyCommand`) when the target is not
//! reachable directly. Both give the transport the same read timeouts (writes to a proxy
//! block as a pipe does, and fail once it is gone); the proxy process is killed when the
//! last handle to it goes.

use crate::process::ChildGuard;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Chunks the reader thread may hold ahead of the transport.
const READ_AHEAD_CHUNKS: usize = 8;
const CHUNK: usize = 64 * 1024;

pub enum Stream {
    Tcp(TcpStream),
    Child(ChildStream),
}

impl From<TcpStream> for Stream {
    fn from(s: TcpStream) -> Self {
        Stream::Tcp(s)
    }
}

impl Stream {
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Child(c) => Stream::Child(ChildStream(c.0.clone())),
        })
    }

    /// `None` blocks forever. For a proxy process it bounds each wait for its output.
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Child(c) => {
                *c.0.timeout.lock().expect("timeout lock") = t;
                Ok(())
            }
        }
    }

    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nodelay(on),
            Stream::Child(_) => Ok(()),
        }
    }

    /// The peer's address; a proxied stream has none of its own.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Stream::Tcp(s) => s.peer_addr(),
            Stream::Child(_) => Err(io::Error::other("connected through a proxy process")),
        }
    }

    /// Ends the connection both ways; for a proxy process, closes its input (it is killed
    /// when the stream is dropped).
    pub fn shutdown(&self, how: std::net::Shutdown) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Child(c) => {
                c.0.stdin.lock().expect("stdin lock").take();
                Ok(())
            }
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Stream::Tcp(s) => s.local_addr(),
            Stream::Child(_) => Err(io::Error::other("connected through a proxy process")),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Child(c) => c.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Child(c) => match c.0.stdin.lock().expect("stdin lock").as_mut() {
                Some(w) => w.write(buf),
                None => Err(io::ErrorKind::BrokenPipe.into()),
            },
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Child(c) => match c.0.stdin.lock().expect("stdin lock").as_mut() {
                Some(w) => w.flush(),
                None => Ok(()),
            },
        }
    }
}

/// A proxy process's pipes. Its stdout is read by a thread so reads can time out like a
/// socket's; its stderr is kept for the error when it ends before the server spoke.
pub struct ChildStream(Arc<Inner>);

struct Inner {
    what: String,
    /// `None` once shut down: the proxy sees end of input.
    stdin: Mutex<Option<ChildStdin>>,
    incoming: Mutex<Incoming>,
    timeout: Mutex<Option<Duration>>,
    stderr: Mutex<Receiver<String>>,
    // Dropped last: the process goes when the last clone of the stream does.
    _guard: ChildGuard,
}

struct Incoming {
    rx: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
    /// Whether the server sent anything: an end before that is the proxy failing.
    any: bool,
}

impl ChildStream {
    /// Starts `cmd` (its stdio is taken over) as the connection to the server.
    pub fn spawn(cmd: &mut Command, what: &str) -> anyhow::Result<Self> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut guard = ChildGuard::spawn(cmd, what)?;
        let child = guard.child_mut();
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = sync_channel(READ_AHEAD_CHUNKS);
        std::thread::spawn(move || loop {
            let mut buf = vec![0u8; CHUNK];
            match stdout.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    buf.truncate(n);
                    if tx.send(Ok(buf)).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        });
        let (etx, erx) = sync_channel(1);
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            let _ = etx.send(text);
        });
        Ok(Self(Arc::new(Inner {
            what: what.to_string(),
            stdin: Mutex::new(Some(stdin)),
            incoming: Mutex::new(Incoming {
                rx,
                chunk: Vec::new(),
                pos: 0,
                any: false,
            }),
            timeout: Mutex::new(None),
            stderr: Mutex::new(erx),
            _guard: guard,
        })))
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let timeout = *self.0.timeout.lock().expect("timeout lock");
        let mut inc = self.0.incoming.lock().expect("incoming lock");
        if inc.pos == inc.chunk.len() {
            let next = match timeout {
                Some(t) => inc.rx.recv_timeout(t),
                None => inc.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match next {
                Ok(Ok(chunk)) => {
                    inc.chunk = chunk;
                    inc.pos = 0;
                    inc.any = true;
                }
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no data from {} in time", self.0.what),
                    ))
                }
                Err(RecvTimeoutError::Disconnected) if !inc.any => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        self.failure(),
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(0),
            }
        }
        let n = buf.len().min(inc.chunk.len() - inc.pos);
        buf[..n].copy_from_slice(&inc.chunk[inc.pos..inc.pos + n]);
        inc.pos += n;
        Ok(n)
    }

    /// The proxy ended before the server spoke: its last stderr line says why.
    fn failure(&self) -> String {
        let text = self
            .0
            .stderr
            .lock()
            .ok()
            .and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok())
            .unwrap_or_default();
        match text.lines().map(str::trim).rfind(|l| !l.is_empty()) {
            Some(last) => format!("{} ended: {last}", self.0.what),
            None => format!("{} ended before the server spoke", self.0.what),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(script: &str) -> Stream {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        Stream::Child(ChildStream::spawn(&mut cmd, "the test proxy").unwrap())
    }

    #[test]
    fn a_silent_proxy_times_out_and_is_killed_on_drop() {
        let mut s = child("exec sleep 30");
        let Stream::Child(c) = &s else { unreachable!() };
        let pid = c.0._guard.id() as i32;
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let e = s.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        let clone = s.try_clone().unwrap();
        drop(s);
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        drop(clone);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }

    #[test]
    fn a_proxy_that_fails_first_is_reported_by_its_last_stderr_line() {
        let mut s = child("echo noise >&2; echo 'ssh: connect refused' >&2; exit 255");
        let e = s.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(e.to_string(), "the test proxy ended: ssh: connect refused");
        let mut s = child("printf SSH-2.0-x; cat >/dev/null");
        let mut buf = [0u8; 16];
        assert_eq!(s.read(&mut buf).unwrap(), 9);
        s.write_all(b"hello").unwrap();
        s.shutdown(std::net::Shutdown::Both).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(s.read(&mut buf).unwrap(), 0, "end after the server spoke");
    }
}
