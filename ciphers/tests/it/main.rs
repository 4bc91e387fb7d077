//! The ciphers crate's tests, one module per subject, linked into one binary (a binary per file
//! would link the crate and its dev-dependencies again for each). Known answers from the
//! standards, round trips across backends, tampering, keystream computed ahead, and the wire
//! format against independent implementations (ring, `openssl enc`, AsyncSSH).
//! One subject: `cargo test --release -p ciphers --test it -- chacha::`.

mod support;

mod ahead;
mod asyncssh_interop;
mod chacha;
mod kat;
mod openssl_cli;
mod pure;
mod roundtrip;
mod tamper;
