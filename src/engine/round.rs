//! One round of a case merged into its result: the samples with their
//! round and time, the round's record, the assumptions checked, and the
//! status the case takes.

use super::runner;
use crate::bench::CaseSpec;
use crate::results::{self, CaseResult, CaseStatus};
use crate::timestamp::utc_iso;
use std::time::Duration;

/// Adds one round of a case to its result: samples with their round and
/// time, the round's record, and the status. A case stays ok when a later
/// round is interrupted (its finished repetitions are kept); it takes the
/// status of a later round that fails or turns invalid, naming the round.
pub(super) fn merge_round(
    slot: &mut Option<CaseResult>,
    case: &CaseSpec,
    run: runner::CaseRun,
    round: u32,
    run_start: Duration,
    seed: u64,
) {
    let record = results::CaseRound {
        round,
        started_utc: utc_iso(run.started_wall_secs),
        duration_secs: run.elapsed.as_secs_f64(),
        warmup_reps: run.warmup_done,
        reps: run.rep_ends.len() as u32,
        stop_reason: run.stop.name().to_string(),
        status: run.status,
        worker_pid: run.worker_pid,
        settle_secs: run.settle_secs,
        once_secs: run.once_secs,
        waited_secs: run.waited_secs,
    };
    let times: Vec<f64> = run
        .rep_ends
        .iter()
        .map(|t| t.saturating_sub(run_start).as_secs_f64())
        .collect();
    let Some(r) = slot.as_mut() else {
        let mut r = case_result(case, run, seed);
        r.sample_rounds = vec![round; times.len()];
        r.sample_times_secs = times;
        r.rounds = vec![record];
        *slot = Some(r);
        return;
    };
    let mut samples: Vec<Vec<f64>> = r.metrics.iter().map(|m| m.samples.clone()).collect();
    let reps = r.sample_rounds.len() + times.len();
    for (all, new) in samples.iter_mut().zip(&run.samples) {
        all.extend(new);
        if all.len() != reps {
            all.clear(); // unknown in some round: unknown for the case
        }
    }
    r.metrics = results::metric_results(&case.metrics, samples, seed);
    results::merge_assumptions(&mut r.assumptions, run.assumptions);
    crate::validity::telemetry::extend(&mut r.telemetry, r.sample_rounds.len(), run.telemetry);
    r.sample_rounds
        .extend(std::iter::repeat_n(round, times.len()));
    r.sample_times_secs.extend(times);
    r.warmup_reps += run.warmup_done;
    r.duration_secs += run.elapsed.as_secs_f64();
    r.stop_reason = record.stop_reason.clone();
    for a in run.anomalies {
        if !r.anomalies.contains(&a) {
            r.anomalies.push(a);
        }
    }
    for n in run.notes {
        if !r.notes.contains(&n) {
            r.notes.push(n);
        }
    }
    if r.details.is_none() {
        r.details = run.details;
    }
    let reason = run.reason.unwrap_or_default();
    match run.status {
        CaseStatus::Ok => {}
        CaseStatus::Interrupted => r.notes.push(format!(
            "round {} interrupted; every finished repetition is kept",
            round + 1
        )),
        status => {
            r.status = status;
            r.reason = Some(format!("round {}: {reason}", round + 1));
        }
    }
    r.rounds.push(record);
}

fn case_result(case: &CaseSpec, run: runner::CaseRun, seed: u64) -> CaseResult {
    CaseResult {
        key: case.key(),
        bench: case.bench.clone(),
        params: case.params.clone(),
        status: run.status,
        reason: run.reason,
        warmup_reps: run.warmup_done,
        stop_reason: run.stop.name().to_string(),
        started_utc: utc_iso(run.started_wall_secs),
        duration_secs: run.elapsed.as_secs_f64(),
        rounds: Vec::new(),
        sample_rounds: Vec::new(),
        sample_times_secs: Vec::new(),
        metrics: results::metric_results(&case.metrics, run.samples, seed),
        anomalies: run.anomalies,
        notes: run.notes,
        details: run.details,
        telemetry: Some(run.telemetry),
        suspect: Vec::new(),
        signals: Vec::new(),
        assumptions: run.assumptions,
    }
}
