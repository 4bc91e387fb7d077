//! The byte-for-byte check of every copy: the source's files and their SHA-256, compared
//! with what the helper hashed on the volume.

use crate::pipeline::model::Row;
use anyhow::{Context, Result};
use std::path::Path;

/// SHA-256 of every file of the source, by path relative to `root` (a single-file source
/// by its name).
pub fn sums(files: &[std::path::PathBuf], root: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for f in files {
        let rel = if root.is_file() {
            Path::new(root.file_name().unwrap_or_default()).to_path_buf()
        } else {
            f.strip_prefix(root).unwrap_or(f).to_path_buf()
        };
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        let mut file =
            std::fs::File::open(f).with_context(|| format!("reading {}", f.display()))?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = std::io::Read::read(&mut file, &mut buf)
                .with_context(|| format!("reading {}", f.display()))?;
            if n == 0 {
                break;
            }
            ctx.update(&buf[..n]);
        }
        let hex: String = ctx
            .finish()
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.push((rel.display().to_string(), hex));
    }
    Ok(out)
}

/// The first file whose copy is missing or differs (SHA-256 on both sides), if any.
pub fn compare(want: &[(String, String)], got: Result<Vec<(String, String)>>) -> Option<String> {
    let got = match got {
        Ok(g) => g,
        Err(e) => return Some(format!("{e:#}")),
    };
    want.iter()
        .find_map(|(p, h)| match got.iter().find(|(q, _)| q == p) {
            None => Some(format!("{p} is missing")),
            Some((_, g)) if g != h => Some(format!("{p} differs")),
            _ => None,
        })
}

/// Every regular file under `root` (or `root` itself).
pub fn files(root: &Path) -> Vec<std::path::PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.is_file() {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// The rows whose copy differed from the source get that as their error.
pub fn mark_differing(rows: &mut [Row], checks: &[(String, Option<String>)]) {
    for r in rows.iter_mut().filter(|r| r.error.is_none()) {
        if let Some((_, Some(e))) = checks.iter().find(|(c, _)| c == &r.cipher) {
            r.error = Some(format!("the copy differs from the source: {e}"));
        }
    }
}
