//! Executes a plan: sets up the target, maps each setting, runs each test, and undoes every
//! step through the cleanup registry whatever happens.

use super::cleanup::{Cleanup, Resource};
use super::model::{CellResult, MatrixResult, TestInfo, TestResult};
use super::plan::{Layer, Plan, Target, Test};
use super::{crypto, dmcrypt, fio, seqio};
use crate::process::{check_interrupted, run_capture, Interrupted};
use crate::progress::Progress;
use crate::stats;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where the data goes.
#[derive(Debug, Clone)]
pub enum Backing {
    /// A file of `size` bytes in this directory, attached as a loop device.
    LoopFile(PathBuf),
    /// A whole device the user gave up (`--device X --destroy-data`), checked and pinned:
    /// verified again before every step that writes to it.
    Device(std::sync::Arc<super::device::Pinned>),
}

/// How the matrix runs, beside what it measures (the `Plan`): where the data goes, how
/// much of it, and what else the machine is doing.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub backing: Backing,
    /// Where the work directory (loop file, mount point) is made.
    pub work_parent: PathBuf,
    pub size: u64,
    pub io_bytes: u64,
    pub fio_runtime: Duration,
    pub format: dmcrypt::VolumeFormat,
    pub load: u32,
}

/// Bytes each sequential test moves: half the target (ext4 needs room for its metadata),
/// whole 16 MiB blocks, at least one.
pub fn io_bytes_for(size: u64) -> u64 {
    let b = 16u64 << 20;
    ((size / 2) / b * b).max(b)
}

pub fn run(plan: &Plan, s: &RunOptions, progress: &dyn Progress) -> Result<MatrixResult> {
    let mut cleanup = Cleanup::new();
    let pid = std::process::id();
    let work = tempfile::Builder::new()
        .prefix(&format!("{}{pid}-", super::dmcrypt::WORKDIR_PREFIX))
        .tempdir_in(&s.work_parent)
        .with_context(|| format!("making a work directory in {}", s.work_parent.display()))?
        .keep();
    cleanup.push(Resource::Dir(work.clone()));
    let (device, target_desc) = attach(s, &work, &mut cleanup, progress)?;
    let mnt = work.join("mnt");
    std::fs::create_dir(&mnt).context("making the mount point")?;
    let load = super::cpu_load::Load::start(s.load);
    // Steps skipped after an error leave the total, so the ETA counts only what will run.
    let mut matrix = Matrix {
        plan,
        s,
        progress,
        work: &work,
        mnt: &mnt,
        device: &device,
        cleanup: &mut cleanup,
        buf: seqio::Buffer::new(),
        total: plan.steps(),
        cells: Vec::new(),
    };
    progress.begin(matrix.total as u64);
    for (i, target) in plan.targets.iter().enumerate() {
        matrix.target(i, target)?;
    }
    let cells = matrix.cells;
    let mut m = MatrixResult {
        preset: plan.preset,
        target: target_desc,
        target_bytes: s.size,
        io_bytes: s.io_bytes,
        fio_runtime_s: s.fio_runtime.as_secs(),
        repeat: plan.repeat,
        load_threads: s.load,
        format: s.format,
        tests: plan
            .tests
            .iter()
            .map(|t| TestInfo {
                test: *t,
                label: t.label().into(),
                how: t.how().into(),
            })
            .collect(),
        cells,
        complete: true,
    };
    m.compute_ratios();
    drop(load);
    cleanup.unwind_to(0).map_err(anyhow::Error::msg)?;
    Ok(m)
}

/// The device the matrix writes to, and how the report names it: the user's device, or a
/// loop device on a file in the work directory (both registered in `cleanup`).
fn attach(
    s: &RunOptions,
    work: &Path,
    cleanup: &mut Cleanup,
    progress: &dyn Progress,
) -> Result<(PathBuf, String)> {
    match &s.backing {
        Backing::Device(d) => Ok((d.path.clone(), d.path.display().to_string())),
        Backing::LoopFile(dir) => {
            progress.status("creating the loop file");
            let file = work.join("backing.img");
            cleanup.push(Resource::File(file.clone()));
            allocate(&file, s.size)?;
            check_interrupted()?;
            let dev = run_capture(
                Command::new("losetup")
                    .args(["--find", "--show"])
                    .arg(&file),
            )
            .context("attaching a loop device")?;
            let dev = PathBuf::from(dev.trim());
            cleanup.push(Resource::Loop(dev.clone()));
            Ok((dev, format!("loop device on a file in {}", dir.display())))
        }
    }
}

/// The matrix in progress: what is set up, the cells so far, and the steps left.
struct Matrix<'a> {
    plan: &'a Plan,
    s: &'a RunOptions,
    progress: &'a dyn Progress,
    work: &'a Path,
    mnt: &'a Path,
    device: &'a Path,
    cleanup: &'a mut Cleanup,
    buf: seqio::Buffer,
    total: usize,
    cells: Vec<CellResult>,
}

impl Matrix<'_> {
    /// Before each step that writes to the device itself; a mapping holds the device it was
    /// made on, so what goes through one needs no check.
    fn still_the_device(&self) -> Result<()> {
        match &self.s.backing {
            Backing::Device(d) => d.verify(),
            Backing::LoopFile(_) => Ok(()),
        }
    }

    /// `n` steps will not run: the progress total shrinks.
    fn skip(&mut self, n: usize) {
        self.total -= n;
        self.progress.begin(self.total as u64);
    }

    /// One target: its mapping (if encrypted), then each of its layers; a mapping that
    /// cannot be made is an error row per layer, and the matrix goes on.
    fn target(&mut self, i: usize, target: &Target) -> Result<()> {
        let mark = self.cleanup.mark();
        self.still_the_device()?;
        let mapped = match &target.crypt {
            None => Ok((self.device.to_path_buf(), None)),
            Some(spec) => {
                let name = dmcrypt::mapping_name(i);
                self.cleanup.push(Resource::Mapping(name.clone()));
                self.progress
                    .status(&format!("mapping {} as {name}", describe(target)));
                dmcrypt::open(spec, self.s.format, self.device, &name).map(|dev| {
                    let algs = crate::sysinfo::proc_crypto::parse(
                        &std::fs::read_to_string("/proc/crypto").unwrap_or_default(),
                    );
                    (dev, Some(crypto::choose(&spec.cipher, &algs)))
                })
            }
        };
        match mapped {
            Ok((dev, driver)) => {
                for &layer in &target.layers {
                    self.layer(target, layer, &dev, driver.as_ref())?;
                }
            }
            Err(e) => {
                if e.downcast_ref::<Interrupted>().is_some() {
                    return Err(e);
                }
                for &layer in &target.layers {
                    let mut c = cell(target, layer, None);
                    c.error = Some(format!("{e:#}"));
                    self.cells.push(c);
                    self.skip(count(self.plan, layer));
                }
            }
        }
        self.cleanup.unwind_to(mark).map_err(anyhow::Error::msg)
    }

    /// One layer of a target (the device itself, or ext4 on it) and every test that applies.
    fn layer(
        &mut self,
        target: &Target,
        layer: Layer,
        dev: &Path,
        driver: Option<&crypto::DriverChoice>,
    ) -> Result<()> {
        let mut c = cell(target, layer, driver);
        let layer_mark = self.cleanup.mark();
        if target.crypt.is_none() {
            self.still_the_device()?;
        }
        match prepare_layer(layer, dev, self.mnt, self.cleanup) {
            Ok(path) => {
                for &test in self.plan.tests.iter().filter(|t| t.applies_to(layer)) {
                    let r = self.test(target, layer, test, &path)?;
                    c.results.push(r);
                }
            }
            Err(e) => {
                if e.downcast_ref::<Interrupted>().is_some() {
                    return Err(e);
                }
                c.error = Some(format!("{e:#}"));
                self.skip(count(self.plan, layer));
            }
        }
        self.cells.push(c);
        self.cleanup
            .unwind_to(layer_mark)
            .map_err(anyhow::Error::msg)
    }

    /// `repeat` samples of one test; the first error ends them and drops the rest from the
    /// total.
    fn test(
        &mut self,
        target: &Target,
        layer: Layer,
        test: Test,
        path: &Path,
    ) -> Result<TestResult> {
        let repeat = self.plan.repeat;
        let mut r = TestResult {
            test,
            samples_mib_s: Vec::new(),
            median_mib_s: None,
            min_mib_s: None,
            max_mib_s: None,
            pct_of_baseline: None,
            fio: None,
            fio_samples: Vec::new(),
            error: None,
        };
        for _ in 0..repeat {
            let what = format!(
                "{} {} {}",
                describe(target),
                layer_name(layer),
                test.label()
            );
            self.progress.status(&what);
            if target.crypt.is_none() {
                self.still_the_device()?;
            }
            match measure(test, layer, path, self.s, self.work, &mut self.buf) {
                Ok((mib, f)) => {
                    r.samples_mib_s.push(mib);
                    if let Some(f) = f {
                        r.fio_samples.push(f);
                    }
                }
                Err(e) => {
                    if e.downcast_ref::<Interrupted>().is_some() {
                        return Err(e);
                    }
                    r.error = Some(format!("{e:#}"));
                }
            }
            self.progress.step(&format!("{what}: {}", last_figure(&r)));
            if r.error.is_some() {
                self.skip(repeat as usize - r.samples_mib_s.len() - 1);
                break;
            }
        }
        r.median_mib_s = stats::median(&r.samples_mib_s);
        r.min_mib_s = stats::min(&r.samples_mib_s);
        r.max_mib_s = stats::max(&r.samples_mib_s);
        r.fio = r.fio_samples.pop();
        Ok(r)
    }
}

fn count(plan: &Plan, layer: Layer) -> usize {
    plan.tests.iter().filter(|t| t.applies_to(layer)).count() * plan.repeat as usize
}

fn last_figure(r: &TestResult) -> String {
    match (&r.error, r.samples_mib_s.last()) {
        (Some(e), _) => format!("error: {e}"),
        (None, Some(v)) => format!("{v:.1} MiB/s"),
        _ => "-".into(),
    }
}

fn layer_name(l: Layer) -> &'static str {
    match l {
        Layer::Raw => "raw",
        Layer::Ext4 => "ext4",
    }
}

pub fn describe(t: &Target) -> String {
    match &t.crypt {
        None => "baseline".into(),
        Some(c) => format!(
            "{}/{}b/{}B/{}",
            c.cipher,
            c.key_bits,
            c.sector_size,
            c.perf.label()
        ),
    }
}

fn cell(t: &Target, layer: Layer, driver: Option<&crypto::DriverChoice>) -> CellResult {
    CellResult {
        cipher: t.crypt.as_ref().map(|c| c.cipher.clone()),
        key_bits: t.crypt.as_ref().map(|c| c.key_bits),
        sector_size: t.crypt.as_ref().map(|c| c.sector_size),
        perf: t.crypt.as_ref().map(|c| c.perf),
        layer,
        acc: driver.map(|d| d.class),
        driver: driver.and_then(|d| d.driver.clone()),
        results: Vec::new(),
        error: None,
    }
}

/// Raw: the device itself. Ext4: a fresh filesystem (inode tables and journal initialised
/// now, not lazily during the tests — the seed's remark), mounted on `mnt`.
fn prepare_layer(layer: Layer, dev: &Path, mnt: &Path, cleanup: &mut Cleanup) -> Result<PathBuf> {
    match layer {
        Layer::Raw => Ok(dev.to_path_buf()),
        Layer::Ext4 => {
            mount_ext4(dev, mnt, cleanup)?;
            Ok(mnt.join("sshtune-test.dat"))
        }
    }
}

/// Makes ext4 on `dev` (inode tables written now, so no lazy init competes with the
/// measurement) and mounts it on `mnt`, registering the mount in `cleanup` first.
pub fn mount_ext4(dev: &Path, mnt: &Path, cleanup: &mut Cleanup) -> Result<()> {
    check_interrupted()?;
    run_capture(
        Command::new("mkfs.ext4")
            .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
            .arg(dev),
    )
    .context("mkfs.ext4")?;
    cleanup.push(Resource::Mount(mnt.to_path_buf()));
    nix::mount::mount(
        Some(dev),
        mnt,
        Some("ext4"),
        nix::mount::MsFlags::empty(),
        None::<&str>,
    )
    .with_context(|| format!("mounting {} on {}", dev.display(), mnt.display()))?;
    Ok(())
}

fn measure(
    test: Test,
    layer: Layer,
    path: &Path,
    s: &RunOptions,
    work: &Path,
    buf: &mut seqio::Buffer,
) -> Result<(f64, Option<fio::FioFigures>)> {
    if test.is_fio() {
        let file = match layer {
            Layer::Raw => path.to_path_buf(),
            Layer::Ext4 => path.with_file_name("sshtune-fio.dat"),
        };
        if layer == Layer::Ext4 {
            // The sequential tests' file would leave fio too little room on a small target.
            let _ = std::fs::remove_file(path);
        }
        if file.exists() {
            seqio::drop_target_cache(&file)?;
        } else {
            nix::unistd::sync();
        }
        let f = fio::run(test, &file, s.io_bytes, s.fio_runtime, work)?;
        Ok((f.total_mib_s(), Some(f)))
    } else {
        Ok((seqio::run(test, path, s.io_bytes, buf)?, None))
    }
}

/// The loop file gets real blocks up front, so the first test does not pay for allocation.
/// Reserves `size` bytes for a loop file (sparse when the filesystem cannot preallocate).
pub fn allocate(file: &Path, size: u64) -> Result<()> {
    let f = std::fs::File::create(file).with_context(|| format!("creating {}", file.display()))?;
    nix::fcntl::fallocate(
        std::os::fd::AsRawFd::as_raw_fd(&f),
        nix::fcntl::FallocateFlags::empty(),
        0,
        size as i64,
    )
    .or_else(|_| f.set_len(size).map_err(|_| nix::errno::Errno::EIO))
    .with_context(|| format!("allocating {} bytes for {}", size, file.display()))?;
    Ok(())
}
