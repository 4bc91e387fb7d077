//! The remote halves of the receivers a bare server may have, as POSIX sh (bash for
//! `/dev/tcp`): `socat`, netcat in its flavours, python3 and bash. Each is one-shot per run,
//! checks the token before it counts or sends, listens only on the address the ssh connection
//! arrived at (`$SSH_CONNECTION`'s third field, never the wildcard), and ends everything it
//! started after a deadline (a watchdog kills the session's process group) or when done.
//!
//! The receiver's clock is `/proc/uptime` (10 ms steps: 0.5% of a 2 s run); its CPU is the
//! shell's reaped children (`times`, run in the shell itself: in a `$(…)` subshell it would
//! count that subshell's children) and the whole machine's busy share (`/proc/stat`).

use super::job::{DONE, ERR, LISTEN};

/// How netcat binds and listens differs between implementations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcFlavour {
    /// Debian's netcat-openbsd: `nc -l ADDR PORT`.
    Openbsd,
    /// Hobbit's netcat and busybox builds with `-s`: `nc -l -s ADDR -p PORT`.
    Traditional,
    /// busybox without an `nc` link, built with `-s`.
    Busybox,
    /// Nmap's ncat: `ncat --recv-only -l ADDR PORT`.
    Ncat,
}

impl NcFlavour {
    pub fn id(self) -> &'static str {
        match self {
            NcFlavour::Openbsd => "nc-openbsd",
            NcFlavour::Traditional => "nc-traditional",
            NcFlavour::Busybox => "busybox-nc",
            NcFlavour::Ncat => "ncat",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        [Self::Openbsd, Self::Traditional, Self::Busybox, Self::Ncat]
            .into_iter()
            .find(|f| f.id() == id)
    }

    fn listen(self) -> &'static str {
        match self {
            NcFlavour::Openbsd => "nc -l $A $p < /dev/null",
            NcFlavour::Traditional => "nc -l -s $A -p $p < /dev/null",
            NcFlavour::Busybox => "busybox nc -l -s $A -p $p < /dev/null",
            NcFlavour::Ncat => "ncat --recv-only -l $A $p < /dev/null",
        }
    }
}

/// Shared start: the listen address, the temp dir, the watchdog, the hang-up watch (the
/// session's stdin ends when our `ssh` is gone, killed or interrupted: then the whole process
/// group goes, receiver included, not at the deadline; both run detached so that the
/// listen loop's `wait` waits for the receiver only), and the clock/CPU helpers.
fn prelude(token: &str, deadline_s: u64) -> String {
    format!(
        r#"set -- $SSH_CONNECTION; A=$3;
[ -n "$A" ] || {{ echo "{ERR} SSH_CONNECTION is not set"; exit 0; }};
[ -r /proc/uptime ] || {{ echo "{ERR} no /proc/uptime to time the run"; exit 0; }};
d=$(mktemp -d 2>/dev/null) || {{ echo "{ERR} mktemp failed"; exit 0; }};
trap "rm -rf $d; trap - EXIT; kill 0 2>/dev/null" EXIT;
( ( sleep {deadline_s}; kill 0 ) >/dev/null 2>&1 & );
exec 3<&0 0</dev/null; ( ( cat <&3; kill 0 ) >/dev/null 2>&1 & ); exec 3<&-;
K={token};
tm(){{ read -r a b < /proc/uptime; echo $a; }};
cs(){{ times > $d/t; {{ read -r x; read -r u v; }} < $d/t; C="$u,$v"; }};
st(){{ read -r l < /proc/stat; set -- $l; shift; IFS=,; echo "$*"; }};
"#
    )
}

/// One-shot listeners on the ports given (the first that binds serves each run), `runs` times.
/// `listen` reads `$A` and `$p`; for an upload its stdout is counted after the token line, for
/// a download it must itself check the token and send.
fn listen_loop(listen: &str, upload: bool, runs: u32, ports: &[u16]) -> String {
    let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
    let (start, result) = if upload {
        (format!("{listen} 2>$d/e | rx &"), "$(cat $d/r 2>/dev/null)")
    } else {
        (format!("{listen} 2>$d/e &"), "")
    };
    format!(
        r#"rx(){{ read -r t || exit 0; [ "$t" = "$K" ] || {{ echo STRANGER > $d/r; cat > /dev/null; exit 0; }}; s0=$(tm); n=$(wc -c); s1=$(tm); echo "bytes=$((n)) t0=$s0 t1=$s1" > $d/r; }};
r=0; for p in {ports}; do [ $r -lt {runs} ] || break;
 rm -f $d/e $d/r; cs; c0=$C; b0=$(st);
 {start}
 sleep 0.2 2>/dev/null || sleep 1;
 if [ -s $d/e ]; then wait; continue; fi;
 echo "{LISTEN} addr=$A port=$p";
 wait;
 cs; echo "{DONE} {result} cpu0=$c0 cpu1=$C stat0=$b0 stat1=$(st)";
 r=$((r+1)); done;
[ $r -ge {runs} ] || echo "{ERR} could not listen on $A: $(head -n 1 $d/e 2>/dev/null)";"#,
        ports = ports.join(" ")
    )
}

pub fn socat(token: &str, upload: bool, runs: u32, ports: &[u16], deadline_s: u64) -> String {
    let addr = r#"case "$A" in *:*) L=TCP6-LISTEN; B="[$A]";; *) L=TCP4-LISTEN; B=$A;; esac;"#;
    let body = if upload {
        listen_loop("socat -u $L:$p,bind=$B STDOUT", true, runs, ports)
    } else {
        format!(
            r#"echo "read -r t; [ \"\$t\" = $K ] || exit 0; exec cat /dev/zero" > $d/tx;
{}"#,
            listen_loop("socat $L:$p,bind=$B EXEC:\"sh $d/tx\"", false, runs, ports)
        )
    };
    crate::remote::scripts::wrap_in(
        "sh",
        &format!("{}{addr}\n{body}", prelude(token, deadline_s)),
    )
}

/// Netcat counts uploads only: sending after a token check needs a second channel that the
/// flavours do not share.
pub fn nc(flavour: NcFlavour, token: &str, runs: u32, ports: &[u16], deadline_s: u64) -> String {
    crate::remote::scripts::wrap_in(
        "sh",
        &format!(
            "{}{}",
            prelude(token, deadline_s),
            listen_loop(flavour.listen(), true, runs, ports)
        ),
    )
}

/// bash's `/dev/tcp` can only connect, so the server connects back to our listener at
/// `ip:port` (a path without NAT in between) and presents the token first.
pub fn bash(
    token: &str,
    upload: bool,
    runs: u32,
    ip: std::net::IpAddr,
    port: u16,
    deadline_s: u64,
) -> String {
    let work = if upload {
        format!(
            r#"s0=$(tm); n=$(wc -c <&3); s1=$(tm); exec 3<&-; cs; echo "{DONE} bytes=$((n)) t0=$s0 t1=$s1 cpu0=$c0 cpu1=$C stat0=$b0 stat1=$(st)";"#
        )
    } else {
        format!(
            r#"cat /dev/zero >&3 2>/dev/null; exec 3<&-; cs; echo "{DONE} cpu0=$c0 cpu1=$C stat0=$b0 stat1=$(st)";"#
        )
    };
    crate::remote::scripts::wrap_in(
        "bash",
        &format!(
            r#"{}r=0; while [ $r -lt {runs} ]; do cs; c0=$C; b0=$(st);
 exec 3<>/dev/tcp/{ip}/{port};
 echo $K >&3;
 {work}
 r=$((r+1)); done;"#,
            prelude(token, deadline_s)
        ),
    )
}

/// The python3 receiver: listens on port 0 of `$A`, `runs` one-shot connections, counts
/// (upload) or sends (download) after the token, with its own clock and CPU time. The program
/// travels base64-encoded as an argument, so no quoting can break it.
pub fn python(token: &str, upload: bool, runs: u32, deadline_s: u64) -> String {
    use base64ct::{Base64, Encoding};
    let program = format!(
        r#"import os,socket,sys,time
a,k,up,n=sys.argv[1],sys.argv[2].encode()+b"\n",sys.argv[3]=="up",int(sys.argv[4])
end=time.monotonic()+float(sys.argv[5])
def stat():
    try:
        return ",".join(open("/proc/stat").readline().split()[1:])
    except OSError:
        return ""
def cpu():
    t=os.times()
    return t[0]+t[1]
l=socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET)
l.bind((a,0))
l.listen(1)
print("{LISTEN} addr=%s port=%d"%(a,l.getsockname()[1]),flush=True)
done=0
while done<n:
    l.settimeout(max(0.1,end-time.monotonic()))
    c,_=l.accept()
    c.settimeout(5)
    got=b""
    while len(got)<len(k) and not got.endswith(b"\n"):
        b=c.recv(1)
        if not b:
            break
        got+=b
    if got!=k:
        c.close()
        print("{DONE} STRANGER",flush=True)
        done+=1
        continue
    c.settimeout(max(0.1,end-time.monotonic()))
    c0,s0,t0=cpu(),stat(),time.monotonic()
    nb=0
    if up:
        while True:
            b=c.recv(262144)
            if not b:
                break
            nb+=len(b)
    else:
        z=bytes(262144)
        try:
            while True:
                c.sendall(z)
        except OSError:
            pass
    t1=time.monotonic()
    c.close()
    print("{DONE} bytes=%d t0=%.6f t1=%.6f cpu_s=%.3f stat0=%s stat1=%s"%(nb,t0,t1,cpu()-c0,s0,stat()) if up else "{DONE} cpu_s=%.3f stat0=%s stat1=%s"%(cpu()-c0,s0,stat()),flush=True)
    done+=1
"#
    );
    let b64 = Base64::encode_string(program.as_bytes());
    crate::remote::scripts::wrap_in(
        "sh",
        &format!(
            r#"set -- $SSH_CONNECTION; A=$3;
[ -n "$A" ] || {{ echo "{ERR} SSH_CONNECTION is not set"; exit 0; }};
exec python3 -c "import base64,sys;exec(base64.b64decode(sys.argv.pop(1)))" {b64} $A {token} {dir} {runs} {deadline_s}"#,
            dir = if upload { "up" } else { "down" }
        ),
    )
}

/// `iperf3 -s -1` (one-off, JSON) per run; the client is the local iperf3, whose cookie the
/// server's report must carry (a stranger served first would show a different one).
pub fn iperf3(token: &str, runs: u32, ports: &[u16], deadline_s: u64) -> String {
    let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
    crate::remote::scripts::wrap_in(
        "sh",
        &format!(
            r#"{}r=0; for p in {ports}; do [ $r -lt {runs} ] || break;
 rm -f $d/j $d/e; cs; c0=$C; b0=$(st);
 iperf3 -s -1 -B $A -p $p -J > $d/j 2>$d/e &
 sleep 0.3 2>/dev/null || sleep 1;
 if [ -s $d/e ] || grep -q "\"error\"" $d/j 2>/dev/null; then wait; continue; fi;
 echo "{LISTEN} addr=$A port=$p";
 wait;
 cs; echo "{DONE} cookie=$(sed -n "s/.*\"cookie\":[^\"]*\"\([^\"]*\)\".*/\1/p" $d/j | head -n 1) cpu0=$c0 cpu1=$C stat0=$b0 stat1=$(st)";
 r=$((r+1)); done;
[ $r -ge {runs} ] || echo "{ERR} iperf3 could not listen on $A: $(head -n 1 $d/e 2>/dev/null)";"#,
            prelude(token, deadline_s),
            ports = ports.join(" ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_travel_in_single_quotes() {
        let ports = [20001, 20002];
        let ip: std::net::IpAddr = "10.0.0.1".parse().unwrap();
        for s in [
            socat("T0k", true, 3, &ports, 60),
            socat("T0k", false, 3, &ports, 60),
            nc(NcFlavour::Openbsd, "T0k", 3, &ports, 60),
            bash("T0k", true, 3, ip, 5000, 60),
            python("T0k", false, 3, 60),
            iperf3("T0k", 3, &ports, 60),
        ] {
            assert!(s.ends_with('\''), "{s}");
            assert_eq!(s.matches('\'').count(), 2, "{s}");
            assert!(
                !s.contains("0.0.0.0") && !s.contains("::"),
                "never the wildcard: {s}"
            );
        }
    }

    #[test]
    fn flavour_ids_round_trip() {
        for f in [
            NcFlavour::Openbsd,
            NcFlavour::Traditional,
            NcFlavour::Busybox,
            NcFlavour::Ncat,
        ] {
            assert_eq!(NcFlavour::from_id(f.id()), Some(f));
        }
    }
}
