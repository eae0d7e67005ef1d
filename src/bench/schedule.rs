//! A whole battery, round by round: passes over the planned cases, in a new
//! seeded shuffle each pass, each case prepared afresh in each of its
//! rounds, its repetitions run by the [`runner`]; the rounds of a case
//! merged into one result; the suite's time shared among the cases
//! ([`fit_budget`]) and kept when preparing cases costs more than planned
//! ([`catch_up_budget`]).
//!
//! A case runs in every pass when its rounds are cheap, and in fewer when
//! they are dear: after its first round (in the first pass) it gets as
//! many rounds as its budget pays for at what that round cost, at least
//! [`MIN_ROUNDS`] and at most the passes planned (`--rounds`), spread
//! evenly over the passes ([`spread`]). On a machine whose figures move
//! from one moment to the next, many short rounds of a case, interleaved
//! with the others, average that movement out where a few long ones would
//! keep it (Abedi and Brecht, "Conducting Repeatable Experiments in Highly
//! Variable Cloud Computing Environments", ICPE 2017). The
//! result file is saved after each case round, so a crash or Ctrl-C loses
//! at most the case being measured; the caller watches ([`Watch`]) each
//! repetition and case round.

use super::round::merge_round;
use super::{runner, Bench, CaseSpec, Context, Family};
use crate::config::{RepPolicy, RunConfig, Suite};
use crate::measure::clock::Clock;
use crate::results::{self, CaseResult, CaseStatus, ResultFile};
use anyhow::Context as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Fake-clock step for `--fake-clock` runs.
const FAKE_STEP: Duration = Duration::from_millis(10);

/// How often the result file is saved while the run goes on: after a case
/// round once this long has passed since the last save, and at the end of
/// every pass. Saving (two fsyncs) after each of a quick run's ~700 case
/// rounds took more than ten seconds of its minute.
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// The fewest rounds a case gets (when the passes planned allow as many):
/// a case's rounds are a level of the statistics, and a spread needs a few.
pub const MIN_ROUNDS: u32 = 3;

/// What to run: the configuration (with the target directories), the
/// planned cases and where the result file goes.
#[derive(Clone, Copy)]
pub struct Schedule<'a> {
    /// Suite, repetition policy (budget already shared out), seed, clock.
    pub config: &'a RunConfig,
    /// The cases, in plan order.
    pub cases: &'a [(&'static dyn Bench, CaseSpec)],
    /// Seconds the whole loop may take (the suite's target); None keeps
    /// every planned budget (a `--budget` the user gave, the fake clock).
    pub deadline: Option<f64>,
    /// The result file, saved after every case round.
    pub output: &'a std::path::Path,
    /// The families whose derived figures and checks follow each case
    /// round ([`super::FAMILIES`]).
    pub families: &'a [&'a dyn Family],
}

/// Where the loop is: the case round being measured.
#[derive(Debug)]
pub struct Step<'a> {
    /// Case rounds done before this one.
    pub index: usize,
    /// Case rounds in the whole run, as planned now (it shrinks as dear
    /// cases are given fewer rounds).
    pub total: usize,
    /// The case, as an index into [`Schedule::cases`].
    pub case: usize,
    /// The case key, with `round R/N` when it has several rounds.
    pub shown: &'a str,
    /// Repetitions this round may take at most.
    pub reps_max: u32,
    /// The cases still to come in this pass, in order.
    pub rest: &'a [usize],
    /// For each case, its rounds in the passes after this one.
    pub later: &'a [u32],
}

/// The caller's side of the loop.
pub trait Watch {
    /// A repetition of the case at `step` finished.
    fn rep(&mut self, step: &Step, progress: runner::Progress);
    /// The case at `step` finished its round; `result` holds all its rounds
    /// so far, `elapsed` this round's time.
    fn case_done(&mut self, step: &Step, result: &CaseResult, elapsed: Duration);
}

/// Runs every case of `s` round by round into `file`, until done or
/// `interrupted`. With a deadline, a run that falls behind gives later case
/// rounds less budget ([`catch_up_budget`]) and says so in a note.
///
/// # Errors
/// Saving the result file.
pub fn run(
    s: &Schedule,
    file: &mut ResultFile,
    interrupted: &AtomicBool,
    watch: &mut dyn Watch,
) -> anyhow::Result<()> {
    let config = s.config;
    let clock = if config.fake_clock {
        Clock::fake(FAKE_STEP)
    } else {
        Clock::real()
    };
    let rounds = config.reps.rounds.max(1);
    let fp = &file.fingerprint;
    let mut state = Loop {
        s,
        clock: &clock,
        interrupted,
        passes: rounds,
        rounds: vec![CaseRounds::default(); s.cases.len()],
        done: 0,
        mem_available_bytes: match (fp.memory.available_bytes, fp.cgroup.memory_limit_bytes) {
            (Some(a), Some(l)) => Some(a.min(l)),
            (a, l) => a.or(l),
        },
        cpus: fp.cpu.usable_cpus.unwrap_or(fp.cpu.logical_cpus).max(1),
        run_start: clock.now(),
        last_save: Duration::ZERO,
        results: vec![None; s.cases.len()],
        cut: (0, f64::INFINITY),
    };
    file.rounds = Some(results::Rounds {
        planned: rounds,
        started: 0,
        seed: config.seed,
        orders: Vec::new(),
    });
    for round in 0..rounds {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        let order: Vec<usize> = round_order(s.cases.len(), config.seed, round)
            .into_iter()
            .filter(|&i| state.in_pass(i, round))
            .collect();
        if let Some(r) = file.rounds.as_mut() {
            r.started += 1;
            r.orders
                .push(order.iter().map(|&i| s.cases[i].1.key()).collect());
        }
        for pos in 0..order.len() {
            if interrupted.load(Ordering::SeqCst) {
                break;
            }
            state.case_round(round, &order, pos, file, watch)?;
        }
        state.save(file)?;
    }
    crate::validity::canary::measure(&clock, state.run_start, file);
    if state.cut.0 > 0 {
        file.notes.push(format!(
            "behind the suite's {:.0} s: {} case round(s) got less budget to catch up, down to {:.2} s (planned {:.2} s per case)",
            s.deadline.unwrap_or_default(),
            state.cut.0,
            state.cut.1,
            config.reps.budget_secs
        ));
    }
    Ok(())
}

/// How a case's rounds fall on the passes.
#[derive(Debug, Clone, Default)]
struct CaseRounds {
    /// The passes it runs in; None until its first round has shown what a
    /// round of it costs.
    passes: Option<Vec<bool>>,
    /// Its rounds so far.
    done: u32,
    /// Seconds its rounds took so far (preparing, warm-up, repetitions).
    spent: f64,
}

/// The loop's state across case rounds.
struct Loop<'a> {
    s: &'a Schedule<'a>,
    clock: &'a Clock,
    interrupted: &'a AtomicBool,
    /// Passes planned (`--rounds`): the most rounds a case gets.
    passes: u32,
    /// Each case's rounds.
    rounds: Vec<CaseRounds>,
    /// Case rounds done.
    done: usize,
    mem_available_bytes: Option<u64>,
    cpus: usize,
    run_start: Duration,
    /// When the result file was last saved.
    last_save: Duration,
    /// Each case's result over its rounds so far.
    results: Vec<Option<CaseResult>>,
    /// Case rounds whose budget was cut to catch up, and the smallest budget.
    cut: (usize, f64),
}

impl Loop<'_> {
    /// Whether case `i` is still to be measured (not skipped, invalid or failed).
    fn live(&self, i: usize) -> bool {
        self.results[i]
            .as_ref()
            .is_none_or(|r| r.status == CaseStatus::Ok)
    }

    /// Whether case `i` runs in `pass` (every case runs in the first).
    fn in_pass(&self, i: usize, pass: u32) -> bool {
        self.rounds[i]
            .passes
            .as_ref()
            .is_none_or(|p| p[pass as usize])
    }

    /// Rounds of case `i` in the passes after `pass`: as planned for it,
    /// or every pass while that is not decided; none once it cannot run.
    fn later(&self, i: usize, pass: u32) -> u32 {
        if !self.live(i) {
            return 0;
        }
        let after = pass as usize + 1..self.passes as usize;
        match &self.rounds[i].passes {
            Some(p) => p[after].iter().filter(|&&b| b).count() as u32,
            None => after.len() as u32,
        }
    }

    /// The rounds case `i` gets in all.
    fn planned(&self, i: usize) -> u32 {
        self.rounds[i]
            .passes
            .as_ref()
            .map_or(self.passes, |p| p.iter().filter(|&&b| b).count() as u32)
    }

    /// After the first round of case `i`, which took `secs`: the rounds
    /// its budget pays for, spread over the passes; never more rounds than
    /// its most repetitions (each round measures at least one).
    fn decide(&mut self, i: usize, secs: f64) {
        let reps = &self.s.config.reps;
        let most = self.passes.min(reps.reps_max.max(1));
        let n = rounds_for(reps.budget_secs, secs, most);
        self.rounds[i].passes = Some(spread(n, self.passes));
    }

    /// Measures the case at `order[pos]` in pass `pass`, merges it into
    /// its result, brings the file up to date and saves it.
    fn case_round(
        &mut self,
        pass: u32,
        order: &[usize],
        pos: usize,
        file: &mut ResultFile,
        watch: &mut dyn Watch,
    ) -> anyhow::Result<()> {
        let i = order[pos];
        // a case that could not run (skipped, invalid, failed) is not retried
        if !self.live(i) {
            return Ok(());
        }
        let (bench, case) = &self.s.cases[i];
        let (done, planned) = (self.rounds[i].done, self.planned(i));
        let key = case.key();
        let shown = if planned > 1 {
            format!("{key} round {}/{planned}", done + 1)
        } else {
            key
        };
        let later: Vec<u32> = (0..self.s.cases.len())
            .map(|j| self.later(j, pass))
            .collect();
        let rest = &order[pos + 1..];
        let total = self.done
            + 1
            + rest.iter().filter(|&&j| self.live(j)).count()
            + later.iter().sum::<u32>() as usize;
        let policy = self.policy(i, rest, &later);
        let step = Step {
            index: self.done,
            total,
            case: i,
            shown: &shown,
            reps_max: policy.reps_max,
            rest,
            later: &later,
        };
        let ctx = Context {
            clock: self.clock,
            reps: &policy,
            seed: self.s.config.seed,
            interrupted: self.interrupted,
            mem_available_bytes: self.mem_available_bytes,
            dirs: &self.s.config.dirs,
            cpus: self.cpus,
        };
        crate::validity::canary::between_cases(self.clock, self.run_start, file);
        let run = if self.s.config.workers {
            let job = self.job(&case.key(), policy.clone());
            super::worker::measure(&job, self.clock, self.interrupted, &mut |p| {
                watch.rep(&step, p)
            })
        } else {
            runner::run_case(*bench, case, &ctx, &mut |p| watch.rep(&step, p))
        };
        let elapsed = run.elapsed;
        merge_round(
            &mut self.results[i],
            case,
            run,
            pass,
            self.run_start,
            self.s.config.seed,
        );
        self.done += 1;
        let r = &mut self.rounds[i];
        r.done += 1;
        r.spent += elapsed.as_secs_f64();
        if r.passes.is_none() {
            self.decide(i, elapsed.as_secs_f64());
        }
        let result = self.results[i]
            .as_ref()
            .expect("merge_round fills the slot");
        watch.case_done(&step, result, elapsed);
        if self.clock.now().saturating_sub(self.last_save) >= SAVE_EVERY {
            self.save(file)?;
        }
        Ok(())
    }

    /// Brings the file up to date (cases, derived figures, flags) and
    /// saves it.
    ///
    /// # Errors
    /// Saving the result file.
    fn save(&mut self, file: &mut ResultFile) -> anyhow::Result<()> {
        file.cases = self.results.iter().flatten().cloned().collect();
        file.derived = super::derive(self.s.families, file);
        super::check(self.s.families, &mut file.cases);
        crate::validity::assess(file);
        self.last_save = self.clock.now();
        crate::store::save(self.s.output, file).context("saving results")
    }

    /// A worker's job: case `key`, one round under `policy`.
    fn job(&self, key: &str, policy: RepPolicy) -> super::worker::Job {
        let c = self.s.config;
        super::worker::Job {
            key: key.to_string(),
            suite: c.suite,
            cpus: self.cpus,
            threads: c.threads.clone(),
            dirs: c.dirs.clone(),
            options: c.options.clone(),
            policy,
            seed: c.seed,
            mem_available_bytes: self.mem_available_bytes,
            fake_clock: c.fake_clock,
        }
    }

    /// The policy of case `i`'s next round: its share of the case's
    /// repetitions and of the budget it has left, without warm-up for a
    /// long case after its first round ([`round_policy`]), its budget cut
    /// when the run is behind its deadline.
    fn policy(&mut self, i: usize, rest: &[usize], later: &[u32]) -> RepPolicy {
        let base = &self.s.config.reps;
        let r = &self.rounds[i];
        let planned = self.planned(i).max(1);
        let mut share = RepPolicy {
            rounds: planned,
            ..base.clone()
        }
        .per_round(r.done);
        let left = planned.saturating_sub(r.done).max(1);
        if r.done > 0 {
            share.budget_secs = (base.budget_secs - r.spent).max(0.0) / f64::from(left);
        }
        let mut policy = round_policy(&share, self.results[i].as_ref());
        let Some(deadline) = self.s.deadline else {
            return policy;
        };
        let items =
            1 + rest.iter().filter(|&&j| self.live(j)).count() + later.iter().sum::<u32>() as usize;
        let elapsed = self
            .clock
            .now()
            .saturating_sub(self.run_start)
            .as_secs_f64();
        let floor = self.s.config.suite.min_budget_secs() / f64::from(planned);
        policy.budget_secs = catch_up_budget(policy.budget_secs, deadline, elapsed, items, floor);
        // a cut of a few percent is the run's preparation time being
        // shared out; only a real cut is worth a note
        if policy.budget_secs < 0.9 * share.budget_secs {
            self.cut.0 += 1;
            self.cut.1 = self.cut.1.min(policy.budget_secs);
        }
        policy
    }
}

/// The rounds a case gets when its whole `budget` (seconds) is spent at
/// `first` seconds a round (what its first round cost, preparing
/// included): as many as that pays for, at least [`MIN_ROUNDS`] and at
/// most `passes`.
fn rounds_for(budget: f64, first: f64, passes: u32) -> u32 {
    let affordable = if first > 0.0 {
        (budget / first + 1e-9).floor().min(f64::from(passes))
    } else {
        f64::from(passes)
    };
    (affordable as u32).clamp(MIN_ROUNDS.min(passes), passes.max(1))
}

/// `rounds` of `passes` passes, the first among them and the others
/// spread evenly over the rest (`true` where the case runs).
fn spread(rounds: u32, passes: u32) -> Vec<bool> {
    let (k, n) = (u64::from(rounds.max(1) - 1), u64::from(passes.max(1) - 1));
    let mut out = vec![false; passes.max(1) as usize];
    out[0] = true;
    for p in 1..=n {
        // Bresenham: a round wherever the ideal count k·p/n steps up
        out[p as usize] = k * p / n.max(1) > k * (p - 1) / n.max(1);
    }
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
fn round_policy(policy: &RepPolicy, so_far: Option<&CaseResult>) -> RepPolicy {
    let long = so_far.and_then(|r| r.rounds.first()).is_some_and(|first| {
        let trials = f64::from((first.warmup_reps + first.reps).max(1));
        first.duration_secs / trials > policy.budget_secs / 2.0
    });
    RepPolicy {
        warmup: if long { 0 } else { policy.warmup },
        ..policy.clone()
    }
}

/// Case indices in the order of `round`: a seeded Fisher–Yates shuffle,
/// a new one each round, the same for the same seed.
fn round_order(n: usize, seed: u64, round: u32) -> Vec<usize> {
    let mut rng = crate::stats::rng::Rng::new(
        seed ^ 0x0D0E_5EED_0000_0000 ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
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
