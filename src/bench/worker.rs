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
//! In an interleaved run (`run --in NAME=PREFIX`) a worker starts through
//! its environment's prefix ([`super::launch`]); the process envbench
//! started is then the prefix's (`runsc`, `ssh`, `unshare`), and it is that
//! process that dies with envbench, gets the signals and is registered by
//! PID, its PID naming the worker's scratch directories (the worker's own
//! may be another namespace's).
//!
//! Safety: a worker dies with envbench (`PR_SET_PDEATHSIG`), ignores
//! SIGINT (a terminal's Ctrl-C reaches the whole group; the run passes its
//! first signal on as SIGTERM, which winds the round down), and exits at
//! once, cleaning up, on a second SIGTERM. The run registers each worker
//! with `cleanup`, so a second Ctrl-C removes the scratch directories a
//! killed worker left.

use super::launch::{limit_hint, Launcher};
use super::runner::{self, CaseRun, Progress};
use super::{Context, NamedDir, Plan, ALL};
use crate::config::{FamilyOptions, RepPolicy, Suite};
use crate::measure::clock::Clock;
use crate::results::CaseStatus;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The hidden argument that makes envbench a worker.
pub const WORKER_ARG: &str = "__case";

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
}

/// What a worker writes on stdout, one JSON object per line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    /// A repetition finished.
    Rep {
        /// Repetitions measured so far.
        reps_done: u32,
        /// Seconds since the case round started.
        elapsed_secs: f64,
    },
    /// The round's outcome; its repetition times count from the round's
    /// start in the worker.
    Done(Box<CaseRun>),
}

/// The worker's side: reads a [`Job`] on stdin, measures it, writes
/// [`Line`]s on stdout. Exit code 0 once the outcome is written.
pub fn serve() -> ExitCode {
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
    let interrupted = Arc::new(AtomicBool::new(false));
    // SAFETY: ignoring SIGINT has no preconditions; the run passes its
    // first signal on as SIGTERM.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let run = match crate::cleanup::watch_signals(Arc::clone(&interrupted)) {
        Ok(()) => measured_or_why_not(&job, &interrupted),
        // the run hears why rather than "ended without a result"
        Err(e) => runner::failed_run(
            Clock::real().wall_secs(),
            format!(
                "the worker process cannot start its signal-watching thread: {e}{}",
                limit_hint(&e)
            ),
        ),
    };
    let line =
        serde_json::to_string(&Line::Done(Box::new(run))).expect("invariant: case runs serialise");
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{line}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

/// [`measure_here`], or a failed run saying why when the case panicked: a
/// library that cannot allocate a matrix under a memory limit (faer
/// unwraps its AllocError) then fails that case with the reason instead of
/// "ended without a result (exit status: 101)" and a backtrace.
fn measured_or_why_not(job: &Job, interrupted: &Arc<AtomicBool>) -> CaseRun {
    let wall = Clock::real().wall_secs();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        measure_here(job, interrupted)
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

/// Measures `job` in this process, writing a [`Line::Rep`] per repetition.
fn measure_here(job: &Job, interrupted: &AtomicBool) -> CaseRun {
    let clock = if job.fake_clock {
        Clock::fake(FAKE_STEP)
    } else {
        Clock::real()
    };
    let plan = Plan {
        suite: job.suite,
        cpus: job.cpus,
        threads: job.threads.clone(),
        dirs: job.dirs.clone(),
        options: job.options.clone(),
    };
    let bench_id = job.key.split('[').next().unwrap_or_default();
    let found = ALL.iter().find(|b| b.id() == bench_id).and_then(|b| {
        let case = b.cases(&plan).into_iter().find(|c| c.key() == job.key)?;
        Some((*b, case))
    });
    let Some((bench, case)) = found else {
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
        mem_available_bytes: job.mem_available_bytes,
        dirs: &job.dirs,
        cpus: job.cpus,
    };
    let start = clock.now();
    let mut out = std::io::stdout();
    let mut run = runner::run_case(bench, &case, &ctx, &mut |p| {
        let line = Line::Rep {
            reps_done: p.reps_done,
            elapsed_secs: p.elapsed.as_secs_f64(),
        };
        // a closed pipe means the run is gone; the worker dies with it
        let _ = writeln!(out, "{}", serde_json::to_string(&line).unwrap_or_default());
    });
    for t in &mut run.rep_ends {
        *t = t.saturating_sub(start);
    }
    run
}

/// The run's side: measures `job` in a new worker process that `launcher`
/// starts (this binary, or envbench through an environment's prefix),
/// reporting each repetition to `on_progress`. Repetition times come back
/// on `clock`, counted from this call. A worker that cannot start, or ends
/// without an outcome, makes a failed (or, after a signal, interrupted)
/// round with the reason.
pub fn measure(
    job: &Job,
    launcher: &Launcher,
    clock: &Clock,
    interrupted: &AtomicBool,
    on_progress: &mut dyn FnMut(Progress),
) -> CaseRun {
    let start = clock.now();
    let wall = clock.wall_secs();
    let mut run = match spawn_and_read(job, launcher, on_progress) {
        Ok(run) => run,
        Err(why) => {
            let mut run = runner::failed_run(wall, why);
            if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
                run.status = CaseStatus::Interrupted;
            }
            run
        }
    };
    for t in &mut run.rep_ends {
        *t += start;
    }
    clock.catch_up(start + run.elapsed);
    run
}

/// Starts a worker through `launcher`, hands it `job`, and reads its lines
/// until its outcome. The process started (the worker, or its prefix) is
/// registered by PID for a second Ctrl-C, and names the worker's scratch
/// directories.
fn spawn_and_read(
    job: &Job,
    launcher: &Launcher,
    on_progress: &mut dyn FnMut(Progress),
) -> Result<CaseRun, String> {
    // through a prefix, a failure names the command tried
    let tried = if launcher.is_host() {
        String::new()
    } else {
        format!(" (`{}`)", super::launch::shown(&launcher.argv(WORKER_ARG)?))
    };
    let mut child = launcher.command(WORKER_ARG)?.spawn().map_err(|e| {
        format!(
            "cannot start a worker process{tried}: {e}{}",
            limit_hint(&e)
        )
    })?;
    let pid = child.id() as i32;
    crate::cleanup::adopt_worker(pid, NamedDir::paths(&job.dirs));
    let job = Job {
        scratch_pid: Some(child.id()),
        ..job.clone()
    };
    let outcome = talk(&mut child, &job, on_progress);
    let status = child.wait();
    crate::cleanup::release_worker(pid, outcome.is_some());
    crate::cleanup::reap_orphans();
    match (outcome, status) {
        (Some(run), _) => Ok(run),
        (None, Ok(s)) => Err(format!(
            "the worker process{tried} ended without a result ({s}){}",
            abort_hint(s)
        )),
        (None, Err(e)) => Err(format!("the worker process{tried} was lost: {e}")),
    }
}

/// What a failed allocation most likely met, for a panic that names one
/// and for a worker killed by SIGABRT (Rust aborts when one fails).
const ALLOC_HINT: &str =
    ": an allocation failed? check the memory limit (ulimit -v) and free memory";

/// What a worker killed by SIGABRT most likely met: Rust aborts when an
/// allocation fails, and a memory limit is the usual cause.
fn abort_hint(s: std::process::ExitStatus) -> &'static str {
    use std::os::unix::process::ExitStatusExt as _;
    if s.signal() == Some(libc::SIGABRT) {
        ALLOC_HINT
    } else {
        ""
    }
}

/// Writes `job` to the worker and reads its lines; None when it ends
/// without an outcome.
fn talk(
    child: &mut std::process::Child,
    job: &Job,
    on_progress: &mut dyn FnMut(Progress),
) -> Option<CaseRun> {
    let mut stdin = child.stdin.take()?;
    let text = serde_json::to_string(job).expect("invariant: jobs serialise");
    writeln!(stdin, "{text}").ok()?;
    drop(stdin);
    let stdout = child.stdout.take()?;
    for line in BufReader::new(stdout).lines() {
        match serde_json::from_str::<Line>(&line.ok()?).ok()? {
            Line::Rep {
                reps_done,
                elapsed_secs,
            } => on_progress(Progress {
                reps_done,
                elapsed: Duration::from_secs_f64(elapsed_secs.max(0.0)),
            }),
            Line::Done(run) => return Some(*run),
        }
    }
    None
}
