//! A whole battery, round by round: passes over the planned cases, in a new
//! seeded shuffle each pass, each case prepared afresh in each of its
//! rounds, its repetitions run by the [`runner`]; the rounds of a case
//! merged into one result; the suite's time shared among the cases
//! ([`fit_budget`]) and kept when preparing cases costs more than planned
//! ([`catch_up_budget`]) or starting workers does (the rounds kept to the
//! suite's time after each pass, [`Schedule::limit`]).
//!
//! A case runs in every pass when its rounds are cheap, and in fewer when
//! they are dear: after its first round (in the first pass) it gets as
//! many rounds as its budget pays for at what that round cost, at least
//! [`MIN_ROUNDS`] and at most the passes planned (`--rounds`), spread
//! evenly over the passes ([`budget::spread`]). On a machine whose figures
//! move from one moment to the next, many short rounds of a case,
//! interleaved with the others, average that movement out where a few long
//! ones would keep it (Abedi and Brecht, "Conducting Repeatable Experiments
//! in Highly Variable Cloud Computing Environments", ICPE 2017). The
//! result file is saved after each case round, so a crash or Ctrl-C loses
//! at most the case being measured; the caller watches ([`Watch`]) each
//! repetition and case round.
//!
//! Several environments (`run --in`, [`Side`]s) are measured in one loop:
//! each case round runs in every environment, one after the other, in an
//! order drawn afresh for that case round ([`order::env_order`]), so the
//! environments' rounds of a case share the same minutes and the machine's
//! drift falls on all of them. A case's rounds fall on the same passes in
//! every environment (decided from the dearest first round), so round `r`
//! pairs across the files; each environment keeps a result file of its own,
//! its budgets its own, on one clock.

mod budget;
mod kept;
mod order;

pub use budget::{catch_up_budget, fit_budget, MIN_ROUNDS};
use kept::{name_left, Kept};

use super::launch::Launcher;
use super::round::merge_round;
use super::runner;
use crate::bench::{Bench, CaseSpec, Context, Family};
use crate::cleanup::Leftover;
use crate::config::{RepPolicy, RunConfig};
use crate::measure::clock::Clock;
use crate::results::{self, CaseResult, CaseStatus, ResultFile};
use anyhow::Context as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Fake-clock step for `--fake-clock` runs.
const FAKE_STEP: Duration = Duration::from_millis(10);

/// How often the result file is saved while the run goes on: after a case
/// round once this long has passed since the last save, and at the end of
/// every pass. Saving (two fsyncs) after each of a quick run's ~700 case
/// rounds took more than ten seconds of its minute.
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// An environment the battery runs in, with its result file.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    /// Its name (`--in NAME`), shown before each case in progress when
    /// there are several.
    pub name: &'a str,
    /// How its workers start: the host as it is for a plain run.
    pub launcher: &'a Launcher,
    /// Its resident launcher, which starts its workers inside it (an
    /// environment entered through a prefix); None: workers start here.
    pub resident: Option<&'a std::cell::RefCell<super::resident::Resident>>,
    /// Its result file, saved after case rounds and every pass.
    pub output: &'a Path,
    /// Its result file's run id, listed in every file of an interleaved run.
    pub run_id: &'a str,
    /// Seconds it took to answer for its fingerprint through its prefix
    /// (0 for the host itself): what a worker's start may take, ten times
    /// over ([`super::talk::Deadlines`]).
    pub start_secs: f64,
}

/// What to run: the configuration (with the target directories), the
/// planned cases and the environments with their result files.
#[derive(Clone, Copy)]
pub struct Schedule<'a> {
    /// Suite, repetition policy (budget already shared out), seed, clock.
    pub config: &'a RunConfig,
    /// The cases, in plan order.
    pub cases: &'a [(&'static dyn Bench, CaseSpec)],
    /// Seconds the whole loop may take (the suite's target for each
    /// environment); None keeps every planned budget (a `--budget` the
    /// user gave, the fake clock).
    pub deadline: Option<f64>,
    /// Seconds the whole loop should end within (the suite's
    /// [`crate::config::Suite::limit_secs`] for each environment): after
    /// each pass, when the rounds still to come would end it later, the
    /// cases with the most rounds give some up ([`budget::fit_rounds`]).
    /// None keeps every round the budgets pay for.
    pub limit: Option<f64>,
    /// The families whose derived figures and checks follow each case
    /// round ([`super::FAMILIES`]).
    pub families: &'a [&'a dyn Family],
    /// The environments, one result file each: one for a plain run, two
    /// or more measured interleaved.
    pub sides: &'a [Side<'a>],
    /// The interleaved run's id, written with the environments' orders in
    /// every file's `rounds.interleave` when there are several sides.
    pub interleave_id: Option<&'a str>,
    /// The usable CPUs the cases were planned for ([`super::Plan::cpus`]).
    pub cpus: usize,
}

impl Schedule<'_> {
    /// Case-environment pairs: the slot of case `i` in side `e` is
    /// `e * cases + i` (the case index itself with one side).
    fn slots(&self) -> usize {
        self.cases.len() * self.sides.len()
    }
}

/// Where the loop is: the case round being measured.
#[derive(Debug)]
pub struct Step<'a> {
    /// Case rounds done before this one, in all environments.
    pub index: usize,
    /// Case rounds in the whole run, as planned now (it shrinks as dear
    /// cases are given fewer rounds).
    pub total: usize,
    /// The case in its environment: `side * cases + case`, the index into
    /// [`Schedule::cases`] itself with one environment.
    pub case: usize,
    /// The case key, with `round R/N` when it has several rounds, after
    /// the environment's name and a colon when there are several.
    pub shown: &'a str,
    /// Repetitions this round may take at most.
    pub reps_max: u32,
    /// The case-environment pairs still to come in this pass, in order.
    pub rest: &'a [usize],
    /// For each case-environment pair, its rounds in the passes after this one.
    pub later: &'a [u32],
}

/// The caller's side of the loop.
pub trait Watch {
    /// A repetition of the case at `step` finished.
    fn rep(&mut self, step: &Step, progress: runner::Progress);
    /// The case at `step` finished its round; `result` holds all its rounds
    /// so far, `elapsed` this round's time.
    fn case_done(&mut self, step: &Step, result: &CaseResult, elapsed: Duration);
    /// A directory could not be removed in the environment named `env`:
    /// `note` names it and why, as the environment's result file does.
    fn left_behind(&mut self, env: &str, note: &str);
}

/// Runs every case of `s` round by round, in every environment, into
/// `files` (one per side, in the same order), until done or
/// `interrupted`. With a deadline, a run that falls behind gives later
/// case rounds less budget ([`catch_up_budget`]) and says so in a note.
///
/// # Errors
/// Saving a result file.
pub fn run(
    s: &Schedule,
    files: &mut [ResultFile],
    interrupted: &AtomicBool,
    watch: &mut dyn Watch,
) -> anyhow::Result<()> {
    assert_eq!(files.len(), s.sides.len(), "invariant: a file per side");
    let config = s.config;
    let clock = if config.fake_clock {
        Clock::fake(FAKE_STEP)
    } else {
        Clock::real()
    };
    let rounds = config.reps.rounds.max(1);
    let mut state = Loop {
        s,
        clock: &clock,
        interrupted,
        passes: rounds,
        passes_of: vec![None; s.cases.len()],
        decided: vec![None; s.cases.len()],
        rounds: vec![CaseRounds::default(); s.slots()],
        done: 0,
        mem_available_bytes: files.iter().map(memory_for_cases).collect(),
        mem_limit_bytes: files
            .iter()
            .map(|f| f.fingerprint.cgroup.memory_limit_bytes)
            .collect(),
        cpuids: files
            .iter()
            .map(|f| f.fingerprint.cpu.cpuid.clone())
            .collect(),
        cpus: s.cpus,
        run_start: clock.now(),
        last_save: Duration::ZERO,
        results: vec![None; s.slots()],
        cut: (0, f64::INFINITY),
        kept: Vec::new(),
        left: Vec::new(),
        seen: files
            .iter()
            .map(|f| super::dirs::as_fingerprinted(&config.dirs, &f.fingerprint.dirs))
            .collect(),
    };
    // removed when the loop ends, however it ends: by this process, by a
    // second Ctrl-C as every scratch directory, by their keeper on SIGKILL
    let kept = Kept::make(s);
    state.kept = (0..s.sides.len()).map(|e| kept.of(e)).collect();
    for (e, file) in files.iter_mut().enumerate() {
        file.rounds = Some(results::Rounds {
            planned: rounds,
            started: 0,
            seed: config.seed,
            orders: Vec::new(),
            interleave: interleave(s, e),
        });
    }
    for round in 0..rounds {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        let order: Vec<usize> = order::round_order(s.cases.len(), config.seed, round)
            .into_iter()
            .filter(|&i| state.in_pass(i, round))
            .collect();
        for file in files.iter_mut() {
            let r = file.rounds.as_mut().expect("invariant: set above");
            r.started += 1;
            r.orders
                .push(order.iter().map(|&i| s.cases[i].1.key()).collect());
            if let Some(i) = r.interleave.as_mut() {
                i.env_orders.push(Vec::new());
            }
        }
        for pos in 0..order.len() {
            if interrupted.load(Ordering::SeqCst) {
                break;
            }
            state.case_slot(round, &order, pos, files, watch)?;
        }
        state.keep_limit(round);
        state.save(files)?;
    }
    name_left(s, kept.remove(), files, watch);
    // the rounds' time, before the last canary reading
    let took = clock.now().saturating_sub(state.run_start).as_secs_f64();
    crate::validity::canary::measure(&clock, state.run_start, &mut files[0]);
    crate::validity::canary::release();
    if state.cut.0 > 0 {
        let note = format!(
            "behind the suite's {:.0} s: {} case round(s) got less budget to catch up, down to {:.2} s (planned {:.2} s per case)",
            s.deadline.unwrap_or_default(),
            state.cut.0,
            state.cut.1,
            config.reps.budget_secs
        );
        files.iter_mut().for_each(|f| f.notes.push(note.clone()));
    }
    if let Some(note) = state.limit_note(took) {
        files.iter_mut().for_each(|f| f.notes.push(note.clone()));
    }
    share_canary(files);
    Ok(())
}

/// The limit's note: `kept` of the `paid` case rounds, the rounds having
/// taken `took` seconds against the suite's `limit`; None when the limit
/// neither took rounds nor was passed.
fn limit_words(suite: &str, limit: f64, took: f64, kept: u32, paid: u32) -> Option<String> {
    let cut = format!(
        "{kept} case rounds in each environment instead of the {paid} the budgets paid for, taken from the cases with the most rounds (each keeps at least {MIN_ROUNDS})"
    );
    match (kept < paid, took > limit) {
        (true, false) => Some(format!(
            "kept within the {suite} suite's {limit:.0} s: {cut}"
        )),
        (true, true) => Some(format!(
            "over the {suite} suite's {limit:.0} s: the rounds took {took:.1} s with {cut}"
        )),
        (false, true) => Some(format!(
            "over the {suite} suite's {limit:.0} s: the rounds took {took:.1} s"
        )),
        (false, false) => None,
    }
}

/// Memory a case may use in the environment `file` describes: the smaller
/// of what is available and its cgroup's limit.
fn memory_for_cases(file: &ResultFile) -> Option<u64> {
    let fp = &file.fingerprint;
    match (fp.memory.available_bytes, fp.cgroup.memory_limit_bytes) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    }
}

/// The interleave block of side `e`'s file (None with one side), its
/// environment orders still to come.
fn interleave(s: &Schedule, e: usize) -> Option<results::Interleave> {
    (s.sides.len() > 1).then(|| results::Interleave {
        id: s.interleave_id.unwrap_or_default().to_string(),
        environments: s
            .sides
            .iter()
            .map(|side| results::InterleavedEnv {
                name: side.name.to_string(),
                prefix: side.launcher.prefix.clone(),
                binary: side
                    .launcher
                    .binary
                    .as_ref()
                    .map(|b| b.to_string_lossy().into_owned()),
                run_id: Some(side.run_id.to_string()),
                launches: side.resident.map(|r| r.borrow().launches),
            })
            .collect(),
        index: e as u32,
        env_orders: Vec::new(),
    })
}

/// The canary runs in envbench's own process, between case rounds of any
/// environment: the first file holds its readings, and every other file of
/// the run a copy (they share its clock).
fn share_canary(files: &mut [ResultFile]) {
    let Some((first, rest)) = files.split_first_mut() else {
        return;
    };
    for f in rest {
        f.canary.clone_from(&first.canary);
    }
}

/// A case's rounds so far in one environment.
#[derive(Debug, Clone, Default)]
struct CaseRounds {
    /// Its rounds so far.
    done: u32,
    /// Seconds its rounds took so far, as the run saw them (starting and
    /// ending the worker, preparing, warm-up, repetitions).
    spent: f64,
}

/// The loop's state across case rounds.
struct Loop<'a> {
    s: &'a Schedule<'a>,
    clock: &'a Clock,
    interrupted: &'a AtomicBool,
    /// Passes planned (`--rounds`): the most rounds a case gets.
    passes: u32,
    /// The passes each case runs in, in every environment; None until its
    /// first round has shown what a round of it costs.
    passes_of: Vec<Option<Vec<bool>>>,
    /// Per case, once its first round is done: what the dearest first
    /// round cost (seconds) and the rounds its budget paid for.
    decided: Vec<Option<(f64, u32)>>,
    /// Each case-environment pair's rounds (by slot, [`Schedule::slots`]).
    rounds: Vec<CaseRounds>,
    /// Case rounds done.
    done: usize,
    /// Memory a case may use, per environment.
    mem_available_bytes: Vec<Option<u64>>,
    /// The memory limit each environment's fingerprint holds.
    mem_limit_bytes: Vec<Option<u64>>,
    /// Per side, the CPU its fingerprint saw through CPUID, which each of
    /// its workers checks it runs on.
    cpuids: Vec<Option<crate::probe::emulation::CpuId>>,
    /// The CPUs the cases were planned for (the first environment's).
    cpus: usize,
    run_start: Duration,
    /// When the result files were last saved.
    last_save: Duration,
    /// Each case-environment pair's result over its rounds so far.
    results: Vec<Option<CaseResult>>,
    /// Case rounds whose budget was cut to catch up, and the smallest budget.
    cut: (usize, f64),
    /// Per side, where its cases keep their fixtures for later rounds
    /// ([`crate::bench::Context::kept`]); empty for a side entered through
    /// a prefix, whose files this process may not see.
    kept: Vec<Vec<crate::bench::NamedDir>>,
    /// What the rounds could not remove, by side, not yet named.
    left: Vec<(usize, Leftover)>,
    /// Per side, the `--dir`s as its fingerprint saw them, which each
    /// round is checked against ([`super::dirs`]).
    seen: Vec<Vec<super::dirs::DirSeen>>,
}

impl Loop<'_> {
    /// The slot of case `i` in side `e`.
    fn slot(&self, e: usize, i: usize) -> usize {
        e * self.s.cases.len() + i
    }

    /// Whether the case-environment pair `slot` is still to be measured
    /// (not skipped, invalid or failed).
    fn live(&self, slot: usize) -> bool {
        self.results[slot]
            .as_ref()
            .is_none_or(|r| r.status == CaseStatus::Ok)
    }

    /// Whether case `i` runs in `pass` (every case runs in the first).
    fn in_pass(&self, i: usize, pass: u32) -> bool {
        self.passes_of[i].as_ref().is_none_or(|p| p[pass as usize])
    }

    /// Rounds of the pair `slot` in the passes after `pass`: as planned
    /// for its case, or every pass while that is not decided; none once it
    /// cannot run.
    fn later(&self, slot: usize, pass: u32) -> u32 {
        if !self.live(slot) {
            return 0;
        }
        let after = pass as usize + 1..self.passes as usize;
        match &self.passes_of[slot % self.s.cases.len()] {
            Some(p) => p[after].iter().filter(|&&b| b).count() as u32,
            None => after.len() as u32,
        }
    }

    /// The rounds case `i` gets in all.
    fn planned(&self, i: usize) -> u32 {
        self.passes_of[i]
            .as_ref()
            .map_or(self.passes, |p| p.iter().filter(|&&b| b).count() as u32)
    }

    /// After the first round of case `i` in every environment, the
    /// dearest of which took `secs`: the rounds its budget pays for,
    /// spread over the passes; never more rounds than its most repetitions
    /// (each round measures at least one).
    fn decide(&mut self, i: usize, secs: f64) {
        let reps = &self.s.config.reps;
        let most = self.passes.min(reps.reps_max.max(1));
        let n = budget::rounds_for(reps.budget_secs, secs, most);
        self.passes_of[i] = Some(budget::spread(n, self.passes));
        self.decided[i] = Some((secs, n));
    }

    /// After pass `pass`: when the rounds still to come, at what each
    /// case's rounds have cost so far, would end the loop after its limit,
    /// gives each case the rounds that fit ([`budget::fit_rounds`]), and
    /// gives them back when the run has caught up. The time the run spends
    /// between rounds (canary, saving) is allowed for at the share it took
    /// so far, at most half (a first pass that spent more between rounds
    /// than in them says little of the passes to come).
    fn keep_limit(&mut self, pass: u32) {
        let Some(limit) = self.s.limit else {
            return;
        };
        let past = pass as usize + 1;
        let open = self.passes.saturating_sub(past as u32);
        if open == 0 {
            return;
        }
        let elapsed = self
            .clock
            .now()
            .saturating_sub(self.run_start)
            .as_secs_f64();
        let in_rounds: f64 = self.rounds.iter().map(|r| r.spent).sum();
        let between = ((elapsed - in_rounds) / elapsed.max(1e-9)).clamp(0.0, 0.5);
        let left = (limit - elapsed).max(0.0) * (1.0 - between);
        let n = self.s.cases.len();
        let mut cases = Vec::new();
        let mut planned = Vec::new();
        for i in 0..n {
            let (Some((first, decided)), Some(passes)) = (self.decided[i], &self.passes_of[i])
            else {
                continue;
            };
            let per_round: f64 = (0..self.s.sides.len())
                .map(|e| self.slot(e, i))
                .filter(|&slot| self.live(slot) && self.rounds[slot].done > 0)
                .map(|slot| self.rounds[slot].spent / f64::from(self.rounds[slot].done))
                .sum();
            if per_round <= 0.0 {
                continue;
            }
            cases.push(i);
            planned.push(budget::Planned {
                first,
                per_round,
                decided,
                done: passes[..past].iter().filter(|&&b| b).count() as u32,
                open,
            });
        }
        let reps = &self.s.config.reps;
        let most = self.passes.min(reps.reps_max.max(1));
        let more = budget::fit_rounds(&planned, reps.budget_secs, most, left);
        for (&i, more) in cases.iter().zip(more) {
            let passes = self.passes_of[i]
                .as_ref()
                .expect("invariant: decided above");
            if passes[past..].iter().filter(|&&b| b).count() as u32 != more {
                self.passes_of[i] = Some(budget::respread(&passes[..past], more, self.passes));
            }
        }
    }

    /// A note for the result files when the limit took rounds away (the
    /// case rounds the budgets paid for against those the run kept), or
    /// when the rounds ran past it all the same: under gVisor's ptrace
    /// platform in a noisy hour, three rounds of every quick case alone
    /// took 77 s. `took`: the rounds' seconds.
    fn limit_note(&self, took: f64) -> Option<String> {
        let limit = self.s.limit?;
        let paid: u32 = self.decided.iter().flatten().map(|&(_, n)| n).sum();
        let kept: u32 = (0..self.s.cases.len())
            .filter(|&i| self.decided[i].is_some())
            .map(|i| self.planned(i))
            .sum();
        limit_words(self.s.config.suite.name(), limit, took, kept, paid)
    }

    /// Measures the case at `order[pos]` in pass `pass` in every
    /// environment, in an order drawn for this case round (recorded in the
    /// files), and decides its rounds after its first.
    fn case_slot(
        &mut self,
        pass: u32,
        order: &[usize],
        pos: usize,
        files: &mut [ResultFile],
        watch: &mut dyn Watch,
    ) -> anyhow::Result<()> {
        let i = order[pos];
        let envs = order::env_order(self.s.sides.len(), self.s.config.seed, pass, pos);
        for file in files.iter_mut() {
            let interleave = file.rounds.as_mut().and_then(|r| r.interleave.as_mut());
            if let Some(round) = interleave.and_then(|il| il.env_orders.last_mut()) {
                round.push(envs.iter().map(|&e| e as u32).collect());
            }
        }
        let mut dearest: Option<f64> = None;
        for (k, &e) in envs.iter().enumerate() {
            if self.interrupted.load(Ordering::SeqCst) {
                break;
            }
            // a case that could not run (skipped, invalid, failed) is not retried
            if !self.live(self.slot(e, i)) {
                continue;
            }
            // the other environments of this case, then every later case in each
            let (cases, sides) = (self.s.cases.len(), self.s.sides.len());
            let rest: Vec<usize> = envs[k + 1..]
                .iter()
                .map(|&f| f * cases + i)
                .chain(
                    order[pos + 1..]
                        .iter()
                        .flat_map(|&j| (0..sides).map(move |f| f * cases + j)),
                )
                .collect();
            crate::validity::canary::between_cases(self.clock, self.run_start, &mut files[0]);
            let secs = self.case_round(pass, e, i, &rest, watch)?;
            dearest = Some(dearest.map_or(secs, |d| d.max(secs)));
            name_left(self.s, std::mem::take(&mut self.left), files, watch);
        }
        if let (None, Some(secs)) = (&self.passes_of[i], dearest) {
            self.decide(i, secs);
        }
        if self.clock.now().saturating_sub(self.last_save) >= SAVE_EVERY {
            self.save(files)?;
        }
        Ok(())
    }

    /// Measures case `i` in side `e` in pass `pass` and merges it into its
    /// result; returns the seconds the round cost the run.
    fn case_round(
        &mut self,
        pass: u32,
        e: usize,
        i: usize,
        rest: &[usize],
        watch: &mut dyn Watch,
    ) -> anyhow::Result<f64> {
        let slot = self.slot(e, i);
        let case = &self.s.cases[i].1;
        let (done, planned) = (self.rounds[slot].done, self.planned(i));
        let side = &self.s.sides[e];
        let key = case.key();
        let mut shown = if planned > 1 {
            format!("{key} round {}/{planned}", done + 1)
        } else {
            key
        };
        if self.s.sides.len() > 1 {
            shown = format!("{}: {shown}", side.name);
        }
        let later: Vec<u32> = (0..self.s.slots()).map(|j| self.later(j, pass)).collect();
        let total = self.done
            + 1
            + rest.iter().filter(|&&j| self.live(j)).count()
            + later.iter().sum::<u32>() as usize;
        let policy = self.policy(slot, rest, &later);
        let step = Step {
            index: self.done,
            total,
            case: slot,
            shown: &shown,
            reps_max: policy.reps_max,
            rest,
            later: &later,
        };
        // what the round costs the run: its worker's start and end too
        // (under gVisor's ptrace platform 30 ms a round, against 10 ms
        // natively), which the worker's own `elapsed` leaves out
        let began = self.clock.now();
        let mut run = self.measure_round(e, i, &policy, done == 0, &mut |p| watch.rep(&step, p));
        let elapsed = run.elapsed;
        // counting a command's calls is done once, not by the rounds to come
        let once = Duration::from_secs_f64(run.once_secs.unwrap_or(0.0));
        let cost = self
            .clock
            .now()
            .saturating_sub(began)
            .max(elapsed)
            .saturating_sub(once);
        // the worker's, then this process's (a killed worker's, in-process cases')
        let left = std::mem::take(&mut run.left).into_iter();
        let left = left.chain(crate::cleanup::leftover::take());
        self.left.extend(left.map(|l| (e, l)));
        merge_round(
            &mut self.results[slot],
            case,
            run,
            pass,
            self.run_start,
            self.s.config.seed,
        );
        self.done += 1;
        let r = &mut self.rounds[slot];
        r.done += 1;
        r.spent += cost.as_secs_f64();
        let result = self.results[slot]
            .as_ref()
            .expect("merge_round fills the slot");
        watch.case_done(&step, result, elapsed);
        Ok(cost.as_secs_f64())
    }

    /// Measures one round of case `i` in side `e` under `policy` (its
    /// first there: `first_round`): in a worker (started by the
    /// environment's launcher, or here), or in this process under
    /// `--workers off`, on the `--dir`s the environment was fingerprinted
    /// with ([`super::dirs`]). A round whose `--dir` does not answer this
    /// process fails at once.
    fn measure_round(
        &self,
        e: usize,
        i: usize,
        policy: &RepPolicy,
        first_round: bool,
        on_rep: &mut dyn FnMut(runner::Progress),
    ) -> runner::CaseRun {
        let (bench, case) = &self.s.cases[i];
        let (side, dirs) = (&self.s.sides[e], &self.s.config.dirs);
        if let Err(why) = super::dirs::answers(case, dirs) {
            return runner::failed_run(self.clock.wall_secs(), why);
        }
        if self.s.config.workers || !side.launcher.is_host() {
            let job = super::worker::Job {
                first_round,
                ..self.job(&case.key(), policy.clone(), e)
            };
            let name = if self.s.sides.len() > 1 {
                side.name
            } else {
                ""
            };
            let deadlines = super::talk::Deadlines {
                memory_limit_bytes: self.mem_limit_bytes[e],
                ..super::talk::Deadlines::new(name, side.start_secs, policy.budget_secs)
            };
            let entry = match side.resident {
                Some(r) => super::talk::Start::Resident(r),
                None => super::talk::Start::Direct(side.launcher),
            };
            return super::talk::measure(
                &job,
                entry,
                deadlines,
                self.clock,
                self.interrupted,
                on_rep,
            );
        }
        let ctx = Context {
            clock: self.clock,
            reps: policy,
            seed: self.s.config.seed,
            interrupted: self.interrupted,
            deadline: super::talk::program_deadline(policy.budget_secs),
            first_round,
            options: &self.s.config.options,
            mem_available_bytes: self.mem_available_bytes[e],
            dirs,
            cpus: self.cpus,
            kept: &self.kept[e],
        };
        super::dirs::on_fingerprinted(&self.seen[e], dirs, case, || {
            runner::run_case(*bench, case, &ctx, on_rep)
        })
    }

    /// Side `e`'s cases so far, in plan order.
    fn side_results(&self, e: usize) -> Vec<CaseResult> {
        let n = self.s.cases.len();
        self.results[e * n..(e + 1) * n]
            .iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// Brings every file up to date (cases, derived figures, flags, the
    /// canary) and saves it.
    ///
    /// # Errors
    /// Saving a result file.
    fn save(&mut self, files: &mut [ResultFile]) -> anyhow::Result<()> {
        share_canary(files);
        let launches: Vec<Option<u32>> = self
            .s
            .sides
            .iter()
            .map(|side| side.resident.map(|r| r.borrow().launches))
            .collect();
        for (e, file) in files.iter_mut().enumerate() {
            if let Some(i) = file.rounds.as_mut().and_then(|r| r.interleave.as_mut()) {
                for (env, n) in i.environments.iter_mut().zip(&launches) {
                    env.launches = *n;
                }
            }
            file.cases = self.side_results(e);
            file.derived = crate::bench::derive(self.s.families, file);
            crate::bench::check(self.s.families, &mut file.cases);
            crate::validity::assess(file);
            crate::store::save(self.s.sides[e].output, file).context("saving results")?;
        }
        self.last_save = self.clock.now();
        Ok(())
    }

    /// A worker's job: case `key`, one round under `policy`, in side `e`.
    fn job(&self, key: &str, policy: RepPolicy, e: usize) -> super::worker::Job {
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
            mem_available_bytes: self.mem_available_bytes[e],
            fake_clock: c.fake_clock,
            scratch_pid: None,
            wait_go: false,
            cpuid: self.cpuids[e].clone(),
            kept: self.kept[e].clone(),
            first_round: false,
            dirs_seen: self.seen[e].clone(),
        }
    }

    /// The policy of the next round of the pair `slot`: its share of the
    /// case's repetitions and of the budget it has left, without warm-up
    /// for a long case after its first round ([`budget::round_policy`]),
    /// its budget cut when the run is behind its deadline.
    fn policy(&mut self, slot: usize, rest: &[usize], later: &[u32]) -> RepPolicy {
        let base = &self.s.config.reps;
        let r = &self.rounds[slot];
        let planned = self.planned(slot % self.s.cases.len()).max(1);
        let mut share = RepPolicy {
            rounds: planned,
            ..base.clone()
        }
        .per_round(r.done);
        let left = planned.saturating_sub(r.done).max(1);
        if r.done > 0 {
            share.budget_secs = (base.budget_secs - r.spent).max(0.0) / f64::from(left);
        }
        let mut policy = budget::round_policy(&share, self.results[slot].as_ref());
        budget::steady(
            &mut policy,
            self.s.cases[slot % self.s.cases.len()].0.steady_reps(),
        );
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
        // the floor of the rounds the budget paid for: rounds the limit
        // took away must not make the others dearer
        let paid = self.decided[slot % self.s.cases.len()].map_or(planned, |(_, n)| n.max(1));
        let floor = self.s.config.suite.min_budget_secs() / f64::from(paid);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_note_says_what_was_cut_and_whether_the_time_was_kept() {
        let cut = "120 case rounds in each environment instead of the 200 the budgets paid for, \
                   taken from the cases with the most rounds (each keeps at least 3)";
        assert_eq!(
            limit_words("quick", 53.0, 50.2, 120, 200).as_deref(),
            Some(format!("kept within the quick suite's 53 s: {cut}").as_str())
        );
        assert_eq!(
            limit_words("quick", 53.0, 88.5, 120, 200).as_deref(),
            Some(
                format!("over the quick suite's 53 s: the rounds took 88.5 s with {cut}").as_str()
            )
        );
        assert_eq!(
            limit_words("standard", 570.0, 575.4, 90, 90).as_deref(),
            Some("over the standard suite's 570 s: the rounds took 575.4 s")
        );
        assert_eq!(limit_words("quick", 53.0, 52.9, 90, 90), None);
    }
}
