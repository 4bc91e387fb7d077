//! Packets exchanged with AsyncSSH's own packet encryption (an independent SSH implementation,
//! Python): for every cipher AsyncSSH speaks and every MAC, in both backends, it opens what we
//! seal and we open what it seals. This pins the wire format (length handling, padding rules,
//! MAC input, GCM counter, chacha20-poly1305 key split) beyond our own round trips.

use crate::support::{keys, material, pair_keys};
use ciphers::{Backend, CipherKind, CIPHERS, MACS};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

/// Reads cases as JSON on stdin; for each, opens `wires` and seals `payloads` with AsyncSSH.
const PEER: &str = r#"
import json, os, struct, sys
from asyncssh.encryption import get_encryption, get_encryption_params
out = []
for c in json.load(sys.stdin):
    args = (c["cipher"].encode(), bytes.fromhex(c["key"]), bytes.fromhex(c["iv"]),
            c["mac"].encode(), bytes.fromhex(c["mac_key"]), c["etm"])
    opener, sealer = get_encryption(*args), get_encryption(*args)
    opened = []
    for seq, w in enumerate(c["wires"]):
        w = bytes.fromhex(w)
        fl, tl = c["first_len"], c["tag_len"]
        first, _hdr = opener.decrypt_header(seq, w[:fl], 4)
        pkt = opener.decrypt_packet(seq, first, w[fl:len(w) - tl], 4, w[len(w) - tl:])
        opened.append(None if pkt is None else pkt[1:len(pkt) - pkt[0]].hex())
    bs = max(c["block_len"], 8)
    sealed = []
    for seq, p in enumerate(c["payloads"]):
        p = bytes.fromhex(p)
        run = 1 + len(p) + (0 if c["aad"] else 4)
        pad = bs - run % bs
        if pad < 4:
            pad += bs
        pkt = bytes([pad]) + p + os.urandom(pad)
        wire, mac = sealer.encrypt_packet(seq, struct.pack(">I", len(pkt)), pkt)
        sealed.append((wire + mac).hex())
    out.append({"opened": opened, "sealed": sealed})
json.dump(out, sys.stdout)
"#;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn asyncssh_opens_our_packets_and_we_open_its() {
    let payloads: Vec<Vec<u8>> = vec![vec![], material(100, 4), material(3000, 5)];
    let mut cases = Vec::new();
    let mut meta = Vec::new();
    for c in CIPHERS.iter().filter(|c| c.kind != CipherKind::None) {
        let macs: Vec<Option<&ciphers::MacSpec>> = if c.is_aead() {
            vec![None]
        } else {
            MACS.iter().map(Some).collect()
        };
        for m in macs {
            for &b in Backend::AVAILABLE {
                let (key, iv, mac_key) = keys(c, m);
                let (mut s, o) = pair_keys(c, m, b, b);
                let wires: Vec<String> = payloads
                    .iter()
                    .enumerate()
                    .map(|(seq, p)| {
                        let mut w = Vec::new();
                        s.seal(seq as u32, p, &mut w).unwrap();
                        hex(&w)
                    })
                    .collect();
                let f = o.framing();
                cases.push(json!({
                    "cipher": c.name, "mac": m.map_or("", |m| m.name),
                    "etm": m.is_some_and(|m| m.etm),
                    "key": hex(&key), "iv": hex(&iv), "mac_key": hex(&mac_key),
                    "first_len": f.length_bytes, "tag_len": f.tag_len, "block_len": f.block_len,
                    "aad": f.length_in_clear || c.is_aead(),
                    "wires": wires,
                    "payloads": payloads.iter().map(|p| hex(p)).collect::<Vec<_>>(),
                }));
                meta.push((c, m, b));
            }
        }
    }
    let mut child = Command::new("python3")
        .args(["-W", "ignore", "-c", PEER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 with asyncssh (tests/requirements.txt) is needed for this test");
    let input = serde_json::to_vec(&cases).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "asyncssh peer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results.len(), meta.len());
    for ((c, m, b), r) in meta.into_iter().zip(results) {
        let what = format!("{} {:?} {b}", c.name, m.map(|m| m.name));
        for (p, got) in payloads.iter().zip(r["opened"].as_array().unwrap()) {
            assert_eq!(
                got.as_str(),
                Some(hex(p).as_str()),
                "asyncssh opening ours: {what}"
            );
        }
        let (_, mut o) = pair_keys(c, m, b, b);
        for (seq, (p, w)) in payloads
            .iter()
            .zip(r["sealed"].as_array().unwrap())
            .enumerate()
        {
            let mut w = unhex(w.as_str().unwrap());
            let n = o.length_bytes();
            let total = o.decrypt_length(seq as u32, &mut w[..n]).unwrap();
            assert_eq!(total, w.len(), "{what}");
            let range = o
                .open(seq as u32, &mut w)
                .unwrap_or_else(|e| panic!("opening asyncssh's packet: {what}: {e}"));
            assert_eq!(&w[range], &p[..], "{what}");
        }
    }
}
