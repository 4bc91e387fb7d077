//! OpenSSH release numbers, parsed from banners such as `SSH-2.0-OpenSSH_9.2p1 Debian-2`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A major.minor OpenSSH release. Portable suffixes (`p1`) do not change the algorithm set,
/// so they are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OpenSshVersion {
    pub major: u16,
    pub minor: u16,
}

impl OpenSshVersion {
    pub const fn new(major: u16, minor: u16) -> Self {
        Self { major, minor }
    }

    /// Parses `9.2`, `9.2p1`, `OpenSSH_9.2p1` or a whole `SSH-2.0-OpenSSH_9.2p1 Debian` banner.
    pub fn parse(text: &str) -> Option<Self> {
        let text = match text.find("OpenSSH_") {
            Some(at) => &text[at + "OpenSSH_".len()..],
            None if text.starts_with("SSH-") => return None,
            None => text,
        };
        let mut parts = text.splitn(2, '.');
        let major = parts.next()?.parse().ok()?;
        let rest = parts.next()?;
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let minor = digits.parse().ok()?;
        Some(Self { major, minor })
    }
}

impl fmt::Display for OpenSshVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_banner_forms() {
        assert_eq!(
            OpenSshVersion::parse("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6"),
            Some(OpenSshVersion::new(9, 2))
        );
        assert_eq!(
            OpenSshVersion::parse("7.6"),
            Some(OpenSshVersion::new(7, 6))
        );
        assert_eq!(
            OpenSshVersion::parse("OpenSSH_10.0"),
            Some(OpenSshVersion::new(10, 0))
        );
        assert_eq!(OpenSshVersion::parse("SSH-2.0-dropbear_2022.83"), None);
        assert!(OpenSshVersion::new(6, 7) < OpenSshVersion::new(7, 6));
    }
}
