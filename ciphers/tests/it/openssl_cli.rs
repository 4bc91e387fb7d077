//! Every non-AEAD cipher, in both backends, against the `openssl enc` command line with the
//! same key and IV: an independent process and, for Blowfish, CAST5 and RC4, OpenSSL 3's
//! legacy provider. RC4 with a 256-bit key is checked against Python's `cryptography` (the
//! library AsyncSSH uses), because `openssl enc` fixes RC4's key at 128 bits.

use crate::support::material;
use ciphers::raw::RawCipher;
use ciphers::{Backend, CipherKind, Primitive, CIPHERS};
use std::io::Write;
use std::process::{Command, Stdio};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn run(cmd: &mut Command, input: &[u8]) -> Vec<u8> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the openssl/python3 command must be installed for this test");
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn reference(evp: &str, legacy: bool, key: &[u8], iv: &[u8], input: &[u8]) -> Vec<u8> {
    let mut cmd = Command::new("openssl");
    cmd.arg("enc");
    if legacy {
        cmd.args(["-provider", "legacy", "-provider", "default"]);
    }
    cmd.args([
        &format!("-{evp}"),
        "-e",
        "-nopad",
        "-nosalt",
        "-K",
        &hex(key),
    ]);
    if !iv.is_empty() {
        cmd.args(["-iv", &hex(iv)]);
    }
    run(&mut cmd, input)
}

fn rc4_python(key: &[u8], input: &[u8]) -> Vec<u8> {
    let script = "import sys\n\
        try:\n    from cryptography.hazmat.decrepit.ciphers.algorithms import ARC4\n\
        except ImportError:\n    from cryptography.hazmat.primitives.ciphers.algorithms import ARC4\n\
        from cryptography.hazmat.primitives.ciphers import Cipher\n\
        e = Cipher(ARC4(bytes.fromhex(sys.argv[1])), mode=None).encryptor()\n\
        sys.stdout.buffer.write(e.update(sys.stdin.buffer.read()))\n";
    run(
        Command::new("python3").args(["-W", "ignore", "-c", script, &hex(key)]),
        input,
    )
}

#[test]
fn every_non_aead_cipher_matches_an_independent_implementation() {
    let data = material(4096, 9);
    for c in CIPHERS
        .iter()
        .filter(|c| !c.is_aead() && c.kind != CipherKind::None)
    {
        let (key, iv) = (material(c.key_len, 1), material(c.iv_len, 2));
        // RC4's discarded keystream is reproduced by encrypting that many zero bytes first.
        let discard = match c.primitive {
            Primitive::Rc4 { discard } => discard,
            _ => 0,
        };
        let mut input = vec![0u8; discard];
        input.extend_from_slice(&data);
        let full = if matches!(c.primitive, Primitive::Rc4 { .. }) && c.key_len != 16 {
            rc4_python(&key, &input)
        } else {
            reference(
                c.openssl_evp.unwrap(),
                c.primitive.needs_legacy_provider(),
                &key,
                &iv,
                &input,
            )
        };
        let want = &full[discard..];
        for &b in Backend::AVAILABLE {
            let mut enc = RawCipher::new(c, b, &key, &iv, true).unwrap();
            let mut buf = data.clone();
            // Uneven split at a block boundary: the state must carry over between packets.
            let (x, y) = buf.split_at_mut(c.block_len * 3);
            enc.apply(x).unwrap();
            enc.apply(y).unwrap();
            assert_eq!(&buf[..], want, "{} {b} differs from the reference", c.name);
        }
    }
}
