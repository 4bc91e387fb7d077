use crate::cli::ProbeArgs;
use crate::probe::{probe, ProbeResult};
use crate::target::SshTarget;
use anyhow::Result;
use serde::Serialize;
use std::time::Duration;

#[derive(Serialize)]
struct Graded<'a> {
    name: &'a str,
    grade: Option<String>,
    reason: Option<&'static str>,
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
    let (host, port) = destination(&args)?;
    let result = probe(&host, port, Duration::from_secs(args.timeout.max(1)))?;
    let ciphers = result
        .ciphers()
        .into_iter()
        .map(|c| cipher_grade(&result, c))
        .collect::<Vec<_>>();
    if args.json {
        let names: Vec<String> = result.ciphers();
        let macs = result.macs();
        let out = ProbeJson {
            schema: "sshtune.probe/1",
            probe: &result,
            ciphers: names
                .iter()
                .map(|c| {
                    let (grade, reason) = grade_of(&result, c);
                    Graded {
                        name: c,
                        grade,
                        reason,
                    }
                })
                .collect(),
            macs: macs
                .iter()
                .map(|m| {
                    let spec = ciphers::mac(m);
                    Graded {
                        name: m,
                        grade: spec.map(|s| s.grade.to_string()),
                        reason: spec.map(|s| s.reason),
                    }
                })
                .collect(),
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
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
    println!("kex          {}", k.kex.join(","));
    println!("host keys    {}", k.host_key.join(","));
    println!("compression  {}", k.compression_s2c.join(","));
    println!("ciphers");
    for (name, grade, reason) in &ciphers {
        println!("  {name:<32} {grade:<7} {reason}");
    }
    println!("macs");
    for m in result.macs() {
        let spec = ciphers::mac(&m);
        println!(
            "  {m:<32} {:<7} {}",
            spec.map_or("unknown".to_string(), |s| s.grade.to_string()),
            spec.map_or("not in the catalog", |s| s.reason)
        );
    }
    Ok(())
}

fn cipher_grade(result: &ProbeResult, c: String) -> (String, String, String) {
    let (grade, reason) = grade_of(result, &c);
    (
        c,
        grade.unwrap_or_else(|| "unknown".into()),
        reason.unwrap_or("not in the catalog").to_string(),
    )
}

/// The catalog grade, lowered to `weak` for Terrapin-affected ciphers when the server lacks
/// strict KEX.
fn grade_of(result: &ProbeResult, name: &str) -> (Option<String>, Option<&'static str>) {
    match ciphers::cipher(name) {
        None => (None, None),
        Some(spec) => {
            if spec.terrapin && !result.strict_kex && spec.grade == ciphers::Grade::Ok {
                (
                    Some("weak".into()),
                    Some("Terrapin: server lacks strict KEX"),
                )
            } else {
                (Some(spec.grade.to_string()), Some(spec.reason))
            }
        }
    }
}

/// Resolves aliases and ports like ssh would, when an ssh client is installed.
fn destination(args: &ProbeArgs) -> Result<(String, u16)> {
    let target = SshTarget {
        destination: args.host.clone(),
        options: args.ssh.to_ssh_options(),
        embedded: false,
    };
    if crate::process::find_program("ssh").is_some() {
        let r = target.resolve()?;
        return Ok((r.hostname, r.port));
    }
    let host = args
        .host
        .rsplit('@')
        .next()
        .unwrap_or(&args.host)
        .to_string();
    Ok((host, args.ssh.port.unwrap_or(22)))
}
