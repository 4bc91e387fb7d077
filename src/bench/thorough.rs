//! The thorough mode (`--thorough`, or a fixed `--size`): a fixed count of samples of a fixed
//! least length per row, taken in visits. Every row is first warmed up and sized in plan
//! order; then each of `repeat` visits takes one sample of every row, in plan order again, so
//! a row's samples lie a whole visit apart and spread over the run.
//!
//! Taken back to back, a row's samples shared whatever state the machine was in for those
//! seconds (another process's load, the native engine's rate level, where the scheduler had
//! put a remote server): they agreed closely with each other while the rows measured a
//! minute apart did not, and pairs whose ranges stood apart in one run changed order in the
//! next (docs/measurements.md, "Time to an answer"). Visited in turn, every row sees the
//! run's states alike, and a drift widens every range instead of moving one row.

use super::executor::{Executor, Job, Sample};
use super::model::{Direction, ResultRow};
use super::run::{keep_late_error, next_size, summarise, Context, Sampling, Taken, MAX_SIZE};
use crate::process;
use crate::progress::Progress;
use crate::target::SshError;
use anyhow::Result;

/// Bound on sizing rounds, so a peer whose speed keeps changing cannot stall the run.
const MAX_SIZING_ROUNDS: u32 = 8;

/// One planned row: sized, and sampled once per visit; or failed, with the row to report.
#[derive(Clone)]
struct Row {
    cipher: String,
    mac: Option<String>,
    direction: Direction,
    size: u64,
    samples: Vec<Sample>,
    /// Why sampling stopped after some samples (kept with them).
    error: Option<String>,
    /// A row that has no sample to show: refused, or failed before its first sample.
    failed: Option<ResultRow>,
}

impl Row {
    fn live(&self) -> bool {
        self.failed.is_none() && self.error.is_none()
    }

    fn job(&self, bytes: u64) -> Job<'_> {
        Job {
            cipher: &self.cipher,
            mac: self.mac.as_deref(),
            direction: self.direction,
            bytes,
        }
    }
}

/// Runs the sampling plan. Errors that concern one cipher become rows; a fatal error aborts.
pub fn run(
    exec: &mut dyn Executor,
    sampling: &Sampling,
    ctx: Context,
    progress: &dyn Progress,
) -> Result<Vec<ResultRow>> {
    let visits = sampling.repeat.max(1);
    // One step per row, finished when the last visit has sampled it or it failed.
    progress.begin((sampling.pairs.len() * sampling.directions.len()) as u64);
    let engine = exec.engine();
    let done = |row: &Row| {
        progress.step(&super::progress::row_line(&finish(
            engine,
            row.clone(),
            ctx,
        )))
    };
    let mut rows = sized(exec, sampling, progress)?;
    rows.iter().filter(|r| !r.live()).for_each(done);
    for visit in 1..=visits {
        for row in rows.iter_mut().filter(|r| r.live()) {
            process::check_interrupted()?;
            progress.status(&format!("{} {}", row.cipher, row.direction));
            match exec.transfer(&row.job(row.size)) {
                Ok(s) => row.samples.push(s),
                Err(SshError::Fatal(e)) => return Err(e),
                Err(SshError::Failed(why) | SshError::Refused(why)) => {
                    if row.samples.is_empty() {
                        row.failed = Some(failed(exec, row, why));
                    } else {
                        row.error = Some(format!("after {} samples: {why}", row.samples.len()));
                    }
                }
            }
            if visit == visits || !row.live() {
                done(row);
            }
        }
    }
    let out = rows.into_iter().map(|r| finish(engine, r, ctx)).collect();
    progress.finish();
    Ok(out)
}

/// Every planned row warmed up and sized, in plan order; a pair the server refuses fails
/// both its directions.
fn sized(
    exec: &mut dyn Executor,
    sampling: &Sampling,
    progress: &dyn Progress,
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (cipher, mac) in &sampling.pairs {
        let mut refused: Option<String> = None;
        for &direction in &sampling.directions {
            process::check_interrupted()?;
            let mut row = Row {
                cipher: cipher.clone(),
                mac: mac.clone(),
                direction,
                size: 0,
                samples: Vec::new(),
                error: None,
                failed: None,
            };
            let outcome = match &refused {
                Some(why) => Err(SshError::Refused(why.clone())),
                None => {
                    progress.status(&format!("{cipher} {direction} (warm-up)"));
                    warm_up(exec, sampling, &row)
                }
            };
            match outcome {
                Ok(size) => row.size = size,
                Err(SshError::Fatal(e)) => return Err(e),
                Err(SshError::Refused(why)) => {
                    refused = Some(why.clone());
                    row.failed = Some(failed(exec, &row, why));
                }
                Err(SshError::Failed(why)) => row.failed = Some(failed(exec, &row, why)),
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The warm-up: a fixed size's warm-up transfers, or transfers grown until one lasts the
/// least length (and at least `warmup` of them). Returns the size the samples take.
fn warm_up(exec: &mut dyn Executor, sampling: &Sampling, row: &Row) -> Result<u64, SshError> {
    if let Some(size) = sampling.fixed_size {
        let size = size.max(1);
        for _ in 0..sampling.warmup {
            exec.transfer(&row.job(size))?;
        }
        return Ok(size);
    }
    let mut size = sampling.initial_size.max(1);
    let mut rounds = 0;
    loop {
        let s = exec.transfer(&row.job(size))?;
        rounds += 1;
        let long_enough = s.seconds >= sampling.min_duration_s;
        if (long_enough && rounds >= sampling.warmup.max(1))
            || rounds >= MAX_SIZING_ROUNDS
            || size >= MAX_SIZE
        {
            return Ok(size);
        }
        if !long_enough {
            size = next_size(size, s.seconds, sampling.min_duration_s);
        }
    }
}

fn failed(exec: &dyn Executor, row: &Row, why: String) -> ResultRow {
    ResultRow::failed(
        exec.engine(),
        &row.cipher,
        row.mac.as_deref(),
        row.direction,
        why,
    )
}

/// The row as reported: its samples summarised, a late failure kept beside them.
fn finish(engine: &str, r: Row, ctx: Context) -> ResultRow {
    if let Some(f) = r.failed {
        return f;
    }
    // Each visit takes one sample of every live row: sample i is visit i + 1's.
    let visits: Vec<u32> = (1..=r.samples.len() as u32).collect();
    let taken = Taken {
        samples: &r.samples,
        visits: &visits,
    };
    let mut row = summarise(engine, &r.job(r.size), taken, ctx);
    keep_late_error(&mut row, r.error);
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::Verdict;
    use std::cell::RefCell;

    const MIB: u64 = 1024 * 1024;

    /// A scripted executor: it tests the loop's bookkeeping, never a product number.
    struct Scripted {
        rate_mib_s: f64,
        refuse: &'static str,
        /// Fails every transfer of this cipher from the n-th of the run on.
        fail_from: Option<(&'static str, usize)>,
        jobs: RefCell<Vec<(String, Direction, u64)>>,
    }

    impl Scripted {
        fn new(refuse: &'static str) -> Self {
            Self {
                rate_mib_s: 100.0,
                refuse,
                fail_from: None,
                jobs: RefCell::new(vec![]),
            }
        }
    }

    impl Executor for Scripted {
        fn engine(&self) -> &'static str {
            "scripted"
        }
        fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
            if job.cipher == self.refuse {
                return Err(SshError::Refused("cipher not offered by the server".into()));
            }
            let n = self.jobs.borrow().len();
            if self
                .fail_from
                .is_some_and(|(c, from)| c == job.cipher && n >= from)
            {
                return Err(SshError::Failed("connection lost".into()));
            }
            let seconds = job.bytes as f64 / MIB as f64 / self.rate_mib_s;
            self.jobs
                .borrow_mut()
                .push((job.cipher.to_string(), job.direction, job.bytes));
            Ok(Sample {
                bytes: job.bytes,
                seconds,
                client_cpu_s: Some(seconds * 0.99),
                server_cpu_s: Some(0.0),
                ..Sample::default()
            })
        }
    }

    fn plan(fixed: Option<u64>) -> Sampling {
        Sampling {
            pairs: vec![
                ("aes128-ctr".into(), Some("hmac-sha2-256".into())),
                ("x".into(), None),
            ],
            directions: vec![Direction::Upload, Direction::Download],
            repeat: 3,
            warmup: 1,
            fixed_size: fixed,
            initial_size: 8 * MIB,
            min_duration_s: 2.0,
            max_time_s: None,
        }
    }

    fn run_it(ex: &mut Scripted, sampling: &Sampling) -> Vec<ResultRow> {
        run(ex, sampling, Context::default(), &crate::progress::Silent).unwrap()
    }

    #[test]
    fn sizing_reaches_the_least_length() {
        let mut ex = Scripted::new("x");
        let rows = run_it(&mut ex, &plan(None));
        assert_eq!(rows.len(), 4);
        let up = &rows[0];
        assert_eq!(up.samples.len(), 3);
        assert!(
            up.bytes as f64 / MIB as f64 / 100.0 >= 2.0,
            "size {}",
            up.bytes
        );
        assert_eq!(up.verdict, Some(Verdict::ClientCpu));
        assert!(rows[2].error.as_deref().unwrap().contains("not offered"));
        assert!(
            rows[3].error.is_some(),
            "download row of a refused cipher says so too"
        );
    }

    #[test]
    fn fixed_size_is_respected() {
        let mut ex = Scripted::new("x");
        run_it(&mut ex, &plan(Some(3 * MIB)));
        assert!(ex.jobs.borrow().iter().all(|j| j.2 == 3 * MIB));
        // 1 warm-up + 3 samples, two directions.
        assert_eq!(ex.jobs.borrow().len(), 8);
    }

    #[test]
    fn each_visit_samples_every_row_once_in_plan_order() {
        let mut ex = Scripted::new("none");
        let mut p = plan(Some(MIB));
        p.pairs[1].0 = "y".into();
        let out = run_it(&mut ex, &p);
        // Each sample is a visit of its own, and says which.
        for r in &out {
            assert_eq!(r.sample_visits, [1, 2, 3], "{r:?}");
        }
        let jobs = ex.jobs.borrow();
        let order: Vec<(&str, Direction)> = jobs.iter().map(|j| (j.0.as_str(), j.1)).collect();
        let rows = [
            ("aes128-ctr", Direction::Upload),
            ("aes128-ctr", Direction::Download),
            ("y", Direction::Upload),
            ("y", Direction::Download),
        ];
        // The warm-ups first, then three visits of all four rows: no two samples of one row
        // back to back.
        assert_eq!(&order[..4], &rows[..]);
        for visit in order[4..].chunks(4) {
            assert_eq!(visit, &rows[..]);
        }
        assert_eq!(order.len(), 16);
    }

    #[test]
    fn a_row_failing_after_its_first_samples_keeps_them_and_the_rest_go_on() {
        let mut ex = Scripted::new("none");
        let mut p = plan(Some(MIB));
        p.pairs[1].0 = "y".into();
        // Warm-ups 0–3, visit 1 is 4–7, visit 2 starts at 8: y fails from its second sample.
        ex.fail_from = Some(("y", 9));
        let rows = run_it(&mut ex, &p);
        assert_eq!(rows[0].samples.len(), 3);
        assert_eq!(rows[1].samples.len(), 3);
        assert_eq!(rows[2].samples.len(), 1);
        assert!(rows[2]
            .error
            .as_deref()
            .unwrap()
            .starts_with("after 1 samples"));
        assert_eq!(rows[2].verdict, None);
    }

    /// Counts what the loop tells the person waiting.
    #[derive(Default)]
    struct Counted {
        total: std::cell::Cell<u64>,
        steps: RefCell<Vec<String>>,
    }

    impl Progress for Counted {
        fn begin(&self, total: u64) {
            self.total.set(total);
        }
        fn status(&self, _: &str) {}
        fn note(&self, _: &str) {}
        fn step(&self, line: &str) {
            self.steps.borrow_mut().push(line.to_string());
        }
        fn finish(&self) {}
    }

    #[test]
    fn each_row_is_one_step_finished_by_its_last_sample_or_its_failure() {
        let mut ex = Scripted::new("x");
        let shown = Counted::default();
        run(&mut ex, &plan(Some(MIB)), Context::default(), &shown).unwrap();
        let steps = shown.steps.borrow();
        assert_eq!(shown.total.get(), 4);
        assert_eq!(steps.len(), 4, "{steps:?}");
        // The refused pair's rows fail in the warm-ups, before any visit ends a row.
        assert!(steps[0].starts_with("x upload") && steps[0].contains("not offered"));
        assert!(steps[2].starts_with("aes128-ctr upload") && steps[2].contains("(3 samples)"));
    }
}
