//! The `--luks` matrix's time: what a cell costs (its fixed costs and its data time), the
//! estimate printed before the matrix and updated as cells finish, and the cut to what fits
//! a `--max-time` budget. Pure: `run.rs` measures the figures and follows the plan.
//!
//! The cut drops whole settings first (from the last one run, never the first: the
//! destination's own setting or the reference), then copies per cell (`--repeat` down to one),
//! then ciphers (from the last one, never the first). What still does not fit is left out
//! whole: a matrix that cannot end in time does not start.

/// Fixed costs measured before the matrix, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fixed {
    /// One setting's volume made ready (luksFormat and open, mkfs and mount) and its
    /// dm-crypt pass, from the first setting's.
    pub volume_s: f64,
    /// One copy's cost besides its data: the logins (emptying the volume, rsync, the flush)
    /// and rsync's start, from the logins of SSH alone until a cell has run.
    pub copy_s: f64,
    /// SSH alone with one cipher, measured again before each setting's cells: its login and
    /// window, from those before the matrix.
    pub alone_s: f64,
}

/// What the matrix runs, and what it leaves out.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub settings: Vec<String>,
    pub ciphers: Vec<String>,
    pub repeat: u32,
    /// One line per thing left out, with why (empty when everything fits).
    pub left_out: Vec<String>,
    /// Estimated seconds of what runs.
    pub estimate_s: f64,
}

/// Estimated seconds of `settings` × `ciphers`, `repeat` copies each; `data_s(setting,
/// cipher)` is one copy's data time.
pub fn seconds(
    settings: &[String],
    ciphers: &[String],
    repeat: u32,
    fixed: Fixed,
    data_s: &dyn Fn(&str, &str) -> f64,
) -> f64 {
    settings
        .iter()
        .map(|s| {
            fixed.volume_s
                + ciphers
                    .iter()
                    .map(|c| fixed.alone_s + f64::from(repeat) * (fixed.copy_s + data_s(s, c)))
                    .sum::<f64>()
        })
        .sum()
}

/// The matrix cut to `budget_s` (none: everything).
pub fn cut(
    settings: &[String],
    ciphers: &[String],
    repeat: u32,
    budget_s: Option<f64>,
    fixed: Fixed,
    data_s: &dyn Fn(&str, &str) -> f64,
) -> Plan {
    let full = seconds(settings, ciphers, repeat, fixed, data_s);
    let mut plan = Plan {
        settings: settings.to_vec(),
        ciphers: ciphers.to_vec(),
        repeat,
        left_out: Vec::new(),
        estimate_s: full,
    };
    let Some(budget) = budget_s else {
        return plan;
    };
    let fits = |p: &Plan| seconds(&p.settings, &p.ciphers, p.repeat, fixed, data_s) <= budget;
    let why = format!(
        "--max-time: the whole matrix was estimated at {}, {} were left",
        clock(full),
        clock(budget.max(0.0))
    );
    while !fits(&plan) && plan.settings.len() > 1 {
        let s = plan.settings.pop().unwrap_or_default();
        plan.left_out.push(format!("setting {s} (every cipher)"));
    }
    while !fits(&plan) && plan.repeat > 1 {
        plan.repeat -= 1;
    }
    if plan.repeat < repeat {
        plan.left_out.push(format!(
            "copies {}–{repeat} of every cell ({} of {repeat} run)",
            plan.repeat + 1,
            plan.repeat
        ));
    }
    while !fits(&plan) && plan.ciphers.len() > 1 {
        let c = plan.ciphers.pop().unwrap_or_default();
        plan.left_out.push(format!("cipher {c} (on every setting)"));
    }
    if !fits(&plan) {
        plan.left_out = vec!["every cell: one copy of one cell on one setting does not fit".into()];
        plan.settings.clear();
        plan.ciphers.clear();
    }
    if !plan.left_out.is_empty() {
        plan.left_out.insert(0, why);
    }
    plan.estimate_s = seconds(&plan.settings, &plan.ciphers, plan.repeat, fixed, data_s);
    plan
}

/// The estimate as cells finish: the planned seconds of the cells left, scaled by how the
/// finished cells' measured time compared with their planned time.
pub fn remaining(planned_left_s: f64, planned_done_s: f64, measured_done_s: f64) -> f64 {
    if planned_done_s > 0.0 && measured_done_s > 0.0 {
        planned_left_s * measured_done_s / planned_done_s
    } else {
        planned_left_s
    }
}

/// `m:ss`.
pub fn clock(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    const FIXED: Fixed = Fixed {
        volume_s: 10.0,
        copy_s: 4.0,
        alone_s: 0.0,
    };

    #[test]
    fn the_estimate_counts_each_volume_once_and_each_copy_repeat_times() {
        let s = names(&["a", "b"]);
        let c = names(&["x", "y", "z"]);
        // 2 × (10 + 3 × 2 × (4 + 1)) = 80.
        assert_eq!(seconds(&s, &c, 2, FIXED, &|_, _| 1.0), 80.0);
        let p = cut(&s, &c, 2, None, FIXED, &|_, _| 1.0);
        assert!(p.left_out.is_empty());
        assert_eq!(p.estimate_s, 80.0);
        let p = cut(&s, &c, 2, Some(80.0), FIXED, &|_, _| 1.0);
        assert!(p.left_out.is_empty(), "a plan that fits exactly is whole");
    }

    #[test]
    fn settings_go_first_then_copies_then_ciphers() {
        let s = names(&["current", "b", "c"]);
        let c = names(&["x", "y"]);
        let data = |_: &str, _: &str| 1.0;
        // Whole: 3 × (10 + 2 × 3 × 5) = 120; two settings 80; one 40.
        let p = cut(&s, &c, 3, Some(85.0), FIXED, &data);
        assert_eq!(p.settings, names(&["current", "b"]));
        assert_eq!((p.repeat, p.ciphers.len()), (3, 2));
        assert!(p.left_out[0].contains("2:00"), "{:?}", p.left_out);
        assert_eq!(p.left_out[1], "setting c (every cipher)");
        assert_eq!(p.estimate_s, 80.0);
        // One setting, then copies: 10 + 2 × r × 5 ≤ 25 → r = 1.
        let p = cut(&s, &c, 3, Some(25.0), FIXED, &data);
        assert_eq!((p.settings.len(), p.repeat, p.ciphers.len()), (1, 1, 2));
        assert!(p.left_out.iter().any(|l| l.starts_with("copies 2–3")));
        // Then ciphers: 10 + 5 = 15.
        let p = cut(&s, &c, 3, Some(16.0), FIXED, &data);
        assert_eq!(p.ciphers, names(&["x"]));
        assert!(p
            .left_out
            .iter()
            .any(|l| l == "cipher y (on every setting)"));
        // Not even one copy: nothing runs.
        let p = cut(&s, &c, 3, Some(5.0), FIXED, &data);
        assert!(p.settings.is_empty() && p.ciphers.is_empty());
        assert_eq!(p.estimate_s, 0.0);
        assert!(p.left_out[1].starts_with("every cell"));
    }

    #[test]
    fn slow_cells_go_by_their_own_data_time() {
        let s = names(&["a", "slow"]);
        let c = names(&["x"]);
        let data = |s: &str, _: &str| if s == "slow" { 100.0 } else { 1.0 };
        let p = cut(&s, &c, 1, Some(20.0), FIXED, &data);
        assert_eq!(p.settings, names(&["a"]));
    }

    #[test]
    fn the_remaining_time_follows_the_cells_measured() {
        // Half the plan done in twice its planned time: the rest takes twice too.
        assert_eq!(remaining(60.0, 60.0, 120.0), 120.0);
        assert_eq!(remaining(60.0, 0.0, 0.0), 60.0);
        assert_eq!(clock(125.4), "2:05");
        assert_eq!(clock(-3.0), "0:00");
    }
}
