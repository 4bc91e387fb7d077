//! `sshtune storage`: dm-crypt and fio measured the way the seed did by hand, as one safe run.
//! Layers, deepest the machine allows: capabilities (`caps`, `crypto`), kernel cipher speed
//! (`kspeed`), and the dm-crypt matrix (`plan` → `run` with `dmcrypt`, `seqio`, `fio`, all
//! undone by `cleanup`). See docs/storage.md.

pub mod caps;
pub mod cleanup;
pub mod cpu_load;
pub mod crypto;
pub mod device;
pub mod dmcrypt;
pub mod fio;
pub mod kspeed;
pub mod model;
pub mod mounts;
pub mod plan;
pub mod run;
pub mod seqio;
pub mod stale;
pub mod suite;
