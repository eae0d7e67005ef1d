//! How a battery's time is shared: the suite's time among its cases
//! ([`fit_budget`]), a case's budget among its rounds ([`rounds_for`],
//! [`spread`], [`round_policy`]), what is left when a run falls behind
//! ([`catch_up_budget`]) and the rounds that keep the suite's time
//! ([`fit_rounds`], [`respread`]).

use crate::config::{RepPolicy, Suite};
use crate::results::CaseResult;

/// The fewest rounds a case gets (when the passes planned allow as many):
/// a case's rounds are a level of the statistics, and a spread needs a few.
pub const MIN_ROUNDS: u32 = 3;

/// The rounds a case gets when its whole `budget` (seconds) is spent at
/// `first` seconds a round (what its first round cost, preparing
/// included): as many as that pays for, at least [`MIN_ROUNDS`] and at
/// most `passes`.
pub(super) fn rounds_for(budget: f64, first: f64, passes: u32) -> u32 {
    let affordable = if first > 0.0 {
        (budget / first + 1e-9).floor().min(f64::from(passes))
    } else {
        f64::from(passes)
    };
    (affordable as u32).clamp(MIN_ROUNDS.min(passes), passes.max(1))
}

/// `rounds` of `passes` passes, the first among them and the others
/// spread evenly over the rest (`true` where the case runs).
pub(super) fn spread(rounds: u32, passes: u32) -> Vec<bool> {
    let (k, n) = (u64::from(rounds.max(1) - 1), u64::from(passes.max(1) - 1));
    let mut out = vec![false; passes.max(1) as usize];
    out[0] = true;
    for p in 1..=n {
        // Bresenham: a round wherever the ideal count k·p/n steps up
        out[p as usize] = k * p / n.max(1) > k * (p - 1) / n.max(1);
    }
    out
}

/// A case as the run's limit sees it after a pass ([`fit_rounds`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Planned {
    /// Seconds its dearest first round took: what its rounds were
    /// decided by ([`rounds_for`]).
    pub first: f64,
    /// Seconds a round of it costs the run, in all environments together,
    /// as its rounds so far averaged (starting the workers included).
    pub per_round: f64,
    /// Rounds its budget paid for, as decided after its first.
    pub decided: u32,
    /// Rounds done.
    pub done: u32,
    /// Passes still to come, in which it could run.
    pub open: u32,
}

/// The rounds each case still gets when the rounds to come must fit in
/// `left` seconds: every case's `budget` scaled by the one factor (at
/// most 1) that fits, found by bisection, so the cheap cases, which were
/// given the most rounds, give up the most, and none goes below
/// [`MIN_ROUNDS`] nor above what was decided. Where even the fewest
/// rounds do not fit, the fewest.
pub(super) fn fit_rounds(cases: &[Planned], budget: f64, most: u32, left: f64) -> Vec<u32> {
    let to_come = |scale: f64| -> Vec<u32> {
        cases
            .iter()
            .map(|c| {
                let n = rounds_for(scale * budget, c.first, most).min(c.decided);
                n.saturating_sub(c.done).min(c.open)
            })
            .collect()
    };
    let cost = |k: &[u32]| -> f64 {
        k.iter()
            .zip(cases)
            .map(|(&k, c)| f64::from(k) * c.per_round)
            .sum()
    };
    let all = to_come(1.0);
    if cost(&all) <= left {
        return all;
    }
    let (mut fits, mut over) = (0.0, 1.0);
    for _ in 0..40 {
        let mid = (fits + over) / 2.0;
        if cost(&to_come(mid)) <= left {
            fits = mid;
        } else {
            over = mid;
        }
    }
    to_come(fits)
}

/// The passes of a case that ran in `past` (the passes so far) and gets
/// `more` rounds in the rest of `passes`: the past kept, the rounds to
/// come spread evenly over the rest, the last pass among them.
pub(super) fn respread(past: &[bool], more: u32, passes: u32) -> Vec<bool> {
    let open = (passes as usize).saturating_sub(past.len());
    let more = more.min(open as u32);
    // [`spread`] over the last past pass and the open ones, that pass left out
    let mut out = past.to_vec();
    out.extend_from_slice(&spread(more + 1, open as u32 + 1)[1..]);
    out
}

/// Shares the suite's time among its cases: when the suite has a target
/// ([`Suite::target_secs`]) and the cases' budgets would add up to more,
/// each case's budget shrinks to its share, down to a floor
/// ([`Suite::min_budget_secs`]) below which a case could not finish its
/// minimum repetitions. A budget given with `--budget` is kept as it is.
/// Returns a note for the result file when it changed the budget.
pub fn fit_budget(
    reps: &mut RepPolicy,
    suite: Suite,
    cases: usize,
    given: Option<f64>,
) -> Option<String> {
    let target = suite.target_secs()?;
    if given.is_some() || cases == 0 {
        return None;
    }
    let share = (target / cases as f64).max(suite.min_budget_secs());
    if share >= reps.budget_secs {
        return None;
    }
    let was = reps.budget_secs;
    reps.budget_secs = share;
    Some(format!(
        "budget per case {share:.2} s instead of {was:.2} s: the {} suite's {target:.0} s of case budgets shared among {cases} cases (--budget sets it)",
        suite.name()
    ))
}

/// The budget of the next case's round when the run has `deadline`
/// seconds in all, `elapsed` are gone and `items` case rounds remain
/// (this one included): its share of the time left, never more than the
/// planned `budget` and never less than `floor`. Cutting repetitions this
/// way keeps the suite's time when preparing cases costs more than planned
/// (STREAM's arrays on a slow machine), before any case is dropped.
pub fn catch_up_budget(budget: f64, deadline: f64, elapsed: f64, items: usize, floor: f64) -> f64 {
    let share = (deadline - elapsed).max(0.0) / items.max(1) as f64;
    share.clamp(floor.min(budget), budget)
}

/// The policy of a case in a round: after its first round, a case whose
/// repetitions each take more than half the round's budget skips its
/// warm-up (a repetition that long warms itself, and warming it again
/// would break the suite's budget: os.fork_cow after touching 256 MiB).
///
/// A bench that needs `steady` repetitions back to back
/// ([`crate::bench::Bench::steady_reps`], a person's command) runs up to
/// that many, as the round's budget allows, with no stop for a narrow
/// interval before them; and it keeps its warm-up however long: its first
/// run in a round follows other cases and meets colder caches (`git
/// status` in gVisor 430-500 ms where the runs after a warm-up took
/// 90-150 ms, docs/log/attribution.md), where hyperfine's runs follow its
/// warm-ups.
pub(super) fn round_policy(
    policy: &RepPolicy,
    so_far: Option<&CaseResult>,
    steady: u32,
) -> RepPolicy {
    let long = so_far.and_then(|r| r.rounds.first()).is_some_and(|first| {
        let trials = f64::from((first.warmup_reps + first.reps).max(1));
        (first.duration_secs - first.once_secs.unwrap_or(0.0)) / trials > policy.budget_secs / 2.0
    });
    let mut round = RepPolicy {
        warmup: if long && steady == 0 {
            0
        } else {
            policy.warmup
        },
        ..policy.clone()
    };
    if steady > round.reps_max {
        round.reps_max = steady;
        round.ci_target = 0.0;
    }
    round
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_time_is_shared_among_many_cases() {
        let mut reps = RepPolicy::for_suite(Suite::Quick);
        // few cases: their budgets fit, nothing changes
        assert_eq!(fit_budget(&mut reps, Suite::Quick, 10, None), None);
        assert_eq!(reps.budget_secs, 2.0);
        // a 16-CPU machine's thread counts and every family: 60 cases
        let note = fit_budget(&mut reps, Suite::Quick, 60, None).unwrap();
        assert!((reps.budget_secs * 60.0 - 42.0).abs() < 1e-9, "{note}");
        // never below the floor at which rounds cannot finish a repetition
        let mut reps = RepPolicy::for_suite(Suite::Quick);
        fit_budget(&mut reps, Suite::Quick, 1000, None);
        assert_eq!(reps.budget_secs, Suite::Quick.min_budget_secs());
        // standard keeps its ten minutes the same way
        let mut reps = RepPolicy::for_suite(Suite::Standard);
        fit_budget(&mut reps, Suite::Standard, 96, None);
        assert!(reps.budget_secs * 96.0 <= 480.0 + 1e-9);
    }

    #[test]
    fn a_run_behind_its_deadline_cuts_budgets_not_cases() {
        // on time: 40 s left for 20 case rounds of 0.62 s: the plan holds
        assert_eq!(catch_up_budget(0.62, 54.0, 14.0, 20, 0.2), 0.62);
        // behind: 10 s left for 20 case rounds: half a second each
        assert!((catch_up_budget(0.62, 54.0, 44.0, 20, 0.2) - 0.5).abs() < 1e-12);
        // far behind or past the deadline: the floor, never zero
        assert_eq!(catch_up_budget(0.62, 54.0, 60.0, 20, 0.2), 0.2);
        // a planned budget under the floor is not raised
        assert_eq!(catch_up_budget(0.1, 54.0, 60.0, 20, 0.2), 0.1);
    }

    #[test]
    fn a_given_budget_and_the_full_suite_are_left_alone() {
        let mut reps = RepPolicy::for_suite(Suite::Quick);
        reps.budget_secs = 5.0;
        assert_eq!(fit_budget(&mut reps, Suite::Quick, 100, Some(5.0)), None);
        assert_eq!(reps.budget_secs, 5.0);
        let mut reps = RepPolicy::for_suite(Suite::Full);
        assert_eq!(fit_budget(&mut reps, Suite::Full, 500, None), None);
        assert_eq!(reps.budget_secs, 60.0);
    }

    #[test]
    fn a_command_round_runs_its_steady_repetitions_back_to_back() {
        // a quick round's share of the suite's repetitions: 3 or 4, and a
        // stop once the interval is within 5 %
        let round = RepPolicy::for_suite(Suite::Quick).per_round(0);
        assert!(round.reps_max < 10 && round.ci_target > 0.0, "{round:?}");
        let cmd = round_policy(&round, None, 10);
        assert_eq!((cmd.reps_max, cmd.ci_target), (10, 0.0));
        // the budget and the least repetitions still bound it
        assert_eq!(
            (cmd.budget_secs, cmd.reps_min),
            (round.budget_secs, round.reps_min)
        );
        // other benches, and a round that already runs that many, unchanged
        assert_eq!(round_policy(&round, None, 0), round);
        let many = RepPolicy::for_suite(Suite::Full);
        assert_eq!(round_policy(&many, None, 10), many);
    }

    #[test]
    fn counting_a_command_once_does_not_make_its_rounds_long() {
        // a first round of 2.2 s: one warm-up and one repetition of 0.1 s,
        // and 2 s counting the command's calls under ptrace
        let first = |once: Option<f64>| -> CaseResult {
            serde_json::from_value(serde_json::json!({
                "key": "cmd.run[name=x]", "bench": "cmd.run", "params": {}, "status": "ok",
                "reason": null, "warmup_reps": 1, "stop_reason": "budget",
                "started_utc": "2026-12-02T12:00:00Z", "duration_secs": 2.2,
                "metrics": [], "anomalies": [],
                "rounds": [{"round": 0, "started_utc": "2026-12-02T12:00:00Z",
                            "duration_secs": 2.2, "warmup_reps": 1, "reps": 1,
                            "stop_reason": "budget", "status": "ok", "once_secs": once}],
            }))
            .unwrap()
        };
        let round = RepPolicy {
            budget_secs: 0.5,
            ..RepPolicy::for_suite(Suite::Quick)
        };
        // taken as long, its later rounds would lose their warm-up
        assert_eq!(round_policy(&round, Some(&first(None)), 0).warmup, 0);
        assert_eq!(round_policy(&round, Some(&first(Some(2.0))), 0).warmup, 1);
        // a person's command keeps it however long its runs
        assert_eq!(round_policy(&round, Some(&first(None)), 10).warmup, 1);
        // and a warm-up of 0 asked for stays 0
        let none = RepPolicy {
            warmup: 0,
            ..round.clone()
        };
        assert_eq!(round_policy(&none, Some(&first(Some(2.0))), 10).warmup, 0);
    }

    #[test]
    fn a_case_gets_the_rounds_its_budget_pays_for() {
        // cheap: every pass
        assert_eq!(rounds_for(1.2, 0.1, 12), 12);
        // dear: what the budget pays for, never below the minimum
        assert_eq!(rounds_for(1.2, 0.25, 12), 4);
        assert_eq!(rounds_for(1.2, 0.9, 12), MIN_ROUNDS);
        // fewer passes than the minimum: every pass
        assert_eq!(rounds_for(1.2, 0.9, 2), 2);
        assert_eq!(rounds_for(1.2, 0.0, 5), 5);
    }

    #[test]
    fn a_run_past_its_limit_takes_rounds_from_the_cheap_cases() {
        let case = |first: f64, decided: u32| Planned {
            first,
            per_round: first,
            decided,
            done: 1,
            open: 11,
        };
        // budget 1.2 s: a cheap case paid for 12 rounds, a dear one for 3
        let cases = [case(0.1, 12), case(0.4, 3)];
        assert_eq!(rounds_for(1.2, 0.1, 12), 12);
        // time for all (11 x 0.1 + 2 x 0.4 = 1.9 s): all
        assert_eq!(fit_rounds(&cases, 1.2, 12, 2.0), vec![11, 2]);
        // 1.35 s left: the dear case keeps its 3 rounds (0.8 s), the cheap
        // one 6 (5 more at 0.1 s), the largest scale that fits
        assert_eq!(fit_rounds(&cases, 1.2, 12, 1.35), vec![5, 2]);
        // nothing left: the fewest rounds, never fewer
        assert_eq!(fit_rounds(&cases, 1.2, 12, 0.0), vec![2, 2]);
        // a case past its minimum already, and one with fewer passes open
        let late = Planned {
            done: 4,
            open: 2,
            ..case(0.1, 12)
        };
        assert_eq!(fit_rounds(&[late], 1.2, 12, 0.0), vec![0]);
        assert_eq!(fit_rounds(&[late], 1.2, 12, 10.0), vec![2]);
    }

    #[test]
    fn rounds_to_come_are_spread_over_the_passes_left() {
        let on = |v: Vec<bool>| -> Vec<usize> { (0..v.len()).filter(|&i| v[i]).collect() };
        // a case that ran in pass 0, 2 more rounds of the 11 passes left
        assert_eq!(on(respread(&[true], 2, 12)), vec![0, 6, 11]);
        assert_eq!(on(respread(&[true, false, true], 0, 6)), vec![0, 2]);
        assert_eq!(on(respread(&[true], 11, 12)).len(), 12);
        // never more rounds than passes left
        assert_eq!(on(respread(&[true; 10], 5, 12)).len(), 12);
    }

    #[test]
    fn rounds_are_spread_evenly_over_the_passes_from_the_first() {
        let on = |v: Vec<bool>| -> Vec<usize> { (0..v.len()).filter(|&i| v[i]).collect() };
        assert_eq!(on(spread(3, 3)), vec![0, 1, 2]);
        assert_eq!(on(spread(12, 12)).len(), 12);
        assert_eq!(on(spread(4, 12)), vec![0, 4, 8, 11]);
        assert_eq!(on(spread(3, 10)), vec![0, 5, 9]);
        assert_eq!(on(spread(1, 4)), vec![0]);
        for (k, n) in [(3, 7), (5, 12), (7, 20), (20, 20)] {
            assert_eq!(on(spread(k, n)).len(), k as usize, "{k} of {n}");
        }
    }
}
