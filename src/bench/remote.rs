//! The remote line protocol's old path, kept while pipeline and cmd still import it from here;
//! everything lives in `crate::remote`. To be removed once `pipeline/{preflight,stages,remote}.rs`
//! and `cmd/tcp_sink.rs` name `crate::remote` directly.

use std::collections::HashMap;

pub use crate::remote::{info, machine, same_boot, Info, MACHINE_FACTS, SINK_DONE, SINK_LISTENING};

/// `key=value` tokens of one report line (pipeline's `SSHTUNE-DISK` reader; `remote::Fields`
/// is the typed form).
pub fn tokens(line: &str) -> HashMap<&str, &str> {
    line.split_whitespace()
        .filter_map(|t| t.split_once('='))
        .collect()
}
