//! Case rounds measured in fresh processes of envbench (pyperf's worker
//! processes): the run re-executes its own binary with [`WORKER_ARG`],
//! hands it one case round as JSON on stdin ([`Job`]), and reads back a
//! line per repetition and the round's outcome on stdout ([`Line`]).
//!
//! Why: a process carries luck of its own into every figure it measures
//! (where its memory and code landed, which CPU it started on, what the
//! allocator and the page cache gave it); a run measured in one process
//! keeps that luck in all its rounds, so it shows up as a difference
//! between runs. With each round in a fresh process the luck is sampled
//! round by round inside one run, and one `envbench run` measures how much
//! processes differ.
//!
//! In an interleaved run (`run --in NAME=PREFIX`) a worker starts inside its
//! environment, from that environment's resident launcher
//! ([`super::resident`]); the run's side of every round, here or there, is
//! [`super::talk`].
//!
//! Safety: a worker dies with envbench (`PR_SET_PDEATHSIG`), ignores
//! SIGINT (a terminal's Ctrl-C reaches the whole group; the run passes its
//! first signal on as SIGTERM, which winds the round down), and exits at
//! once, cleaning up, on a second SIGTERM. The run registers each worker
//! with `cleanup`, so a second Ctrl-C removes the scratch directories a
//! killed worker left.

use super::launch::limit_hint;
use super::runner::{self, CaseRun};
use crate::bench::{Context, NamedDir, Plan, ALL};
use crate::config::{FamilyOptions, RepPolicy, Suite};
use crate::measure::clock::Clock;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a round may take after its worker is ready: at least
/// [`ROUND_FLOOR`] (preparing a case, its minimum repetitions under an
/// emulator), else ten times the round's budget.
pub const ROUND_FLOOR: Duration = Duration::from_secs(120);

/// Ten times `secs`, at least `floor`.
pub(super) fn ten_times(secs: f64, floor: Duration) -> Duration {
    Duration::try_from_secs_f64(10.0 * secs)
        .unwrap_or(Duration::MAX)
        .max(floor)
}

/// How long before its round's deadline a program the case started is
/// stopped ([`crate::bench::Context::deadline`]), so that the round ends
/// with the reason, in its worker's words, before the run stops the
/// worker.
const PROGRAM_MARGIN: Duration = Duration::from_secs(10);

/// The deadline of the programs a round of `budget_secs` starts, counted
/// from now (the round's start): its deadline less [`PROGRAM_MARGIN`].
pub(crate) fn program_deadline(budget_secs: f64) -> Instant {
    let round = ten_times(budget_secs, ROUND_FLOOR).saturating_sub(PROGRAM_MARGIN);
    let now = Instant::now();
    now.checked_add(round)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

/// The hidden argument that makes envbench a worker.
pub const WORKER_ARG: &str = "__case";

/// The hidden argument that makes envbench print the CPU as CPUID
/// describes it to this process, as JSON.
pub const CPUID_ARG: &str = "__cpuid";

/// How long the check of where workers land may take: one start of this
/// binary (through an emulator, a fraction of a second).
const CPUID_WITHIN: Duration = Duration::from_secs(20);

/// Fake-clock step of a worker under `--fake-clock` (the run's own).
const FAKE_STEP: Duration = Duration::from_millis(10);

/// One case round for a worker: how to plan the case again (so that its
/// metrics are the bench's own) and how to measure it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// The case's key.
    pub key: String,
    /// The suite being run.
    pub suite: Suite,
    /// CPUs usable by the run.
    pub cpus: usize,
    /// `--threads`.
    pub threads: Option<Vec<usize>>,
    /// The target directories under their names.
    pub dirs: Vec<NamedDir>,
    /// The families' options.
    pub options: FamilyOptions,
    /// This round's repetitions and budget.
    pub policy: RepPolicy,
    /// Seed of the benchmark inputs.
    pub seed: u64,
    /// Memory a case may use, bytes.
    pub mem_available_bytes: Option<u64>,
    /// `--fake-clock`.
    pub fake_clock: bool,
    /// The PID the run knows the worker by (the process it started: the
    /// worker, or the prefix that starts it), which names the worker's
    /// scratch directories ([`crate::cleanup::set_scratch_owner`]); absent
    /// from a run that predates it: the worker's own PID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch_pid: Option<u32>,
    /// Whether the worker waits, after its `Ready` line, for a `go` line
    /// on stdin before it measures: a resident launcher's run lets the
    /// environment's own processes settle first ([`super::resident`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wait_go: bool,
    /// The CPU the environment's fingerprint saw through CPUID, which the
    /// worker checks it runs on before it measures: a worker started
    /// outside an emulator its run is in would measure the host under the
    /// environment's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuid: Option<crate::probe::emulation::CpuId>,
    /// Where the case keeps its fixtures for later rounds, per `--dir`
    /// ([`crate::bench::Context::kept`]); empty: none are kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<NamedDir>,
    /// Whether this is the case's first round in this environment: a
    /// case that does something once per environment (a command's count)
    /// does it then ([`crate::bench::Context::first_round`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_round: bool,
    /// The `--dir`s as the environment's fingerprint saw them, which the
    /// worker checks its round runs on ([`super::dirs`]); empty: none are
    /// checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs_seen: Vec<super::dirs::DirSeen>,
    /// Whether the round takes turns with other environments' rounds
    /// (alternated at the repetition): once its case is prepared, and
    /// before each timed repetition, the worker says [`Line::Waiting`] and
    /// measures on only when it reads [`NEXT_LINE`] on stdin.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub turns: bool,
}

/// What the run writes a worker that waits ([`Job::wait_go`]) when it may
/// measure.
pub const GO_LINE: &str = "go";

/// What the run writes a worker that takes turns ([`Job::turns`]) when its
/// turn has come: the word alone, or followed by the round's CPU
/// ([`next_line`]).
pub const NEXT_LINE: &str = "next";

/// The line that gives a worker its turn, with the CPU the round's first
/// repetition ended on once one has: `next` or `next 1`.
pub fn next_line(cpu: Option<u32>) -> String {
    match cpu {
        Some(c) => format!("{NEXT_LINE} {c}"),
        None => NEXT_LINE.to_string(),
    }
}

/// A turn given by `line` ([`next_line`]): Some, with the round's CPU if
/// it names one; None for any other line.
fn turn_of(line: &str) -> Option<Option<u32>> {
    let mut words = line.split_whitespace();
    (words.next() == Some(NEXT_LINE)).then(|| words.next().and_then(|c| c.parse().ok()))
}

/// What a worker writes on stdout, one JSON object per line: `Ready` once
/// it has its job, a `Rep` per repetition, then `Done`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    /// The worker read its job and starts the round.
    Ready {
        /// Its PID as its own environment sees it (a sandbox's or a
        /// container's PID namespace may number it anew).
        pid: u32,
        /// The boot id of the kernel it runs on
        /// (`/proc/sys/kernel/random/boot_id`): environments on one kernel
        /// share its CPU numbers, and only they share a round's CPU
        /// ([`super::talk::turns`]). Absent where it cannot be read
        /// (gVisor has none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kernel: Option<String>,
    },
    /// The worker waits for its turn ([`Job::turns`]): its case is
    /// prepared, or its last repetition done, and it measures on when it
    /// reads [`NEXT_LINE`].
    Waiting,
    /// A repetition finished.
    Rep {
        /// Repetitions measured so far.
        reps_done: u32,
        /// Seconds since the case round started.
        elapsed_secs: f64,
        /// The CPU the measuring thread was on as it ended; absent where
        /// the kernel cannot say.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<u32>,
    },
    /// The round's outcome; its repetition times count from the round's
    /// start in the worker.
    Done(Box<CaseRun>),
}

/// The worker's side: reads a [`Job`] on stdin, measures it, writes
/// [`Line`]s on stdout. Exit code 0 once the outcome is written.
pub(crate) fn serve() -> ExitCode {
    let mut text = String::new();
    if std::io::stdin().lock().read_line(&mut text).is_err() {
        return ExitCode::from(2);
    }
    let Ok(job) = serde_json::from_str::<Job>(&text) else {
        eprintln!("envbench: {WORKER_ARG} reads one job as JSON on stdin");
        return ExitCode::from(2);
    };
    if let Some(pid) = job.scratch_pid {
        crate::cleanup::set_scratch_owner(pid);
    }
    crate::cleanup::quiet_exit();
    let interrupted = Arc::new(AtomicBool::new(false));
    // SAFETY: ignoring SIGINT has no preconditions; the run passes its
    // first signal on as SIGTERM. PR_SET_PDEATHSIG only sets a flag: a
    // prefix's process between the run and this worker (unshare --fork)
    // that dies takes the round down with it.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    }
    let ready = Line::Ready {
        pid: std::process::id(),
        kernel: std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty()),
    };
    let mut out = std::io::stdout().lock();
    let told = serde_json::to_string(&ready).expect("invariant: lines serialise");
    if writeln!(out, "{told}").and_then(|()| out.flush()).is_err() {
        return ExitCode::from(1);
    }
    drop(out);
    if job.wait_go {
        let mut go = String::new();
        let heard = std::io::stdin().lock().read_line(&mut go);
        if !matches!(heard, Ok(n) if n > 0 && go.trim() == GO_LINE) {
            // its stdin closed first: the run is gone or interrupted
            interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let turns = watch_stdin(Arc::clone(&interrupted));
    let mut run = match crate::cleanup::watch_signals(Arc::clone(&interrupted)) {
        Ok(()) => match elsewhere(&job) {
            Some(why) => runner::failed_run(Clock::real().wall_secs(), why),
            None => measured_or_why_not(&job, &interrupted, job.turns.then_some(&turns)),
        },
        // the run hears why rather than "ended without a result"
        Err(e) => runner::failed_run(
            Clock::real().wall_secs(),
            format!(
                "the worker process cannot start its signal-watching thread: {e}{}",
                limit_hint(&e)
            ),
        ),
    };
    // what its round could not remove, for the run to name
    run.left = crate::cleanup::leftover::capped(crate::cleanup::leftover::take());
    let line =
        serde_json::to_string(&Line::Done(Box::new(run))).expect("invariant: case runs serialise");
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{line}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

/// `envbench __cpuid`: prints this process's [`CpuId`] as JSON.
///
/// [`CpuId`]: crate::probe::emulation::CpuId
pub(crate) fn serve_cpuid() -> ExitCode {
    let cpuid = crate::probe::emulation::CpuId::here();
    let text = serde_json::to_string(&cpuid).expect("invariant: CPUID answers serialise");
    match writeln!(std::io::stdout(), "{text}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

/// Checks, before a run measures, that this binary started again (as its
/// workers are, [`crate::probe::emulation::own_command`]) sees the CPU
/// `expected` that the fingerprint saw through CPUID.
///
/// # Errors
/// Why not: the CPUs differ (an emulator the workers would escape), or the
/// binary cannot be started or answers nothing.
pub(crate) fn check_workers_land(expected: &crate::probe::emulation::CpuId) -> Result<(), String> {
    let own = crate::probe::emulation::own_command()?;
    let mut cmd = std::process::Command::new(&own[0]);
    cmd.args(&own[1..])
        .arg(CPUID_ARG)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    // it dies with envbench, and is killed and reaped past its deadline
    crate::cleanup::wind_down_with_envbench(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot start envbench's binary again ({e}){}",
            limit_hint(&e)
        )
    })?;
    let started = std::time::Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if started.elapsed() > CPUID_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "envbench's binary, started again to check where its workers run, gave no \
                 answer within {} s and was stopped",
                CPUID_WITHIN.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut stdout = Vec::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = std::io::Read::read_to_end(&mut o, &mut stdout);
    }
    let _ = child.wait();
    let seen: Option<crate::probe::emulation::CpuId> =
        serde_json::from_slice(&stdout).map_err(|_| {
            "envbench's binary, started again, did not say which CPU it sees".to_string()
        })?;
    match seen.and_then(|s| s.differs_from(expected)) {
        None => Ok(()),
        Some(why) => Err(format!(
            "envbench's workers would run elsewhere than where this environment was \
             fingerprinted ({why}), and measure another CPU under its name"
        )),
    }
}

/// Why this worker is not where its environment's fingerprint was taken,
/// if it is not (its CPUID answers differ): it then measures nothing.
fn elsewhere(job: &Job) -> Option<String> {
    let want = job.cpuid.as_ref()?;
    let why = crate::probe::emulation::CpuId::here()?.differs_from(want)?;
    Some(format!(
        "the worker runs elsewhere than where the environment was fingerprinted ({why}): \
         it would measure another CPU under this environment's name"
    ))
}

/// The turns a worker is given ([`watch_stdin`]), each with the round's
/// CPU once it has one.
type Turns = std::sync::mpsc::Receiver<Option<u32>>;

/// Winds the round down (sets `interrupted`) when stdin closes: the run
/// keeps it open while it waits for this worker, so its end means the run
/// is gone or interrupted, through any prefix that forwards stdin, whether
/// or not the prefix passes signals on. Each [`next_line`] it reads is a
/// turn given ([`Job::turns`]), sent with its CPU on the channel returned;
/// the channel closes with stdin.
fn watch_stdin(interrupted: Arc<AtomicBool>) -> Turns {
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("envbench-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut line = String::new();
            while matches!(stdin.read_line(&mut line), Ok(n) if n > 0) {
                if let Some(cpu) = turn_of(&line) {
                    let _ = tx.send(cpu);
                }
                line.clear();
            }
            interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    rx
}

/// [`measure_here`], or a failed run saying why when the case panicked: a
/// library that cannot allocate a matrix under a memory limit (faer
/// unwraps its AllocError) then fails that case with the reason instead of
/// "ended without a result (exit status: 101)" and a backtrace.
fn measured_or_why_not(job: &Job, interrupted: &Arc<AtomicBool>, turns: Option<&Turns>) -> CaseRun {
    let wall = Clock::real().wall_secs();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        measure_here(job, interrupted, turns)
    }));
    let _ = std::panic::take_hook();
    caught.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        let hint = if what.contains("AllocError") || what.contains("memory allocation") {
            ALLOC_HINT
        } else {
            ""
        };
        runner::failed_run(wall, format!("the case stopped on an error: {what}{hint}"))
    })
}

/// Measures `job` in this process, writing a [`Line::Rep`] per repetition,
/// and taking its turns from `turns` where it has them.
fn measure_here(job: &Job, interrupted: &AtomicBool, turns: Option<&Turns>) -> CaseRun {
    let clock = if job.fake_clock {
        Clock::fake(FAKE_STEP)
    } else {
        Clock::real()
    };
    let Some((bench, case)) = planned(job) else {
        return runner::failed_run(
            clock.wall_secs(),
            format!("the worker found no case {} in its plan", job.key),
        );
    };
    let ctx = Context {
        clock: &clock,
        reps: &job.policy,
        seed: job.seed,
        interrupted,
        deadline: program_deadline(job.policy.budget_secs),
        first_round: job.first_round,
        options: &job.options,
        mem_available_bytes: job.mem_available_bytes,
        dirs: &job.dirs,
        cpus: job.cpus,
        kept: &job.kept,
    };
    // a closed pipe means the run is gone; the worker dies with it
    let say = |line: &Line| {
        let mut out = std::io::stdout().lock();
        let text = serde_json::to_string(line).unwrap_or_default();
        let _ = writeln!(out, "{text}").and_then(|()| out.flush());
    };
    // a case on one CPU at a time moves to the round's CPU, where its
    // environment lets it
    let mut keep = bench
        .one_cpu(&case)
        .then(crate::bench::affinity::RoundCpu::new);
    // the turn comes; or stdin closed, or a signal came: wind down
    let mut wait_turn = |rx: &Turns| {
        say(&Line::Waiting);
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(cpu) => {
                    if let (Some(keep), Some(cpu)) = (keep.as_mut(), cpu) {
                        keep.move_to(cpu);
                    }
                    return true;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return false,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
                        return false;
                    }
                }
            }
        }
    };
    let mut turn = turns.map(|rx| move || wait_turn(rx));
    let turn = turn.as_mut().map(|t| t as &mut dyn FnMut() -> bool);
    // the repetitions' ends count from where the runner's do, after the
    // check of the `--dir`s, as the Rep lines' elapsed times do
    let mut start = None;
    let mut run = super::dirs::on_fingerprinted(&job.dirs_seen, &job.dirs, &case, || {
        start = Some(clock.now());
        runner::run_case_in_turns(
            bench,
            &case,
            &ctx,
            &mut |p| {
                say(&Line::Rep {
                    reps_done: p.reps_done,
                    elapsed_secs: p.elapsed.as_secs_f64(),
                    cpu: crate::validity::telemetry::current_cpu(),
                })
            },
            turn,
        )
    });
    if let Some(start) = start {
        for t in &mut run.rep_ends {
            *t = t.saturating_sub(start);
        }
    }
    run
}

/// The case of `job`, planned again from its bench (so that its metrics
/// are the bench's own); None when no bench plans that key.
pub(super) fn planned(
    job: &Job,
) -> Option<(&'static dyn crate::bench::Bench, crate::bench::CaseSpec)> {
    let plan = Plan {
        suite: job.suite,
        cpus: job.cpus,
        threads: job.threads.clone(),
        dirs: job.dirs.clone(),
        options: job.options.clone(),
    };
    let bench_id = job.key.split('[').next().unwrap_or_default();
    let bench = *ALL.iter().find(|b| b.id() == bench_id)?;
    let case = bench
        .cases(&plan)
        .into_iter()
        .find(|c| c.key() == job.key)?;
    Some((bench, case))
}

/// What a failed allocation most likely met, for a panic that names one
/// and for a worker killed by SIGABRT (Rust aborts when one fails).
pub(super) const ALLOC_HINT: &str =
    ": an allocation failed? check the memory limit (ulimit -v) and free memory";

/// A job for tests: one round of cpu.int on the quick suite, on the fake
/// clock, nothing else asked.
#[cfg(test)]
pub(crate) fn test_job() -> Job {
    Job {
        key: "cpu.int".into(),
        suite: Suite::Quick,
        cpus: 1,
        threads: None,
        dirs: Vec::new(),
        options: FamilyOptions::default(),
        policy: RepPolicy::for_suite(Suite::Quick),
        seed: 1,
        mem_available_bytes: None,
        fake_clock: true,
        scratch_pid: None,
        wait_go: false,
        cpuid: None,
        kept: Vec::new(),
        first_round: false,
        dirs_seen: Vec::new(),
        turns: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(cpuid: Option<crate::probe::emulation::CpuId>) -> Job {
        Job {
            cpuid,
            ..test_job()
        }
    }

    #[test]
    fn a_turn_names_the_round_s_cpu_once_it_has_one() {
        assert_eq!(next_line(None), "next");
        assert_eq!(next_line(Some(1)), "next 1");
        for cpu in [None, Some(0), Some(63)] {
            assert_eq!(turn_of(&format!("{}\n", next_line(cpu))), Some(cpu));
        }
        // a word after it that is no CPU is a turn on no CPU in particular
        assert_eq!(turn_of("next x"), Some(None));
        assert_eq!(turn_of("go"), None);
        assert_eq!(turn_of("nextx 1"), None);
        // the launcher's request says the same
        let asked = serde_json::to_string(&super::super::resident::Request::Next { cpu: Some(1) });
        assert_eq!(asked.unwrap(), r#"{"next":{"cpu":1}}"#);
    }

    #[test]
    fn a_worker_on_another_cpu_than_the_fingerprints_measures_nothing() {
        let here = crate::probe::emulation::CpuId::here();
        assert_eq!(elsewhere(&job(None)), None);
        assert_eq!(elsewhere(&job(here.clone())), None);
        if here.is_some() {
            let emulated = crate::probe::emulation::CpuId {
                vendor: "AuthenticAMD".into(),
                brand: "QEMU TCG CPU version 2.5+".into(),
                hypervisor: Some("TCGTCGTCGTCG".into()),
            };
            let why = elsewhere(&job(Some(emulated))).unwrap();
            assert!(
                why.contains("elsewhere") && why.contains("QEMU TCG CPU"),
                "{why}"
            );
        }
    }
}
