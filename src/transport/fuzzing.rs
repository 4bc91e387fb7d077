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

/// A KEXINIT payload (the transport decodes only payloads whose first byte is 20). Its
/// name-lists, read in place, must hold only non-empty printable names and survive a round
/// trip.
pub fn kexinit(data: &[u8]) {
    if data.first() != Some(&crate::wire::numbers::KEXINIT) {
        return;
    }
    if let Ok(k) = KexInit::decode(data) {
        let _ = super::kex::negotiate(&k, &k, true);
        for name in k
            .kex
            .iter()
            .chain(k.host_key.iter())
            .chain(k.ciphers_c2s.iter())
        {
            assert!(!name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic()));
        }
        let again = k.encode();
        assert_eq!(KexInit::decode(&again).as_ref(), Ok(&k));
    }
}

pub fn ident(data: &[u8]) {
    let _ = read_ident(&mut &data[..]);
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
            signatures(&data);
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
