//! Entry points for the fuzz targets that play an unauthenticated peer against the real
//! transport over a real loopback socket (the transport only speaks `TcpStream`): the server's
//! key exchange including the DH path, the client's handling of a KEX reply, and a server
//! session's channel and request handling with rekeying. The harness writes a script to one
//! end and discards what comes back; the code under test runs unchanged on the other end.
//!
//! Scripts are built from the fuzz input so the fuzzer spends its time inside messages rather
//! than on framing: after a fixed prefix, the input is cut into `u16`-length-prefixed payloads
//! sent as unencrypted packets. The session target negotiates the `none` cipher without a MAC,
//! so its packets after NEWKEYS are still plain; authentication (a signature the fuzzer cannot
//! make) is skipped there and has its own target.

use super::authorized::{Access, AuthorizedKeys};
use super::fold::Fold;
use super::limits::Limits;
use super::server::{self, ServerConfig};
use crate::transport::conn::{Options, Role, Transport};
use crate::transport::hostkey::Ed25519Key;
use crate::transport::kex::{self, Preferences};
use crate::wire::codec::NameList;
use crate::wire::kexinit::KexInit;
use crate::wire::plain::write_packet;
use crate::wire::transport::{KexEcdhInit, NewKeys};
use crate::wire::Message;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Fixed, so that runs are reproducible.
fn host_key() -> Arc<Ed25519Key> {
    static KEY: OnceLock<Arc<Ed25519Key>> = OnceLock::new();
    KEY.get_or_init(|| Arc::new(Ed25519Key::from_seed([7; 32]).expect("a fixed seed is a key")))
        .clone()
}

/// A connected loopback pair: (the end under test, the scripted peer). One listener serves
/// every call; the lock keeps two threads (parallel tests) from accepting each other's
/// connections, and the addresses are checked to be sure the two ends belong together.
fn socket_pair() -> Option<(TcpStream, TcpStream)> {
    static LISTENER: OnceLock<Option<Mutex<TcpListener>>> = OnceLock::new();
    let l = LISTENER
        .get_or_init(|| TcpListener::bind("127.0.0.1:0").ok().map(Mutex::new))
        .as_ref()?
        .lock()
        .ok()?;
    let peer = TcpStream::connect(l.local_addr().ok()?).ok()?;
    let ours = loop {
        let (s, from) = l.accept().ok()?;
        if Some(from) == peer.local_addr().ok() {
            break s;
        }
    };
    drop(l);
    for s in [&ours, &peer] {
        s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        s.set_write_timeout(Some(Duration::from_secs(2))).ok()?;
    }
    Some((ours, peer))
}

/// Runs `under_test` on one end while the other writes `script`, then half-closes and
/// drains whatever comes back until the end under test is dropped.
fn scripted(script: Vec<u8>, under_test: impl FnOnce(TcpStream)) {
    let Some((ours, peer)) = socket_pair() else {
        return;
    };
    let Ok(mut reader) = peer.try_clone() else {
        return;
    };
    let writer = std::thread::spawn(move || {
        let mut peer = peer;
        let _ = peer.write_all(&script);
        let _ = peer.shutdown(std::net::Shutdown::Write);
    });
    let drain = std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
    });
    under_test(ours);
    let _ = writer.join();
    let _ = drain.join();
}

/// The rest of the input as unencrypted packets: `u16` length, then that many payload bytes.
fn packets(mut data: &[u8], out: &mut Vec<u8>) {
    while data.len() >= 2 {
        let len = (u16::from_be_bytes([data[0], data[1]]) as usize).min(data.len() - 2);
        let (payload, rest) = data[2..].split_at(len);
        if !payload.is_empty() {
            let _ = write_packet(out, payload);
        }
        data = rest;
    }
}

fn names(list: &[&str]) -> NameList<'static> {
    list.iter().collect()
}

/// A peer's KEXINIT for `kex` with the given ciphers and MACs.
fn kexinit(kex: &str, strict: &str, ciphers: &[&str], macs: &[&str]) -> Vec<u8> {
    KexInit {
        cookie: [3; 16],
        kex: names(&[kex, strict]),
        host_key: names(&[crate::transport::hostkey::ED25519]),
        ciphers_c2s: names(ciphers),
        ciphers_s2c: names(ciphers),
        macs_c2s: names(macs),
        macs_s2c: names(macs),
        compression_c2s: names(&["none"]),
        compression_s2c: names(&["none"]),
        languages_c2s: NameList::default(),
        languages_s2c: NameList::default(),
        first_kex_follows: false,
    }
    .encode()
}

/// The banner every scripted peer sends first.
const BANNER: &[u8] = b"SSH-2.0-fuzz\r\n";

/// A scripted peer's opening: the banner, then its KEXINIT (`kexinit`) as one packet.
fn opening(kex: &str, strict: &str, ciphers: &[&str], macs: &[&str]) -> Vec<u8> {
    let mut script = BANNER.to_vec();
    let _ = write_packet(&mut script, &kexinit(kex, strict, ciphers, macs));
    script
}

fn server_cfg(opts: Options) -> ServerConfig {
    ServerConfig {
        host_key: host_key(),
        authorized: Access {
            keys: AuthorizedKeys::from_blobs([]),
            users: Vec::new(),
        },
        prefs: Preferences::from_catalog(true),
        opts,
        limits: Limits::default(),
        idle_timeout: Duration::from_secs(2),
        window: 1 << 16,
        packet_size: 1 << 14,
        verbose: false,
    }
}

/// The server's key exchange against an arbitrary peer. The first byte picks what precedes
/// the packets: nothing (raw bytes after the version line) or a well-formed KEXINIT for one of
/// the exchange methods, so the fuzzer reaches ECDH_INIT / DH `e` handling quickly.
pub fn server_kex(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let script = match pick % 4 {
        0 => [BANNER, rest].concat(),
        m => {
            let method = kex::KEX_METHODS[m as usize];
            let mut script = opening(
                method,
                kex::STRICT_CLIENT,
                &["aes128-ctr"],
                &["hmac-sha2-256"],
            );
            packets(rest, &mut script);
            script
        }
    };
    let cfg = server_cfg(Options::default());
    scripted(script, |s| {
        let _ = Transport::handshake(s, Role::Server(cfg.host_key.clone()), cfg.prefs, cfg.opts);
    });
}

/// The client's side against an arbitrary server: its KEXINIT and, above all, its
/// KEX_ECDH_REPLY / KEXDH_REPLY (host key, ephemeral key or DH `f`, signature).
pub fn client_kex_reply(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let method = kex::KEX_METHODS[pick as usize % kex::KEX_METHODS.len()];
    let mut script = opening(
        method,
        kex::STRICT_SERVER,
        &["aes128-ctr"],
        &["hmac-sha2-256"],
    );
    packets(rest, &mut script);
    scripted(script, |s| {
        let accept_any: crate::transport::conn::HostKeyCheck = Box::new(|_| Ok(()));
        let _ = Transport::handshake(
            s,
            Role::Client(accept_any),
            Preferences::from_catalog(true),
            Options::default(),
        );
    });
}

/// A server session past the key exchange. The first byte's low bit makes the server rekey
/// every 2 KiB, so the fuzzer also meets the server-started rekey and its queue. Its second
/// bit keeps the peer a stranger: the server answers authentication as serve does (no key
/// is listed), with the limits of a connection that has not logged in (packet size,
/// re-exchanges, the rekey queue). Otherwise the peer counts as logged in: channel opens,
/// requests, data, window adjusts, EOF/close, global requests and re-exchanges.
pub fn server_session(data: &[u8]) {
    session_execs(data);
}

/// How many `exec` requests the session saw.
fn session_execs(data: &[u8]) -> usize {
    let mut execs = 0;
    let Some((&pick, rest)) = data.split_first() else {
        return execs;
    };
    let mut script = opening(kex::CURVE25519, kex::STRICT_CLIENT, &["none"], &[]);
    let mut basepoint = [0u8; 32];
    basepoint[0] = 9;
    let init = KexEcdhInit {
        client_public: &basepoint,
    };
    let _ = write_packet(&mut script, &init.encode());
    let _ = write_packet(&mut script, &NewKeys.encode());
    packets(rest, &mut script);
    let opts = Options {
        rekey_bytes: (pick & 1 == 1).then_some(2048),
        ..Options::default()
    };
    let cfg = server_cfg(opts);
    scripted(script, |s| {
        let Ok(mut t) = Transport::handshake(
            s,
            Role::Server(cfg.host_key.clone()),
            cfg.prefs.clone(),
            cfg.opts.clone(),
        ) else {
            return;
        };
        if pick & 2 == 2 {
            stranger(&mut t, &cfg);
            return;
        }
        // As the server does once a client has logged in.
        t.authenticated(cfg.window);
        let mut log = Fold::new(server::COMMANDS_LOGGED);
        let _ = channels(&mut t, &cfg, &mut execs, &mut log);
        assert!(
            log.text().len() < 16 * 1024,
            "the command log line grew unbounded"
        );
    });
    execs
}

/// What `server::session` does before authentication, against a peer no key lets in.
fn stranger(t: &mut Transport, cfg: &ServerConfig) {
    let gate = super::gate::Gate::new(&cfg.authorized, None, false);
    let login = crate::transport::auth::server(t, &gate);
    assert!(login.is_err(), "a login without a listed key");
    gate.log_refusals();
}

/// What `server::session` does after authentication, with a fixed small reply instead of the
/// built-in commands (which measure, and would only slow the fuzzer down); each command goes
/// into the connection's log as the server's does, which must stay bounded.
fn channels(
    t: &mut Transport,
    cfg: &ServerConfig,
    execs: &mut usize,
    log: &mut Fold,
) -> crate::transport::Result<()> {
    loop {
        let mut ch = server::open_channel(t, cfg)?;
        while let Some((command, want_reply)) = server::next_exec(t, &mut ch)? {
            *execs += 1;
            log.push(server::command_entry(&command, 0));
            if want_reply {
                ch.reply(t, true)?;
            }
            ch.write(t, &[b'x'; 3000], &mut |_, _| Ok(()))?;
            ch.write_stderr(t, b"fuzz\n")?;
            ch.exit_status(t, 0)?;
            ch.send_eof(t)?;
        }
    }
}

/// authorized_keys and known_hosts text. Besides not panicking, a line whose first
/// non-blank character is `#` must never yield a key.
pub fn key_files(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let keys = AuthorizedKeys::parse(&text);
    for e in keys.entries() {
        let line = text.lines().nth(e.line - 1).unwrap_or_default();
        assert!(
            !line.trim_start_matches([' ', '\t']).starts_with('#'),
            "commented line {} yielded a key",
            e.line
        );
    }
    let now = 1_700_000_000;
    for peer in [None, Some(std::net::Ipv4Addr::LOCALHOST.into())] {
        for e in keys.entries() {
            let _ = keys.decide(&e.blob, peer, now);
        }
    }
    let _ = crate::transport::known_hosts::status([&*text], "[example.org]:2222", data);
}

/// The server side of user authentication, fed the client's messages as a script: the
/// bytes are split into USERAUTH_REQUEST payloads (u16 length each) and answered as serve
/// would, against a fixed authorized_keys with options. Never panics; never grants a login
/// without a valid signature from the one listed key.
pub fn auth_server(data: &[u8]) {
    use super::gate::Gate;
    use std::sync::OnceLock;
    static ACCESS: OnceLock<(Access, Vec<u8>)> = OnceLock::new();
    let (access, blob) = ACCESS.get_or_init(|| {
        let key = crate::transport::hostkey::Ed25519Key::from_seed([7; 32]).expect("fixed seed");
        let text = format!(
            "# {k}\nfrom=\"127.0.0.0/8,!10.*\",command=\"sink\" {k} a\ncert-authority {k}\n{k}\n",
            k = key.public_openssh()
        );
        let access = Access {
            keys: AuthorizedKeys::parse(&text),
            users: vec!["u".into()],
        };
        (access, key.public_blob())
    });
    let gate = Gate::new(access, Some(std::net::Ipv4Addr::LOCALHOST.into()), false);
    let mut rest = data;
    while rest.len() >= 2 {
        let len = u16::from_be_bytes([rest[0], rest[1]]) as usize;
        let body = &rest[2..];
        let (chunk, after) = body.split_at(len.min(body.len()));
        rest = after;
        // An odd length asks for a well-formed request around the chunk, so the key lookup,
        // PK_OK and signature checks are reached, not only the decoder.
        let msg = if len % 2 == 1 {
            shaped_request(chunk, blob)
        } else {
            chunk.to_vec()
        };
        if let Ok(Some(login)) = crate::transport::auth::fuzz_request(b"session id", &msg, &gate) {
            assert_eq!(login.user, "u", "login for a user not on the list");
            assert!(msg.windows(blob.len()).any(|w| w == blob.as_slice()));
        }
    }
}

/// A publickey USERAUTH_REQUEST: user, algorithm and key picked by the first bytes, the rest
/// as the signature (or none).
fn shaped_request(chunk: &[u8], listed: &[u8]) -> Vec<u8> {
    use crate::wire::userauth::{Method, UserauthRequest};
    use crate::wire::Message;
    let pick = |i: usize| chunk.get(i).copied().unwrap_or(0) as usize;
    let users = ["u", "root", "", "u\u{1b}[2J"];
    let algs = [
        crate::transport::sig::ED25519,
        crate::transport::sig::ECDSA_P256,
        crate::transport::sig::RSA_SHA256,
        crate::transport::sig::SSH_RSA,
        "none",
    ];
    let tail = chunk.get(3..).unwrap_or_default();
    UserauthRequest {
        user: users[pick(0) % users.len()].as_bytes(),
        service: b"ssh-connection",
        method: Method::PublicKey {
            algorithm: algs[pick(2) % algs.len()].as_bytes(),
            blob: if pick(1) % 4 < 2 { listed } else { tail },
            signature: (pick(1) % 2 == 1).then_some(tail),
        },
    }
    .encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn scripted_peers_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600)) {
            server_kex(&data);
            client_kex_reply(&data);
            server_session(&data);
            key_files(&data);
            auth_server(&data);
        }
    }

    /// The session script is right: a well-formed channel open and exec get answers (the
    /// harness would otherwise fuzz nothing past the key exchange). Spelled out byte by byte,
    /// apart from the message structs, so it also checks their layout.
    #[test]
    fn session_script_reaches_channels() {
        use crate::wire::numbers as n;
        use crate::wire::Writer;
        let mut w = Writer::new();
        w.u8(n::CHANNEL_OPEN)
            .string(b"session")
            .u32(0)
            .u32(1 << 20)
            .u32(32768);
        let open = w.into_bytes();
        let mut w = Writer::new();
        w.u8(n::CHANNEL_REQUEST)
            .u32(0)
            .string(b"exec")
            .bool(true)
            .string(b"sink");
        let exec = w.into_bytes();
        let mut data = vec![0u8];
        for p in [&open, &exec] {
            data.extend_from_slice(&(p.len() as u16).to_be_bytes());
            data.extend_from_slice(p);
        }
        assert_eq!(session_execs(&data), 1);
    }
}
