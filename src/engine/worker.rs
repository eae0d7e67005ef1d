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

use super::launch::{cut, limit_hint, Launcher};
use super::peer::{Heard, Peer, Stderr};
use super::runner::{self, CaseRun, Progress};
use crate::bench::{Context, NamedDir, Plan, ALL};
use crate::config::{FamilyOptions, RepPolicy, Suite};
use crate::measure::clock::Clock;
use crate::results::CaseStatus;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    },
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
    watch_stdin(Arc::clone(&interrupted));
    let ready = Line::Ready {
        pid: std::process::id(),
    };
    let mut out = std::io::stdout().lock();
    let told = serde_json::to_string(&ready).expect("invariant: lines serialise");
    if writeln!(out, "{told}").and_then(|()| out.flush()).is_err() {
        return ExitCode::from(1);
    }
    drop(out);
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

/// Winds the round down (sets `interrupted`) when stdin closes: the run
/// keeps it open while it waits for this worker, so its end means the run
/// is gone or interrupted, through any prefix that forwards stdin, whether
/// or not the prefix passes signals on.
fn watch_stdin(interrupted: Arc<AtomicBool>) {
    let _ = std::thread::Builder::new()
        .name("envbench-stdin".into())
        .spawn(move || {
            let mut sink = [0u8; 256];
            let mut stdin = std::io::stdin().lock();
            while matches!(std::io::Read::read(&mut stdin, &mut sink), Ok(n) if n > 0) {}
            interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
        });
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

/// How long a worker may take, started through its environment's prefix,
/// to say it is ready: at least [`START_FLOOR`], else ten times what the
/// environment took to answer for its fingerprint (a sandbox's or a
/// connection's start, measured before the run).
pub const START_FLOOR: Duration = Duration::from_secs(20);

/// How long a round may take after its worker is ready: at least
/// [`ROUND_FLOOR`] (preparing a case, its minimum repetitions under an
/// emulator), else ten times the round's budget.
pub const ROUND_FLOOR: Duration = Duration::from_secs(120);

/// How long a worker gets to end its round after the run is interrupted
/// (its stdin closed, SIGTERM): the repetition under way ends and the
/// round is reported; then it is stopped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// How long a worker (or the prefix around it) may take to exit after its
/// outcome: a sandbox or a container being torn down.
const EXIT_WITHIN: Duration = Duration::from_secs(10);

/// The largest magnitude a sample may have: far beyond any rate, time or
/// size envbench measures, far below where sums of them overflow.
const SAMPLE_MAX: f64 = 1e18;

/// Where and how long a worker's round may take: the environment's name
/// (for messages) and the deadlines of its conversation.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines<'a> {
    /// The environment's name, for messages; empty for a plain run.
    pub env: &'a str,
    /// From starting the worker to its `Ready` line.
    pub start: Duration,
    /// From `Ready` to its outcome.
    pub round: Duration,
}

impl<'a> Deadlines<'a> {
    /// The deadlines of a round of `budget_secs` in the environment `env`,
    /// which took `start_secs` to answer for its fingerprint (0 for the
    /// host itself).
    pub fn new(env: &'a str, start_secs: f64, budget_secs: f64) -> Deadlines<'a> {
        let times = |secs: f64, floor: Duration| {
            Duration::try_from_secs_f64(10.0 * secs)
                .unwrap_or(Duration::MAX)
                .max(floor)
        };
        Deadlines {
            env,
            start: times(start_secs, START_FLOOR),
            round: times(budget_secs, ROUND_FLOOR),
        }
    }
}

/// The run's side: measures `job` in a new worker process that `launcher`
/// starts (this binary, or envbench through an environment's prefix),
/// reporting each repetition to `on_progress`, within `deadlines`.
/// Repetition times come back on `clock`, counted from this call. A worker
/// that cannot start, is late, says something that is not envbench's
/// protocol or not possible, or ends without an outcome, makes a failed
/// (or, after a signal, interrupted) round with the reason; nothing it
/// says can stop the run.
pub fn measure(
    job: &Job,
    launcher: &Launcher,
    deadlines: Deadlines,
    clock: &Clock,
    interrupted: &AtomicBool,
    on_progress: &mut dyn FnMut(Progress),
) -> CaseRun {
    let start = clock.now();
    let wall = clock.wall_secs();
    let mut run = match spawn_and_read(job, launcher, deadlines, interrupted, on_progress) {
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
    deadlines: Deadlines,
    interrupted: &AtomicBool,
    on_progress: &mut dyn FnMut(Progress),
) -> Result<CaseRun, String> {
    // through a prefix, a failure names the environment and the command tried
    let tried = if launcher.is_host() {
        String::new()
    } else {
        format!(
            " in {} (`{}`)",
            deadlines.env,
            super::launch::shown(&launcher.argv(WORKER_ARG)?)
        )
    };
    // an environment's stderr is relayed, escaped, under its name
    let stderr = if launcher.is_host() {
        Stderr::Inherit
    } else {
        Stderr::Relay(format!("envbench: {}", deadlines.env))
    };
    let mut peer = launcher
        .start(WORKER_ARG, stderr)
        .map_err(|e| format!("cannot start a worker process{tried}: {e}"))?;
    let pid = peer.pid();
    crate::cleanup::adopt_worker(pid, NamedDir::paths(&job.dirs));
    let job = Job {
        scratch_pid: Some(pid as u32),
        ..job.clone()
    };
    let started = Instant::now();
    let heard = talk(
        &mut peer,
        &job,
        deadlines,
        started,
        interrupted,
        on_progress,
    );
    let (status, stopped) = match &heard {
        Ok(_) => peer.finish(EXIT_WITHIN),
        Err(_) => {
            peer.stop();
            peer.finish(Duration::ZERO)
        }
    };
    crate::cleanup::release_worker(pid, heard.is_ok() && !stopped);
    crate::cleanup::reap_orphans();
    match heard {
        Ok(mut run) => {
            if stopped {
                run.notes.push(format!(
                    "the worker's process{tried} did not exit within {} s of its outcome and \
                     was stopped",
                    EXIT_WITHIN.as_secs()
                ));
            }
            Ok(run)
        }
        Err(Silence::Ended) => Err(format!(
            "the worker process{tried} ended without a result ({}){}",
            status.map_or_else(|| "status unknown".to_string(), |s| s.to_string()),
            status.map_or("", abort_hint)
        )),
        Err(Silence::Why(why)) => Err(format!("the worker process{tried} {why}")),
    }
}

/// Why a conversation gave no outcome.
#[derive(Debug)]
enum Silence {
    /// The worker's stdout closed first.
    Ended,
    /// Late, interrupted, or a line that is not envbench's: what happened.
    Why(String),
}

/// Writes `job` to the worker and reads its lines within `deadlines`
/// (counted from `started`): its outcome, checked, or why there is none.
/// After an interruption the worker gets [`INTERRUPT_GRACE`] to report the
/// repetitions it finished.
fn talk(
    peer: &mut Peer,
    job: &Job,
    deadlines: Deadlines,
    started: Instant,
    interrupted: &AtomicBool,
    on_progress: &mut dyn FnMut(Progress),
) -> Result<CaseRun, Silence> {
    let text = serde_json::to_string(job).expect("invariant: jobs serialise");
    // a worker that could not read it ends; its status says why
    if peer.send(&text).is_err() {
        return Err(Silence::Ended);
    }
    let mut ready_at: Option<Instant> = None;
    let mut watched = Some(interrupted);
    let mut until = started + deadlines.start;
    loop {
        let line = match peer.next(until, watched) {
            Heard::Line(line) => line,
            Heard::Closed => return Err(Silence::Ended),
            Heard::TooLong => {
                return Err(Silence::Why(format!(
                    "printed a line longer than {} MiB, which is not envbench's",
                    super::peer::LINE_CAP_BYTES >> 20
                )))
            }
            Heard::Interrupted if ready_at.is_none() => {
                return Err(Silence::Why(
                    "had not started its round when the run was interrupted, and was stopped"
                        .into(),
                ))
            }
            Heard::Interrupted => {
                // close its stdin: it winds down even if no signal reaches it
                peer.close_stdin();
                watched = None;
                until = Instant::now() + INTERRUPT_GRACE;
                continue;
            }
            Heard::Late if watched.is_none() => {
                return Err(Silence::Why(format!(
                    "did not end its round within {} s of the interruption and was stopped",
                    INTERRUPT_GRACE.as_secs()
                )))
            }
            Heard::Late => {
                let awaited = match ready_at {
                    None => format!(
                        "gave no sign of starting within {} s (awaited: its ready line; a \
                         prefix that does not start envbench, or waits for input?)",
                        deadlines.start.as_secs()
                    ),
                    Some(_) => format!(
                        "gave no outcome within {} s of starting its round (awaited: its \
                         result; the limit is ten times the round's budget, at least {} s)",
                        deadlines.round.as_secs(),
                        ROUND_FLOOR.as_secs()
                    ),
                };
                return Err(Silence::Why(format!("{awaited}, and was stopped")));
            }
        };
        let parsed = serde_json::from_str::<Line>(&line).map_err(|_| {
            Silence::Why(format!(
                "printed `{}`, which is not envbench's protocol (a prefix must leave stdout \
                 to envbench: send its own messages to stderr)",
                cut(&line, 120)
            ))
        })?;
        // the fake clock's times are synthetic: bounded, not by the real wait
        let waited = if job.fake_clock {
            FAKE_CLOCK_MOST
        } else {
            started.elapsed()
        };
        match parsed {
            Line::Ready { .. } if ready_at.is_none() => {
                ready_at = Some(Instant::now());
                if watched.is_some() {
                    until = Instant::now() + deadlines.round;
                }
            }
            Line::Ready { .. } => {
                return Err(Silence::Why("said it was ready twice".into()));
            }
            Line::Rep { reps_done, .. }
                if reps_done > job.policy.reps_max.max(job.policy.reps_min) =>
            {
                return Err(Silence::Why(format!(
                    "reported {reps_done} repetitions done, more than the {} asked",
                    job.policy.reps_max
                )));
            }
            Line::Rep {
                reps_done,
                elapsed_secs,
            } => {
                let elapsed = within(elapsed_secs, waited)
                    .map_err(|why| Silence::Why(format!("reported a repetition {why}")))?;
                on_progress(Progress { reps_done, elapsed });
            }
            Line::Done(run) => {
                let mut run = *run;
                check_outcome(&mut run, job, waited)
                    .map_err(|why| Silence::Why(format!("gave an impossible outcome: {why}")))?;
                return Ok(run);
            }
        }
    }
}

/// The longest time a worker on the fake clock may report: its times are
/// synthetic (ten milliseconds a reading), a few thousand seconds at most.
const FAKE_CLOCK_MOST: Duration = Duration::from_secs(10_000_000);

/// `secs` as a duration, when it is a time the worker can have spent:
/// finite, not negative, and no longer than the `waited` the run saw
/// (a second's leeway for the clocks).
fn within(secs: f64, waited: Duration) -> Result<Duration, String> {
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
fn check_outcome(run: &mut CaseRun, job: &Job, waited: Duration) -> Result<(), String> {
    within(run.elapsed.as_secs_f64(), waited).map_err(|w| format!("elapsed {w}"))?;
    // the round's time is read a moment after its last repetition's end
    // on the worker's clock: a second's leeway, as for the run's wait
    let leeway = Duration::from_secs(1);
    if let Some(t) = run.rep_ends.iter().find(|t| **t > run.elapsed + leeway) {
        return Err(format!(
            "a repetition ended at {} s, after the round's {} s",
            t.as_secs_f64(),
            run.elapsed.as_secs_f64()
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
    use crate::terminal::escape;
    run.reason = run.reason.as_deref().map(escape);
    run.notes.iter_mut().for_each(|n| *n = escape(n));
    for a in &mut run.anomalies {
        a.kind = escape(&a.kind);
        a.message = escape(&a.message);
    }
    Ok(())
}

/// The case of `job`, planned again from its bench (so that its metrics
/// are the bench's own); None when no bench plans that key.
fn planned(job: &Job) -> Option<(&'static dyn crate::bench::Bench, crate::bench::CaseSpec)> {
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
