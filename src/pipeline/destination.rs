//! Where the data goes: `[HOST:]DIR` parsed, and turned into an ssh target — the user's host,
//! or the embedded loopback server writing into a local directory.

use super::options::Options;
use super::resources::Resources;
use crate::embedded::EmbeddedSshd;
use crate::target::SshTarget;
use anyhow::{bail, Context, Result};

/// Where the data goes, as parsed from `[HOST:]DIR`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dest {
    pub host: Option<String>,
    pub dir: Option<String>,
}

pub fn parse_dest(s: Option<&str>) -> Result<Dest> {
    let Some(s) = s else {
        return Ok(Dest {
            host: None,
            dir: None,
        });
    };
    // `[::1]:/dir` keeps its brackets for ssh to strip; `host:dir`; a bare path is local.
    let split = if s.starts_with('[') {
        s.find("]:").map(|i| i + 1)
    } else if s.starts_with('/') || s.starts_with('.') {
        None
    } else {
        s.find(':')
    };
    match split {
        Some(i) => {
            let (h, d) = (&s[..i], &s[i + 1..]);
            if h.is_empty() {
                return Ok(Dest {
                    host: None,
                    dir: Some(d.to_string()).filter(|d| !d.is_empty()),
                });
            }
            if d.is_empty() {
                bail!("give the destination directory too: {h}:/path/to/dir");
            }
            Ok(Dest {
                host: Some(h.trim_matches(['[', ']']).to_string()),
                dir: Some(d.to_string()),
            })
        }
        None => Ok(Dest {
            host: None,
            dir: Some(s.to_string()),
        }),
    }
}

/// A destination ready to be written to.
pub struct Endpoint {
    /// The user's host; `None` for the embedded server.
    pub host: Option<String>,
    pub target: SshTarget,
    /// The destination directory, without a trailing `/` (but `/` itself stays).
    pub dir: String,
    /// How messages name the other side.
    pub label: String,
    /// The embedded server was started for this run.
    pub embedded: bool,
}

impl Endpoint {
    /// Opens the destination. A local one gets the embedded server (and a temp directory
    /// when none was given); both are put into `res` at once, so they are released whatever
    /// fails later.
    pub fn open(opts: &Options, say: &dyn Fn(&str), res: &mut Resources) -> Result<Self> {
        let dest = parse_dest(opts.destination.as_deref())?;
        let (target, dir, label) = match &dest.host {
            None => {
                if !opts.ssh_options.is_empty() {
                    bail!("ssh options (-p, -l, -i, -F, -o) need a HOST:DIR destination");
                }
                let dir = match &dest.dir {
                    Some(d) => std::path::absolute(d)
                        .with_context(|| format!("resolving {d}"))?
                        .display()
                        .to_string(),
                    None => {
                        let t = tempfile::Builder::new().prefix("sshtune-dest-").tempdir()?;
                        let p = t.path().display().to_string();
                        res.auto_dir = Some(t);
                        p
                    }
                };
                say("starting the embedded loopback sshd");
                let server = EmbeddedSshd::start("")?;
                let target = server.target.clone();
                res.embedded = Some(server);
                (target, dir, "the embedded loopback sshd".to_string())
            }
            Some(h) => (
                SshTarget {
                    destination: h.clone(),
                    options: opts.ssh_options.clone(),
                    embedded: false,
                },
                dest.dir
                    .clone()
                    .expect("parse_dest gives a dir with a host"),
                h.clone(),
            ),
        };
        let dir = dir.trim_end_matches('/').to_string();
        let dir = if dir.is_empty() { "/".to_string() } else { dir };
        Ok(Self {
            embedded: dest.host.is_none(),
            host: dest.host,
            target,
            dir,
            label,
        })
    }

    /// The directory this run writes into, unique per run by `token`.
    pub fn run_dir(&self, token: &str) -> String {
        format!("{}/{token}", if self.dir == "/" { "" } else { &self.dir })
    }

    /// What the report names as the destination.
    pub fn describe(&self) -> String {
        match &self.host {
            Some(h) => format!("{h}:{}", self.dir),
            None => format!("embedded loopback sshd:{}", self.dir),
        }
    }

    /// rsync's destination argument for `dir` on this host (an IPv6 address in brackets).
    pub fn rsync_dest(&self, dir: &str) -> String {
        if self.target.destination.contains(':') {
            format!("[{}]:{dir}/", self.target.destination)
        } else {
            format!("{}:{dir}/", self.target.destination)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations() {
        let cases = [
            ("host:/srv/x", Some("host"), "/srv/x"),
            ("u@h:rel", Some("u@h"), "rel"),
            ("/tmp/a:b", None, "/tmp/a:b"),
            (":/tmp/a", None, "/tmp/a"),
            ("[::1]:/x", Some("::1"), "/x"),
        ];
        for (given, host, dir) in cases {
            let want = Dest {
                host: host.map(Into::into),
                dir: Some(dir.into()),
            };
            assert_eq!(parse_dest(Some(given)).unwrap(), want, "{given}");
        }
        assert!(parse_dest(Some("host:")).is_err());
        assert_eq!(
            parse_dest(None).unwrap(),
            Dest {
                host: None,
                dir: None
            }
        );
    }
}
