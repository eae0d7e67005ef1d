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
//! order drawn for the case and turned each round ([`order::env_order`]), so the
//! environments' rounds of a case share the same minutes and the machine's
//! drift falls on all of them. A case's rounds fall on the same passes in
//! every environment (decided from the dearest first round), so round `r`
//! pairs across the files; each environment keeps a result file of its own,
//! its budgets its own, on one clock.

mod budget;
mod case_round;
mod kept;
mod order;
mod passes;
mod precision;

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
    /// The case-environment pairs measured in turns with this one, itself
    /// included (their repetitions interleave, so their time is shared);
    /// empty where it is measured alone.
    pub together: &'a [usize],
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
    /// `--precision`'s added rounds begin: `note` says how many cases
    /// they are for; they end within `allowed` (give or take a round).
    fn precision_began(&mut self, note: &str, allowed: Duration) {
        let _ = (note, allowed);
    }
    /// `--precision`'s added rounds ended: `note` says what they reached,
    /// as every result file does.
    fn precision(&mut self, note: &str) {
        let _ = note;
    }
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
    let mut state = Loop::new(s, files, &clock, interrupted, rounds);
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
        let order = state.pass_cases(round);
        start_round(s, files, &order);
        for pos in 0..order.len() {
            if interrupted.load(Ordering::SeqCst) {
                break;
            }
            state.case_slot(round, &order, pos, files, watch)?;
        }
        state.keep_limit(round);
        state.save(files)?;
    }
    // the planned rounds' time, which the suite's limit is about
    let took = clock.now().saturating_sub(state.run_start).as_secs_f64();
    let precision = state.precise(files, watch, took)?;
    name_left(s, kept.remove(), files, watch);
    crate::validity::canary::measure(&clock, state.run_start, &mut files[0]);
    crate::validity::canary::release();
    let notes = [state.cut_note(), state.limit_note(took), precision];
    for note in notes.into_iter().flatten() {
        files.iter_mut().for_each(|f| f.notes.push(note.clone()));
    }
    share_canary(files);
    Ok(())
}

/// Records in every file that a round starts with the cases of `order`
/// (indices into `s.cases`), in that order.
fn start_round(s: &Schedule, files: &mut [ResultFile], order: &[usize]) {
    for file in files.iter_mut() {
        let r = file
            .rounds
            .as_mut()
            .expect("invariant: set when the run starts");
        r.started += 1;
        r.orders
            .push(order.iter().map(|&i| s.cases[i].1.key()).collect());
        if let Some(i) = r.interleave.as_mut() {
            i.env_orders.push(Vec::new());
        }
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
    /// Passes so far: those planned (`--rounds`, the most rounds a case
    /// gets), then `--precision`'s added ones.
    passes: u32,
    /// The passes planned (`--rounds`).
    first_passes: u32,
    /// Whether the passes `--precision` adds are running: their rounds
    /// keep a planned round's share ([`Loop::added_policy`]).
    extra: bool,
    /// The passes each case runs in, in every environment; None until its
    /// first round has shown what a round of it costs.
    passes_of: Vec<Option<Vec<bool>>>,
    /// Per case, once its first round is done: what the dearest first
    /// round cost (seconds) and the rounds its budget paid for.
    decided: Vec<Option<(f64, u32)>>,
    /// Per case, the first case that differs from it only in its `--dir`
    /// ([`order::dir_groups`]): such cases run one right after another in
    /// the passes that hold them both.
    groups: Vec<usize>,
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

impl<'a> Loop<'a> {
    /// The loop's state at the start of a run of `rounds` passes over
    /// `s` into `files`.
    fn new(
        s: &'a Schedule<'a>,
        files: &[ResultFile],
        clock: &'a Clock,
        interrupted: &'a AtomicBool,
        rounds: u32,
    ) -> Loop<'a> {
        Loop {
            s,
            clock,
            interrupted,
            passes: rounds,
            first_passes: rounds,
            extra: false,
            passes_of: vec![None; s.cases.len()],
            decided: vec![None; s.cases.len()],
            groups: order::dir_groups(s.cases.iter().map(|(_, c)| c)),
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
                .map(|f| super::dirs::as_fingerprinted(&s.config.dirs, &f.fingerprint.dirs))
                .collect(),
        }
    }

    /// The note of case rounds whose budget was cut to catch up, if any.
    fn cut_note(&self) -> Option<String> {
        (self.cut.0 > 0).then(|| {
            format!(
                "behind the suite's {:.0} s: {} case round(s) got less budget to catch up, down to {:.2} s (planned {:.2} s per case)",
                self.s.deadline.unwrap_or_default(),
                self.cut.0,
                self.cut.1,
                self.s.config.reps.budget_secs
            )
        })
    }
}

impl Loop<'_> {
    /// The slot of case `i` in side `e`.
    fn slot(&self, e: usize, i: usize) -> usize {
        e * self.s.cases.len() + i
    }

    /// Case `i`'s rounds so far, in the environment furthest along.
    fn rounds_done(&self, i: usize) -> u32 {
        (0..self.s.sides.len())
            .map(|e| self.rounds[self.slot(e, i)].done)
            .max()
            .unwrap_or(0)
    }

    /// The cases of pass `pass`, in its order ([`order::pass_order`]): a
    /// group of `--dir` siblings turned by its rounds so far, the fewest
    /// of those in this pass ([`Loop::rounds_done`]).
    fn pass_cases(&self, pass: u32) -> Vec<usize> {
        let turns = |members: &[usize]| {
            members
                .iter()
                .filter(|&&i| self.in_pass(i, pass))
                .map(|&i| self.rounds_done(i) as usize)
                .min()
                .unwrap_or(0)
        };
        order::pass_order(&self.groups, self.s.config.seed, pass, &turns)
            .into_iter()
            .filter(|&i| self.in_pass(i, pass))
            .collect()
    }
}
