//! `sshtune config`: from measured throughput to a Ciphers line the target sshd accepts.
//!
//! `policy` decides which measured ciphers may be recommended, `tiers` their order (tiers from
//! the samples, a fixed preference inside a tier), `emit`
//! renders the sshd drop-in, the client `Host` block and the rsync command (`reach` keeps the
//! bench's port, user and identity in the last two), `sshd` runs the
//! real `sshd -t` / `sshd -T`, and `apply` installs a drop-in without ever leaving a config
//! sshd rejects; `pool` merges several runs of one host; `why` says why the first cipher is first on this pair of machines.

pub mod apply;
pub mod emit;
pub mod figures;
pub mod policy;
pub mod pool;
pub mod reach;
pub mod sshd;
pub mod tiers;
pub mod why;
