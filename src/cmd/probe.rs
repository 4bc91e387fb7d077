//! `sshtune probe`: print what a server offers, graded by the catalog, as a table or JSON;
//! with `--fail-on`, turn a weak or broken offer into exit status 3 (ssh-audit style) so a
//! script or CI job can gate on it.

use crate::cli::{FailOn, ProbeArgs, ProbeFormat};
use crate::exit::PolicyFailure;
use crate::probe::{probe, ProbeResult};
use crate::target::SshTarget;
use anyhow::Result;
use ciphers::Grade;
use serde::Serialize;

/// One offered cipher or MAC with its grade (None: not in the catalog).
struct Row {
    name: String,
    grade: Option<Grade>,
    reason: Option<&'static str>,
}

#[derive(Serialize)]
struct Graded<'a> {
    name: &'a str,
    grade: Option<String>,
    reason: Option<&'static str>,
}

impl<'a> From<&'a Row> for Graded<'a> {
    fn from(r: &'a Row) -> Self {
        Graded {
            name: &r.name,
            grade: r.grade.map(|g| g.to_string()),
            reason: r.reason,
        }
    }
}

#[derive(Serialize)]
struct ProbeJson<'a> {
    schema: &'static str,
    #[serde(flatten)]
    probe: &'a ProbeResult,
    ciphers: Vec<Graded<'a>>,
    macs: Vec<Graded<'a>>,
}

pub fn run(args: ProbeArgs) -> Result<()> {
    let timeout = args.timeout;
    let result = match destination(&args)? {
        Ok((target, r)) => crate::probe::probe_target(&target, &r, timeout)?,
        Err((host, port)) => probe(&host, port, timeout)?,
    };
    let ciphers: Vec<Row> = result
        .ciphers()
        .into_iter()
        .map(|c| cipher_row(&result, c))
        .collect();
    let macs: Vec<Row> = result.macs().into_iter().map(mac_row).collect();
    if args.json || args.format == ProbeFormat::Json {
        let out = ProbeJson {
            schema: "sshtune.probe/1",
            probe: &result,
            ciphers: ciphers.iter().map(Graded::from).collect(),
            macs: macs.iter().map(Graded::from).collect(),
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_table(&result, &ciphers, &macs);
    }
    match args.fail_on {
        Some(level) => fail_on(level, ciphers.iter().chain(&macs)),
        None => Ok(()),
    }
}

/// Status 3 when any offered algorithm is graded `level` or worse; names them all.
fn fail_on<'a>(level: FailOn, rows: impl Iterator<Item = &'a Row>) -> Result<()> {
    let threshold = level.threshold();
    let bad: Vec<String> = rows
        .filter_map(|r| {
            r.grade
                .filter(|g| *g <= threshold)
                .map(|g| format!("{} ({g})", r.name))
        })
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(PolicyFailure(format!(
        "--fail-on {}: the server offers {}",
        threshold,
        bad.join(", ")
    ))
    .into())
}

fn print_table(result: &ProbeResult, ciphers: &[Row], macs: &[Row]) {
    let k = &result.kexinit;
    println!("{}:{}  {}", result.host, result.port, result.banner);
    println!(
        "software     {}{}",
        result.software,
        result
            .openssh_version
            .as_ref()
            .map(|v| format!(" (OpenSSH {v})"))
            .unwrap_or_default()
    );
    println!(
        "strict kex   {}",
        if result.strict_kex {
            "yes (Terrapin countermeasure)"
        } else {
            "no (Terrapin: chacha20-poly1305 and CBC+EtM are attackable)"
        }
    );
    println!("kex          {}", k.kex);
    println!("host keys    {}", k.host_key);
    println!("compression  {}", k.compression_s2c);
    for (title, rows) in [("ciphers", ciphers), ("macs", macs)] {
        println!("{title}");
        for r in rows {
            println!(
                "  {:<32} {:<7} {}",
                r.name,
                r.grade.map_or("unknown".to_string(), |g| g.to_string()),
                r.reason.unwrap_or("not in the catalog")
            );
        }
    }
}

/// The catalog grade, lowered to `weak` for Terrapin-affected ciphers when the server lacks
/// strict KEX.
fn cipher_row(result: &ProbeResult, name: String) -> Row {
    let (grade, reason) = match ciphers::cipher(&name) {
        None => (None, None),
        Some(spec) if spec.terrapin && !result.strict_kex && spec.grade == Grade::Ok => {
            (Some(Grade::Weak), Some("Terrapin: server lacks strict KEX"))
        }
        Some(spec) => (Some(spec.grade), Some(spec.reason)),
    };
    Row {
        name,
        grade,
        reason,
    }
}

fn mac_row(name: String) -> Row {
    let spec = ciphers::mac(&name);
    Row {
        grade: spec.map(|s| s.grade),
        reason: spec.map(|s| s.reason),
        name,
    }
}

/// Resolves aliases, ports and proxies like ssh would, when an ssh client is installed (Ok);
/// else the host and port as given (Err).
type Destination = std::result::Result<(SshTarget, crate::target::Resolved), (String, u16)>;

fn destination(args: &ProbeArgs) -> Result<Destination> {
    let target = SshTarget {
        destination: args.host.clone(),
        options: args.ssh.to_ssh_options(),
        embedded: false,
    };
    if crate::process::find_program("ssh").is_some() {
        let r = target.resolve()?;
        return Ok(Ok((target, r)));
    }
    let host = args
        .host
        .rsplit('@')
        .next()
        .unwrap_or(&args.host)
        .to_string();
    Ok(Err((host, args.ssh.port.unwrap_or(22))))
}
