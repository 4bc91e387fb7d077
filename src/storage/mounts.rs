//! The mount table as the kernel keeps it (`/proc/self/mountinfo`, proc(5)): each mount's
//! device number and its mount point, octal escapes (`\040` for a space) decoded. Mounts are
//! matched here, never by asking a path whether it is a mount point: a path under a directory
//! a user can write may be a symlink to someone else's mount (`mountpoint` and `umount`
//! follow it). The pipeline's helper reads the same file in shell (`pipeline::luks::agent`).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// `major:minor` of the mounted filesystem's device, as `/sys/block/X/dev` writes it.
    pub dev: String,
    pub point: PathBuf,
}

/// This process's mounts, oldest first (a mount listed after another may sit on it).
pub fn table() -> Vec<Mount> {
    parse(&std::fs::read("/proc/self/mountinfo").unwrap_or_default())
}

/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw`: fields 3 and 5.
pub fn parse(text: &[u8]) -> Vec<Mount> {
    text.split(|&b| b == b'\n')
        .filter_map(|line| {
            let mut it = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
            let dev = it.nth(2)?;
            let point = it.nth(1)?;
            Some(Mount {
                dev: String::from_utf8_lossy(dev).into_owned(),
                point: PathBuf::from(OsString::from_vec(unescape(point))),
            })
        })
        .collect()
}

/// The mounts at `dir` or below it, deepest (latest) first: the order to unmount them in.
/// `dir` must be canonical, as the kernel lists mount points.
pub fn under(table: &[Mount], dir: &Path) -> Vec<PathBuf> {
    table
        .iter()
        .rev()
        .filter(|m| m.point.starts_with(dir))
        .map(|m| m.point.clone())
        .collect()
}

/// The mount points of device `dev` (`major:minor`), latest first.
pub fn of_device(table: &[Mount], dev: &str) -> Vec<PathBuf> {
    table
        .iter()
        .rev()
        .filter(|m| m.dev == dev)
        .map(|m| m.point.clone())
        .collect()
}

/// The kernel writes space, tab, newline and backslash in a path as `\` and three octal
/// digits (`seq_path` in fs/seq_file.c, `mangle` in fs/proc_namespace.c).
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let oct = field.get(i + 1..i + 4).filter(|d| {
            field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)) && d[0] <= b'3'
        });
        match oct {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_decoded_and_matched_by_path_components() {
        let t = parse(
            b"22 1 0:21 / /proc rw - proc proc rw\n\
              45 27 253:0 / /srv/my\\040dir/sshtune-storage-7-a/mnt rw - ext4 /dev/dm-0 rw\n\
              46 45 0:40 / /srv/my\\040dir/sshtune-storage-7-a/mnt/x\\134y rw - tmpfs t rw\n\
              47 27 0:41 / /srv/my\\040dir/sshtune-storage-7-ab rw - tmpfs t rw\n",
        );
        assert_eq!(t.len(), 4);
        assert_eq!(t[1].dev, "253:0");
        let dir = Path::new("/srv/my dir/sshtune-storage-7-a");
        assert_eq!(
            under(&t, dir),
            [dir.join("mnt/x\\y"), dir.join("mnt")],
            "deepest first, a sibling with a longer name not included"
        );
        assert_eq!(of_device(&t, "253:0"), [dir.join("mnt")]);
        assert_eq!(unescape(b"a\\011b\\012\\9"), b"a\tb\n\\9");
    }
}
