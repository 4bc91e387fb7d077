//! The data rsync moves: generated random bytes (so neither `-z` nor a compressing filesystem
//! can make it look faster than real data), or the user's own directory.

use anyhow::{bail, Context, Result};
use rand::{RngCore, SeedableRng};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetKind {
    /// One large file: the seed's case, streaming throughput.
    Big,
    /// Many 64 KiB files: per-file overhead dominates.
    Small,
    /// Half the size in one file, half in small files.
    Mixed,
}

impl DatasetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DatasetKind::Big => "big",
            DatasetKind::Small => "small",
            DatasetKind::Mixed => "mixed",
        }
    }
}

const SMALL_FILE: u64 = 64 << 10;
const FILES_PER_DIR: u64 = 256;

/// A dataset on local disk. A generated one is deleted when this is dropped.
pub struct Dataset {
    root: PathBuf,
    _temp: Option<tempfile::TempDir>,
    pub kind: String,
    pub files: u64,
    pub bytes: u64,
}

impl Dataset {
    pub fn generate(kind: DatasetKind, size: u64) -> Result<Self> {
        let temp = tempfile::Builder::new()
            .prefix("sshtune-dataset-")
            .tempdir()
            .context("creating a temporary directory for the dataset")?;
        let root = temp.path().join("data");
        fs::create_dir(&root)?;
        let mut rng = rand::rngs::SmallRng::from_entropy();
        let (big, small) = match kind {
            DatasetKind::Big => (size, 0),
            DatasetKind::Small => (0, size),
            DatasetKind::Mixed => (size / 2, size - size / 2),
        };
        let mut files = 0;
        if big > 0 {
            write_random(&root.join("big.bin"), big, &mut rng)?;
            files += 1;
        }
        let mut left = small;
        let mut i = 0u64;
        while left > 0 {
            let dir = root.join(format!("d{:04}", i / FILES_PER_DIR));
            if i % FILES_PER_DIR == 0 {
                fs::create_dir(&dir)?;
            }
            let n = left.min(SMALL_FILE);
            write_random(&dir.join(format!("f{i:06}.bin")), n, &mut rng)?;
            left -= n;
            i += 1;
            files += 1;
        }
        Ok(Self {
            root,
            _temp: Some(temp),
            kind: kind.as_str().into(),
            files,
            bytes: size,
        })
    }

    /// The user's own directory (or file), read only.
    pub fn existing(path: &Path) -> Result<Self> {
        let meta = fs::metadata(path)
            .with_context(|| format!("--source {}: cannot read it", path.display()))?;
        let (files, bytes) = if meta.is_dir() {
            count(path)?
        } else {
            (1, meta.len())
        };
        if bytes == 0 {
            bail!("--source {} holds no data to transfer", path.display());
        }
        Ok(Self {
            root: path.to_path_buf(),
            _temp: None,
            kind: "source".into(),
            files,
            bytes,
        })
    }

    /// What to hand rsync: a directory's contents (trailing slash) or the file itself.
    pub fn rsync_source(&self) -> String {
        let s = self.root.display().to_string();
        if self.root.is_dir() && !s.ends_with('/') {
            s + "/"
        } else {
            s
        }
    }

    /// Every regular file, relative to the root, with its size (a file dataset: itself).
    pub fn file_sizes(&self) -> Result<Vec<(PathBuf, u64)>> {
        let mut out = Vec::new();
        if self.root.is_dir() {
            walk(&self.root, Path::new(""), &mut out)?;
        } else if let Some(name) = self.root.file_name() {
            out.push((PathBuf::from(name), fs::metadata(&self.root)?.len()));
        }
        Ok(out)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A scratch directory next to a generated dataset (removed with it), else a new temp dir.
    pub fn scratch(&self) -> Result<tempfile::TempDir> {
        let parent = self._temp.as_ref().map(|t| t.path().to_path_buf());
        let b = tempfile::Builder::new()
            .prefix("sshtune-local-")
            .tempdir_in(parent.unwrap_or_else(std::env::temp_dir));
        b.context("creating a scratch directory for the rsync-local stage")
    }
}

fn write_random(path: &Path, mut left: u64, rng: &mut impl RngCore) -> Result<()> {
    let mut f = std::io::BufWriter::with_capacity(
        1 << 20,
        fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    let mut buf = vec![0u8; 1 << 20];
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        rng.fill_bytes(&mut buf[..n]);
        f.write_all(&buf[..n])
            .with_context(|| format!("writing {}", path.display()))?;
        left -= n as u64;
    }
    f.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn count(dir: &Path) -> Result<(u64, u64)> {
    let mut files = 0;
    let mut bytes = 0;
    for e in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let e = e?;
        let ft = e.file_type()?;
        if ft.is_dir() {
            let (f, b) = count(&e.path())?;
            files += f;
            bytes += b;
        } else if ft.is_file() {
            files += 1;
            bytes += e.metadata()?.len();
        }
    }
    Ok((files, bytes))
}

/// The regular files under `dir`, paths relative to the dataset's root (`rel` is `dir`'s).
fn walk(dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, u64)>) -> Result<()> {
    for e in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let e = e?;
        let ft = e.file_type()?;
        let name = rel.join(e.file_name());
        if ft.is_dir() {
            walk(&e.path(), &name, out)?;
        } else if ft.is_file() {
            out.push((name, e.metadata()?.len()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_dataset_has_the_asked_size_and_goes_away() {
        let d = Dataset::generate(DatasetKind::Mixed, (1 << 20) + 100).unwrap();
        let root = d.root().to_path_buf();
        assert_eq!(count(&root).unwrap(), (d.files, d.bytes));
        assert_eq!(d.files, 1 + 9);
        assert!(d.rsync_source().ends_with('/'));
        let listed = d.file_sizes().unwrap();
        assert_eq!(listed.len() as u64, d.files);
        assert_eq!(listed.iter().map(|f| f.1).sum::<u64>(), d.bytes);
        assert!(listed.iter().all(|(p, _)| root.join(p).is_file()));
        drop(d);
        assert!(!root.exists());
    }
}
