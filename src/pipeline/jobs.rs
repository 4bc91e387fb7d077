//! `--jobs N`: how many rsync processes copy the dataset at once, and how it is split.
//!
//! One OpenSSH connection encrypts on one core at each end; N rsyncs over N connections can
//! use N. The dataset's files are shared out by size, largest first, each into the part with
//! the fewest bytes so far (the greedy "longest processing time" rule), so the jobs end near
//! each other. A job is one rsync with `--files-from` its part's list. This file is pure
//! planning; `jobs_run.rs` measures, `jobs_gain.rs` judges.

use super::dataset::Dataset;
use super::model::{JobPart, JobsRow, JobsSection};
use super::rsync::quote;
use anyhow::{Context, Result};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// `--jobs` accepts up to this many rsync processes at once.
pub const JOBS_MAX: u32 = 16;
/// Unauthenticated connections OpenSSH's sshd accepts at once by default (`MaxStartups`
/// 10:30:100, sshd_config(5)); the jobs log in together.
const MAX_STARTUPS: u32 = 10;
/// `--jobs auto` never starts more than this many.
pub const AUTO_MAX: u32 = 8;

/// `--jobs`: a count, or `auto` (the destination's online cores, at most `AUTO_MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JobsAsked {
    #[default]
    One,
    Count(u32),
    Auto,
}

impl FromStr for JobsAsked {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(JobsAsked::Auto),
            "1" => Ok(JobsAsked::One),
            _ => match s.parse::<u32>() {
                Ok(n) if (2..=JOBS_MAX).contains(&n) => Ok(JobsAsked::Count(n)),
                _ => Err(format!("expected a count from 1 to {JOBS_MAX}, or auto")),
            },
        }
    }
}

impl fmt::Display for JobsAsked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobsAsked::One => f.write_str("1"),
            JobsAsked::Count(n) => write!(f, "{n}"),
            JobsAsked::Auto => f.write_str("auto"),
        }
    }
}

/// The count `asked` comes to for this destination and dataset, and why when it is not what
/// was typed (`auto`, or fewer files than jobs).
pub fn resolve(asked: JobsAsked, cores: Option<u32>, files: u64) -> (u32, Option<String>) {
    let (count, mut reason) = match (asked, cores) {
        (JobsAsked::One, _) => (1, None),
        (JobsAsked::Count(n), _) => (n, None),
        (JobsAsked::Auto, Some(c)) if c > AUTO_MAX => (
            AUTO_MAX,
            Some(format!("the destination's {c} cores, at most {AUTO_MAX}")),
        ),
        (JobsAsked::Auto, Some(c)) => (c.max(1), Some(format!("the destination's {c} cores"))),
        (JobsAsked::Auto, None) => (
            1,
            Some("the destination's cores cannot be read: one job".to_string()),
        ),
    };
    if u64::from(count) > files {
        let n = files.max(1) as u32;
        reason = Some(format!(
            "the dataset has {files} file{}: {n} job{} instead of {count}",
            if files == 1 { "" } else { "s" },
            if n == 1 { "" } else { "s" },
        ));
        return (n, reason);
    }
    (count, reason)
}

/// One part of the dataset: its files (relative to the dataset's root) and their bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Part {
    pub files: Vec<PathBuf>,
    pub bytes: u64,
}

/// `files` (path, size) shared into `n` parts: largest first, each into the lightest part so
/// far (ties: the lower index). Every file lands in exactly one part.
pub fn split(mut files: Vec<(PathBuf, u64)>, n: usize) -> Vec<Part> {
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut parts = vec![Part::default(); n.max(1)];
    for (path, size) in files {
        let lightest = (0..parts.len())
            .min_by_key(|&i| (parts[i].bytes, i))
            .expect("at least one part");
        parts[lightest].bytes += size;
        parts[lightest].files.push(path);
    }
    parts
}

/// `--jobs` as it comes out for this destination and dataset.
pub struct Planned {
    pub asked: JobsAsked,
    pub count: u32,
    /// Why the count is not what was typed.
    pub reason: Option<String>,
    /// None for one job.
    pub plan: Option<Plan>,
}

impl Planned {
    /// `asked` resolved against the destination's `cores` and the dataset's files; a count
    /// cut to the files, or `auto` that came to one job, is a warning.
    pub fn new(
        asked: JobsAsked,
        cores: Option<u32>,
        dataset: &Dataset,
        warnings: &mut Vec<String>,
    ) -> Result<Self> {
        if asked == JobsAsked::One {
            return Ok(Self {
                asked,
                count: 1,
                reason: None,
                plan: None,
            });
        }
        let files = dataset.file_sizes()?;
        let (count, reason) = resolve(asked, cores, files.len() as u64);
        if let Some(r) = reason.as_ref() {
            if count < 2 || r.starts_with("the dataset") {
                warnings.push(format!("--jobs {asked}: {r}"));
            }
        }
        if count > MAX_STARTUPS {
            warnings.push(format!(
                "--jobs {asked}: {count} logins at once; a server with OpenSSH's default \
                 `MaxStartups 10:30:100` may refuse those beyond {MAX_STARTUPS}, which fails the run"
            ));
        }
        let plan = if count >= 2 {
            Some(Plan::new(split(files, count as usize))?)
        } else {
            None
        };
        Ok(Self {
            asked,
            count,
            reason,
            plan,
        })
    }

    /// The report's section with the measured rows (judged later), None for one job asked.
    pub fn section(&self, rows: Vec<JobsRow>) -> Option<JobsSection> {
        (self.asked != JobsAsked::One).then(|| JobsSection {
            asked: self.asked.to_string(),
            count: self.count,
            reason: self.reason.clone(),
            parts: self
                .plan
                .iter()
                .flat_map(|p| &p.parts)
                .map(|p| JobPart {
                    files: p.files.len() as u64,
                    bytes: p.bytes,
                })
                .collect(),
            rows,
        })
    }
}

/// The parts, each written as an rsync `--files-from` list in a private temp directory
/// (removed with the plan).
pub struct Plan {
    pub parts: Vec<Part>,
    /// The lists, one per part, and the FIFOs the runs read each job's output through.
    pub dir: tempfile::TempDir,
}

impl Plan {
    fn new(parts: Vec<Part>) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("sshtune-jobs-")
            .tempdir()
            .context("creating a temporary directory for the jobs' file lists")?;
        for (i, p) in parts.iter().enumerate() {
            write_list(&list_path(dir.path(), i), &p.files)?;
        }
        Ok(Self { parts, dir })
    }

    pub fn count(&self) -> u32 {
        self.parts.len() as u32
    }

    /// Job `i`'s `--files-from` list.
    pub fn list(&self, i: usize) -> PathBuf {
        list_path(self.dir.path(), i)
    }
}

fn list_path(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("part{i}.list"))
}

/// One path a line, as `--files-from` reads them.
fn write_list(path: &Path, files: &[PathBuf]) -> Result<()> {
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    for p in files {
        use std::os::unix::ffi::OsStrExt;
        f.write_all(p.as_os_str().as_bytes())?;
        f.write_all(b"\n")?;
    }
    f.flush()
        .with_context(|| format!("writing {}", path.display()))
}

/// A shell line that does what the run measured, for the user's own copies: the files of
/// `source` split by size, largest first, into `n` lists (GNU find's `-printf` and awk), one
/// rsync per list at once through `xargs -P`. `ssh` is the `-e` command; `source` and
/// `dest` as the user writes them (`SRC`, `HOST:DIR` when the run's own are of no use to
/// them). Names holding a newline are not handled.
pub fn command_line(n: u32, ssh: &str, source: &str, dest: &str) -> String {
    let awk = "{b=0; for (i=1; i<n; i++) if (t[i] < t[b]) b=i; t[b]+=$1; c[b]++; \
               sub(/^[0-9]+ /, \"\"); print > (d \"/\" b)} \
               END {for (i=0; i<n; i++) if (c[i]) {close(d \"/\" i); print d \"/\" i}}";
    format!(
        "L=$(mktemp -d) && cd {src} && find . -type f -printf '%s %P\\n' | sort -rn | \
         awk -v n={n} -v d=\"$L\" '{awk}' | xargs -P {n} -I{{}} rsync -a --whole-file \
         --files-from={{}} -e {e} . {dest}/; rm -r \"$L\"",
        src = quote(source),
        e = quote(ssh),
        dest = quote(dest.trim_end_matches('/')),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_and_auto_takes_the_cores_up_to_eight() {
        assert_eq!("auto".parse(), Ok(JobsAsked::Auto));
        assert_eq!("1".parse(), Ok(JobsAsked::One));
        assert_eq!("16".parse(), Ok(JobsAsked::Count(16)));
        for bad in ["0", "17", "x", ""] {
            assert!(bad.parse::<JobsAsked>().is_err(), "{bad}");
        }
        let m = |cores| cores;
        assert_eq!(resolve(JobsAsked::Auto, m(Some(4)), 100).0, 4);
        assert_eq!(resolve(JobsAsked::Auto, m(Some(64)), 100).0, AUTO_MAX);
        assert_eq!(resolve(JobsAsked::Auto, m(None), 100).0, 1);
        assert_eq!(resolve(JobsAsked::Count(3), m(Some(2)), 100), (3, None));
        let (n, why) = resolve(JobsAsked::Count(4), m(None), 2);
        assert_eq!(n, 2);
        assert_eq!(why.unwrap(), "the dataset has 2 files: 2 jobs instead of 4");
        assert_eq!(resolve(JobsAsked::Count(4), m(None), 1).0, 1);
    }

    #[test]
    fn largest_first_into_the_lightest_part() {
        let f = |n: &str, s| (PathBuf::from(n), s);
        let parts = split(
            vec![f("a", 10), f("b", 70), f("c", 30), f("d", 30), f("e", 20)],
            2,
        );
        assert_eq!(parts[0].files, [Path::new("b"), Path::new("a")]);
        assert_eq!(
            parts[1].files,
            [Path::new("c"), Path::new("d"), Path::new("e")]
        );
        assert_eq!((parts[0].bytes, parts[1].bytes), (80, 80));
    }
}
