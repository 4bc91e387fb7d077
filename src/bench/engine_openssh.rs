//! The OpenSSH engine's setup: the target (or a private loopback sshd), the probe of what the
//! server offers, one login for its facts, the default pairs the local `ssh` would use, and the
//! raw-TCP ceiling over loopback or with a receiver on the server. Transfers are `OpenSsh`'s.

use super::ceiling::{self, step};
use super::executor::{Engine, Executor, Facts, Job, Sample};
use super::login_kex;
use super::model::EngineKind;
use super::model::{Ceiling, Direction, ServerInfo};
use super::openssh::OpenSsh;
use super::options::Options;
use crate::embedded::EmbeddedSshd;
use crate::probe::{probe_target, ProbeResult};
use crate::proxy::Proxy;
use crate::remote;
use crate::target::SshError;
use crate::target::{ssh_query, ssh_version, Resolved, SshTarget};
use crate::{cgroup, process, sysinfo};
use anyhow::{bail, Result};
use std::time::Duration;

pub struct OpenSshEngine {
    exec: OpenSsh,
    target: SshTarget,
    resolved: Resolved,
    /// What the server offered in its KEXINIT (set by the preflight).
    offer: Option<ProbeResult>,
    proxied: bool,
    /// Kept alive for the whole run; dropping it stops the private sshd.
    _embedded: Option<EmbeddedSshd>,
}

impl OpenSshEngine {
    /// The destination, or a private sshd on loopback when there is none.
    pub fn open(opts: &Options) -> Result<Self> {
        let (embedded, target) = match &opts.target {
            None => {
                if !opts.ssh_args.is_empty() {
                    bail!("ssh options (-p, -l, -i, -F, -o) need a HOST");
                }
                let server = EmbeddedSshd::start("")?;
                let target = server.target.clone();
                (Some(server), target)
            }
            Some(t) => (None, t.clone()),
        };
        let resolved = target.resolve()?;
        // Behind a jump host, 127.0.0.1 is the far side's loopback, not ours.
        let proxied = Proxy::of(&resolved, &target.options, &target.destination).is_some();
        // The measuring sessions' login: a faster key exchange where the user chose none.
        let mut measuring = target.clone();
        let defaults = target.resolve_defaults().ok();
        if let Some(o) = defaults
            .and_then(|d| login_kex::measuring_option(&resolved.kex_algorithms, &d.kex_algorithms))
        {
            measuring.options.extend(["-o".to_string(), o]);
        }
        Ok(Self {
            exec: OpenSsh::new(measuring),
            target,
            resolved,
            offer: None,
            proxied,
            _embedded: embedded,
        })
    }
}

impl Executor for OpenSshEngine {
    fn engine(&self) -> &'static str {
        self.exec.engine()
    }

    fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
        self.exec.transfer(job)
    }

    fn warms_per_pair(&self) -> bool {
        self.exec.warms_per_pair()
    }

    fn prepare(&mut self, next: &Job) {
        self.exec.prepare(next)
    }

    fn settle(&mut self) {
        self.exec.settle()
    }

    fn placement(&self) -> Option<super::placement::Placement> {
        self.exec.placement()
    }
}

impl Engine for OpenSshEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Openssh
    }

    fn preflight(&mut self, opts: &Options) -> Result<Facts> {
        let offer = probe_target(&self.target, &self.resolved, Duration::from_secs(10))?;
        let info = self.exec.preflight()?;
        self.exec.reuse = info.get("exact_head").as_deref() == Some("yes");
        process::check_interrupted()?;
        let reach = Reach::of(
            !self.proxied && is_loopback(&self.resolved.hostname),
            remote::same_boot(&info),
        );
        let loopback = reach == Reach::Loopback;
        // The path's RTT and our address on it, from connects to the ssh port (not over
        // loopback, and not through a forward, where a connect reaches the forwarder only).
        let rtt = (reach == Reach::Direct && !self.proxied)
            .then(|| ceiling::rtt::connect_rtt(&self.resolved.hostname, self.resolved.port, 3))
            .flatten();
        let same_machine = reach.same_machine(remote::same_boot(&info));
        let mut warnings = Vec::new();
        if loopback {
            warnings.push(SHARED_CPUS.into());
        }
        if info.get("proc").as_deref() != Some("yes") {
            warnings.push(
                "the server has no readable /proc: server CPU cannot be measured there".into(),
            );
        }
        let server = ServerInfo {
            banner: Some(offer.banner.clone()),
            openssh_version: offer.openssh_version.clone(),
            strict_kex: Some(offer.strict_kex),
            offered_ciphers: offer.ciphers(),
            offered_macs: offer.macs(),
            machine: remote::machine(&info),
            cpu_quota_cores: info.get("quota").and_then(|q| remote::parse_quota(&q)),
            same_machine,
        };
        self.offer = Some(offer);
        Ok(Facts {
            host_label: match &opts.target {
                Some(t) => t.destination.clone(),
                None => "embedded loopback sshd".into(),
            },
            server,
            client_version: ssh_version().ok(),
            info,
            loopback,
            forwarded: reach == Reach::Forwarded,
            infers_path: !loopback,
            rtt,
            tick_cpu: true,
            shared_cores: (same_machine == Some(true))
                .then(|| sysinfo::local().cores.map(f64::from))
                .flatten(),
            warnings,
        })
    }

    /// The server's offer that the local ssh supports; non-AEAD ciphers with the MAC ssh would
    /// negotiate (or each `--macs` name).
    fn default_pairs(
        &self,
        facts: &Facts,
        opts: &Options,
    ) -> Result<Vec<(String, Option<String>)>> {
        let offered = &facts.server.offered_ciphers;
        let ciphers: Vec<String> = if opts.ciphers.is_empty() {
            ssh_query("cipher")?
                .into_iter()
                .filter(|c| offered.contains(c))
                .collect()
        } else {
            opts.ciphers.clone()
        };
        if ciphers.is_empty() {
            bail!(
                "the server offers no cipher the local ssh supports (server: {})",
                offered.join(",")
            );
        }
        let default_mac = self
            .resolved
            .macs
            .iter()
            .find(|m| facts.server.offered_macs.contains(m))
            .cloned();
        Ok(pairs(&ciphers, &opts.macs, default_mac))
    }

    fn ceiling(
        &mut self,
        facts: &Facts,
        opts: &Options,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Ceiling>> {
        if facts.loopback && !opts.ceiling.skipped() {
            return Ok(Some(step::loopback()?));
        }
        if facts.loopback {
            warnings.push(step::SKIPPED.into());
            return Ok(None);
        }
        if self.proxied {
            warnings.push(
                "no raw-TCP ceiling behind a jump host (the target is not reachable directly); \
                 --ceiling gives one"
                    .into(),
            );
            return Ok(None);
        }
        if facts.forwarded {
            warnings.push(FORWARDED.into());
            return Ok(None);
        }
        let cap = |q: Option<f64>| q.map_or(100.0, |q| (q * 100.0).min(100.0));
        step::remote(
            opts.ceiling.skipped(),
            &step::Remote {
                exec: &self.exec,
                sshtune: opts
                    .remote_sshtune
                    .clone()
                    .or_else(|| facts.info.get("sshtune")),
                receivers: facts.info.get("receivers").unwrap_or_default(),
                local_ip: facts.rtt.map(|(_, ip)| ip),
                client_cap_pct: cap(cgroup::quota_cores("self")),
                server_cap_pct: cap(facts.server.cpu_quota_cores),
            },
            opts.directions.contains(&Direction::Download),
            warnings,
        )
    }

    fn window(&self) -> Option<u64> {
        Some(super::window::OPENSSH_CHANNEL_WINDOW)
    }

    fn stream_executors(&self, n: u32) -> Vec<Box<dyn Executor + Send>> {
        (0..n)
            .map(|_| Box::new(self.exec.another()) as Box<dyn Executor + Send>)
            .collect()
    }
}

/// Each cipher once if AEAD, else with each asked MAC, or with `default_mac`.
pub fn pairs(
    ciphers: &[String],
    macs: &[String],
    default_mac: Option<String>,
) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for c in ciphers {
        if ::ciphers::cipher(c).is_some_and(|s| s.is_aead()) {
            out.push((c.clone(), None));
        } else if macs.is_empty() {
            out.push((c.clone(), default_mac.clone()));
        } else {
            out.extend(macs.iter().map(|m| (c.clone(), Some(m.clone()))));
        }
    }
    out
}

/// How the server is reached, told apart by what it is (its kernel's boot id) rather than by
/// its address: a loopback address that leads to another kernel is a port forward or a tunnel
/// (`127.0.0.1:2222` → a board or a VM), not this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// This machine's own loopback, to a server on this kernel (or one whose boot id cannot
    /// be read).
    Loopback,
    /// A loopback address whose server runs another kernel.
    Forwarded,
    /// Any other address.
    Direct,
}

impl Reach {
    /// `loopback_address`: a loopback address reached without a proxy; `same_boot`: the
    /// server's boot id against ours (None: either cannot be read).
    pub(crate) fn of(loopback_address: bool, same_boot: Option<bool>) -> Self {
        match (loopback_address, same_boot) {
            (true, Some(false)) => Reach::Forwarded,
            (true, _) => Reach::Loopback,
            (false, _) => Reach::Direct,
        }
    }

    /// Whether both ends share this machine's CPUs: the boot ids decide where both could be
    /// read, else a loopback address does.
    pub(crate) fn same_machine(self, same_boot: Option<bool>) -> Option<bool> {
        same_boot.or((self == Reach::Loopback).then_some(true))
    }
}

/// The warning for a server behind a port forward: nothing can be measured on the path
/// itself.
pub const FORWARDED: &str = "the server is reached through a port forward or tunnel (a \
    loopback address, but its kernel's boot id is not this machine's): it is another machine, \
    and no raw-TCP ceiling or RTT can be measured through the forward; --ceiling gives one";

/// The warning for a run whose two ends share this machine.
pub const SHARED_CPUS: &str = "client and server share this machine's CPUs: good for ranking \
    ciphers, not for absolute figures of a remote link";

pub(crate) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_address_to_another_kernel_is_a_forward() {
        assert_eq!(Reach::of(true, Some(false)), Reach::Forwarded);
        assert_eq!(Reach::of(true, Some(true)), Reach::Loopback);
        assert_eq!(Reach::of(true, None), Reach::Loopback);
        assert_eq!(Reach::of(false, Some(true)), Reach::Direct);
        assert_eq!(Reach::Forwarded.same_machine(Some(false)), Some(false));
        assert_eq!(Reach::Loopback.same_machine(None), Some(true));
        assert_eq!(Reach::Direct.same_machine(None), None);
        assert_eq!(Reach::Direct.same_machine(Some(true)), Some(true));
    }
}
