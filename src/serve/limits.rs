//! What a peer may hold before it has logged in, so that nobody can lock the owner out by
//! opening sockets: a cap on unauthenticated connections with random early drop (OpenSSH's
//! `MaxStartups start:rate:full`), a cap per source address, and one login grace deadline for
//! version exchange, key exchange and authentication together (`LoginGraceTime`). Logged-in
//! sessions are counted apart (`--max-sessions`), so idle strangers never use up their slots.
//!
//! The deadline is enforced from outside the session thread: a reaper shuts down the socket of
//! a connection still unauthenticated at its deadline, whatever read it is blocked in, so a
//! peer dribbling one byte per read timeout cannot stretch it.

use rand::Rng;
use std::collections::HashMap;
use std::net::{IpAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// `start:rate:full`: from `start` unauthenticated connections on, refuse a new one with
/// probability `rate`% rising linearly to 100% at `full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Startups {
    pub start: usize,
    pub rate: u32,
    pub full: usize,
}

impl Startups {
    /// OpenSSH's default, `MaxStartups 10:30:100`.
    pub const DEFAULT: Startups = Startups {
        start: 10,
        rate: 30,
        full: 100,
    };

    /// Percent chance that a new connection is refused while `unauth` are unauthenticated.
    pub fn drop_percent(&self, unauth: usize) -> u32 {
        if unauth >= self.full {
            100
        } else if unauth < self.start {
            0
        } else {
            let span = (self.full - self.start) as u64;
            let over = (unauth - self.start) as u64;
            self.rate + ((100 - self.rate) as u64 * over / span) as u32
        }
    }
}

impl std::str::FromStr for Startups {
    type Err = String;

    /// `N` (refuse from N on) or `start:rate:full` with start ≤ full and rate ≤ 100.
    fn from_str(s: &str) -> Result<Self, String> {
        let num = |v: &str| {
            v.parse::<usize>()
                .map_err(|_| format!("{v:?} is not a number"))
        };
        let parts: Vec<&str> = s.split(':').collect();
        let st = match parts[..] {
            [n] => {
                let n = num(n)?;
                Startups {
                    start: n,
                    rate: 100,
                    full: n,
                }
            }
            [a, r, f] => Startups {
                start: num(a)?,
                rate: num(r)? as u32,
                full: num(f)?,
            },
            _ => return Err("expected N or start:rate:full (e.g. 10:30:100)".into()),
        };
        if st.full == 0 || st.start == 0 || st.start > st.full || st.rate > 100 {
            return Err("need 1 ≤ start ≤ full and rate ≤ 100 (e.g. 10:30:100)".into());
        }
        Ok(st)
    }
}

/// Every limit of the accept loop, with the defaults `sshtune serve` uses.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Logged-in connections at once.
    pub max_sessions: usize,
    pub startups: Startups,
    /// Unauthenticated connections from one address at once.
    pub per_source: usize,
    /// Version exchange + key exchange + authentication must end within this.
    pub login_grace: Duration,
}

pub const DEFAULT_LOGIN_GRACE: Duration = Duration::from_secs(30);
/// Half of `Startups::DEFAULT.start`: one address alone never pushes others into early drop.
pub const DEFAULT_PER_SOURCE: usize = 5;

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_sessions: 10,
            startups: Startups::DEFAULT,
            per_source: DEFAULT_PER_SOURCE,
            login_grace: DEFAULT_LOGIN_GRACE,
        }
    }
}

/// Why a connection was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Too many unauthenticated connections (random early drop or full).
    Startups,
    /// Too many unauthenticated connections from this address.
    PerSource,
    /// All session slots are taken by logged-in connections.
    Sessions,
}

impl Refusal {
    pub fn text(self) -> &'static str {
        match self {
            Refusal::Startups => "too many unauthenticated connections",
            Refusal::PerSource => "too many unauthenticated connections from this address",
            Refusal::Sessions => "too many sessions",
        }
    }
}

struct Pending {
    deadline: Instant,
    socket: TcpStream,
    expired: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    unauth: usize,
    sessions: usize,
    per_source: HashMap<IpAddr, usize>,
    pending: HashMap<u64, Pending>,
    next_id: u64,
}

/// The shared counters; one per server.
pub struct Gate {
    limits: Limits,
    state: Mutex<State>,
    wake: Condvar,
}

impl Gate {
    /// The gate and its reaper thread (which lives as long as the gate).
    pub fn new(limits: Limits) -> Arc<Self> {
        let gate = Arc::new(Self {
            limits,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let weak = Arc::downgrade(&gate);
        let _ = std::thread::Builder::new()
            .name("sshtune-grace".into())
            .spawn(move || reap(weak));
        gate
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits a new connection as unauthenticated, or says why not. `socket` is a clone the
    /// reaper shuts down at the login grace deadline.
    pub fn admit(self: &Arc<Self>, ip: IpAddr, socket: TcpStream) -> Result<Startup, Refusal> {
        let mut st = self.lock();
        if st.sessions >= self.limits.max_sessions {
            return Err(Refusal::Sessions);
        }
        if st.per_source.get(&ip).copied().unwrap_or(0) >= self.limits.per_source {
            return Err(Refusal::PerSource);
        }
        let p = self.limits.startups.drop_percent(st.unauth);
        if p > 0 && rand::thread_rng().gen_range(0..100) < p {
            return Err(Refusal::Startups);
        }
        st.unauth += 1;
        *st.per_source.entry(ip).or_default() += 1;
        let id = st.next_id;
        st.next_id += 1;
        let expired = Arc::new(AtomicBool::new(false));
        st.pending.insert(
            id,
            Pending {
                deadline: Instant::now() + self.limits.login_grace,
                socket,
                expired: expired.clone(),
            },
        );
        drop(st);
        self.wake.notify_one();
        Ok(Startup {
            gate: self.clone(),
            id,
            ip,
            expired,
            done: false,
        })
    }

    /// (unauthenticated, logged-in) connections now.
    pub fn counts(&self) -> (usize, usize) {
        let st = self.lock();
        (st.unauth, st.sessions)
    }
}

/// An unauthenticated connection's place; given back on drop or by `promote`.
pub struct Startup {
    gate: Arc<Gate>,
    id: u64,
    ip: IpAddr,
    expired: Arc<AtomicBool>,
    done: bool,
}

impl Startup {
    /// The login grace deadline passed and the socket was shut down.
    pub fn expired(&self) -> bool {
        self.expired.load(Ordering::SeqCst)
    }

    /// Authentication succeeded: trade this place for a session slot, if one is free.
    pub fn promote(mut self) -> Result<SessionSlot, Refusal> {
        let gate = self.gate.clone();
        let mut st = gate.lock();
        self.release(&mut st);
        if self.expired() {
            return Err(Refusal::Startups);
        }
        if st.sessions >= gate.limits.max_sessions {
            return Err(Refusal::Sessions);
        }
        st.sessions += 1;
        Ok(SessionSlot { gate: gate.clone() })
    }

    fn release(&mut self, st: &mut State) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        st.unauth -= 1;
        st.pending.remove(&self.id);
        if let Some(n) = st.per_source.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                st.per_source.remove(&self.ip);
            }
        }
    }
}

impl Drop for Startup {
    fn drop(&mut self) {
        let gate = self.gate.clone();
        let mut st = gate.lock();
        self.release(&mut st);
    }
}

/// A logged-in connection's slot among `max_sessions`.
pub struct SessionSlot {
    gate: Arc<Gate>,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.gate.lock().sessions -= 1;
    }
}

/// Shuts down the sockets of connections whose login grace time ran out.
fn reap(gate: std::sync::Weak<Gate>) {
    loop {
        let Some(g) = gate.upgrade() else { return };
        let st = g.lock();
        let now = Instant::now();
        for p in st.pending.values() {
            if p.deadline <= now && !p.expired.swap(true, Ordering::SeqCst) {
                let _ = p.socket.shutdown(std::net::Shutdown::Both);
            }
        }
        let next = st
            .pending
            .values()
            .filter(|p| !p.expired.load(Ordering::SeqCst))
            .map(|p| p.deadline)
            .min();
        // Wake at the next deadline, or now and then to notice the gate is gone.
        let wait = next
            .map(|d| d.saturating_duration_since(now))
            .unwrap_or(Duration::from_secs(1))
            .min(Duration::from_secs(1));
        let _ = g.wake.wait_timeout(st, wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_openssh_syntax() {
        assert_eq!("10:30:100".parse(), Ok(Startups::DEFAULT));
        assert_eq!(
            "4".parse(),
            Ok(Startups {
                start: 4,
                rate: 100,
                full: 4
            })
        );
        for bad in ["", "0", "10:30", "20:30:10", "1:101:5", "a:b:c"] {
            assert!(bad.parse::<Startups>().is_err(), "{bad}");
        }
    }

    #[test]
    fn early_drop_rises_linearly() {
        let s = Startups::DEFAULT;
        assert_eq!(s.drop_percent(9), 0);
        assert_eq!(s.drop_percent(10), 30);
        assert_eq!(s.drop_percent(55), 65);
        assert_eq!(s.drop_percent(100), 100);
        assert_eq!("3".parse::<Startups>().unwrap().drop_percent(3), 100);
    }
}
