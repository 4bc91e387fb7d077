use super::*;
use crate::bench::adaptive::decide::decide;
use crate::bench::adaptive::row::Row;
use crate::bench::stats;

#[test]
fn a_row_below_the_leader_stops_after_two_samples() {
    let mut ex = Scripted::new(
        &[("lead", 400.0), ("slow", 40.0), ("close", 395.0)],
        0.0,
        0.01,
    );
    let rows = run_it(&mut ex, &plan(&["lead", "slow", "close"]));
    let slow = rows.iter().find(|r| r.cipher == "slow").unwrap();
    assert_eq!(slow.samples.len(), 2);
    assert_eq!(slow.stopped.as_deref(), Some("decided"));
    assert!(slow.median_mib_s.is_some() && slow.min_mib_s.is_some());
    // The two contenders overlap: sampled to the budget, not stopped early.
    for c in ["lead", "close"] {
        let r = rows.iter().find(|r| r.cipher == c).unwrap();
        assert_eq!(r.samples.len(), 5, "{c}: {r:?}");
        assert_eq!(r.stopped, None);
    }
    assert_eq!(
        rows.iter().map(|r| r.cipher.as_str()).collect::<Vec<_>>(),
        ["lead", "slow", "close"]
    );
}

/// A row decided in its first round is visited once more at the run's end, after every
/// other row: a drift during the run (here every transfer after the first rounds reads
/// 20% low) then widens its range too, not only the contenders'.
#[test]
fn a_row_decided_in_its_first_round_is_visited_again_at_the_end() {
    let mut ex = Scripted::new(
        &[("lead", 400.0), ("slow", 40.0), ("close", 395.0)],
        0.0,
        0.01,
    );
    let a = Adaptive {
        revisit: true,
        ..adaptive()
    };
    ex.drift = Some(1.25);
    let rows = run(
        &mut ex,
        &plan(&["lead", "slow", "close"]),
        &a,
        Context::default(),
        &Quiet,
    )
    .unwrap();
    let slow = rows.iter().find(|r| r.cipher == "slow").unwrap();
    assert_eq!(slow.samples.len(), 3, "{slow:?}");
    assert_eq!(slow.stopped.as_deref(), Some("decided"));
    // Its last sample is the run's last transfer, after the contenders' racing.
    assert_eq!(ex.calls.last().map(|c| c.0.as_str()), Some("slow"));
    let spread = stats::relative_spread(&slow.samples).unwrap();
    assert!(
        spread > 0.15,
        "the drift shows in its range: {:?}",
        slow.samples
    );
    // Rows sampled in several visits already are not visited again: they get as many
    // samples as without the revisit.
    let mut same = Scripted::new(
        &[("lead", 400.0), ("slow", 40.0), ("close", 395.0)],
        0.0,
        0.01,
    );
    same.drift = Some(1.25);
    let without = run_it(&mut same, &plan(&["lead", "slow", "close"]));
    for (a, b) in rows
        .iter()
        .zip(&without)
        .filter(|(a, _)| a.cipher != "slow")
    {
        assert!(a.samples.len() >= 3, "{a:?}");
        assert_eq!(a.samples.len(), b.samples.len(), "{}", a.cipher);
    }
}

/// Below the leader, a row whose two samples differ by more than the run's median noise
/// but within what its noise explains (the upper decile, at least 10%) is decided; one
/// beyond that gets another sample.
#[test]
fn a_row_below_the_leader_is_stable_within_the_runs_usual_noise() {
    let row = |cipher: &str, rates: &[f64]| Row {
        cipher: cipher.into(),
        mac: None,
        direction: Direction::Upload,
        size: MIB,
        samples: rates
            .iter()
            .map(|&r| Sample {
                bytes: (r * MIB as f64) as u64,
                seconds: 1.0,
                ..Sample::default()
            })
            .collect(),
        error: None,
        stopped: None,
        done: false,
        last_round: 0,
    };
    let mut rows = vec![
        row("lead", &[400.0, 410.0]),
        row("steady", &[40.0, 43.0]),
        row("unsteady", &[40.0, 46.0]),
    ];
    let mut noise = Noise::default();
    for _ in 0..10 {
        noise.record(0.05);
    }
    decide(&mut rows, &adaptive(), &noise);
    assert_eq!(rows[1].stopped, Some("decided"));
    assert!(!rows[2].done && !rows[0].done);
}

/// After three samples a row whose range overlaps the leader's is ordered when its median
/// trails by more than the noise, tied within half of it, and races on in between.
#[test]
fn an_overlapping_row_is_ordered_by_its_median_after_three_samples() {
    let row = |name: &str, rates: &[f64]| Row {
        cipher: name.into(),
        mac: None,
        direction: Direction::Upload,
        size: MIB,
        samples: rates
            .iter()
            .map(|r| Sample {
                bytes: MIB,
                seconds: 1.0 / r,
                ..Sample::default()
            })
            .collect(),
        error: None,
        stopped: None,
        done: false,
        last_round: 0,
    };
    let mut noise = Noise::default();
    noise.record(0.10);
    let mut rows = vec![
        row("lead", &[100.0, 120.0, 110.0]),
        row("behind", &[70.0, 101.0, 80.0]),
        row("close", &[95.0, 115.0, 105.0]),
        row("near", &[90.0, 112.0, 102.0]),
        row("young", &[70.0, 101.0]),
    ];
    decide(&mut rows, &adaptive(), &noise);
    let stopped: Vec<_> = rows.iter().map(|r| r.stopped).collect();
    assert_eq!(stopped, [None, Some("ordered"), Some("tied"), None, None]);
    // Once the rows still racing are settled, the leader is tied with the tied one.
    rows[3].done = true;
    rows[4].done = true;
    decide(&mut rows, &adaptive(), &noise);
    assert_eq!(rows[0].stopped, Some("tied"));
}

#[test]
fn max_time_stops_the_contenders() {
    let mut ex = Scripted::new(&[("a", 100.0), ("b", 99.0)], 0.0, 0.02);
    let mut p = plan(&["a", "b", "gone"]);
    p.max_time_s = Some(0.1);
    let rows = run_it(&mut ex, &p);
    for r in &rows[..2] {
        assert_eq!(r.samples.len(), 2, "{r:?}");
        assert_eq!(r.stopped.as_deref(), Some("max-time"));
    }
    assert!(rows[2].error.as_deref().unwrap().contains("not offered"));
}

#[test]
fn without_racing_every_row_gets_its_samples() {
    let mut ex = Scripted::new(&[("lead", 400.0), ("slow", 40.0)], 0.0, 0.0);
    let a = Adaptive {
        race: false,
        ..adaptive()
    };
    let rows = run(
        &mut ex,
        &plan(&["lead", "slow"]),
        &a,
        Context::default(),
        &Quiet,
    )
    .unwrap();
    assert!(rows
        .iter()
        .all(|r| r.samples.len() == 5 && r.stopped.is_none()));
}

/// A contender ordered or tied before the racing ends is visited at the run's end too: its
/// samples would otherwise all come from the run's first seconds. Rows sampled in the last
/// racing round are not: they have a sample at the end already.
#[test]
fn a_contender_that_stopped_early_is_visited_again_at_the_end() {
    let mut ex = Scripted::new(
        &[("lead", 400.0), ("close", 395.0), ("near", 360.0)],
        0.0,
        0.01,
    );
    // One of near's first-round transfers reads fast, into the leader's range: it races, and
    // is ordered after its first racing sample, while lead and close race one round more.
    ex.disturbed = vec![(12, 0.85)];
    let a = Adaptive {
        revisit: true,
        ..adaptive()
    };
    let rows = run(
        &mut ex,
        &plan(&["lead", "close", "near"]),
        &a,
        Context::default(),
        &Quiet,
    )
    .unwrap();
    let near = rows.iter().find(|r| r.cipher == "near").unwrap();
    assert_eq!(near.stopped.as_deref(), Some("ordered"), "{near:?}");
    assert_eq!(near.samples.len(), 4, "{near:?}");
    assert_eq!(ex.calls.last().map(|c| c.0.as_str()), Some("near"));
    // The first rounds take 15 transfers; racing round 1 samples all three, round 2 the two
    // still open, and the last visit only near.
    let after: Vec<&str> = ex.calls[15..].iter().map(|c| c.0.as_str()).collect();
    assert_eq!(after, ["lead", "close", "near", "lead", "close", "near"]);
    for c in ["lead", "close"] {
        let r = rows.iter().find(|r| r.cipher == c).unwrap();
        assert_eq!(r.samples.len(), 4, "{c}: {r:?}");
    }
}
