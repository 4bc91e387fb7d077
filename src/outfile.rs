//! `--output` checked before measuring. A bench can run for minutes; learning only at the end
//! that the report cannot be written throws the measurement away. The check opens the file as
//! the final write will, and leaves nothing behind: a file it had to create is removed again,
//! an existing one is opened for appending (not truncated) and left as it was.

use anyhow::{bail, Result};
use std::fs::OpenOptions;
use std::path::Path;

/// Fails with a one-line cause when `path` cannot be written.
pub fn check_writable(path: &Path) -> Result<()> {
    let shown = path.display();
    if path.is_dir() {
        bail!("--output {shown} is a directory; give a file name");
    }
    if path.exists() {
        if let Err(e) = OpenOptions::new().append(true).open(path) {
            bail!("--output {shown} is not writable: {e}");
        }
        return Ok(());
    }
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(f) => {
            drop(f);
            let _ = std::fs::remove_file(path);
            Ok(())
        }
        Err(e) => bail!("--output {shown} cannot be created: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_checked_and_not_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.json");
        check_writable(&p).unwrap();
        assert!(!p.exists());
    }

    #[test]
    fn an_existing_file_is_kept_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.json");
        std::fs::write(&p, "old").unwrap();
        check_writable(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
    }

    #[test]
    fn a_missing_directory_or_a_directory_is_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_writable(&dir.path().join("nope/report.json")).unwrap_err();
        assert!(e.to_string().contains("cannot be created"), "{e}");
        assert!(!e.to_string().contains('\n'));
        let e = check_writable(dir.path()).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }
}
