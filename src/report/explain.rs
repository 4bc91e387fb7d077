//! `--explain`: the evidence behind each verdict.

use super::machine;
use crate::bench::model::{BenchReport, Ceiling, Direction, ResultRow, TransportOverhead};
use crate::bench::verdict::{CPU_SATURATED, NETWORK_NEAR};

/// Evidence lines behind each verdict (`--explain`): the figures the rule in
/// `bench::verdict` looked at, each next to the threshold it was compared with.
pub fn explain(report: &BenchReport) -> String {
    let mut out = format!(
        "Evidence behind each verdict (CPU saturated at >= {:.0}% of its cap; network at >= {:.0}% of the ceiling):\n",
        CPU_SATURATED * 100.0,
        NETWORK_NEAR * 100.0
    );
    for l in machine::both(&report.client.machine, &report.server.machine) {
        out.push_str(&format!("  {l}\n"));
    }
    for r in &report.results {
        out.push_str(&format!("  {} {} {}: ", r.engine, r.cipher, r.direction));
        match (&r.verdict, &r.error) {
            (_, Some(e)) => {
                out.push_str(&format!("error: {e}\n"));
                continue;
            }
            (Some(v), None) => out.push_str(&format!("{v}\n")),
            (None, None) => out.push_str("no verdict\n"),
        }
        row(&mut out, report, r);
    }
    out.push_str(&super::placement::explain(report));
    out
}

/// The evidence lines of one measured row.
fn row(out: &mut String, report: &BenchReport, r: &ResultRow) {
    if let (Some(m), Some(lo), Some(hi)) = (r.median_mib_s, r.min_mib_s, r.max_mib_s) {
        out.push_str(&format!(
            "      throughput {m:.1} MiB/s, median of {} ({lo:.1}–{hi:.1})\n",
            r.samples.len()
        ));
    }
    out.push_str(&format!(
        "      {}\n",
        cpu("client", r.client_cpu_pct, report.client.cpu_quota_cores)
    ));
    out.push_str(&format!(
        "      {}\n",
        cpu("server", r.server_cpu_pct, report.server.cpu_quota_cores)
    ));
    if let Some(o) = &r.transport_overhead {
        overhead(out, o);
    }
    match (&report.ceiling, r.median_mib_s) {
        (Some(c), Some(m)) if c.mib_s > 0.0 => ceiling(out, report, r, c, m),
        (_, m) => {
            out.push_str("      ceiling unknown: ratio unknown\n");
            if let (Some(rtt), Some(m)) = (report.path_rtt_ms.filter(|r| *r > 0.0), m) {
                out.push_str(&format!(
                    "      window: 2 MiB / {rtt:.2} ms RTT (TCP connect to the ssh port) allows {:.1} MiB/s: ratio {:.2}\n",
                    window(rtt),
                    m / window(rtt)
                ));
            }
        }
    }
    if report.server.same_machine == Some(true) {
        if let (Some(c), Some(s), Some(n)) = (
            r.client_cpu_pct,
            r.server_cpu_pct,
            report.client.machine.cores,
        ) {
            out.push_str(&format!(
                "      one machine, {n} cores: client + server CPU = {:.0}% of {}% (shared at >= {:.0}%); whole machine busy {}\n",
                c + s,
                n * 100,
                CPU_SATURATED * 100.0,
                r.server_total_cpu_pct.map_or("?".to_string(), |b| format!("{b:.0}%"))
            ));
        }
    }
    if let Some(line) =
        crate::bench::cpu_note::aes_line(&r.cipher, &report.client.machine, &report.server.machine)
    {
        out.push_str(&format!("      {line}\n"));
    }
    if let Some(rule) = &r.verdict_rule {
        out.push_str(&format!("      rule: {rule} decided\n"));
    }
    if let Some(why) = &r.verdict_reason {
        out.push_str(&format!("      reason: {why}\n"));
    }
    out.push_str(&super::streams::explain(r));
}

/// One side's CPU against its cap: a quota below one core, else one core.
fn cpu(name: &str, used: Option<f64>, quota: Option<f64>) -> String {
    let c = quota.map_or(100.0, |q| (q * 100.0).min(100.0));
    let of = match quota {
        Some(_) if c < 100.0 => format!("a {c:.0}% quota"),
        _ => "one core (no quota)".to_string(),
    };
    match used {
        Some(u) => format!(
            "{name} CPU {u:.0}% of {of}: {:.0}% of its cap{}",
            u / c * 100.0,
            if u / c >= CPU_SATURATED {
                ", saturated"
            } else {
                ""
            }
        ),
        None => format!("{name} CPU unknown (cap {of})"),
    }
}

fn overhead(out: &mut String, o: &TransportOverhead) {
    out.push_str(&format!(
        "      transport overhead {:.2}×: sender {:.0} MiB per CPU-second, sealing alone {:.0}\n",
        o.ratio, o.sender_mib_per_cpu_s, o.seal_mib_per_cpu_s
    ));
    if let (Some(u), Some(rate)) = (o.user_ratio, o.sender_user_mib_per_cpu_s) {
        out.push_str(&format!(
            "      in user space alone {u:.2}× ({rate:.0} MiB per user CPU-second; the rest is the kernel's)\n"
        ));
    }
    if let (Some(b), Some(k)) = (o.beyond_socket_ratio, o.socket_mib_per_cpu_s) {
        out.push_str(&format!(
            "      beyond sealing plus a plain loopback socket's send {b:.2}× (the socket alone {k:.0} MiB per CPU-second)\n"
        ));
    }
}

/// The MiB/s OpenSSH's channel window allows at `rtt_ms`.
fn window(rtt_ms: f64) -> f64 {
    crate::bench::window::limit_mib_s(
        crate::bench::window::OPENSSH_CHANNEL_WINDOW,
        rtt_ms / 1000.0,
    )
}

/// A measured ceiling: the row's ratio to it, the CPU during it, and the window's limit.
fn ceiling(out: &mut String, report: &BenchReport, r: &ResultRow, c: &Ceiling, m: f64) {
    // The direction's own ceiling when it was measured; else the one figure.
    let own = c.direction(r.direction);
    let mib_s = own.map_or(c.mib_s, |d| d.mib_s);
    out.push_str(&format!(
        "      ceiling {mib_s:.1} MiB/s ({}{}): ratio {:.2}\n",
        c.method,
        match (&c.receiver, own) {
            (Some(rc), Some(_)) => format!("; receiver {rc}, {} run", r.direction),
            (Some(rc), None) => format!(
                "; receiver {rc}, {} run used",
                c.directions
                    .first()
                    .map_or(Direction::Upload, |d| d.direction)
            ),
            (None, _) => String::new(),
        },
        m / mib_s
    ));
    if let Some(d) = own.or_else(|| c.directions.first()) {
        let p = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.0}%"));
        out.push_str(&format!(
            "      during the ceiling: client CPU {}, server end CPU {}, server \
             machine busy {}: {}\n",
            p(d.client_cpu_pct),
            p(d.server_cpu_pct),
            p(d.server_busy_pct),
            match &d.cpu_bound {
                Some(side) => format!("CPU-bound ({side}), not taken as the network"),
                None => "no CPU bound".to_string(),
            }
        ));
    }
    if let Some(rtt) = c.rtt_ms.or(report.path_rtt_ms).filter(|r| *r > 0.0) {
        let w = window(rtt);
        out.push_str(&format!(
            "      window: OpenSSH's 2 MiB channel window / {rtt:.2} ms RTT allows {w:.1} MiB/s: ratio {:.2}\n",
            m / w
        ));
    }
}
