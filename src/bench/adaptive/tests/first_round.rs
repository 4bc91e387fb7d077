use super::*;
use crate::bench::adaptive::first_round::{aim, OVERSHOT};

#[test]
fn ramp_up_makes_the_rule_lengthen_samples() {
    // 0.3 s of ramp-up: a 0.25 s sample shows well under half the true 100 MiB/s.
    let mut ex = Scripted::new(&[("slow-link", 100.0)], 0.3, 0.0);
    let rows = run_it(&mut ex, &plan(&["slow-link"]));
    let r = &rows[0];
    assert!(
        r.sample_seconds.iter().all(|&s| s > 1.0),
        "samples stayed short: {:?}",
        r.sample_seconds
    );
    let m = r.median_mib_s.unwrap();
    assert!(m > 80.0, "median {m} still dominated by ramp-up");
    // Without ramp-up the first pair agrees and samples stay short.
    let mut ex = Scripted::new(&[("fast", 100.0)], 0.0, 0.0);
    let rows = run_it(&mut ex, &plan(&["fast"]));
    assert!(rows[0].sample_seconds.iter().all(|&s| s < 1.0), "{rows:?}");
}

/// A first sample slowed once by a disturbance makes the longer one look like the end of a
/// ramp-up; a second sample at the shorter length reads the true rate, and the row keeps
/// all three at the shorter length instead of lengthening.
#[test]
fn a_second_short_sample_tells_a_disturbance_from_a_ramp_up() {
    let mut calm = Scripted::new(&[("a", 100.0)], 0.0, 0.0);
    let rows = run_it(&mut calm, &plan(&["a"]));
    assert_eq!(rows[0].samples.len(), 2, "{rows:?}");
    let first_sample = calm.calls.len() - 2;
    let mut ex = Scripted::new(&[("a", 100.0)], 0.0, 0.0);
    ex.disturbed = vec![(first_sample, 1.25)];
    let rows = run_it(&mut ex, &plan(&["a"]));
    let r = &rows[0];
    assert_eq!(r.samples.len(), 3, "{r:?}");
    assert_eq!(r.bytes, rows_bytes(&calm), "{r:?}");
    assert_eq!(ex.calls.len(), calm.calls.len() + 1, "{:?}", ex.calls);
    assert!((r.median_mib_s.unwrap() - 100.0).abs() < 1.0, "{r:?}");
    // A real ramp-up reads low in the second short sample too: the row is lengthened.
    let mut ex = Scripted::new(&[("a", 100.0)], 0.3, 0.0);
    let rows = run_it(&mut ex, &plan(&["a"]));
    assert!(rows[0].sample_seconds.iter().all(|&s| s > 1.0), "{rows:?}");
}

/// The size of the calm run's samples: its last call is the longer of its pair.
fn rows_bytes(ex: &Scripted) -> u64 {
    ex.calls[ex.calls.len() - 2].1
}

/// Noise without a ramp-up (every other transfer 15% slow) does not lengthen samples: a
/// longer sample that is slower is no sign that short ones read low. The noise is in the
/// phase that makes each row's longer sample the slow one; in the other, slow, fast, slow
/// again is what a ramp-up looks like, and no second short sample can tell them apart.
#[test]
fn noise_alone_keeps_samples_short() {
    let mut ex = Scripted::new(&[("a", 100.0), ("b", 90.0), ("c", 80.0)], 0.0, 0.15);
    ex.phase = 1;
    let rows = run_it(&mut ex, &plan(&["a", "b", "c"]));
    for r in &rows {
        assert!(
            r.sample_seconds.iter().all(|&s| s < 1.0),
            "{}: {:?}",
            r.cipher,
            r.sample_seconds
        );
    }
}

/// A pair with a session of its own warms it up once, in its first direction; the download
/// after its uploads starts at their size and takes no warm-up. Where only the process
/// warms, only the run's first row takes one.
#[test]
fn a_pair_warms_up_once_and_a_process_once_per_run() {
    let names = ["a", "b"];
    let scripted = || Scripted::new(&[("a", 100.0), ("b", 100.0)], 0.0, 0.0);
    let mut p = plan(&names);
    p.directions = vec![Direction::Upload, Direction::Download];
    let mut a = adaptive();
    a.race = false;
    a.max_samples = 2;
    let mib = |ex: &Scripted, c: &str| -> Vec<u64> {
        ex.calls
            .iter()
            .filter(|(n, _)| n == c)
            .map(|(_, b)| b / MIB)
            .collect()
    };
    let mut ex = scripted();
    let rows = run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
    // Upload: a sizing transfer, a warm-up, a sample and one twice as long; download: the
    // same two samples, the first at the upload's size.
    assert_eq!(mib(&ex, "a"), [4, 32, 32, 64, 32, 64]);
    // The next pair's first transfer is a quarter of a shortest sample at the rate of the
    // row before (6.25 MiB), then sized as the first was.
    assert_eq!(mib(&ex, "b"), [6, 32, 32, 64, 32, 64]);
    assert!(rows.iter().all(|r| r.samples.len() == 2));
    // Nothing to warm per pair: after the run's first row, the first transfer long enough
    // is the first sample.
    let mut ex = Scripted {
        kept: false,
        ..scripted()
    };
    run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
    assert_eq!(mib(&ex, "a"), [4, 32, 32, 64, 32, 64]);
    assert_eq!(mib(&ex, "b"), [6, 32, 64, 32, 64]);
}

/// Where a pair has nothing of its own to warm (the native engine), every row first gets one
/// untimed transfer of the run's first size, in plan order, before any row's first round; its
/// first row is then warm, each row's first transfer is sized from its own rate, and none of
/// those transfers is a sample. An engine whose pairs warm their own sessions gets no such
/// pass.
#[test]
fn every_row_is_surveyed_first_where_only_the_process_warms() {
    let p = plan(&["a", "b"]);
    let a = Adaptive {
        race: false,
        max_samples: 2,
        survey: true,
        ..adaptive()
    };
    let scripted = || Scripted::new(&[("a", 128.0), ("b", 128.0)], 0.0, 0.0);
    let mut ex = Scripted {
        kept: false,
        ..scripted()
    };
    let rows = run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
    let first: Vec<(&str, u64)> = ex
        .calls
        .iter()
        .take(3)
        .map(|(n, b)| (n.as_str(), b / MIB))
        .collect();
    assert_eq!(first, [("a", 4), ("b", 4), ("a", 32)]);
    // The first row is warm and sized from its own rate: its first transfer lasts a
    // shortest sample and is its first sample, the second twice as long (no warm-up).
    let of_a: Vec<u64> = ex
        .calls
        .iter()
        .filter(|(n, _)| n == "a")
        .map(|(_, b)| b / MIB)
        .collect();
    assert_eq!(of_a, [4, 32, 64]);
    for r in &rows {
        assert_eq!(r.samples.len(), 2, "{r:?}");
        assert!(r.sample_seconds.iter().all(|&s| s >= a.start_s), "{r:?}");
    }
    let mut ex = scripted();
    run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
    assert_eq!(ex.calls[1].0, "a", "{:?}", ex.events);
}

/// A pair like the one before reaches its sample length after one short transfer; one 20
/// times slower than the one before spends a bounded time on its first transfer.
#[test]
fn a_new_pair_is_sized_from_the_rate_of_the_row_before() {
    let mut ex = Scripted::new(&[("a", 1000.0), ("b", 1000.0), ("c", 50.0)], 0.0, 0.0);
    let mut a = adaptive();
    a.race = false;
    a.max_samples = 2;
    run(
        &mut ex,
        &plan(&["a", "b", "c"]),
        &a,
        Context::default(),
        &Quiet,
    )
    .unwrap();
    let calls = |c: &str| -> Vec<u64> {
        ex.calls
            .iter()
            .filter(|(n, _)| n == c)
            .map(|(_, b)| *b)
            .collect()
    };
    // From 4 MiB, "a" takes two sizing transfers before its warm-up at the sample length.
    assert_eq!(calls("a").len(), 5, "{:?}", calls("a"));
    // "b" takes one: a quarter of the shortest sample at a's rate.
    let b = calls("b");
    assert_eq!(b.len(), 4, "{b:?}");
    assert!((b[0] as f64 / MIB as f64 - 62.5).abs() < 1.0, "{b:?}");
    // "c" at 1/20 of b's rate: its first transfer lasts 1.25 s (five shortest samples);
    // the samples start again from the shortest length at the rate it showed.
    let c = calls("c");
    let first_s = c[0] as f64 / MIB as f64 / 50.0;
    assert!((first_s - 1.25).abs() < 0.02, "{c:?}");
    let mib: Vec<u64> = c[1..].iter().map(|b| b / MIB).collect();
    assert_eq!(mib, [16, 32], "{c:?}");
}

/// One login at a time, none during a sample: the next pair's session is opened once this
/// pair's own login is over (after its first transfer, or from its start when it was
/// opened ahead itself), and the run waits for the new login (`settle`) before every
/// transfer that may be a sample: after the warm-up, and before a warm row's first
/// transfer.
#[test]
fn the_next_login_runs_during_the_warm_up_and_never_during_a_sample() {
    let mut ex = Scripted::new(&[("a", 100.0), ("b", 100.0), ("c", 100.0)], 0.0, 0.0);
    let mut p = plan(&["a", "b", "c"]);
    p.directions = vec![Direction::Upload, Direction::Download];
    let mut a = adaptive();
    a.race = false;
    a.max_samples = 2;
    run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
    // "a" asks for "b" once its own first transfer (its login) is over; "b", opened ahead,
    // asks for "c" before its first transfer, once its own login is waited for.
    let want = [
        "a:4",
        "prepare:b",
        "a:32",
        "settle",
        "a:32",
        "a:64",
        "settle",
        "a:32",
        "a:64",
        "settle",
        "prepare:c",
        "b:6",
        "b:32",
        "settle",
        "b:32",
        "b:64",
        "settle",
        "b:32",
        "b:64",
        "c:6",
        "c:32",
        "settle",
        "c:32",
        "c:64",
        "settle",
        "c:32",
        "c:64",
    ];
    assert_eq!(ex.events, want);
}

/// A download at 0.4 of its upload's rate: the size the upload settled on lasts 2.5
/// shortest samples, too long for a first guess from another cipher but within the
/// longest length, so it is the download's first sample, not a transfer thrown away.
#[test]
fn the_size_the_other_direction_settled_on_is_kept_up_to_the_longest_length() {
    let mut ex = Scripted {
        download_share: 0.4,
        ..Scripted::new(&[("a", 100.0)], 0.0, 0.0)
    };
    let mut p = plan(&["a"]);
    p.directions = vec![Direction::Upload, Direction::Download];
    let mut a = adaptive();
    a.race = false;
    a.max_samples = 2;
    let rows = run(&mut ex, &p, &a, Context::default(), &Quiet).unwrap();
    // The upload ends with its second sample, twice its size.
    let up = ex
        .calls
        .iter()
        .position(|(_, b)| *b == 2 * rows[0].bytes)
        .unwrap();
    let down: Vec<u64> = ex.calls[up + 1..].iter().map(|(_, b)| *b).collect();
    assert_eq!(down.len(), 2, "{down:?}");
    assert_eq!(down[0], rows[0].bytes);
    assert!(rows[1].sample_seconds[0] > OVERSHOT * a.start_s, "{rows:?}");
    assert_eq!(rows[1].bytes, rows[0].bytes);
}

#[test]
fn sizing_does_not_aim_past_the_longest_length() {
    // 0.5 s seen, 1.9 s wanted, 2 s the longest: next_size alone would aim at 2.4 s.
    let next = aim(10 * MIB, 0.5, 1.9, 2.0);
    assert!(next <= 40 * MIB, "{next}");
    assert!(next > 10 * MIB);
}

/// Samples that agree but all pay the same start: a 50 ms start at 100 MiB/s makes every
/// 0.25 s sample read about 20% low, and a pair of 0.25 s and 0.5 s ones disagree by less
/// than a tenth. The start cost the pair implies must lengthen them to where it is at most
/// the noise floor.
#[test]
fn a_start_cost_lengthens_samples_that_agree() {
    let mut ex = Scripted::new(&[("a", 100.0), ("b", 90.0)], 0.05, 0.0);
    let mut a = adaptive();
    a.max_samples = 2;
    let rows = run(&mut ex, &plan(&["a", "b"]), &a, Context::default(), &Quiet).unwrap();
    for r in &rows {
        assert!(
            r.sample_seconds.iter().all(|&s| s >= 0.05 / NOISE_FLOOR),
            "{r:?}"
        );
        let truth = if r.cipher == "a" { 100.0 } else { 90.0 };
        assert!(
            r.median_mib_s.unwrap() >= truth * (1.0 - NOISE_FLOOR),
            "{r:?}"
        );
    }
    let pair = |mib: u64, secs: f64| Sample {
        bytes: mib * MIB,
        seconds: secs,
        ..Sample::default()
    };
    let cost = start_cost(&pair(10, 0.15), &pair(20, 0.25)).unwrap();
    assert!((cost - 0.05).abs() < 1e-9);
    assert_eq!(start_cost(&pair(10, 0.1), &pair(10, 0.2)), None);
}

/// One early pair whose noise implies a start cost at the longest length (its first
/// sample slow, the second short sample slow too, but by less: within the noise the first
/// showed) must not hold every later row at the longest length: the pair each later row's
/// resizing makes shows no start, and the floor comes down.
#[test]
fn one_noisy_start_cost_does_not_hold_the_run_at_the_longest_length() {
    let mut calm = Scripted::new(&[("a", 100.0)], 0.0, 0.0);
    run_it(&mut calm, &plan(&["a"]));
    let first_sample = calm.calls.len() - 2;
    let names = ["a", "b", "c", "d"];
    let rates = [("a", 100.0), ("b", 95.0), ("c", 90.0), ("d", 85.0)];
    let mut ex = Scripted::new(&rates, 0.0, 0.0);
    // The first sample, and the second at its length (after the longer one).
    ex.disturbed = vec![(first_sample, 1.6), (first_sample + 2, 1.2)];
    let rows = run_it(&mut ex, &plan(&names));
    let a = &rows[0];
    assert!(a.samples.len() >= 3, "{a:?}");
    let last = rows.last().unwrap();
    assert!(
        last.sample_seconds.iter().all(|&s| s < 1.0),
        "{}: {:?}",
        last.cipher,
        last.sample_seconds
    );
}
