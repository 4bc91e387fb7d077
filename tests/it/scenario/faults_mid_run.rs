//! Faults in the middle of a run, met as a user would meet them: the server's session killed
//! mid-sample, the link dropping, the destination filling up, Ctrl-C while a receiver runs on
//! the server. Each ends in a one-line cause and its exit status, and leaves nothing behind:
//! not here, not on the server.

use crate::support;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use sshtune::embedded::EmbeddedSshd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{pipeline, procs};
use support::{sshtune, stderr, stdout};

/// Waits for `child` at most `within` (reading its output meanwhile, so a full pipe cannot
/// stall it), failing the test after killing it if it hangs.
fn wait_bounded(
    mut child: std::process::Child,
    within: Duration,
    what: &str,
) -> std::process::Output {
    use std::io::Read;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + within;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
            panic!("{what} hung past {within:?}: {err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// SIGKILLs the sshd processes serving the session `sink` runs in (its ancestors below the
/// listener), as the OOM killer or an admin's `kill` would.
fn kill_session_of(sink: u32, listener: u32) -> Vec<u32> {
    let sshd: Vec<u32> = procs::ancestors(sink, listener)
        .into_iter()
        .filter(|&p| procs::cmdline(p).is_some_and(|c| c[0].starts_with("sshd")))
        .collect();
    assert!(!sshd.is_empty(), "no sshd session above {sink}");
    for &p in &sshd {
        let _ = kill(Pid::from_raw(p as i32), Signal::SIGKILL);
    }
    sshd
}

/// The ciphers of the rows broken and measured against sshd, and against serve (whose MACs
/// are not the ones a CTR row would pick, so AEAD ciphers there).
const SSHD_ROWS: [&str; 2] = ["aes128-ctr", "aes256-ctr"];
const SERVE_ROWS: [&str; 2] = ["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"];

/// `sshtune bench DEST --engine ENGINE` measuring two ciphers' uploads of `SIZE`, one sample
/// each, JSON on stdout.
fn bench_two_rows(
    target: &sshtune::target::SshTarget,
    engine: &str,
    rows: [&str; 2],
) -> std::process::Child {
    sshtune()
        .arg("bench")
        .args(&target.options)
        .arg(&target.destination)
        .args(["--engine", engine, "--ciphers", &rows.join(",")])
        .args(["--direction", "upload", "--size", "700M", "--repeat", "1"])
        .args(["--warmup", "0", "--no-ceiling", "-q", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

const SIZE: u64 = 700 << 20;

/// The run of `bench_two_rows` whose first row's connection was broken: that row names the lost
/// connection in one line, the other is measured, and the run ends as a run with a failed row
/// does (status 0, the row carries the error).
fn first_row_lost_second_measured(child: std::process::Child, engine: &str, rows: [&str; 2]) {
    let o = wait_bounded(child, Duration::from_secs(120), "bench");
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let row = |c: &str| support::result_row(&v, c);
    let lost = row(rows[0]);
    let why = lost["error"].as_str().unwrap_or_else(|| panic!("{lost}"));
    eprintln!("{engine}: the broken row says {why:?}");
    assert_eq!(why.lines().count(), 1, "{why}");
    assert!(why.contains("connection lost"), "{why}");
    assert!(lost["median_mib_s"].is_null(), "{lost}");
    let measured = row(rows[1]);
    assert!(measured["error"].is_null(), "{measured}");
    assert!(measured["median_mib_s"].as_f64().unwrap() > 0.0);
}

/// No `ssh` of ours to `port` is left.
fn assert_no_ssh_to(port: u16) {
    let port = format!("-p {port} ");
    let ours: Vec<String> = procs::all()
        .into_iter()
        .filter_map(procs::cmdline)
        .map(|c| c.join(" "))
        .filter(|c| c.starts_with("ssh ") && c.contains(&port))
        .collect();
    assert!(ours.is_empty(), "ssh left: {ours:?}");
}

/// Every process below `root`, waiting up to `within` for them to go.
fn descendants_settle(root: u32, within: Duration) -> Vec<Vec<String>> {
    let deadline = Instant::now() + within;
    loop {
        let left: Vec<Vec<String>> = sshtune::process::descendants(root as i32)
            .into_iter()
            .filter_map(|p| procs::cmdline(p as u32))
            .collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `bench` with `engine` against a private sshd; the sshd session carrying the first row's
/// sample is SIGKILLed while the remote sink counts its bytes. No ssh of ours and no session
/// process of the server's is left.
fn session_killed_mid_sample(engine: &str) {
    let _one = support::exclusive();
    let server = EmbeddedSshd::start("").unwrap();
    let listener = procs::sshd_listener(server.dir());
    let child = bench_two_rows(&server.target, engine, SSHD_ROWS);
    // The sink of a timed upload: the framed session's `head -c SIZE`, or one transfer's `wc -c`.
    let sink = procs::wait_for_descendant(listener, Duration::from_secs(60), |c| {
        c == ["wc", "-c"] || c == ["head", "-c", &SIZE.to_string()]
    })
    .expect("the first sample started");
    let killed = kill_session_of(sink, listener);
    first_row_lost_second_measured(child, engine, SSHD_ROWS);
    let left = descendants_settle(listener, Duration::from_secs(5));
    assert!(
        left.is_empty(),
        "server sessions left: {left:?} (killed {killed:?})"
    );
    assert_no_ssh_to(server.port);
}

#[test]
fn openssh_engine_session_killed_mid_sample_fails_that_row_only() {
    session_killed_mid_sample("openssh");
}

#[test]
fn native_engine_session_killed_mid_sample_fails_that_row_only() {
    session_killed_mid_sample("native");
}

/// The server side of the established TCP connections to local port `port`: (peer port, bytes
/// received), as `ss` lists them.
fn served_connections(port: u16) -> Vec<(u16, u64)> {
    let out = Command::new("ss")
        .args(["-Htni", "state", "established"])
        .arg(format!("( sport = :{port} )"))
        .output()
        .expect("ss runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut conns = Vec::new();
    let mut peer = None;
    for line in text.lines() {
        if !line.starts_with(char::is_whitespace) {
            peer = line
                .split_whitespace()
                .nth(3)
                .and_then(|a| a.rsplit(':').next()?.parse().ok());
        } else if let Some(p) = peer.take() {
            let got = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("bytes_received:")?.parse().ok())
                .unwrap_or(0);
            conns.push((p, got));
        }
    }
    conns
}

/// `bench --engine native` against `sshtune serve`, whose sessions are threads of one process:
/// the connection carrying the first row's sample is destroyed on the server's side (`ss -K`,
/// the kernel's socket kill: the client gets a reset, as when a session process dies) once
/// 32 MiB of it arrived. The other connections, and serve, go on.
#[test]
fn native_engine_serve_connection_killed_mid_sample_fails_that_row_only() {
    let _one = support::exclusive();
    let serve = support::native::start_serve(&[]);
    let mut child = bench_two_rows(&serve.target(), "native", SERVE_ROWS);
    let deadline = Instant::now() + Duration::from_secs(60);
    let peer = loop {
        if let Some(&(p, _)) = served_connections(serve.port)
            .iter()
            .find(|(_, got)| *got > 32 << 20)
        {
            break p;
        }
        if Instant::now() >= deadline || child.try_wait().unwrap().is_some() {
            let o = wait_bounded(child, Duration::from_secs(1), "bench");
            panic!(
                "the first sample never started: {}{}",
                stdout(&o),
                stderr(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let st = Command::new("ss")
        .args(["-K", "state", "established"])
        .arg(format!("( sport = :{} and dport = :{peer} )", serve.port))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "ss -K");
    first_row_lost_second_measured(child, "native (serve)", SERVE_ROWS);
    assert!(serve.child_alive());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !served_connections(serve.port).is_empty() {
        assert!(Instant::now() < deadline, "serve still holds a connection");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// True when a root-only test can run: `support::require_root` (skips outside CI, fails in it).
fn root_or_skip(what: &str) -> bool {
    support::require_root(&format!("{what} needs root"))
}

/// A private sshd in the server namespace of a 100 Mbit/s link.
fn sshd_across(link: &support::netns::NetnsLink) -> EmbeddedSshd {
    EmbeddedSshd::start_with(&sshtune::embedded::Options {
        listen: Some(link.server_ip.into()),
        wrapper: link.server_wrapper(),
        ..Default::default()
    })
    .unwrap()
}

/// `sshtune ARGS…` run inside the client namespace.
fn sshtune_in(link: &support::netns::NetnsLink) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &link.client_ns, support::SSHTUNE]);
    cmd
}

/// Sets the server namespace's veth down for `secs`, then up again.
fn drop_link(link: &support::netns::NetnsLink, secs: u64) {
    let set = |state: &str| {
        let st = Command::new("ip")
            .args(["-n", &link.server_ns, "link", "set", "vs", state])
            .status()
            .unwrap();
        assert!(st.success(), "ip link set vs {state}");
    };
    set("down");
    std::thread::sleep(Duration::from_secs(secs));
    set("up");
}

/// Runs `cmd` (started in the client namespace), drops the link for 10 s once a process below
/// the server's sshd matches `working`, and checks the run ends in bounded time: a zero status
/// with every failed row named in one line, or one `sshtune:` line. Afterwards nothing of the
/// run is left in either namespace but the server's sshd listener.
fn link_dropped_mid_run(
    link: &support::netns::NetnsLink,
    server: &EmbeddedSshd,
    mut cmd: Command,
    working: impl Fn(&[String]) -> bool,
) -> std::process::Output {
    let listener = procs::sshd_listener(server.dir());
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    procs::wait_for_descendant(listener, Duration::from_secs(60), working)
        .expect("the run reached its transfer");
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    drop_link(link, 10);
    let o = wait_bounded(child, Duration::from_secs(120), "the run");
    let err = stderr(&o);
    eprintln!(
        "ended {:.1} s after the link went down, {}: {}",
        t0.elapsed().as_secs_f64(),
        o.status,
        err.trim()
    );
    assert!(!err.contains("panicked"), "{err}");
    if !o.status.success() {
        let last = err.trim().lines().last().unwrap_or_default();
        assert!(last.starts_with("sshtune: "), "{err}");
        assert_eq!(o.status.code(), Some(1), "{err}");
    }
    let left = procs::netns_settles(&link.server_ns, Duration::from_secs(10), |p| p == listener);
    assert!(left.is_empty(), "left on the server: {left:?}");
    let left = procs::netns_settles(&link.client_ns, Duration::from_secs(2), |_| false);
    assert!(left.is_empty(), "left on the client: {left:?}");
    o
}

/// Every row of a bench or pipeline report either measured or failed with a one-line error.
fn rows_measured_or_named(o: &std::process::Output, key: &str) {
    if !o.status.success() {
        return;
    }
    let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
    for r in v[key].as_array().unwrap_or_else(|| panic!("no {key}: {v}")) {
        if let Some(why) = r["error"].as_str() {
            eprintln!("row failed: {why}");
            assert_eq!(why.lines().count(), 1, "{why}");
        }
    }
}

/// `bench --engine ENGINE` over a link that goes down for 10 s in its first sample.
fn link_down_during_bench(engine: &str) {
    if !root_or_skip("a network namespace") {
        return;
    }
    let _one = support::exclusive();
    let link = support::netns::NetnsLink::new(Some(100));
    let server = sshd_across(&link);
    let mut cmd = sshtune_in(&link);
    cmd.arg("bench")
        .args(&server.target.options)
        .arg(&server.target.destination)
        .args(["--engine", engine, "--ciphers", "aes128-ctr,aes256-ctr"])
        .args(["--direction", "upload", "--size", "24M", "--repeat", "1"])
        .args(["--warmup", "0", "--no-ceiling", "-q", "--format", "json"]);
    let o = link_dropped_mid_run(&link, &server, cmd, |c| {
        c == ["wc", "-c"] || (c.len() == 3 && c[0] == "head" && c[1] == "-c")
    });
    rows_measured_or_named(&o, "results");
}

#[test]
fn link_down_for_10_s_during_bench_ends_in_bounded_time_leaving_nothing() {
    link_down_during_bench("openssh");
}

#[test]
fn link_down_for_10_s_during_native_bench_ends_in_bounded_time_leaving_nothing() {
    link_down_during_bench("native");
}

/// `pipeline HOST:DIR` over a link that goes down for 10 s while rsync copies.
#[test]
fn link_down_for_10_s_during_pipeline_ends_in_bounded_time_leaving_nothing() {
    if !root_or_skip("a network namespace") {
        return;
    }
    let _one = support::exclusive();
    let link = support::netns::NetnsLink::new(Some(100));
    let server = sshd_across(&link);
    let dest = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = pipeline::command(
        sshtune_in(&link),
        tmp.path(),
        pipeline::remote_dir(&server.target, dest.path()),
    );
    cmd.args(&server.target.options)
        .args(pipeline::ONE_CELL)
        .args(["--size", "24M", "--repeat", "2", "-q", "--format", "json"]);
    let o = link_dropped_mid_run(&link, &server, cmd, |c| {
        c.len() > 1 && c[0] == "rsync" && c[1] == "--server"
    });
    rows_measured_or_named(&o, "rows");
    assert!(support::pipeline::leftovers(dest.path()).is_empty());
    assert!(support::pipeline::leftovers(tmp.path()).is_empty());
    // The control master (its socket under the run's TMPDIR) went with the run.
    assert_eq!(
        support::pipeline::control_masters(tmp.path()),
        Vec::<String>::new()
    );
}

/// A filler that takes every free byte of the filesystem holding `dir`, as another writer would.
fn fill(dir: &std::path::Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let block = vec![0x5au8; 1 << 20];
    while f.write_all(&block).is_ok() {}
}

/// `pipeline DIR` on a 64 MiB tmpfs: the free-space check passes, then another writer fills the
/// filesystem as soon as the run directory exists. The run stops with one line naming the full
/// destination; its run directory and temp files are gone, the other writer's file stays.
#[test]
fn destination_filling_up_during_pipeline_is_named_and_scratch_removed() {
    if !root_or_skip("mounting a tmpfs") {
        return;
    }
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let (dest, tmp) = (dir.path().join("dest"), dir.path().join("tmp"));
    std::fs::create_dir(&dest).unwrap();
    std::fs::create_dir(&tmp).unwrap();
    let _unmount = procs::mount_tmpfs(&dest, "size=64m");
    let child = pipeline::command(sshtune(), &tmp, &dest)
        .args(pipeline::ONE_CELL)
        .args(["--size", "16M", "--repeat", "3", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while support::pipeline::leftovers(&dest).is_empty() {
        assert!(Instant::now() < deadline, "no run directory appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    fill(&dest);
    let o = wait_bounded(child, Duration::from_secs(60), "pipeline");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
    assert!(err.contains("no space left on the destination"), "{err}");
    assert_eq!(support::pipeline::leftovers(&dest), ["filler"]);
    support::pipeline::assert_no_leftovers(&tmp);
}

/// Ctrl-C (SIGINT) to `bench HOST` while its raw-TCP ceiling receiver listens on the server
/// (a host across a veth link, so the ceiling is measured there): the run stops with status
/// 130 and one line, and the server lists no process of the run — no receiver, no session.
#[test]
fn ctrl_c_while_the_ceiling_receiver_runs_leaves_no_receiver_on_the_server() {
    if !root_or_skip("a network namespace") {
        return;
    }
    let _one = support::exclusive();
    let link = support::netns::NetnsLink::new(None);
    let server = sshd_across(&link);
    let listener = procs::sshd_listener(server.dir());
    let child = sshtune_in(&link)
        .arg("bench")
        .args(&server.target.options)
        .arg(&server.target.destination)
        .args(["--ciphers", "aes128-ctr", "--repeat", "1", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A receiver is a process of the server's listening on a port of its own.
    let deadline = Instant::now() + Duration::from_secs(60);
    let receiver = loop {
        let listening = procs::listening_in(&link.server_ns);
        if let Some(p) = listening.into_iter().find(|&p| p != listener) {
            break p;
        }
        assert!(Instant::now() < deadline, "no ceiling receiver started");
        std::thread::sleep(Duration::from_millis(10));
    };
    eprintln!("receiver {receiver}: {:?}", procs::cmdline(receiver));
    // `ip netns exec` execs sshtune, so the child's pid is sshtune's.
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let o = wait_bounded(child, Duration::from_secs(30), "bench after Ctrl-C");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
    let left = procs::netns_settles(&link.server_ns, Duration::from_secs(3), |p| p == listener);
    assert!(left.is_empty(), "left on the server: {left:?}");
    assert!(procs::listening_in(&link.server_ns)
        .iter()
        .all(|&p| p == listener));
}
