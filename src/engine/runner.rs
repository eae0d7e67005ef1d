//! Repeats one case: warm-up, then repetitions from the minimum until the
//! median's confidence interval is narrow enough, the maximum is reached, or
//! the budget is spent. Returns raw samples and anomalies; prints nothing
//! (progress goes through a callback).

use crate::bench::{Bench, BenchError, CaseSpec, Context};
use crate::results::{Anomaly, Assumption, AssumptionKind, CaseStatus};
use crate::stats::{summarize, Sample};
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A wall-clock step larger than this, relative to the monotonic clock,
/// during one case is reported (seed 000: WSL 2's clock jumped 10 800 s).
pub const WALL_CLOCK_JUMP_SECS: f64 = 1.0;

/// Repetitions shorter than this are flagged: timer resolution and read
/// overhead (tens of ns, up to µs in some VMs) stop being negligible.
pub const SHORT_REP: Duration = Duration::from_micros(500);

/// Repetitions at least this long are not checked against the clock's
/// read cost: a read would have to cost 100 us to reach 1 % of them.
const CLOCK_CHECK_BELOW: Duration = Duration::from_millis(10);

/// Why the runner stopped repeating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The median's 95 % CI met the target width.
    CiTarget,
    /// `reps_max` reached.
    MaxReps,
    /// The time budget was spent.
    Budget,
    /// The case ended without a full set (error, skip, Ctrl-C).
    Aborted,
}

impl StopReason {
    /// snake_case name for the result file.
    pub(crate) fn name(self) -> &'static str {
        match self {
            StopReason::CiTarget => "ci_target",
            StopReason::MaxReps => "max_reps",
            StopReason::Budget => "budget",
            StopReason::Aborted => "aborted",
        }
    }
}

/// The outcome of running one case.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct CaseRun {
    /// Ok, skipped, invalid, failed or interrupted.
    pub status: CaseStatus,
    /// Why, when not ok.
    pub reason: Option<String>,
    /// Warm-up repetitions run and discarded.
    pub warmup_done: u32,
    /// Raw samples, one vector per metric of the case, in metric order.
    pub samples: Vec<Vec<f64>>,
    /// When each measured repetition ended (the clock's reading).
    pub rep_ends: Vec<Duration>,
    /// Why repetition stopped.
    pub stop: StopReason,
    /// Problems seen while measuring.
    pub anomalies: Vec<Anomaly>,
    /// Wall-clock start, seconds since the Unix epoch.
    pub started_wall_secs: f64,
    /// Monotonic duration of the whole case (prepare included).
    pub elapsed: Duration,
    /// Extra data the trial recorded.
    pub details: Option<Value>,
    /// Remarks of the trial (limits applied and the like).
    pub notes: Vec<String>,
    /// What the machine did around each measured repetition, parallel to
    /// `samples` (sampled outside the timed region).
    pub telemetry: crate::results::Telemetry,
    /// The method's assumptions, checked in this round.
    #[serde(default)]
    pub assumptions: Vec<Assumption>,
    /// The worker's PID in its environment, from its `Ready` line (set by
    /// the run, not the worker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_pid: Option<u32>,
    /// Seconds the run waited for the environment to settle before the
    /// worker measured (set by the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_secs: Option<f64>,
    /// Directories the round made and could not remove, with why
    /// ([`crate::cleanup::leftover`]): the run names them in its notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<crate::cleanup::Leftover>,
    /// Seconds of `elapsed` spent on work done once per environment
    /// ([`crate::bench::Trial::once_only`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub once_secs: Option<f64>,
    /// Seconds it waited for its turns ([`run_case_in_turns`]), not part
    /// of `elapsed`; None where it took none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_secs: Option<f64>,
}

/// Progress of a case, for display.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Measured repetitions done.
    pub reps_done: u32,
    /// Time spent on the case so far.
    pub elapsed: Duration,
}

/// Runs `case` of `bench` under the policy in `ctx`.
pub(crate) fn run_case(
    bench: &dyn Bench,
    case: &CaseSpec,
    ctx: &Context,
    on_progress: &mut dyn FnMut(Progress),
) -> CaseRun {
    run_case_in_turns(bench, case, ctx, on_progress, None)
}

/// [`run_case`], taking turns with other environments' workers: once its
/// case is prepared, and before each timed repetition, it waits for
/// `turn`, which returns false when the round is to wind down. The time
/// it waits counts to no budget: a round's repetitions and budget are its
/// own, however many environments take turns with it.
pub(crate) fn run_case_in_turns(
    bench: &dyn Bench,
    case: &CaseSpec,
    ctx: &Context,
    on_progress: &mut dyn FnMut(Progress),
    turn: Option<&mut dyn FnMut() -> bool>,
) -> CaseRun {
    let clock = ctx.clock;
    let (wall0, mono0) = (clock.wall_secs(), clock.now());
    let mut run = CaseRun {
        status: CaseStatus::Ok,
        reason: None,
        warmup_done: 0,
        samples: vec![Vec::new(); case.metrics.len()],
        rep_ends: Vec::new(),
        stop: StopReason::Aborted,
        anomalies: Vec::new(),
        started_wall_secs: wall0,
        elapsed: Duration::ZERO,
        details: None,
        notes: Vec::new(),
        telemetry: Default::default(),
        assumptions: Vec::new(),
        worker_pid: None,
        settle_secs: None,
        left: Vec::new(),
        once_secs: None,
        waited_secs: None,
    };
    let mut waited = Duration::ZERO;
    match bench.prepare(case, ctx) {
        Ok(mut trial) => {
            let taken = turn.is_some();
            let mut turns = Turns {
                turn,
                waited: Duration::ZERO,
            };
            repeat(
                bench,
                &mut *trial,
                case,
                ctx,
                mono0,
                &mut run,
                on_progress,
                &mut turns,
            );
            waited = turns.waited;
            run.waited_secs = taken.then_some(waited.as_secs_f64());
            run.details = trial.details();
            run.notes = trial.notes();
            run.anomalies.extend(trial.anomalies());
            run.assumptions.extend(trial.assumptions());
            let once = trial.once_only();
            run.once_secs = (!once.is_zero()).then_some(once.as_secs_f64());
            forget_unknown_metrics(case, &mut run);
        }
        Err(e) => set_error(&mut run, e),
    }
    // Ctrl-C reaches a case's children too (same process group): what then
    // looks like a failure (a child that died, a short read) is the interrupt.
    if run.status == CaseStatus::Failed && ctx.interrupted.load(Ordering::SeqCst) {
        run.status = CaseStatus::Interrupted;
        run.reason = Some(format!(
            "interrupted by a signal ({})",
            run.reason.take().unwrap_or_default()
        ));
    }
    let (wall1, mono1) = (clock.wall_secs(), clock.now());
    let took = mono1.saturating_sub(mono0);
    run.elapsed = took.saturating_sub(waited);
    let drift = (wall1 - wall0) - took.as_secs_f64();
    if drift.abs() > WALL_CLOCK_JUMP_SECS {
        run.anomalies.push(Anomaly {
            kind: "wall_clock_jump".into(),
            message: format!(
                "the wall clock moved {drift:+.1} s more than the monotonic clock during this case \
                 (seed 000's WSL 2 STREAM outputs show -10799.6 s from such a jump); envbench times \
                 with the monotonic clock, so these samples are unaffected, but tools that use the \
                 wall clock would be wrong here"
            ),
        });
    }
    run
}

/// A round that could not be measured at all, for `reason`.
pub(crate) fn failed_run(started_wall_secs: f64, reason: String) -> CaseRun {
    CaseRun {
        status: CaseStatus::Failed,
        reason: Some(reason),
        warmup_done: 0,
        samples: Vec::new(),
        rep_ends: Vec::new(),
        stop: StopReason::Aborted,
        anomalies: Vec::new(),
        started_wall_secs,
        elapsed: Duration::ZERO,
        details: None,
        notes: Vec::new(),
        telemetry: Default::default(),
        assumptions: Vec::new(),
        worker_pid: None,
        settle_secs: None,
        left: Vec::new(),
        once_secs: None,
        waited_secs: None,
    }
}

/// A metric that some repetition could not read ([`super::UNKNOWN`]) is
/// unknown for the round: its samples are dropped, so every metric's
/// samples stay parallel to the repetitions or are empty. A failed
/// assumption should name it; where none does, one is added.
fn forget_unknown_metrics(case: &CaseSpec, run: &mut CaseRun) {
    for (spec, slot) in case.metrics.iter().zip(run.samples.iter_mut()) {
        if !slot.iter().any(|v| v.is_nan()) {
            continue;
        }
        slot.clear();
        if !run.assumptions.iter().any(|a| a.voids(spec.name)) {
            run.assumptions.push(Assumption {
                kind: AssumptionKind::Other,
                held: false,
                evidence: format!("{} could not be read here", spec.name),
                metrics: vec![spec.name.to_string()],
            });
        }
    }
}

/// The clock's assumption: one read costs under 1 % of the shortest
/// repetition. Checked only where it fails (a clock read of tens of µs,
/// as under gVisor's ptrace platform, against repetitions of ms).
fn clock_check(overhead: Duration, shortest: Option<Duration>) -> Option<Assumption> {
    let shortest = shortest?;
    if overhead.is_zero() || overhead * 100 <= shortest {
        return None;
    }
    Some(Assumption {
        kind: AssumptionKind::Clock,
        held: false,
        evidence: format!(
            "a clock read took {:.1} us, {:.1} % of the shortest repetition ({:.1} us)",
            overhead.as_secs_f64() * 1e6,
            overhead.as_secs_f64() / shortest.as_secs_f64().max(1e-12) * 100.0,
            shortest.as_secs_f64() * 1e6
        ),
        metrics: Vec::new(),
    })
}

fn set_error(run: &mut CaseRun, e: BenchError) {
    let (status, reason) = match e {
        BenchError::Unsupported(r) => (CaseStatus::Skipped, Some(r)),
        BenchError::Invalid(r) => (CaseStatus::Invalid, Some(r)),
        BenchError::Failed(r) => (CaseStatus::Failed, Some(r)),
        BenchError::Interrupted => (
            CaseStatus::Interrupted,
            Some("interrupted by a signal".into()),
        ),
    };
    run.status = status;
    run.reason = reason;
    run.stop = StopReason::Aborted;
}

/// The turns a round takes with other environments' rounds, and the time
/// it spent waiting for them.
struct Turns<'t> {
    /// None: a round alone, which waits for nothing.
    turn: Option<&'t mut dyn FnMut() -> bool>,
    waited: Duration,
}

impl Turns<'_> {
    /// Waits for this round's turn; false: wind down.
    fn take(&mut self, clock: &crate::measure::clock::Clock) -> bool {
        let Some(turn) = self.turn.as_mut() else {
            return true;
        };
        let t0 = clock.now();
        let go = turn();
        self.waited += clock.now().saturating_sub(t0);
        go
    }
}

#[allow(clippy::too_many_arguments)]
fn repeat(
    bench: &dyn Bench,
    trial: &mut dyn crate::bench::Trial,
    case: &CaseSpec,
    ctx: &Context,
    start: Duration,
    run: &mut CaseRun,
    on_progress: &mut dyn FnMut(Progress),
    turns: &mut Turns,
) {
    let policy = ctx.reps;
    let clock = ctx.clock;
    let mut tally = Tally::default();
    let warmup = if bench.needs_warmup() {
        policy.warmup
    } else {
        0
    };
    let sampler = crate::validity::telemetry::Sampler::new(bench.disk_bytes(case) > 0);
    // the warm-ups and the first repetition in one turn, each later
    // repetition in its own
    if !turns.take(clock) {
        return set_error(run, BenchError::Interrupted);
    }
    for _ in 0..warmup {
        if ctx.interrupted.load(Ordering::SeqCst) {
            return set_error(run, BenchError::Interrupted);
        }
        let rep = match Rep::measure(trial, clock, &sampler) {
            Ok(rep) => rep,
            Err(e) => return set_error(run, e),
        };
        // A first warm-up that spent the round's whole budget is kept as
        // the round's repetition: a repetition that long warms itself, and
        // the later rounds measure such a case without a warm-up
        // (`round_policy`), so every round of it measures the same cold
        // first repetition, not a warm one in the first round alone. A
        // person's command keeps its warm-up in every round (its first
        // run meets caches the cases between its rounds left cold), so
        // its warm-up is never its measurement.
        if run.warmup_done == 0 && rep.took > policy.budget() && bench.steady_reps() == 0 {
            if let Err(e) = tally.keep(case, run, rep, clock, start, on_progress) {
                return set_error(run, e);
            }
            run.stop = StopReason::MaxReps;
            break;
        }
        run.warmup_done += 1;
    }
    while tally.done < policy.reps_max {
        let elapsed = clock
            .now()
            .saturating_sub(start)
            .saturating_sub(turns.waited);
        if tally.done >= policy.reps_min {
            if elapsed >= policy.budget() {
                run.stop = StopReason::Budget;
                break;
            }
            if ci_met(&run.samples[0], policy.ci_target, ctx.seed) {
                run.stop = StopReason::CiTarget;
                break;
            }
        }
        if tally.done > 0 && !turns.take(clock) {
            return set_error(run, BenchError::Interrupted);
        }
        if ctx.interrupted.load(Ordering::SeqCst) {
            return set_error(run, BenchError::Interrupted);
        }
        let rep = match Rep::measure(trial, clock, &sampler) {
            Ok(rep) => rep,
            Err(e) => return set_error(run, e),
        };
        if let Err(e) = tally.keep(case, run, rep, clock, start, on_progress) {
            return set_error(run, e);
        }
        run.stop = StopReason::MaxReps;
    }
    let Tally {
        shortest,
        short_reps,
        ..
    } = tally;
    // only repetitions under 10 ms can hold a clock read of 1 % or more
    // (gVisor's reads cost up to 48 us): the others skip the measurement
    if shortest.is_some_and(|s| s < CLOCK_CHECK_BELOW) {
        run.assumptions
            .extend(clock_check(clock.read_overhead(), shortest));
    }
    if short_reps > 0 {
        run.anomalies.push(Anomaly {
            kind: "short_interval".into(),
            message: format!(
                "{short_reps} repetition(s) lasted under {} us: timer resolution and overhead may distort them",
                SHORT_REP.as_micros()
            ),
        });
    }
}

/// One repetition: its values, how long it took and the telemetry read
/// around it (outside its own timing).
struct Rep {
    values: Vec<f64>,
    took: Duration,
    before: crate::validity::telemetry::Snapshot,
    after: crate::validity::telemetry::Snapshot,
}

impl Rep {
    fn measure(
        trial: &mut dyn crate::bench::Trial,
        clock: &crate::measure::clock::Clock,
        sampler: &crate::validity::telemetry::Sampler,
    ) -> Result<Rep, BenchError> {
        let before = sampler.snapshot(true);
        let t0 = clock.now();
        let values = trial.once(clock)?;
        let took = clock.now().saturating_sub(t0);
        let after = sampler.snapshot(false);
        Ok(Rep {
            values,
            took,
            before,
            after,
        })
    }
}

/// The repetitions a round has kept so far.
#[derive(Default)]
struct Tally {
    done: u32,
    shortest: Option<Duration>,
    short_reps: u32,
}

impl Tally {
    /// Checks `rep`'s values and keeps them as the round's next sample.
    fn keep(
        &mut self,
        case: &CaseSpec,
        run: &mut CaseRun,
        rep: Rep,
        clock: &crate::measure::clock::Clock,
        start: Duration,
        on_progress: &mut dyn FnMut(Progress),
    ) -> Result<(), BenchError> {
        if rep.took < SHORT_REP {
            self.short_reps += 1;
        }
        self.shortest = Some(self.shortest.map_or(rep.took, |s| s.min(rep.took)));
        if let Err(msg) = check_values(case, &rep.values) {
            run.anomalies.push(Anomaly {
                kind: "impossible_value".into(),
                message: msg.clone(),
            });
            return Err(BenchError::Invalid(msg));
        }
        for (slot, v) in run.samples.iter_mut().zip(rep.values) {
            slot.push(v);
        }
        crate::validity::telemetry::record(&mut run.telemetry, &rep.before, &rep.after);
        run.rep_ends.push(clock.now());
        self.done += 1;
        on_progress(Progress {
            reps_done: self.done,
            elapsed: clock.now().saturating_sub(start),
        });
        Ok(())
    }
}

fn ci_met(primary: &[f64], target: f64, seed: u64) -> bool {
    // a target of 0 turns the early stop off: identical repetitions (a
    // coarse clock, the fake one) have a half-width of 0 too
    target > 0.0
        && Sample::new(primary.to_vec())
            .map(|s| summarize(&s, seed).median_ci_relative_halfwidth() <= target)
            .unwrap_or(false)
}

/// The runner's plausibility rule: one finite value per metric, rates > 0,
/// times >= 0 (seed 000 published a time of -10799.6 s); a secondary
/// metric may be [`super::UNKNOWN`], never the headline.
pub(crate) fn check_values(case: &CaseSpec, values: &[f64]) -> Result<(), String> {
    if values.len() != case.metrics.len() {
        return Err(format!(
            "{} returned {} values for {} metrics (a bug in envbench)",
            case.key(),
            values.len(),
            case.metrics.len()
        ));
    }
    for (i, (m, v)) in case.metrics.iter().zip(values).enumerate() {
        if i > 0 && v.is_nan() {
            continue; // a secondary metric this repetition could not read
        }
        let impossible =
            !v.is_finite() || (m.unit.is_rate() && *v <= 0.0) || (m.unit.is_time() && *v < 0.0);
        if impossible {
            return Err(format!(
                "{} = {v} {} is impossible (a negative time, a non-positive rate, or not a number)",
                m.name,
                m.unit.symbol()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{MetricSpec, Plan, Trial};
    use crate::config::{RepPolicy, Suite};
    use crate::measure::clock::Clock;
    use crate::units::{Direction, Unit};
    use std::sync::atomic::AtomicBool;

    /// A bench whose repetitions return a scripted sequence of values.
    struct Scripted(Vec<f64>, Option<&'static str>);
    struct ScriptedTrial(Vec<f64>, usize);

    impl Trial for ScriptedTrial {
        fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
            clock.now();
            let v = self.0[self.1 % self.0.len()];
            self.1 += 1;
            Ok(vec![v])
        }
    }

    impl Bench for Scripted {
        fn id(&self) -> &'static str {
            "os.scripted"
        }
        fn summary(&self) -> &'static str {
            "test double"
        }
        fn reproduces(&self) -> &'static str {
            "none"
        }
        fn cases(&self, _: &Plan) -> Vec<CaseSpec> {
            vec![case()]
        }
        fn prepare(&self, _: &CaseSpec, _: &Context) -> Result<Box<dyn Trial>, BenchError> {
            match self.1 {
                Some(reason) => Err(BenchError::Unsupported(reason.into())),
                None => Ok(Box::new(ScriptedTrial(self.0.clone(), 0))),
            }
        }
    }

    fn case() -> CaseSpec {
        CaseSpec {
            bench: "os.scripted".into(),
            params: Default::default(),
            metrics: vec![MetricSpec {
                name: "latency",
                unit: Unit::Nanoseconds,
                direction: Direction::LowerIsBetter,
            }],
        }
    }

    fn policy(min: u32, max: u32, budget_secs: f64) -> RepPolicy {
        RepPolicy {
            warmup: 1,
            reps_min: min,
            reps_max: max,
            budget_secs,
            ci_target: 0.01,
            ..RepPolicy::for_suite(Suite::Quick)
        }
    }

    static NO_OPTIONS: crate::config::FamilyOptions =
        crate::config::FamilyOptions(std::collections::BTreeMap::new());

    fn test_ctx<'a>(clock: &'a Clock, p: &'a RepPolicy, stop: &'a AtomicBool) -> Context<'a> {
        Context {
            clock,
            reps: p,
            seed: 1,
            interrupted: stop,
            deadline: std::time::Instant::now() + std::time::Duration::from_secs(120),
            first_round: true,
            options: &NO_OPTIONS,
            mem_available_bytes: None,
            dirs: &[],
            cpus: 2,
            kept: &[],
        }
    }

    fn go(bench: &Scripted, p: &RepPolicy, clock: &Clock) -> CaseRun {
        let stop = AtomicBool::new(false);
        run_case(bench, &case(), &test_ctx(clock, p, &stop), &mut |_| {})
    }

    #[test]
    fn a_round_in_turns_waits_before_its_warm_up_and_each_later_repetition_on_no_budget() {
        let clock = Clock::fake(Duration::from_millis(1));
        let (p, stop) = (policy(3, 5, 1.0), AtomicBool::new(false));
        let ctx = test_ctx(&clock, &p, &stop);
        let bench = Scripted(vec![1.0, 2.0, 3.0], None);
        // each wait lasts 10 s: ten budgets, which must not stop the round
        let (mut waits, reps) = (Vec::new(), std::cell::Cell::new(0));
        let mut turn = || {
            waits.push(reps.get());
            clock.catch_up(clock.now() + Duration::from_secs(10));
            true
        };
        let r = run_case_in_turns(
            &bench,
            &case(),
            &ctx,
            &mut |p| reps.set(p.reps_done),
            Some(&mut turn),
        );
        assert_eq!(r.stop, StopReason::MaxReps);
        assert_eq!(r.samples[0].len(), 5);
        // once prepared (before the warm-up), then before repetitions 2 to 5
        assert_eq!(waits, [0, 1, 2, 3, 4]);
        let waited = r.waited_secs.unwrap();
        assert!((50.0..51.0).contains(&waited), "{waited}");
        assert!(r.elapsed < Duration::from_secs(1), "{:?}", r.elapsed);
        // alone, a round waits for nothing and records no wait
        let alone = go(&bench, &p, &Clock::fake(Duration::from_millis(1)));
        assert_eq!(alone.waited_secs, None);
        // a turn refused (the run winds down) ends the round as interrupted
        let r = run_case_in_turns(&bench, &case(), &ctx, &mut |_| {}, Some(&mut || false));
        assert_eq!(r.status, CaseStatus::Interrupted);
        assert!(r.samples[0].is_empty());
    }

    #[test]
    fn constant_values_stop_at_the_minimum() {
        let r = go(
            &Scripted(vec![5.0], None),
            &policy(3, 10, 100.0),
            &Clock::fake(Duration::from_millis(1)),
        );
        assert_eq!(r.samples[0].len(), 3);
        assert_eq!(r.warmup_done, 1);
        assert_eq!(r.stop, StopReason::CiTarget);
        // a target of 0 is no early stop, though constant values have an
        // interval of 0 (a person's command's steady repetitions ask it)
        let mut off = policy(3, 10, 100.0);
        off.ci_target = 0.0;
        let r = go(
            &Scripted(vec![5.0], None),
            &off,
            &Clock::fake(Duration::from_millis(1)),
        );
        assert_eq!((r.samples[0].len(), r.stop), (10, StopReason::MaxReps));
    }

    #[test]
    fn a_warm_up_that_spends_the_round_budget_is_kept_as_its_repetition() {
        // a repetition reads the fake clock three times: 2 ms, over a 1 ms budget
        let ms = Duration::from_millis;
        let r = go(
            &Scripted(vec![5.0, 6.0], None),
            &policy(1, 5, 0.001),
            &Clock::fake(ms(1)),
        );
        assert_eq!(r.warmup_done, 0);
        assert_eq!(r.samples[0], vec![5.0], "the first repetition is kept");
        assert_eq!(r.telemetry.load_1m.len(), 1);
        assert_eq!(r.stop, StopReason::Budget);
        // a round of one repetition at most (`--reps` below the rounds):
        // the kept warm-up is all of it
        let r = go(
            &Scripted(vec![5.0, 6.0], None),
            &policy(1, 1, 0.001),
            &Clock::fake(ms(1)),
        );
        assert_eq!((r.warmup_done, r.samples[0].clone()), (0, vec![5.0]));
        assert_eq!(r.stop, StopReason::MaxReps);
        assert_eq!(r.status, CaseStatus::Ok);
        // within the budget the warm-up is run and discarded
        let r = go(
            &Scripted(vec![5.0, 6.0], None),
            &policy(1, 1, 100.0),
            &Clock::fake(ms(1)),
        );
        assert_eq!(r.warmup_done, 1);
        assert_eq!(r.samples[0], vec![6.0]);
    }

    #[test]
    fn telemetry_has_one_entry_per_measured_repetition() {
        let r = go(
            &Scripted(vec![1.0, 9.0, 3.0, 7.0], None),
            &policy(3, 6, 100.0),
            &Clock::fake(Duration::from_millis(1)),
        );
        let t = &r.telemetry;
        let n = r.samples[0].len();
        assert_eq!(n, 6);
        for len in [
            t.steal_share.len(),
            t.cpu_ticks.len(),
            t.load_1m.len(),
            t.nivcsw.len(),
            t.freq_mhz.len(),
            t.cpu.len(),
        ] {
            assert_eq!(len, n);
        }
        // the warm-up is not recorded; /proc is readable on the test machine
        assert!(t.load_1m.iter().all(Option::is_some));
    }

    #[test]
    fn noisy_values_run_to_the_maximum() {
        let r = go(
            &Scripted(vec![1.0, 9.0, 3.0, 7.0], None),
            &policy(3, 8, 100.0),
            &Clock::fake(Duration::from_millis(1)),
        );
        assert_eq!(r.samples[0].len(), 8);
        assert_eq!(r.stop, StopReason::MaxReps);
    }

    #[test]
    fn budget_stops_after_the_minimum() {
        // Each repetition reads the fake clock 3 times at 1 s a read.
        let r = go(
            &Scripted(vec![1.0, 9.0], None),
            &policy(2, 50, 10.0),
            &Clock::fake(Duration::from_secs(1)),
        );
        assert_eq!(r.stop, StopReason::Budget);
        assert!(r.samples[0].len() >= 2 && r.samples[0].len() < 50);
    }

    #[test]
    fn unsupported_case_is_skipped_with_its_reason() {
        let r = go(
            &Scripted(vec![1.0], Some("no /proc")),
            &policy(2, 5, 1.0),
            &Clock::fake(Duration::from_millis(1)),
        );
        assert_eq!(r.status, CaseStatus::Skipped);
        assert_eq!(r.reason.as_deref(), Some("no /proc"));
        assert!(r.samples[0].is_empty());
    }

    fn two_metrics() -> CaseSpec {
        let mut c = case();
        c.metrics.push(MetricSpec {
            name: "memory",
            unit: Unit::Bytes,
            direction: Direction::LowerIsBetter,
        });
        c
    }

    #[test]
    fn an_unknown_secondary_metric_is_dropped_and_named_never_the_headline() {
        let c = two_metrics();
        assert!(check_values(&c, &[1.0, crate::bench::UNKNOWN]).is_ok());
        assert!(check_values(&c, &[crate::bench::UNKNOWN, 1.0]).is_err());
        let mut run = failed_run(0.0, String::new());
        run.samples = vec![vec![1.0, 2.0], vec![5.0, crate::bench::UNKNOWN]];
        forget_unknown_metrics(&c, &mut run);
        assert_eq!(run.samples, vec![vec![1.0, 2.0], vec![]]);
        // no trial said why: an assumption of unknown kind names the metric
        assert_eq!(run.assumptions.len(), 1);
        assert!(run.assumptions[0].voids("memory") && !run.assumptions[0].voids("latency"));
        // every value read: nothing changes
        let mut run = failed_run(0.0, String::new());
        run.samples = vec![vec![1.0], vec![5.0]];
        forget_unknown_metrics(&c, &mut run);
        assert_eq!(run.samples, vec![vec![1.0], vec![5.0]]);
        assert!(run.assumptions.is_empty());
    }

    #[test]
    fn a_clock_read_over_one_percent_of_a_repetition_fails_the_clock_assumption() {
        let us = Duration::from_micros;
        // gVisor-like: a 30 us read against a 2 ms repetition (1.5 %)
        let a = clock_check(us(30), Some(us(2000))).expect("a read of 1.5 % fails");
        assert!(!a.held && a.kind == AssumptionKind::Clock, "{a:?}");
        assert!(
            a.evidence.contains("1.5 % of the shortest repetition"),
            "{a:?}"
        );
        // 30 ns against 20 ms, and exactly 1 %: holds, nothing recorded
        assert_eq!(
            clock_check(Duration::from_nanos(30), Some(us(20_000))),
            None
        );
        assert_eq!(clock_check(us(10), Some(us(1000))), None);
        // no repetition, or the fake clock's free reads: nothing to say
        assert_eq!(clock_check(us(30), None), None);
        assert_eq!(
            clock_check(Duration::ZERO, Some(Duration::from_nanos(1))),
            None
        );
        // the real clock's own read is measured, and short here
        let real = Clock::real().read_overhead();
        assert!(real < Duration::from_millis(1), "{real:?}");
        assert!(Clock::fake(us(1)).read_overhead().is_zero());
    }

    #[test]
    fn non_positive_time_makes_the_case_invalid() {
        let r = go(
            &Scripted(vec![-10799.6], None),
            &policy(2, 5, 1.0),
            &Clock::fake(Duration::from_millis(1)),
        );
        assert_eq!(r.status, CaseStatus::Invalid);
        assert!(r.anomalies.iter().any(|a| a.kind == "impossible_value"));
    }

    #[test]
    fn wall_clock_jump_is_reported() {
        let clock = Clock::fake_with_wall_jump(Duration::from_millis(1), 4, -10800.0);
        let r = go(&Scripted(vec![5.0], None), &policy(3, 3, 100.0), &clock);
        let jump = r
            .anomalies
            .iter()
            .find(|a| a.kind == "wall_clock_jump")
            .expect("jump anomaly");
        assert!(jump.message.contains("-10800.0 s"), "{}", jump.message);
    }

    #[test]
    fn steady_wall_clock_reports_no_jump() {
        let r = go(
            &Scripted(vec![5.0], None),
            &policy(3, 3, 100.0),
            &Clock::fake(Duration::from_millis(1)),
        );
        assert!(r.anomalies.iter().all(|a| a.kind != "wall_clock_jump"));
    }

    #[test]
    fn a_failure_during_an_interrupt_is_recorded_as_interrupted() {
        struct B;
        impl Bench for B {
            fn id(&self) -> &'static str {
                "os.dies"
            }
            fn summary(&self) -> &'static str {
                "test double"
            }
            fn reproduces(&self) -> &'static str {
                "none"
            }
            fn cases(&self, _: &Plan) -> Vec<CaseSpec> {
                vec![case()]
            }
            fn prepare(&self, _: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
                // Ctrl-C lands while the case runs and kills its children
                ctx.interrupted.store(true, Ordering::SeqCst);
                Err(BenchError::Failed("1 of 4 processes reported".into()))
            }
        }
        let clock = Clock::fake(Duration::from_millis(1));
        let p = policy(1, 3, 100.0);
        let stop = AtomicBool::new(false);
        let ctx = test_ctx(&clock, &p, &stop);
        let r = run_case(&B, &case(), &ctx, &mut |_| {});
        assert_eq!(r.status, CaseStatus::Interrupted);
        assert!(r.reason.unwrap().contains("1 of 4 processes"));
    }

    #[test]
    fn interrupt_flag_stops_the_case() {
        let clock = Clock::fake(Duration::from_millis(1));
        let p = policy(3, 10, 100.0);
        let stop = AtomicBool::new(true);
        let ctx = test_ctx(&clock, &p, &stop);
        let r = run_case(&Scripted(vec![5.0], None), &case(), &ctx, &mut |_| {});
        assert_eq!(r.status, CaseStatus::Interrupted);
    }
}
