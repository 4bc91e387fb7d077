//! A scratch directory for the sshd config tests: a throwaway host key, so that `sshd -t` and
//! `sshd -T` can run on a config the test controls, and a main config including a drop-in
//! directory.

use crate::support;
use std::path::PathBuf;

pub struct Scratch {
    pub dir: tempfile::TempDir,
    pub key: PathBuf,
}

impl Scratch {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let key = support::keygen(&dir.path().join("hk"));
        Self { dir, key }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `sshd_config`: the host key, `before`, an Include of every `*.conf` in `dropins` (made
    /// here), then `after`.
    pub fn main_config(&self, before: &str, dropins: &str, after: &str) -> PathBuf {
        std::fs::create_dir_all(self.path(dropins)).unwrap();
        let main = self.path("sshd_config");
        std::fs::write(
            &main,
            format!(
                "HostKey {}\n{before}Include {}/*.conf\n{after}",
                self.key.display(),
                self.path(dropins).display()
            ),
        )
        .unwrap();
        main
    }
}
