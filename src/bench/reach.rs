//! How an engine's server is reached, told from its address and its kernel's boot id (this
//! machine's loopback, a port forward to another machine, or a direct path), and the
//! warnings each way of reaching it earns.

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
