//! Which cipher and MAC names a bench (or pipeline's rsync) can run, gathered before
//! connecting: the catalog for the native engine, the local `ssh -Q` lists for the OpenSSH
//! engine (both when both run).

use crate::bench::names::{self, Known};
use crate::bench::options::Options;
use crate::bench::EngineKind;
use crate::exit::UsageError;
use crate::target::ssh_query;
use anyhow::Result;

/// `pipeline --ciphers`: rsync runs the local `ssh -c`, so `ssh -Q cipher` is the list.
pub fn check_ssh_ciphers(asked: &[String]) -> Result<()> {
    if asked.is_empty() {
        return Ok(());
    }
    let known = Known {
        what: "cipher",
        names: ssh_query("cipher")?,
        source: "`ssh -Q cipher`",
    };
    names::check(asked, &known).map_err(|e| UsageError(format!("--ciphers: {e}")))?;
    Ok(())
}

/// Refuses (usage status) a `--ciphers`/`--macs` name no engine in use can run.
pub fn check(args: &Options) -> Result<()> {
    if args.ciphers.is_empty() && args.macs.is_empty() {
        return Ok(());
    }
    let openssh = args.runs(EngineKind::Openssh);
    let native = args.runs(EngineKind::Native);
    let catalog_ciphers = ciphers::CIPHERS.iter().map(|c| c.name.to_string());
    let catalog_macs = ciphers::MACS.iter().map(|m| m.name.to_string());
    let (ciphers, macs, source_c, source_m) = match (openssh, native) {
        (false, _) => (
            catalog_ciphers.collect(),
            catalog_macs.collect(),
            "sshtune's cipher catalog",
            "sshtune's MAC catalog",
        ),
        (true, false) => (
            ssh_query("cipher")?,
            ssh_query("mac")?,
            "`ssh -Q cipher`",
            "`ssh -Q mac`",
        ),
        (true, true) => {
            let mut c: Vec<String> = catalog_ciphers.collect();
            c.extend(ssh_query("cipher")?);
            let mut m: Vec<String> = catalog_macs.collect();
            m.extend(ssh_query("mac")?);
            (
                c,
                m,
                "the catalog or `ssh -Q cipher`",
                "the catalog or `ssh -Q mac`",
            )
        }
    };
    names::check(
        &args.ciphers,
        &Known {
            what: "cipher",
            names: ciphers,
            source: source_c,
        },
    )
    .map_err(|e| UsageError(format!("--ciphers: {e}")))?;
    names::check(
        &args.macs,
        &Known {
            what: "MAC",
            names: macs,
            source: source_m,
        },
    )
    .map_err(|e| UsageError(format!("--macs: {e}")))?;
    Ok(())
}
