use super::*;
use crate::bench::adaptive::decide::decide;
use crate::bench::adaptive::row::Row;
use crate::stats;

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

/// A row with one sample a visit at each of `rates` (MiB/s), for `decide` alone.
fn row(cipher: &str, rates: &[f64]) -> Row {
    Row {
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
        visits: (0..rates.len() as u32).collect(),
    }
}

/// The calls from the first that returns to a cipher measured before: the visits after every
/// row's first round.
fn after_first_rounds(ex: &Scripted) -> Vec<&str> {
    let calls: Vec<&str> = ex.calls.iter().map(|c| c.0.as_str()).collect();
    let back = (1..calls.len())
        .find(|&i| calls[i] != calls[i - 1] && calls[..i].contains(&calls[i]))
        .unwrap_or(calls.len());
    calls[back..].to_vec()
}

fn revisiting() -> Adaptive {
    Adaptive {
        revisit: true,
        ..adaptive()
    }
}

/// Once every row has had its first round, every row gets a sample midway, in plan order. A
/// drift from then on (every transfer reads 20% low) widens the range of a row decided in its
/// first round too, and its two visits then disagree: a third, at the run's end, says which
/// state its figure belongs to.
#[test]
fn every_row_is_visited_midway_and_again_where_its_visits_disagree() {
    let rates = [("lead", 400.0), ("slow", 40.0), ("close", 395.0)];
    let mut ex = Scripted::new(&rates, 0.0, 0.01);
    ex.drift = Some(1.25);
    let p = plan(&["lead", "slow", "close"]);
    let rows = run(&mut ex, &p, &revisiting(), Context::default(), &Quiet).unwrap();
    assert_eq!(after_first_rounds(&ex)[..3], ["lead", "slow", "close"]);
    let slow = rows.iter().find(|r| r.cipher == "slow").unwrap();
    assert_eq!(slow.sample_visits[..3], [0, 0, 1], "{slow:?}");
    assert!(stats::visit_count(&slow.sample_visits) >= 3, "{slow:?}");
    let spread = stats::relative_spread(&slow.samples).unwrap();
    assert!(spread > 0.15, "the drift shows in its range: {slow:?}");
    // Its figure is the state two of its three visits met, not the mean of two.
    let figure = slow.median_mib_s.unwrap();
    assert!((figure - 32.0).abs() < 1.0, "{slow:?}");
    for r in &rows {
        assert!(stats::visit_count(&r.sample_visits) >= 3, "{r:?}");
    }
}

/// A row whose first round and visit midway agree is not visited a third time: it spans the
/// run's first part already, and its figure is theirs.
#[test]
fn a_row_whose_visits_agree_is_not_visited_a_third_time() {
    let rates = [("lead", 400.0), ("slow", 40.0), ("close", 395.0)];
    let mut ex = Scripted::new(&rates, 0.0, 0.01);
    let p = plan(&["lead", "slow", "close"]);
    let rows = run(&mut ex, &p, &revisiting(), Context::default(), &Quiet).unwrap();
    let slow = rows.iter().find(|r| r.cipher == "slow").unwrap();
    assert_eq!(slow.sample_visits, [0, 0, 1], "{slow:?}");
    assert_eq!(slow.stopped.as_deref(), Some("decided"));
    assert_eq!(
        after_first_rounds(&ex)
            .iter()
            .filter(|c| **c == "slow")
            .count(),
        1
    );
}

/// Two back-to-back first-round samples that met one low state of the machine (here both read
/// 20% low) do not set the row's figure: they count as one visit, and the visit midway and a
/// third visit read the row's own rate. The range keeps the low state.
#[test]
fn a_low_first_round_counts_as_one_visit() {
    let rates = [("lead", 400.0), ("mid", 200.0), ("slow", 100.0)];
    let p = plan(&["lead", "mid", "slow"]);
    let mut clean = Scripted::new(&rates, 0.0, 0.0);
    run(&mut clean, &p, &revisiting(), Context::default(), &Quiet).unwrap();
    // mid's first round ends with its two samples: the last two of its calls before slow's.
    let first_slow = clean.calls.iter().position(|c| c.0 == "slow").unwrap();
    let mut ex = Scripted::new(&rates, 0.0, 0.0);
    ex.disturbed = vec![(first_slow - 2, 1.25), (first_slow - 1, 1.25)];
    let rows = run(&mut ex, &p, &revisiting(), Context::default(), &Quiet).unwrap();
    let mid = rows.iter().find(|r| r.cipher == "mid").unwrap();
    assert_eq!(mid.sample_visits[..2], [0, 0], "{mid:?}");
    assert!(mid.min_mib_s.unwrap() < 170.0, "{mid:?}");
    assert!(stats::visit_count(&mid.sample_visits) >= 3, "{mid:?}");
    let figure = mid.median_mib_s.unwrap();
    assert!((figure - 200.0).abs() < 2.0, "{mid:?}");
    // A median over samples would read between the two states.
    assert!(stats::median(&mid.samples).unwrap() < 195.0, "{mid:?}");
}

/// Below the leader, a row whose two samples differ by more than the run's median noise
/// but within what its noise explains (the upper decile, at least 10%) is decided; one
/// beyond that gets another sample.
#[test]
fn a_row_below_the_leader_is_stable_within_the_runs_usual_noise() {
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

/// After three visits a row whose range overlaps the leader's is ordered when its median
/// trails by more than the noise, tied within half of it, and races on in between.
#[test]
fn an_overlapping_row_is_ordered_by_its_median_after_three_visits() {
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
