//! Benchmarks: one folder per family, each behind the [`Family`] trait and
//! listed once in [`FAMILIES`]; each benchmark behind the [`Bench`] trait,
//! one file each. A bench declares its cases for a suite and, per case,
//! prepares a [`Trial`] that measures one repetition. Benches never print
//! and never format: the engine ([`crate::engine`]) repeats trials and runs
//! a whole battery round by round, and the report renders results. What
//! several families use stands here beside them: the placement of a case's
//! processes on CPUs ([`affinity`], for os and net).

pub mod affinity;
pub mod app;
pub mod cmd;
pub mod cpu;
mod family;
pub mod io;
pub mod mem;
pub mod net;
pub mod os;
pub(crate) mod program;
pub mod reference;
mod scratch;
#[cfg(test)]
mod test_support;

pub use family::{Family, FamilyOption};
pub use scratch::ScratchDir;
#[cfg(test)]
pub(crate) use test_support::TestEnv;

use crate::config::{FamilyOptions, RepPolicy, Suite};
use crate::measure::clock::Clock;
use crate::results::{Derived, ResultFile};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::LazyLock;
use thiserror::Error;

/// Every benchmark family, in the order a run lists them. A new family is
/// its folder and one line here.
pub const FAMILIES: &[&dyn Family] = &[
    &cpu::Cpu,
    &mem::Mem,
    &io::Io,
    &os::Os,
    &net::Net,
    &app::App,
    &cmd::Cmd,
];

/// Every benchmark, family by family in [`FAMILIES`] order.
pub static ALL: LazyLock<Vec<&'static dyn Bench>> = LazyLock::new(|| {
    FAMILIES
        .iter()
        .flat_map(|f| f.benches().iter().copied())
        .collect()
});

/// Every option `families` declare for `run`.
pub(crate) fn family_options(families: &[&dyn Family]) -> Vec<FamilyOption> {
    families.iter().flat_map(|f| f.options()).collect()
}

/// Runs the hidden helper process of a family that `args` name (a forked
/// process's body, a server of the net family).
pub(crate) fn helper(args: &[String]) -> Option<std::process::ExitCode> {
    FAMILIES.iter().find_map(|f| f.helper(args))
}

/// Every derived figure over the cases run so far: each bench's own
/// (speed-up, scalability), then each family's (peak FLOPS, machine
/// balance), family by family in the order given.
pub(crate) fn derive(families: &[&dyn Family], file: &ResultFile) -> Vec<Derived> {
    let mut out: Vec<Derived> = families
        .iter()
        .flat_map(|f| f.benches().iter())
        .flat_map(|b| {
            let id = b.id();
            let mine: Vec<&crate::results::CaseResult> =
                file.cases.iter().filter(|c| c.bench == id).collect();
            if mine.is_empty() {
                Vec::new()
            } else {
                b.derive(&mine)
            }
        })
        .collect();
    for f in families {
        let more = f.derive(file, &out);
        out.extend(more);
    }
    out
}

/// Every family's checks across the run's cases.
pub(crate) fn check(families: &[&dyn Family], cases: &mut [crate::results::CaseResult]) {
    for f in families {
        f.check(cases);
    }
}

/// Every family's notes on how it runs under `plan`.
pub(crate) fn notes(families: &[&dyn Family], plan: &Plan) -> Vec<String> {
    families.iter().flat_map(|f| f.notes(plan)).collect()
}

pub use crate::units::MetricSpec;

/// One benchmark with one set of parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseSpec {
    /// Bench id, e.g. `os.syscall`.
    pub bench: String,
    /// Parameters, e.g. `{"call": "getppid"}`.
    pub params: BTreeMap<String, Value>,
    /// Metrics each repetition yields, in order; the first drives early stopping.
    pub metrics: Vec<MetricSpec>,
}

impl CaseSpec {
    /// `os.syscall[call=getppid]`: unique within a run, stable across runs.
    pub fn key(&self) -> String {
        crate::results::case_key(&self.bench, &self.params)
    }

    /// The whole-number parameter `key`, at least 1.
    ///
    /// # Errors
    /// [`BenchError::Failed`] naming the case and the parameter: a case the
    /// bench planned without it is a bug.
    pub fn count(&self, key: &str) -> Result<u64, BenchError> {
        self.params
            .get(key)
            .and_then(Value::as_u64)
            .filter(|&n| n > 0)
            .ok_or_else(|| self.bad(key))
    }

    /// Whether the case works on at most one thread (its `threads`
    /// parameter 1, or none): [`Bench::one_cpu`] for benches whose threads
    /// share nothing else.
    pub(crate) fn one_thread(&self) -> bool {
        self.params
            .get("threads")
            .and_then(Value::as_u64)
            .unwrap_or(1)
            <= 1
    }

    /// [`CaseSpec::count`] as a `usize`.
    ///
    /// # Errors
    /// As [`CaseSpec::count`].
    pub(crate) fn count_usize(&self, key: &str) -> Result<usize, BenchError> {
        self.count(key).map(|n| n as usize)
    }

    /// The positive number parameter `key` (whole or not).
    ///
    /// # Errors
    /// As [`CaseSpec::count`].
    pub(crate) fn number(&self, key: &str) -> Result<f64, BenchError> {
        self.params
            .get(key)
            .and_then(Value::as_f64)
            .filter(|v| *v > 0.0)
            .ok_or_else(|| self.bad(key))
    }

    /// The size parameter `key`, written as [`crate::units::size_label`]
    /// writes it (`16MiB`), in bytes.
    ///
    /// # Errors
    /// As [`CaseSpec::count`].
    pub(crate) fn size(&self, key: &str) -> Result<u64, BenchError> {
        self.params
            .get(key)
            .and_then(Value::as_str)
            .and_then(|s| crate::units::parse_size(s).ok())
            .ok_or_else(|| self.bad(key))
    }

    /// The text parameter `key`, if the case has it.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.params.get(key).and_then(Value::as_str)
    }

    fn bad(&self, key: &str) -> BenchError {
        BenchError::Failed(format!("{}: bad parameter {key}", self.key()))
    }
}

pub use crate::results::param_text;

/// The target directories that plans, contexts and jobs carry are the
/// configuration's.
pub use crate::config::NamedDir;

/// What a bench knows when it plans its cases.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The suite being planned.
    pub suite: Suite,
    /// Logical CPUs usable by this process.
    pub cpus: usize,
    /// Thread counts the user asked for, if any.
    pub threads: Option<Vec<usize>>,
    /// Target directories, each under the name that enters case keys.
    pub dirs: Vec<NamedDir>,
    /// The options the families declare, as the user gave them
    /// (`stream_elems`, `file_size`, `http_url` ...); a family reads its own.
    ///
    /// A plan holds no probed fact but the CPU count: a case's key must be
    /// the same on the same hardware whatever a VM or container reports
    /// (its L3, its memory), so sizes are fixed per suite (or given here)
    /// and the facts they are checked against are read when a case is
    /// prepared and written as notes.
    pub options: FamilyOptions,
}

impl Plan {
    /// The plan for `suite` in the environment `fp` describes.
    pub fn from_fingerprint(
        suite: Suite,
        fp: &crate::probe::Fingerprint,
        threads: Option<Vec<usize>>,
        dirs: Vec<NamedDir>,
    ) -> Plan {
        Plan {
            suite,
            cpus: fp.cpu.usable(),
            threads,
            dirs,
            options: FamilyOptions::default(),
        }
    }

    /// The plan with the families' options the user gave.
    pub fn with_options(self, options: FamilyOptions) -> Plan {
        Plan { options, ..self }
    }

    /// 1, 2, 4 ... up to `cpus`, plus `cpus` itself if not a power of two;
    /// or the user's list.
    pub(crate) fn thread_counts(&self) -> Vec<usize> {
        if let Some(t) = &self.threads {
            return t.clone();
        }
        let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
            .take_while(|&n| n <= self.cpus)
            .collect();
        if !self.cpus.is_power_of_two() {
            v.push(self.cpus);
        }
        v
    }
}

/// What a bench may use while preparing and measuring.
pub struct Context<'a> {
    /// The clock to time with.
    pub clock: &'a Clock,
    /// The repetition policy (for `rep_target`).
    pub reps: &'a RepPolicy,
    /// Seed for random inputs.
    pub seed: u64,
    /// Set on Ctrl-C; long repetitions should check it and stop.
    pub interrupted: &'a AtomicBool,
    /// When the programs the case starts (a compiler, a person's command)
    /// are stopped: a little before its round's deadline
    /// ([`program::Program`]).
    pub deadline: std::time::Instant,
    /// Whether this is the case's first round in this environment (what a
    /// case does once per environment, it does then).
    pub first_round: bool,
    /// The families' options as the run was given them ([`Plan::options`]).
    pub options: &'a crate::config::FamilyOptions,
    /// Memory a case may use, bytes: the smaller of MemAvailable and the
    /// cgroup limit at the start of the run; None when unknown.
    pub mem_available_bytes: Option<u64>,
    /// Target directories; file-making benches work in a [`ScratchDir`]
    /// below the first, the io family below the one a case names.
    pub dirs: &'a [NamedDir],
    /// CPUs this process may use.
    pub cpus: usize,
    /// Where a case keeps what it made before timing for its later rounds
    /// (a tree of files, a file set): a directory of the run's in each
    /// `--dir`, under that `--dir`'s name, which the run removes at its
    /// end ([`crate::bench::io::Target::fixture`]). Empty: every round
    /// makes its own.
    pub kept: &'a [NamedDir],
}

impl Context<'_> {
    /// Refuses a case needing `bytes` when less memory is available
    /// (with a 25 % margin for the rest of the system).
    ///
    /// # Errors
    /// [`BenchError::Unsupported`] naming both sizes.
    pub(crate) fn require_memory(&self, bytes: u64) -> Result<(), BenchError> {
        match self.mem_available_bytes {
            Some(avail) if bytes.saturating_mul(5) / 4 > avail => {
                Err(BenchError::Unsupported(format!(
                    "needs {} MiB of memory, {} MiB available",
                    bytes >> 20,
                    avail >> 20
                )))
            }
            _ => Ok(()),
        }
    }
}

/// Why a case could not produce a number.
#[derive(Debug, Error)]
pub enum BenchError {
    /// The environment cannot run this case; recorded as skipped.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A validation check failed (LU residual, STREAM check); no number.
    #[error("invalid: {0}")]
    Invalid(String),
    /// Something went wrong while measuring.
    #[error("failed: {0}")]
    Failed(String),
    /// Ctrl-C arrived mid-repetition.
    #[error("interrupted")]
    Interrupted,
}

impl From<std::io::Error> for BenchError {
    fn from(e: std::io::Error) -> Self {
        BenchError::Failed(e.to_string())
    }
}

/// One prepared case, ready to measure repetitions.
pub trait Trial {
    /// Measures one repetition; returns one value per metric of the case, in
    /// order. Prints nothing.
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError>;

    /// Extra per-case data for the result file (e.g. a timeline), if any.
    fn details(&mut self) -> Option<Value> {
        None
    }

    /// Remarks for the result file, e.g. a count lowered to fit a limit.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The method's assumptions as checked in this round (a cold read that
    /// was cold, O_DIRECT honoured, memory readable), held or not.
    fn assumptions(&self) -> Vec<crate::results::Assumption> {
        Vec::new()
    }

    /// What the case saw that makes its figures doubtful (a flush faster
    /// than its storage can answer); recorded as the case's anomalies,
    /// which `show` and `compare` print with it.
    fn anomalies(&self) -> Vec<crate::results::Anomaly> {
        Vec::new()
    }

    /// Time this round spent on work done once per environment, not in
    /// its repetitions and not repeated by later rounds (counting a
    /// command's system calls): left out of what the round is taken to
    /// cost when the run plans the case's later rounds.
    fn once_only(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

/// A benchmark.
pub trait Bench: Sync {
    /// Its id, `family.name` (`os.syscall`): one of [`crate::results::ids`].
    fn id(&self) -> &'static str;
    /// Name of its family ([`Family::name`]), e.g. `os`.
    fn family(&self) -> &'static str {
        crate::results::ids::family(self.id())
    }
    /// Name within the family, snake_case, e.g. `syscall`.
    fn name(&self) -> &'static str {
        crate::results::ids::name(self.id())
    }
    /// What it measures in a few words, for sentences such as "B slower
    /// in 8 of 8 cases: system calls (222x), pipes (40x)": `system calls`.
    fn topic(&self) -> &'static str {
        self.name()
    }
    /// One line: what it measures.
    fn summary(&self) -> &'static str;
    /// The seed study or reference tool whose method it reproduces.
    fn reproduces(&self) -> &'static str;
    /// The cases of a suite.
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec>;
    /// Gets one case ready (allocate, calibrate); may refuse with
    /// [`BenchError::Unsupported`].
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError>;

    /// The most a case holds at once in its `--dir` (bytes): what it
    /// checks free space for before writing, and what `list` says each
    /// suite needs. 0 for benches that write nothing.
    fn disk_bytes(&self, _case: &CaseSpec) -> u64 {
        0
    }

    /// What a case keeps in its `--dir` for its later rounds (bytes, part
    /// of [`Bench::disk_bytes`]), held until the run ends: a fixture
    /// made before timing and shared by the rounds
    /// ([`crate::bench::io::Target::fixture`]). 0 for most.
    fn kept_bytes(&self, _case: &CaseSpec) -> u64 {
        0
    }

    /// The most memory a case holds at once (bytes), where it is large
    /// enough to matter: what it checks is available before it allocates
    /// ([`Context::require_memory`]), and what decides whether two
    /// environments' workers may hold it at once, to alternate at the
    /// repetition. 0 for benches whose memory is small.
    fn memory_bytes(&self, _case: &CaseSpec) -> u64 {
        0
    }

    /// Whether its cases work in their `--dir` itself rather than in a
    /// scratch directory of their own (a person's command): the run then
    /// keeps no other case's fixtures there, which the case would see.
    fn in_place(&self) -> bool {
        false
    }

    /// Whether a repetition of `case` works on one CPU at a time: in the
    /// worker's measuring thread, or in one thread it starts and waits for,
    /// with no process of its own and no thread beside it. Environments
    /// that take turns at the repetition on one kernel then keep such a
    /// case on the CPU its round's first repetition on that kernel ended
    /// on ([`affinity::RoundCpu`], moving the measuring thread alone: a case
    /// whose work runs on a thread built in `prepare`, as cpu.lu's pool,
    /// says false). On a 2-vCPU VM the two CPUs' speeds move apart within
    /// a second (docs/method.md). False, the default, leaves the case
    /// where the scheduler puts it: a case that starts processes or
    /// threads (fork, a pipe's two ends, a person's command, which may run
    /// `make -j`) measures how they spread over the CPUs.
    fn one_cpu(&self, _case: &CaseSpec) -> bool {
        false
    }

    /// Whether warm-up repetitions help. A bench whose repetition warms up
    /// by itself (STREAM's untimed first touch and discarded first
    /// iteration) says no, and the runner skips them.
    fn needs_warmup(&self) -> bool {
        true
    }

    /// Repetitions a round measures back to back, budget allowing, before
    /// it may stop because its interval is narrow enough: 0 where the
    /// suite's share of repetitions per round is enough. A person's
    /// command reaches its steady state (git's index, the dentry and
    /// attribute caches) only after some runs, and the 2 to 4 runs a quick
    /// round would give it between other cases read `git status` 20 % to
    /// 30 % slower than hyperfine's runs back to back (docs/method.md,
    /// "A person's command against hyperfine"). Such a bench also keeps
    /// its warm-up in every round, however long its runs
    /// ([`crate::engine::schedule`]'s round policy).
    fn steady_reps(&self) -> u32 {
        0
    }

    /// Figures derived from several finished cases of this bench (speed-up,
    /// scalability), recomputed whenever the result file is saved.
    fn derive(&self, _cases: &[&crate::results::CaseResult]) -> Vec<crate::results::Derived> {
        Vec::new()
    }

    /// The charts and tables this bench asks the report for.
    fn views(&self) -> Vec<crate::view::View> {
        Vec::new()
    }

    /// The operations this bench's metrics price for the attribution of a
    /// workload's difference ([`crate::results::price`]).
    fn prices(&self) -> &'static [crate::results::price::Price] {
        &[]
    }

    /// The reference tools its cases are held to (`envbench fidelity`),
    /// each with its band.
    fn references(&self) -> Vec<reference::Reference> {
        Vec::new()
    }
}

/// A secondary metric's value when this repetition could not read it (a
/// memory figure where `/proc` hides it): the metric is then unknown for
/// the round, and the trial's failed assumption says why. Never the
/// headline (first) metric: a time never depends on a memory figure.
pub const UNKNOWN: f64 = f64::NAN;

/// Iterations a calibrated loop starts from, and uses under the fake clock.
const CALIBRATION_START: u64 = 64;
/// An interval at least this long is long enough to extrapolate from.
const CALIBRATION_RELIABLE: std::time::Duration = std::time::Duration::from_millis(2);
/// Never calibrate past this many iterations.
const CALIBRATION_CAP: u64 = 1 << 34;

/// Finds how many iterations of `work` make one repetition last about
/// `ctx.reps.rep_target`, by growing the count until an interval is long
/// enough to extrapolate from. Under the fake clock the time is synthetic,
/// so a fixed small count is used instead.
///
/// # Errors
/// Whatever `work` returns.
pub(crate) fn calibrate(
    ctx: &Context,
    work: impl FnMut(u64) -> Result<(), BenchError>,
) -> Result<u64, BenchError> {
    calibrate_from(ctx, CALIBRATION_START, work)
}

/// [`calibrate`] starting from `start` iterations, for work whose single
/// iteration is already long (a process spawn, a shell script).
///
/// # Errors
/// Whatever `work` returns.
pub(crate) fn calibrate_from(
    ctx: &Context,
    start: u64,
    mut work: impl FnMut(u64) -> Result<(), BenchError>,
) -> Result<u64, BenchError> {
    if ctx.clock.is_fake() {
        work(start)?;
        return Ok(start);
    }
    // a clock read must stay under 1 % of a repetition, with a margin
    let target = ctx
        .reps
        .rep_target()
        .max(ctx.clock.read_overhead() * 200)
        .as_secs_f64();
    let mut n = start.max(1);
    loop {
        let t0 = ctx.clock.now();
        work(n)?;
        let elapsed = ctx.clock.now().saturating_sub(t0);
        if elapsed >= CALIBRATION_RELIABLE || n >= CALIBRATION_CAP {
            let scaled = n as f64 * target / elapsed.as_secs_f64().max(1e-9);
            return Ok((scaled as u64).clamp(1, CALIBRATION_CAP));
        }
        n = n.saturating_mul(8);
    }
}

/// Every bench's topic in a few words, by id (`os.syscall` → `system calls`).
pub fn topics() -> std::collections::BTreeMap<String, String> {
    ALL.iter()
        .map(|b| (b.id().to_string(), b.topic().to_string()))
        .collect()
}

/// Every bench's prices, in the order of [`ALL`].
pub fn prices() -> &'static [crate::results::price::BenchPrice] {
    static PRICES: std::sync::LazyLock<Vec<crate::results::price::BenchPrice>> =
        std::sync::LazyLock::new(|| {
            ALL.iter()
                .flat_map(|b| {
                    b.prices()
                        .iter()
                        .map(move |&price| crate::results::price::BenchPrice {
                            bench: b.id(),
                            price,
                        })
                })
                .collect()
        });
    &PRICES
}

/// Every bench's views, in the order of [`ALL`].
pub fn views() -> Vec<crate::view::BenchView> {
    ALL.iter()
        .flat_map(|b| {
            b.views()
                .into_iter()
                .map(move |view| crate::view::BenchView {
                    bench: b.id().into(),
                    view,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn plan(suite: Suite) -> Plan {
        TestEnv::plan(suite, 2)
    }

    /// The names in `dir`, sorted.
    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    /// The directories below `under` this process holds open, removed
    /// ones too (their links end in " (deleted)", which is cut off).
    fn held_under(under: &std::path::Path) -> Vec<std::path::PathBuf> {
        let under = std::fs::canonicalize(under).unwrap();
        let mut out: Vec<std::path::PathBuf> = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| {
                let fd = e.ok()?.path();
                // the link followed: the open directory itself, removed or not
                if !std::fs::metadata(&fd).ok()?.is_dir() {
                    return None;
                }
                let link = std::fs::read_link(&fd).ok()?;
                let link = link.to_string_lossy();
                Some(std::path::PathBuf::from(
                    link.strip_suffix(" (deleted)").unwrap_or(&link),
                ))
            })
            .filter(|p| p.starts_with(&under))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_rounds_of_a_case_that_keeps_a_fixture_share_it_and_leave_nothing_else() {
        use std::os::unix::fs::MetadataExt as _;
        let mut keeping = Vec::new();
        for bench in ALL.iter() {
            let Some(case) = bench.cases(&plan(Suite::Quick)).into_iter().next() else {
                continue;
            };
            if bench.kept_bytes(&case) == 0 {
                continue;
            }
            keeping.push(bench.id());
            let env = TestEnv::real(0.01);
            let kept = [NamedDir {
                name: "dir1".into(),
                path: env.dirs[0].path.join("kept"),
            }];
            std::fs::create_dir(&kept[0].path).unwrap();
            let ctx = Context {
                kept: &kept,
                ..env.ctx()
            };
            let mut fixtures = Vec::new();
            for round in 0..2 {
                // each round a trial of its own, as each is a fresh process
                let mut trial = bench.prepare(&case, &ctx).unwrap();
                trial.once(&env.clock).unwrap();
                // while it lives, its scratch directory and its fixture are held open
                let scratch: Vec<_> = names(&env.dirs[0].path)
                    .into_iter()
                    .filter(|n| n != "kept")
                    .map(|n| env.dirs[0].path.join(n))
                    .collect();
                let fixture: Vec<_> = names(&kept[0].path)
                    .into_iter()
                    .map(|n| kept[0].path.join(n))
                    .collect();
                let mut both: Vec<_> = [fixture, scratch]
                    .concat()
                    .iter()
                    .map(|p| std::fs::canonicalize(p).unwrap())
                    .collect();
                both.sort();
                assert_eq!(
                    held_under(&env.dirs[0].path),
                    both,
                    "{} {round}",
                    bench.id()
                );
                drop(trial);
                assert!(held_under(&env.dirs[0].path).is_empty(), "{}", bench.id());
                // its scratch directory is gone, its fixture kept whole
                assert_eq!(names(&env.dirs[0].path), ["kept"], "{} {round}", bench.id());
                let held = names(&kept[0].path);
                assert_eq!(held.len(), 1, "{}: {held:?}", bench.id());
                let path = kept[0].path.join(&held[0]);
                fixtures.push((path.clone(), std::fs::metadata(&path).unwrap().ino()));
            }
            assert_eq!(fixtures[0], fixtures[1], "{}: made once", bench.id());
            // without a kept directory, a round leaves nothing
            let mut trial = bench.prepare(&case, &env.ctx()).unwrap();
            trial.once(&env.clock).unwrap();
            drop(trial);
            assert_eq!(names(&env.dirs[0].path), ["kept"], "{}", bench.id());
        }
        assert_eq!(
            keeping,
            ["io.random", "app.status", "app.search", "app.imports"]
        );
    }

    #[test]
    fn each_family_lists_the_benches_that_name_it_and_every_case_its_bench() {
        for family in FAMILIES {
            for bench in family.benches() {
                assert_eq!(bench.family(), family.name(), "{}", bench.id());
                for suite in [Suite::Quick, Suite::Standard, Suite::Full] {
                    for case in bench.cases(&plan(suite)) {
                        assert_eq!(case.bench, bench.id());
                    }
                }
            }
        }
        let listed: usize = FAMILIES.iter().map(|f| f.benches().len()).sum();
        assert_eq!(listed, ALL.len(), "every bench in one family's list");
    }

    #[test]
    fn ids_are_unique_and_family_dot_snake_case() {
        let ids: Vec<&str> = ALL.iter().map(|b| b.id()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        // every id written in results::ids is one bench's, and every bench's is there
        let mut written = crate::results::ids::ALL.to_vec();
        written.sort();
        assert_eq!(written, sorted);
        for id in ids {
            let (fam, name) = id.split_once('.').unwrap();
            assert!(["cpu", "mem", "io", "os", "net", "app", "cmd"].contains(&fam));
            assert!(
                name.bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_'),
                "{id}"
            );
        }
    }

    #[test]
    fn every_case_runs_once_under_the_fake_clock() {
        // a person's command is planned only where one is given
        let command = serde_json::json!([{"name": "t", "text": "true", "argv": ["true"]}]);
        let mut env = TestEnv::fake();
        env.options.0.insert(cmd::OPTION.into(), command.clone());
        let (clock, ctx) = (&env.clock, env.ctx());
        let mut quick = plan(Suite::Quick);
        quick.options.0.insert(cmd::OPTION.into(), command);
        for bench in ALL.iter() {
            // app.cc is left out of quick (a compiler's processes cost
            // seconds under gVisor): its standard case runs instead
            let mut cases = bench.cases(&quick);
            if bench.id() == crate::results::ids::APP_CC {
                assert!(cases.is_empty());
                cases = bench.cases(&plan(Suite::Standard));
            }
            assert!(!cases.is_empty(), "{} has no quick case", bench.id());
            let mut keys: Vec<String> = cases.iter().map(CaseSpec::key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(
                keys.len(),
                cases.len(),
                "case keys of {} repeat",
                bench.id()
            );
            for case in cases {
                match bench.prepare(&case, &ctx) {
                    Ok(mut t) => {
                        let v = t.once(clock).unwrap();
                        if let Err(e) = crate::engine::runner::check_values(&case, &v) {
                            panic!("{}: {e}: {v:?}", case.key());
                        }
                    }
                    Err(BenchError::Unsupported(_)) => {}
                    Err(e) => panic!("{}: {e}", case.key()),
                }
            }
        }
    }

    #[test]
    fn case_keys_do_not_depend_on_the_reported_cache_or_memory() {
        // the same 2-CPU machine as a host (32 MiB L3) and as a guest that
        // reports a 260 MiB L3 and another amount of memory
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/probe/firecracker");
        let host = crate::probe::probe_fixture(&dir);
        let mut guest = host.clone();
        for c in &mut guest.cpu.caches {
            c.size_bytes = 260 << 20;
        }
        guest.memory.total_bytes = guest.memory.total_bytes.map(|b| b / 3);
        guest.memory.available_bytes = guest.memory.available_bytes.map(|b| b / 3);
        assert_ne!(
            host.cpu.last_level_cache_bytes(),
            guest.cpu.last_level_cache_bytes()
        );
        for suite in Suite::ALL {
            let keys = |fp: &crate::probe::Fingerprint| -> Vec<String> {
                let plan = Plan::from_fingerprint(
                    suite,
                    fp,
                    None,
                    NamedDir::by_position([PathBuf::from(".")]),
                );
                ALL.iter()
                    .flat_map(|b| b.cases(&plan))
                    .map(|c| c.key())
                    .collect()
            };
            assert_eq!(keys(&host), keys(&guest), "{suite:?}");
        }
    }

    #[test]
    fn with_the_same_thread_list_fewer_cpus_give_the_same_case_keys() {
        // a guest limited to one CPU, run with --threads 1,2 as its host is
        // (what bench/pairs.sh does with taskset): every case matches
        for suite in Suite::ALL {
            let keys = |cpus: usize| -> Vec<String> {
                let mut p = plan(suite);
                p.cpus = cpus;
                p.threads = Some(vec![1, 2]);
                ALL.iter()
                    .flat_map(|b| b.cases(&p))
                    .map(|c| c.key())
                    .collect()
            };
            assert_eq!(keys(1), keys(2), "{suite:?}");
            assert_eq!(keys(2), keys(16), "{suite:?}");
        }
    }

    #[test]
    fn thread_counts_are_powers_of_two_plus_the_cpu_count() {
        let mut p = plan(Suite::Quick);
        p.cpus = 6;
        assert_eq!(p.thread_counts(), vec![1, 2, 4, 6]);
        p.cpus = 8;
        assert_eq!(p.thread_counts(), vec![1, 2, 4, 8]);
        p.threads = Some(vec![3]);
        assert_eq!(p.thread_counts(), vec![3]);
    }

    #[test]
    fn case_key_lists_params_in_order() {
        let mut params = BTreeMap::new();
        params.insert("threads".to_string(), Value::from(2));
        params.insert("call".to_string(), Value::from("mix"));
        let c = CaseSpec {
            bench: "os.syscall".into(),
            params,
            metrics: vec![],
        };
        assert_eq!(c.key(), "os.syscall[call=mix,threads=2]");
    }
}
