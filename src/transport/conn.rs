//! The transport driver shared by client and server: version exchange, the initial key
//! exchange, rekeying when a limit is reached, and delivery of everything above the
//! transport layer (RFC 4253 §4–§11). Blocking I/O on one thread per connection.

use super::error::{Error, Result};
use super::hostkey::{self, Ed25519Key};
use super::kex::{self, Ephemeral, ExchangeHash, Negotiated, Offer, Preferences};
use super::packet::{self, PacketReader, PacketWriter};
use super::stream::Stream;
use crate::wire::ident::read_ident;
use crate::wire::kexinit::KexInit;
use crate::wire::numbers as n;
use crate::wire::transport::{Disconnect, KexEcdhInit, KexEcdhReply, NewKeys};
use crate::wire::Message;
use std::collections::VecDeque;
use std::io::{BufReader, Write};
use std::sync::Arc;

pub const OUR_IDENT: &str = concat!("SSH-2.0-sshtune_", env!("CARGO_PKG_VERSION"));

/// Bytes of peer messages we hold while a rekey we started waits for the peer's KEXINIT,
/// before it has authenticated: a few requests fit, a flood does not.
pub const PENDING_LIMIT: usize = 4 * packet::PRE_AUTH_MAX_PACKET;

/// The same once a channel may carry data: the whole receive `window` we granted may be in
/// flight when our KEXINIT leaves, plus room for a few packets of any size around it. A
/// client's default, since it grants whatever window it is asked to.
pub fn pending_limit(window: u32) -> usize {
    window as usize + 4 * ciphers::MAX_PACKET_LEN
}

/// Key re-exchanges a server allows before the client has authenticated. Each costs the
/// server an exponentiation or two and a signature; a client has no reason to re-key before
/// login more than once (OpenSSH's never does: its limits are gigabytes or an hour away).
pub const MAX_REKEYS_BEFORE_AUTH: u32 = 1;

/// Called with the server's host key blob during the initial exchange; Err refuses it.
pub type HostKeyCheck = Box<dyn FnMut(&[u8]) -> Result<()> + Send>;

pub enum Role {
    Client(HostKeyCheck),
    Server(Arc<Ed25519Key>),
}

/// Knobs that tests and the bench change.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Rekey after this many bytes in one direction, below the cipher's own limit.
    pub rekey_bytes: Option<u64>,
    /// Key exchange methods to offer instead of all of `kex::KEX_METHODS`.
    pub kex: Option<Vec<String>>,
    /// Host key algorithms a client offers instead of all it can verify.
    pub host_keys: Option<Vec<String>>,
    /// Threads that seal outgoing packets: 1 (the default, 0 counts as 1) seals on the
    /// connection's own thread; 2 adds a helper that computes the keystream ahead for
    /// counter-mode ciphers and chacha20-poly1305 (`SealingKey::with_keystream_ahead`). Other
    /// ciphers ignore it: their keystream depends on the data or they have none.
    pub threads: u8,
}

impl Options {
    fn offer(&self) -> Offer<'_> {
        Offer {
            kex: self.kex.as_deref(),
            host_keys: self.host_keys.as_deref(),
        }
    }
}

pub struct Transport {
    reader: PacketReader<Stream>,
    writer: PacketWriter<Stream>,
    role: Role,
    prefs: Preferences,
    opts: Options,
    client_ident: String,
    server_ident: String,
    session_id: Option<Vec<u8>>,
    /// Host key seen in the first exchange: a rekey must present the same one.
    server_key: Option<Vec<u8>>,
    pub negotiated: Option<Negotiated>,
    /// Limits for the current keys, in cipher blocks per direction.
    limit_blocks_out: u64,
    limit_blocks_in: u64,
    /// Messages that arrived while a rekey we started was waiting for the peer's KEXINIT.
    pending: VecDeque<Vec<u8>>,
    /// Bytes in `pending`, and how many it may hold before we disconnect.
    pending_bytes: usize,
    pending_limit: usize,
    current: Option<Vec<u8>>,
    pub rekeys: u32,
    /// Key re-exchanges allowed in all (`MAX_REKEYS_BEFORE_AUTH` on a server until
    /// `authenticated`); past it the connection ends.
    max_rekeys: Option<u32>,
}

impl Transport {
    /// Exchanges versions and keys; returns once the first NEWKEYS went both ways.
    pub fn handshake(
        stream: impl Into<Stream>,
        role: Role,
        prefs: Preferences,
        opts: Options,
    ) -> Result<Self> {
        let stream = stream.into();
        stream.set_nodelay(true)?;
        let mut out = stream.try_clone()?;
        out.write_all(format!("{OUR_IDENT}\r\n").as_bytes())?;
        let mut buffered = BufReader::with_capacity(4096, stream.try_clone()?);
        let peer = read_ident(&mut buffered)?;
        let leftover = buffered.buffer().to_vec();
        let is_server = matches!(role, Role::Server(_));
        // A server keeps a stranger's packets small until login; a client reads what its
        // server sends.
        let max_packet = if is_server {
            packet::PRE_AUTH_MAX_PACKET
        } else {
            ciphers::MAX_PACKET_LEN
        };
        let mut reader = PacketReader::with_max_packet(stream, max_packet);
        reader.preload(&leftover);
        let (client_ident, server_ident) = if is_server {
            (peer.line, OUR_IDENT.to_string())
        } else {
            (OUR_IDENT.to_string(), peer.line)
        };
        let mut t = Self {
            reader,
            writer: PacketWriter::new(out),
            role,
            prefs,
            opts,
            client_ident,
            server_ident,
            session_id: None,
            server_key: None,
            negotiated: None,
            limit_blocks_out: u64::MAX,
            limit_blocks_in: u64::MAX,
            pending: VecDeque::new(),
            pending_bytes: 0,
            pending_limit: if is_server {
                PENDING_LIMIT
            } else {
                pending_limit(u32::MAX)
            },
            current: None,
            rekeys: 0,
            max_rekeys: is_server.then_some(MAX_REKEYS_BEFORE_AUTH),
        };
        let ours = kex::our_kexinit(&t.prefs, t.opts.offer(), is_server, true);
        let ours_bytes = ours.encode();
        t.writer.send_payload(&ours_bytes)?;
        t.read_kex_msg(n::KEXINIT, true)?;
        t.run_kex(&ours, &ours_bytes, true)?;
        Ok(t)
    }

    pub fn is_server(&self) -> bool {
        matches!(self.role, Role::Server(_))
    }

    pub fn session_id(&self) -> &[u8] {
        self.session_id.as_deref().unwrap_or_default()
    }

    pub fn peer_ident(&self) -> &str {
        if self.is_server() {
            &self.client_ident
        } else {
            &self.server_ident
        }
    }

    /// The peer has logged in (a server calls this): packets up to `MAX_PACKET_LEN`, as many
    /// key re-exchanges as the rekey limits ask for, and room for the whole channel `window`
    /// to wait during a rekey we start.
    pub fn authenticated(&mut self, window: u32) {
        self.pending_limit = pending_limit(window);
        self.max_rekeys = None;
        self.reader.set_max_packet(ciphers::MAX_PACKET_LEN);
    }

    pub fn stream(&self) -> &Stream {
        self.reader.get_ref()
    }

    /// CPU seconds the keystream helpers of this connection's sending direction have used
    /// (0 with `threads` 1): the connection's CPU is its own thread's plus this.
    pub fn helper_cpu_seconds(&self) -> f64 {
        self.writer.helper_cpu_seconds()
    }

    /// Receives the next message above the transport layer; its payload is `payload()`.
    pub fn recv(&mut self) -> Result<()> {
        loop {
            if let Some(p) = self.pending.pop_front() {
                self.pending_bytes -= p.len();
                self.current = Some(p);
                return Ok(());
            }
            self.current = None;
            // Data packets may still wait in the writer; the peer's answer may depend on them.
            self.writer.flush_held()?;
            if self.reader.since_kex.blocks >= self.limit_blocks_in {
                self.rekey(false)?;
                continue;
            }
            self.reader.read_next()?;
            let num = *self
                .reader
                .payload()
                .first()
                .ok_or_else(|| Error::protocol("empty message"))?;
            match num {
                n::IGNORE | n::DEBUG | n::UNIMPLEMENTED => continue,
                n::DISCONNECT => return Err(parse_disconnect(self.reader.payload())),
                n::KEXINIT => self.rekey(true)?,
                21..=49 => {
                    return Err(Error::protocol(format!(
                        "key exchange message {num} outside a key exchange"
                    )))
                }
                _ => return Ok(()),
            }
        }
    }

    pub fn payload(&self) -> &[u8] {
        match &self.current {
            Some(p) => p,
            None => self.reader.payload(),
        }
    }

    /// A buffer for the next outgoing payload (written in place to spare a copy); send it
    /// with `send_begun`. Rekeys first when a limit is reached.
    pub fn begin(&mut self) -> Result<&mut Vec<u8>> {
        if self.writer.since_kex.blocks >= self.limit_blocks_out {
            self.rekey(false)?;
        }
        Ok(self.writer.begin())
    }

    pub fn send_begun(&mut self) -> Result<()> {
        self.writer.send()
    }

    /// Sends one bulk-data message whose payload is `head` followed by `data`, encrypted
    /// from `data` where it is (no copy into a packet buffer first). The sealed packet may
    /// wait in the writer's buffer so several go to the socket in one write: call
    /// `flush_held` when the burst ends; any other send, and every `recv`, writes what waits
    /// first. Rekeys first when a limit is reached.
    pub fn send_data_held(&mut self, head: &[u8], data: &[u8]) -> Result<()> {
        if self.writer.since_kex.blocks >= self.limit_blocks_out {
            self.rekey(false)?;
        }
        self.writer.send_data_held(head, data)
    }

    /// Writes packets held by `send_begun_held`.
    pub fn flush_held(&mut self) -> Result<()> {
        self.writer.flush_held()
    }

    pub fn send(&mut self, payload: &[u8]) -> Result<()> {
        self.begin()?.extend_from_slice(payload);
        self.writer.send()
    }

    /// Sends one message, encoded straight into the packet buffer.
    pub fn send_msg<'m, M: Message<'m>>(&mut self, msg: &M) -> Result<()> {
        msg.encode_into(self.begin()?);
        self.writer.send()
    }

    /// Best effort: tells the peer why we hang up. Errors are ignored, the peer may be gone.
    pub fn disconnect(&mut self, reason: u32, text: &str) {
        let _ = self
            .writer
            .send_payload(&Disconnect::new(reason, text).encode());
        let _ = self.reader.get_ref().shutdown(std::net::Shutdown::Both);
    }

    /// Starts a key re-exchange, or answers the peer's (`answer`: its KEXINIT is the payload
    /// just read, and stays in the read buffer until the exchange hash has it).
    fn rekey(&mut self, answer: bool) -> Result<()> {
        if let Some(max) = self.max_rekeys.filter(|&max| self.rekeys >= max) {
            return Err(Error::protocol(format!(
                "more than {max} key re-exchange before authentication"
            )));
        }
        let ours = kex::our_kexinit(&self.prefs, self.opts.offer(), self.is_server(), false);
        let ours_bytes = ours.encode();
        self.writer.send_payload(&ours_bytes)?;
        if !answer {
            self.await_kexinit()?;
        }
        self.run_kex(&ours, &ours_bytes, false)?;
        self.rekeys += 1;
        Ok(())
    }

    /// Reads until the peer's KEXINIT answers ours, queueing the messages before it (bounded
    /// by `pending_limit`).
    fn await_kexinit(&mut self) -> Result<()> {
        loop {
            self.reader.read_next()?;
            let p = self.reader.payload();
            match p.first() {
                Some(&n::KEXINIT) => return Ok(()),
                Some(&(n::IGNORE | n::DEBUG | n::UNIMPLEMENTED)) => {}
                Some(&n::DISCONNECT) => return Err(parse_disconnect(p)),
                Some(&num) if n::is_kex_phase(num) => {
                    return Err(Error::protocol(format!(
                        "message {num} before KEXINIT in a re-exchange"
                    )))
                }
                Some(_) => {
                    self.pending_bytes += p.len();
                    if self.pending_bytes > self.pending_limit {
                        return Err(Error::protocol(format!(
                            "more than {} bytes of messages without answering our KEXINIT",
                            self.pending_limit
                        )));
                    }
                    self.pending.push_back(p.to_vec());
                }
                None => return Err(Error::protocol("empty message")),
            }
        }
    }

    /// Reads the next key-exchange message, which must be `want`; it is then `reader.payload()`.
    fn read_kex_msg(&mut self, want: u8, initial: bool) -> Result<()> {
        let strict = initial && self.negotiated.as_ref().is_some_and(|neg| neg.strict);
        loop {
            self.reader.read_next()?;
            let p = self.reader.payload();
            let num = *p.first().ok_or_else(|| Error::protocol("empty message"))?;
            if num == want {
                return Ok(());
            }
            match num {
                n::DISCONNECT => return Err(parse_disconnect(p)),
                // Strict KEX forbids anything but the expected messages in the first exchange
                // (a stray message before KEXINIT is caught by its sequence number).
                n::IGNORE | n::DEBUG if !strict => {}
                _ => {
                    return Err(Error::protocol(format!(
                        "expected message {want} during key exchange, got {num}"
                    )))
                }
            }
        }
    }

    /// One key exchange, from the peer's KEXINIT (the payload just read) to NEWKEYS both ways.
    fn run_kex(&mut self, ours: &KexInit, ours_bytes: &[u8], initial: bool) -> Result<()> {
        let KexStart {
            neg,
            hash,
            wrong_guess,
        } = self.start_kex(ours, ours_bytes, initial)?;
        if initial {
            self.negotiated = Some(neg.clone());
        }
        if wrong_guess {
            // RFC 4253 §7: the peer's guessed kex packet is to be ignored.
            self.reader.read_next()?;
        }
        let eph = Ephemeral::new(&neg.kex)?;
        let exchanged = match &self.role {
            Role::Client(_) => self.client_exchange(eph, hash, &neg.host_key, initial)?,
            Role::Server(key) => {
                let key = key.clone();
                self.server_exchange(&key, eph, hash, initial)?
            }
        };
        self.new_keys(&neg, &exchanged, initial)
    }

    /// Decodes the peer's KEXINIT where it lies in the read buffer (once; its names are not
    /// copied), negotiates, and starts the exchange hash with both KEXINITs, so that nothing
    /// of the peer's message outlives this call.
    fn start_kex(&self, ours: &KexInit, ours_bytes: &[u8], initial: bool) -> Result<KexStart> {
        let theirs_bytes = self.reader.payload();
        let theirs = KexInit::decode(theirs_bytes)?;
        let is_server = self.is_server();
        let (c, s) = if is_server {
            (&theirs, ours)
        } else {
            (ours, &theirs)
        };
        let neg = kex::negotiate(c, s, initial)?;
        if initial && neg.strict && self.reader.seq != 1 {
            return Err(Error::protocol(
                "strict KEX: KEXINIT was not the first message",
            ));
        }
        let wrong_guess = theirs.first_kex_follows
            && (theirs.kex.first() != Some(neg.kex.as_str())
                || theirs.host_key.first() != Some(neg.host_key.as_str()));
        let (client_kexinit, server_kexinit) = if is_server {
            (theirs_bytes, ours_bytes)
        } else {
            (ours_bytes, theirs_bytes)
        };
        let hash = ExchangeHash::start(
            kex::kex_hash(&neg.kex),
            &self.client_ident,
            &self.server_ident,
            client_kexinit,
            server_kexinit,
        );
        Ok(KexStart {
            neg,
            hash,
            wrong_guess,
        })
    }

    /// The client's half: our ephemeral key out, the server's reply in, its signature over H
    /// checked, and its host key checked (first exchange) or compared (rekey).
    fn client_exchange(
        &mut self,
        eph: Ephemeral,
        hash: ExchangeHash,
        host_key_alg: &str,
        initial: bool,
    ) -> Result<Exchanged> {
        let client_public = eph.public.clone();
        let init = KexEcdhInit {
            client_public: &client_public,
        };
        self.writer.send_payload(&init.encode())?;
        self.read_kex_msg(n::KEX_ECDH_REPLY, initial)?;
        let reply = KexEcdhReply::decode(self.reader.payload())?;
        let host_key = reply.host_key.to_vec();
        let shared = eph.agree(reply.server_public)?;
        let h = hash.finish(&host_key, &client_public, reply.server_public, &shared);
        hostkey::verify_as(host_key_alg, &host_key, &h, reply.signature)?;
        match &self.server_key {
            Some(k) if *k != host_key => {
                return Err(Error::HostKey(
                    "the server presented another host key when rekeying".into(),
                ))
            }
            Some(_) => {}
            None => {
                if let Role::Client(check) = &mut self.role {
                    check(&host_key)?;
                }
                self.server_key = Some(host_key);
            }
        }
        Ok(Exchanged { shared, h })
    }

    /// The server's half: the client's ephemeral key in, ours and the signature over H out.
    fn server_exchange(
        &mut self,
        key: &Ed25519Key,
        eph: Ephemeral,
        hash: ExchangeHash,
        initial: bool,
    ) -> Result<Exchanged> {
        self.read_kex_msg(n::KEX_ECDH_INIT, initial)?;
        let client_public = KexEcdhInit::decode(self.reader.payload())?.client_public;
        let server_public = eph.public.clone();
        let shared = eph.agree(client_public)?;
        let host_key = key.public_blob();
        let h = hash.finish(&host_key, client_public, &server_public, &shared);
        let reply = KexEcdhReply {
            host_key: &host_key,
            server_public: &server_public,
            signature: &key.sign(&h),
        };
        self.writer.send_payload(&reply.encode())?;
        Ok(Exchanged { shared, h })
    }

    /// Keys from K and H, NEWKEYS both ways, and the new keys' rekey limits.
    fn new_keys(&mut self, neg: &Negotiated, ex: &Exchanged, initial: bool) -> Result<()> {
        let session_id = self.session_id.get_or_insert_with(|| ex.h.clone()).clone();
        let (c2s, s2c) = kex::derive_keys(neg, &ex.shared, &ex.h, &session_id)?;
        let (out_keys, in_keys) = if self.is_server() {
            (s2c, c2s)
        } else {
            (c2s, s2c)
        };
        let sealer = packet::sealer(&out_keys.keys(), self.opts.threads >= 2)?;
        let opener = packet::opener(&in_keys.keys())?;
        let strict = self.negotiated.as_ref().is_some_and(|n| n.strict);

        self.writer.send_payload(&NewKeys.encode())?;
        self.writer.set_sealer(sealer);
        if strict {
            self.writer.seq = 0;
        }
        self.read_kex_msg(n::NEWKEYS, initial)?;
        self.reader.set_opener(opener);
        if strict {
            self.reader.seq = 0;
        }
        self.limit_blocks_out = self.limit_for(out_keys.cipher);
        self.limit_blocks_in = self.limit_for(in_keys.cipher);
        if !initial {
            if let Some(n0) = &mut self.negotiated {
                n0.cipher_c2s = neg.cipher_c2s;
                n0.cipher_s2c = neg.cipher_s2c;
                n0.mac_c2s = neg.mac_c2s;
                n0.mac_s2c = neg.mac_s2c;
            }
        }
        Ok(())
    }

    fn limit_for(&self, cipher: &str) -> u64 {
        let spec = ciphers::cipher(cipher);
        let block = spec.map_or(8, |s| s.block_len.max(8)) as u64;
        let by_cipher = spec.map_or(u64::MAX, rekey_blocks);
        match self.opts.rekey_bytes {
            Some(b) => by_cipher.min((b / block).max(1)),
            None => by_cipher,
        }
    }
}

/// What the two KEXINITs decided: the algorithms, the exchange hash with both KEXINITs in it,
/// and whether the peer's guessed first kex packet must be skipped.
struct KexStart {
    neg: Negotiated,
    hash: ExchangeHash,
    wrong_guess: bool,
}

/// What the ephemeral keys' exchange leaves for the new keys: the shared secret K and the
/// exchange hash H, finished once over both KEXINITs, the host key and both public keys.
struct Exchanged {
    shared: Vec<u8>,
    h: Vec<u8>,
}

/// Blocks one set of keys may protect. RFC 4344 §3.2: at most 2^(L/4) blocks of an L-bit
/// block cipher in CBC or CTR mode (512 KiB for 64-bit blocks, Sweet32); other ciphers are
/// rekeyed every GiB, as OpenSSH does for 8-byte-block stream ciphers.
pub fn rekey_blocks(spec: &ciphers::CipherSpec) -> u64 {
    use ciphers::CipherKind;
    let bits = spec.block_len as u32 * 8;
    match spec.kind {
        CipherKind::None => u64::MAX,
        CipherKind::Cbc | CipherKind::Ctr => 1u64 << (bits / 4),
        _ if spec.block_len >= 16 => 1u64 << 32,
        _ => (1u64 << 30) / spec.block_len.max(1) as u64,
    }
}

/// The peer hung up. A DISCONNECT cut short (no language tag, as some peers send it) still
/// reports what it holds.
fn parse_disconnect(p: &[u8]) -> Error {
    let (code, text) = match Disconnect::decode(p) {
        Ok(d) => (d.reason, d.description),
        Err(_) => {
            let mut r = crate::wire::Reader::new(p.get(1..).unwrap_or_default());
            (
                r.u32("reason").unwrap_or(0),
                r.string("text").unwrap_or_default(),
            )
        }
    };
    let text = crate::wire::sanitize::peer_text(text, crate::wire::sanitize::PEER_TEXT_MAX);
    Error::PeerDisconnected { code, text }
}
