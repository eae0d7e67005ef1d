//! What a worker reports, checked before it is believed: times within the
//! wait, as many repetitions and metrics as asked, samples finite and
//! bounded, starts within 1970..now.

use super::super::runner::CaseRun;
use super::super::worker::{planned, Job};
use std::time::Duration;

/// The largest magnitude a sample may have: far beyond any rate, time or
/// size envbench measures, far below where sums of them overflow.
const SAMPLE_MAX: f64 = 1e18;

/// The longest time a worker on the fake clock may report: its times are
/// synthetic (ten milliseconds a reading), a few thousand seconds at most.
pub(super) const FAKE_CLOCK_MOST: Duration = Duration::from_secs(10_000_000);

/// `secs` as a duration, when it is a time the worker can have spent:
/// finite, not negative, and no longer than the `waited` the run saw
/// (a second's leeway for the clocks).
pub(super) fn within(secs: f64, waited: Duration) -> Result<Duration, String> {
    let most = waited.as_secs_f64() + 1.0;
    if secs.is_finite() && (0.0..=most).contains(&secs) {
        Ok(Duration::from_secs_f64(secs))
    } else {
        let secs = if secs.abs() < 1e6 {
            format!("{secs}")
        } else {
            format!("{secs:.3e}")
        };
        Err(format!(
            "at {secs} s, not between 0 and the {most:.1} s it had been running"
        ))
    }
}

/// Checks a worker's outcome for `job` against what is possible (times
/// within the `waited` the run saw, as many repetitions and metrics as
/// the case allows, samples of a sane size) and escapes its words, which
/// reach the terminal.
pub(super) fn check_outcome(run: &mut CaseRun, job: &Job, waited: Duration) -> Result<(), String> {
    // a round that took turns spent `waited_secs` beside its own time
    let turns = run.waited_secs.unwrap_or(0.0);
    if !(turns.is_finite() && turns >= 0.0) || (turns > 0.0 && !job.turns) {
        return Err(if job.turns {
            format!("waited {turns} s for its turns")
        } else {
            format!("waited {turns} s for turns its round does not take")
        });
    }
    let span =
        within(run.elapsed.as_secs_f64() + turns, waited).map_err(|w| format!("elapsed {w}"))?;
    // the round's time is read a moment after its last repetition's end
    // on the worker's clock: a second's leeway, as for the run's wait
    let leeway = Duration::from_secs(1);
    if let Some(t) = run.rep_ends.iter().find(|t| **t > span + leeway) {
        return Err(format!(
            "a repetition ended at {} s, after the round's {} s",
            t.as_secs_f64(),
            span.as_secs_f64()
        ));
    }
    let reps = run.rep_ends.len();
    let most = job.policy.reps_max.max(job.policy.reps_min) as usize;
    if reps > most {
        return Err(format!("{reps} repetitions, more than the {most} asked"));
    }
    if run.warmup_done > job.policy.warmup {
        return Err(format!(
            "{} warm-up repetitions, more than the {} asked",
            run.warmup_done, job.policy.warmup
        ));
    }
    let specs = planned(job)
        .map(|(_, case)| case.metrics)
        .unwrap_or_default();
    if !run.samples.is_empty() && run.samples.len() != specs.len() {
        return Err(format!(
            "{} metrics, where the case has {}",
            run.samples.len(),
            specs.len()
        ));
    }
    for ((m, samples), spec) in run.samples.iter().enumerate().zip(&specs) {
        // a time is never negative, a rate never 0 or less
        let unit = spec.unit;
        if let Some(v) = samples
            .iter()
            .find(|&&v| (unit.is_time() && v < 0.0) || (unit.is_rate() && v <= 0.0))
        {
            return Err(format!(
                "metric {m} holds the sample {v}, impossible in {}",
                unit.symbol()
            ));
        }
        if !samples.is_empty() && samples.len() != reps {
            return Err(format!(
                "metric {m} has {} samples for {reps} repetitions",
                samples.len()
            ));
        }
        if let Some(v) = samples
            .iter()
            .find(|v| !v.is_finite() || v.abs() > SAMPLE_MAX)
        {
            return Err(format!(
                "metric {m} holds the sample {v}, beyond {SAMPLE_MAX:e}"
            ));
        }
    }
    // started no earlier than 1970 and no later than a day from now
    let now = crate::timestamp::wall_now_secs();
    if !(0.0..=now + 86_400.0).contains(&run.started_wall_secs) {
        return Err(format!(
            "started at {:.3e} s since 1970",
            run.started_wall_secs
        ));
    }
    if run.telemetry.longest() > reps {
        return Err(format!("telemetry for more than its {reps} repetitions"));
    }
    let most_left = crate::cleanup::leftover::MOST_PER_ROUND;
    if run.left.len() > most_left {
        return Err(format!(
            "{} directories it could not remove, more than the {most_left} a round names",
            run.left.len()
        ));
    }
    use crate::terminal::escape;
    run.reason = run.reason.as_deref().map(escape);
    run.notes.iter_mut().for_each(|n| *n = escape(n));
    for a in &mut run.anomalies {
        a.kind = escape(&a.kind);
        a.message = escape(&a.message);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(turns: bool) -> Job {
        Job {
            turns,
            ..crate::engine::worker::test_job()
        }
    }

    /// A round of 1 s of its own whose one repetition ended 2.5 s after
    /// it began, having waited `waited_secs` for its turns.
    fn round(waited_secs: Option<f64>) -> CaseRun {
        let mut run = crate::engine::runner::failed_run(0.0, String::new());
        run.elapsed = Duration::from_secs(1);
        run.rep_ends = vec![Duration::from_millis(2500)];
        run.waited_secs = waited_secs;
        run
    }

    #[test]
    fn a_round_that_took_turns_may_end_its_repetitions_after_its_own_time() {
        let seen = Duration::from_secs(4);
        assert_eq!(
            check_outcome(&mut round(Some(2.0)), &job(true), seen),
            Ok(())
        );
        // without the wait it claims, the repetition is later than the round
        let why = check_outcome(&mut round(None), &job(true), seen).unwrap_err();
        assert!(why.contains("after the round's 1 s"), "{why}");
        // a wait longer than the run saw, or for turns it was not given
        let why = check_outcome(&mut round(Some(5.0)), &job(true), seen).unwrap_err();
        assert!(why.starts_with("elapsed at 6 s"), "{why}");
        let why = check_outcome(&mut round(Some(2.0)), &job(false), seen).unwrap_err();
        assert!(why.contains("does not take"), "{why}");
        let why = check_outcome(&mut round(Some(-1.0)), &job(true), seen).unwrap_err();
        assert!(why.contains("waited -1 s"), "{why}");
    }
}
