//! The remote side of a transfer: small POSIX shell programs that speak the `line` protocol
//! (`keyword!` puts each line's keyword into them at compile time).
//!
//! The session's sshd process (the one doing the crypto) is found by walking up from the
//! shell's parent; its utime+stime are read from /proc before and after the transfer, so
//! connection setup and login are excluded from the server CPU figure just as from the clock.

use super::line::{keyword, DONE};

/// Sets `q` to the CPU quota of process `$P`'s cgroup (`quota,period`), empty when none.
macro_rules! quota_snippet {
    () => {
        r#"q=; while IFS=: read -r id ctl path; do case ",$ctl," in
 *,cpu,*) [ -r "/sys/fs/cgroup/cpu$path/cpu.cfs_quota_us" ] &&
   q="$(cat "/sys/fs/cgroup/cpu$path/cpu.cfs_quota_us"),$(cat "/sys/fs/cgroup/cpu$path/cpu.cfs_period_us")";;
 ,,) [ -z "$q" ] && [ -r "/sys/fs/cgroup$path/cpu.max" ] && q=$(tr " " , < "/sys/fs/cgroup$path/cpu.max");;
 esac; done < /proc/$P/cgroup 2>/dev/null;"#
    };
}

/// Which raw-TCP receivers the server has (`receivers=`, ids as in `ceiling::Receiver::id`);
/// netcat's flavour from its help text, since the flavours bind differently.
macro_rules! receivers_snippet {
    () => {
        concat!(
            r#"R=; for t in iperf3 socat python3 bash; do command -v $t >/dev/null 2>&1 && R="$R$t,"; done;
if command -v ncat >/dev/null 2>&1; then R="${R}ncat,";
elif command -v nc >/dev/null 2>&1; then h=$(nc -h 2>&1 < /dev/null | head -n 20);
 case "$h" in *OpenBSD*) R="${R}nc-openbsd,";; *BusyBox*) case "$h" in *"-s ADDR"*) R="${R}nc-traditional,";; esac;; *Ncat*) R="${R}ncat,";; *" -s "*) R="${R}nc-traditional,";; esac;
elif command -v busybox >/dev/null 2>&1; then case "$(busybox nc --help 2>&1 < /dev/null)" in *"-s ADDR"*) R="${R}busybox-nc,";; esac; fi;
"#,
            "echo \"",
            keyword!(INFO),
            " receivers=$R\";"
        )
    };
}

/// Widens the session's stdout pipe (the one from this shell to sshd) to 1 MiB where Linux
/// allows it, with whichever of perl and python3 the server has; without either, or
/// elsewhere, it stays as it was. The client does the same on its side
/// (`process::widen_pipes`): behind a 64 KiB pipe a session's first download stalls. Its stdin
/// keeps the kernel's default width, as a user's `ssh host 'cat > file'` gets it, so an upload
/// is measured through the pipes a user's own command has. Runs before READY, so its fork and
/// exec stay outside every timed window.
macro_rules! pipes_snippet {
    () => {
        r#"{ perl -e "fcntl(STDOUT,1031,1048576)" ||
 python3 -c "import fcntl; fcntl.fcntl(1,1031,1048576)"; } 2>/dev/null;
"#
    };
}

/// `pipes_snippet!` for callers outside this module: a shell command line that widens its
/// own stdout pipe where it can (the tests' independent reference runs it too, so
/// both sides of a comparison are fed through pipes of one width).
pub const WIDEN_PIPES: &str = pipes_snippet!();

/// Shared prelude: finds the session process `P`, defines `u` (its CPU ticks), `s` (the
/// aggregate /proc/stat line; both with shell builtins only, since on a board with a small CPU
/// quota every fork+exec inside the timed window costs measurable time) and `q` (its cgroup CPU quota). Under a quota below one core the
/// session process shares its budget with this shell and the sink/source it runs, so `u` then
/// adds their ticks (own + reaped children): the figure compared with the quota is the group's. Contains no single quote, since
/// it travels inside `sh -c '...'`.
macro_rules! setup_snippet {
    () => {
        concat!(
    pipes_snippet!(),
    r#"P=$PPID; f=0; i=0;
while [ $i -lt 4 ]; do c=$(cat /proc/$P/comm 2>/dev/null);
 case "$c" in sshd*|dropbear*|sshtune*) f=1; break;; esac;
 n=$(sed "s/^.*) //" /proc/$P/stat 2>/dev/null | cut -d" " -f2);
 case "$n" in ""|0|1) break;; esac; P=$n; i=$((i+1)); done;
[ $f = 1 ] || { P=$PPID; c=$(cat /proc/$P/comm 2>/dev/null); };
K=$(getconf CLK_TCK 2>/dev/null || echo 100);
u(){ read -r l 2>/dev/null < /proc/$P/stat || return 0; set -- ${l##*) }; a=${12}; b=${13};
 if [ $g = 1 ]; then read -r l < /proc/$$/stat; set -- ${l##*) }; a=$((a+${12}+${14})); b=$((b+${13}+${15})); fi;
 echo "$a,$b"; };
s(){ read -r l 2>/dev/null < /proc/stat || return 0; set -- $l; shift; IFS=,; echo "$*"; };
"#,
    quota_snippet!(),
    r#"
g=0; case "$q" in [0-9]*,[0-9]*) [ "${q%%,*}" -lt "${q##*,}" ] && g=1;; esac;"#
        )
    };
}

/// The READY line, from the variables the setup defined.
macro_rules! ready_snippet {
    () => {
        concat!(
            r#"echo ""#,
            keyword!(READY),
            r#" pid=$P comm=$c tck=$K cpu=$(u) stat=$(s) quota=$q";"#
        )
    };
}

const PRELUDE: &str = concat!(setup_snippet!(), " ", ready_snippet!());

/// One session for many transfers: after the setup it reads a command line per transfer,
/// `up N` (then exactly N bytes follow on stdin) or `down N`, and answers each with its own
/// READY and DONE lines, so the login, the shell's start and the search for the session
/// process are paid once per connection instead of once per sample. It says `HELLO` first,
/// so a session opened ahead of its turn can be waited for without a request. `head -c N`
/// must stop after exactly N bytes (the preflight's `exact_head`), or the next command line
/// would be swallowed. The upload's DONE carries head's status, not a count: the client keeps its
/// input open, so head can only return once all N bytes have arrived. Any other line, or the
/// end of stdin, ends the session.
pub fn session_script() -> String {
    wrap(concat!(
        setup_snippet!(),
        " echo ",
        keyword!(HELLO),
        r#"; while read -r o n; do case "$o" in
 up) "#,
        ready_snippet!(),
        r#" head -c "$n" > /dev/null; r=$?; echo ""#,
        keyword!(DONE),
        r#" rc=$r cpu=$(u) stat=$(s)";;
 down) "#,
        ready_snippet!(),
        r#" head -c "$n" /dev/zero; r=$?; echo ""#,
        keyword!(DONE),
        r#" rc=$r cpu=$(u) stat=$(s)";;
 *) exit 2;; esac; done"#
    ))
}

/// The command line that starts one transfer of a session (`session_script`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `up N`: exactly N bytes follow on stdin.
    Up(u64),
    /// `down N`: the session writes N bytes.
    Down(u64),
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Up(n) => writeln!(f, "up {n}"),
            Self::Down(n) => writeln!(f, "down {n}"),
        }
    }
}

/// Counts and discards stdin, then reports the count and the CPU counters.
pub fn upload_script() -> String {
    wrap(&format!(
        "{PRELUDE} n=$(wc -c); n=$((n)); echo \"{DONE} bytes=$n cpu=$(u) stat=$(s)\""
    ))
}

/// Writes exactly `bytes` bytes, then reports the CPU counters.
pub fn download_script(bytes: u64) -> String {
    wrap(&format!(
        "{PRELUDE} head -c {bytes} /dev/zero; r=$?; echo \"{DONE} rc=$r cpu=$(u) stat=$(s)\""
    ))
}

/// The machine's facts as `SSHTUNE-INFO` lines: `kernel`, `cores` (online), `cpu` (model),
/// `arch` (`uname -m`), `cpu_flags` (the first `flags`/`Features` line of /proc/cpuinfo,
/// whole: `machine` picks the crypto features from it), `boot_id`. `sshtune serve`'s `stat`
/// prints the same keys (`MachineInfo` of its own process).
macro_rules! machine_snippet {
    () => {
        concat!(
        r#"echo ""#, keyword!(INFO), r#" kernel=$(uname -r 2>/dev/null)";
echo ""#, keyword!(INFO), r#" cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)";
echo ""#, keyword!(INFO), r#" cpu=$(grep -m1 -E "^(model name|Hardware|Processor|cpu model)" /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed "s/^ *//")";
echo ""#, keyword!(INFO), r#" arch=$(uname -m 2>/dev/null)";
echo ""#, keyword!(INFO), r#" cpu_flags=$(grep -m1 -E "^(flags|Features)[[:space:]]*:" /proc/cpuinfo 2>/dev/null | cut -d: -f2-)";
echo ""#, keyword!(INFO), r#" boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)";
"#
        )
    };
}

/// `machine_snippet!` for the other remote scripts (the pipeline's destination check).
pub const MACHINE_FACTS: &str = machine_snippet!();

/// Checks login, the tools the transfer scripts need, and gathers facts about the server.
pub fn preflight_script() -> String {
    wrap(concat!(
        "echo ",
        keyword!(OK),
        r#"; for t in cat head wc sed cut tr getconf; do command -v $t >/dev/null 2>&1 || echo ""#,
        keyword!(MISSING),
        r#" $t"; done;
"#,
        machine_snippet!(),
        r#"echo ""#,
        keyword!(INFO),
        r#" proc=$([ -r /proc/$PPID/stat ] && echo yes || echo no)";
echo ""#,
        keyword!(INFO),
        r#" sshtune=$(command -v sshtune 2>/dev/null)";
e=$(printf abcdef | { head -c 2 > /dev/null; cat; }); [ "$e" = cdef ] && e=yes || e=no; echo ""#,
        keyword!(INFO),
        r#" exact_head=$e";
"#,
        receivers_snippet!(),
        r#"
P=$$; "#,
        quota_snippet!(),
        r#" echo ""#,
        keyword!(INFO),
        r#" quota=$q""#
    ))
}

fn wrap(script: &str) -> String {
    wrap_in("sh", script)
}

/// `shell -c '<script>'`, the script on one line (so it needs `;` between commands).
pub(crate) fn wrap_in(shell: &str, script: &str) -> String {
    debug_assert!(!script.contains('\''));
    format!("{shell} -c '{}'", script.replace('\n', " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::{done, Fields, Ready, HELLO};

    #[test]
    fn scripts_are_single_quote_safe() {
        for s in [
            upload_script(),
            download_script(5),
            preflight_script(),
            session_script(),
        ] {
            assert!(s.starts_with("sh -c '") && s.ends_with('\''));
            assert_eq!(s.matches('\'').count(), 2, "{s}");
        }
    }

    /// The session loop under a real `sh`: HELLO, then two transfers on one input, each framed
    /// by its own READY and DONE, the upload's bytes consumed exactly (the next request still
    /// parses).
    #[test]
    fn session_script_runs_transfers_in_turn() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(session_script())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = Request::Up(5).to_string().into_bytes();
        input.extend_from_slice(b"abcde");
        input.extend(Request::Down(3).to_string().into_bytes());
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(lines[0], HELLO);
        assert!(Ready::parse(lines[1]).is_some());
        let rc = |d: Option<Fields>| d.unwrap().get("rc").map(str::to_string);
        assert_eq!(rc(done(lines[2])).as_deref(), Some("0"));
        assert!(Ready::parse(lines[3]).is_some());
        let last = lines[4].strip_prefix("\0\0\0").unwrap();
        assert_eq!(rc(done(last)).as_deref(), Some("0"));
    }

    /// The shell snippet must be a literal, so the width and the fcntl number are written twice:
    /// here they are checked against the client's constant and the kernel's.
    #[test]
    fn the_servers_pipes_are_as_wide_as_the_clients() {
        let width = crate::process::WIDE_PIPE_BYTES.to_string();
        assert_eq!(
            WIDEN_PIPES.matches(width.as_str()).count(),
            2,
            "{WIDEN_PIPES}"
        );
        #[cfg(target_os = "linux")]
        assert_eq!(
            WIDEN_PIPES
                .matches(&format!("{},", libc::F_SETPIPE_SZ))
                .count(),
            2
        );
    }
}
