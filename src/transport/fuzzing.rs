//! Entry points for the fuzz targets in `fuzz/` (and the property tests): each takes
//! arbitrary bytes and must return without panicking, whatever they contain.

use super::packet::{self, PacketReader};
use crate::wire::ident::read_ident;
use crate::wire::kexinit::KexInit;

/// Unencrypted packets, as before the first NEWKEYS.
pub fn plain_packets(data: &[u8]) {
    let mut r = PacketReader::new(data);
    for _ in 0..64 {
        if r.read_next().is_err() {
            break;
        }
        kexinit(r.payload());
    }
}

/// Packets under a cipher chosen by the first byte, with fixed keys: exercises length
/// decryption, MAC/tag checks and padding validation of every catalog cipher.
pub fn sealed_packets(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let cipher = &ciphers::CIPHERS[pick as usize % ciphers::CIPHERS.len()];
    let mac = (!cipher.is_aead() && cipher.name != "none")
        .then(|| ciphers::MACS[(pick as usize / 16) % ciphers::MACS.len()]);
    let keys = ciphers::DirectionKeys {
        cipher: cipher.name,
        mac: mac.map(|m| m.name),
        iv: &[7; 64],
        key: &[9; 64],
        mac_key: &[3; 64],
    };
    let Ok(opener) = packet::opener(&keys) else {
        return;
    };
    let mut r = PacketReader::new(rest);
    r.set_opener(opener);
    for _ in 0..16 {
        if r.read_next().is_err() {
            break;
        }
    }
}

/// A KEXINIT payload (the transport decodes only payloads whose first byte is 20).
pub fn kexinit(data: &[u8]) {
    if data.first() != Some(&crate::wire::numbers::KEXINIT) {
        return;
    }
    if let Ok(k) = KexInit::decode(data) {
        let _ = super::kex::negotiate(&k, &k, true);
    }
}

pub fn ident(data: &[u8]) {
    let _ = read_ident(&mut &data[..]);
}

/// authorized_keys and known_hosts text. Besides not panicking, a line whose first
/// non-blank character is `#` must never yield a key.
pub fn key_files(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let keys = crate::serve::authorized::AuthorizedKeys::parse(&text);
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
    let _ = super::known_hosts::status([&*text], "[example.org]:2222", data);
}

/// The server side of user authentication, fed the client's messages as a script: the
/// bytes are split into USERAUTH_REQUEST payloads (u16 length each) and answered as serve
/// would, against a fixed authorized_keys with options. Never panics; never grants a login
/// without a valid signature from the one listed key.
pub fn auth_server(data: &[u8]) {
    use crate::serve::authorized::{Access, AuthorizedKeys};
    use crate::serve::gate::Gate;
    use std::sync::OnceLock;
    static ACCESS: OnceLock<(Access, Vec<u8>)> = OnceLock::new();
    let (access, blob) = ACCESS.get_or_init(|| {
        let key = super::hostkey::Ed25519Key::from_seed([7; 32]).expect("fixed seed");
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
    let gate = Gate {
        access,
        peer: Some(std::net::Ipv4Addr::LOCALHOST.into()),
        verbose: false,
    };
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
        if let Ok(Some(login)) = super::auth::fuzz_request(b"session id", &msg, &gate) {
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
        super::sig::ED25519,
        super::sig::ECDSA_P256,
        super::sig::RSA_SHA256,
        super::sig::SSH_RSA,
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

/// Host key and signature blobs.
pub fn signatures(data: &[u8]) {
    let mid = data.len() / 2;
    for alg in super::hostkey::VERIFIABLE {
        let _ = super::hostkey::verify_as(alg, &data[..mid], b"exchange hash", &data[mid..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn parsers_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
            plain_packets(&data);
            sealed_packets(&data);
            kexinit(&data);
            ident(&data);
            key_files(&data);
            signatures(&data);
            auth_server(&data);
        }

        #[test]
        fn plausible_packets_never_panic(len in 0u32..70_000, pad in any::<u8>(), body in proptest::collection::vec(any::<u8>(), 0..512), pick in any::<u8>()) {
            let mut data = vec![pick];
            data.extend_from_slice(&len.to_be_bytes());
            data.push(pad);
            data.extend_from_slice(&body);
            sealed_packets(&data);
            plain_packets(&data[1..]);
        }
    }
}
