//! The run's side of a case round: a worker started for it, directly (a
//! fresh process of envbench, this host as it is) or by an environment's
//! resident launcher ([`super::resident`]), is handed the round's job and
//! heard within deadlines; what it says is checked before the run believes
//! it. A worker that cannot start, is late, says something that is not
//! envbench's protocol or cannot be true, or ends without an outcome makes
//! a failed (or, after a signal, interrupted) round with the reason;
//! nothing it says can stop the run.
//!
//! Before a resident launcher's worker measures, the run waits for the
//! environment's own processes to be quiet: the CPU time of the launcher's
//! whole process tree, read twice [`SETTLE_WINDOW`] apart, grows by less
//! than a tenth of that window ([`super::resident::settle`]); the round
//! records how long that took.

mod channel;
mod check;
pub mod turns;

use super::launch::{cut, Launcher};
use super::oom::{killed_words, OomEvidence, OomKills};
use super::peer::{Heard, Peer, Stderr};
use super::resident::{Request, Resident, Says};
use super::runner::{self, CaseRun, Progress};
use super::worker::{Job, Line, ALLOC_HINT, WORKER_ARG};
use crate::bench::NamedDir;
use crate::measure::clock::Clock;
use crate::results::CaseStatus;
use channel::{Channel, Direct, Relayed};
use check::{check_outcome, within, FAKE_CLOCK_MOST};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use turns::Seat;

pub use super::resident::SETTLE_WINDOW;
use super::worker::{ten_times, ROUND_FLOOR};

/// How long a worker may take, started through its environment's prefix,
/// to say it is ready: at least [`START_FLOOR`], else ten times what the
/// environment took to answer for its fingerprint (a sandbox's or a
/// connection's start, measured before the run).
pub const START_FLOOR: Duration = Duration::from_secs(20);

/// How long a worker gets to end its round after the run is interrupted
/// (its stdin closed, SIGTERM): the repetition under way ends and the
/// round is reported; then it is stopped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// How long a resident launcher may take to say that the worker it was
/// told to kill has ended.
const KILLED_WITHIN: Duration = Duration::from_secs(3);

/// How long a worker (or the prefix around it) may take to exit after its
/// outcome: a sandbox or a container being torn down.
const EXIT_WITHIN: Duration = Duration::from_secs(10);

/// Where and how long a worker's round may take: the environment's name
/// and memory limit (for messages) and the deadlines of its conversation.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines<'a> {
    /// The environment's name, for messages; empty for a plain run.
    pub env: &'a str,
    /// From starting the worker to its `Ready` line.
    pub start: Duration,
    /// From `Ready` to its outcome.
    pub round: Duration,
    /// The environment's memory limit as its fingerprint holds it, named
    /// when the out-of-memory killer kills a worker.
    pub memory_limit_bytes: Option<u64>,
}

impl<'a> Deadlines<'a> {
    /// The deadlines of a round of `budget_secs` in the environment `env`,
    /// which took `start_secs` to answer for its fingerprint (0 for the
    /// host itself).
    pub fn new(env: &'a str, start_secs: f64, budget_secs: f64) -> Deadlines<'a> {
        Deadlines {
            env,
            start: ten_times(start_secs, START_FLOOR),
            round: ten_times(budget_secs, ROUND_FLOOR),
            memory_limit_bytes: None,
        }
    }
}

/// How a round's worker is started: directly, or by a resident launcher.
pub enum Start<'a> {
    /// A fresh process of this binary (the host as it is).
    Direct(&'a Launcher),
    /// The environment's resident launcher, which starts it inside.
    Resident(&'a mut Resident),
}

impl<'a> Start<'a> {
    /// By the environment's resident launcher where it has one, else
    /// directly by `launcher`.
    pub fn of(resident: Option<&'a mut Resident>, launcher: &'a Launcher) -> Start<'a> {
        match resident {
            Some(r) => Start::Resident(r),
            None => Start::Direct(launcher),
        }
    }
}

/// Measures `job` in a new worker process started as `entry` says,
/// reporting each repetition to `on_progress`, within `deadlines`.
/// Repetition times come back on `clock`, counted from this call. A round
/// that a resident launcher's death took down is measured again once the
/// launcher has started again. With a `seat`, the round takes its turns
/// there with the other environments' rounds of the case ([`turns`]): its
/// job then asks the worker to wait for each ([`Job::turns`]).
pub(crate) fn measure(
    job: &Job,
    entry: Start,
    deadlines: Deadlines,
    clock: &Clock,
    interrupted: &AtomicBool,
    on_progress: &mut dyn FnMut(Progress),
    seat: Option<&Seat>,
) -> CaseRun {
    let start = clock.now();
    let wall = clock.wall_secs();
    let turned;
    let job = if seat.is_some() {
        turned = Job {
            turns: true,
            ..job.clone()
        };
        &turned
    } else {
        job
    };
    let mut conversation = Conversation {
        deadlines,
        interrupted,
        on_progress,
        seat,
    };
    let outcome = match entry {
        Start::Direct(launcher) => direct(job, launcher, &mut conversation),
        Start::Resident(resident) => match through(job, resident, &mut conversation) {
            Err(Failure::LauncherLost(why)) if !stopped(interrupted) => {
                // once more, in the launcher started again
                through(job, resident, &mut conversation).map_err(|again| {
                    format!("{why}; measured again after a restart: {}", again.why())
                })
            }
            other => other.map_err(|f| f.why()),
        },
    };
    let mut run = match outcome {
        Ok(run) => run,
        Err(why) => {
            let mut run = runner::failed_run(wall, why);
            if stopped(interrupted) {
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

fn stopped(interrupted: &AtomicBool) -> bool {
    interrupted.load(std::sync::atomic::Ordering::SeqCst)
}

/// Why a round through a resident launcher gave no outcome.
enum Failure {
    /// The launcher itself ended or stopped answering: started again, the
    /// round is measured again.
    LauncherLost(String),
    /// Anything else, with why.
    Other(String),
}

impl Failure {
    fn why(self) -> String {
        match self {
            Failure::LauncherLost(w) | Failure::Other(w) => w,
        }
    }
}

/// A round in a fresh worker process of its own, started through
/// `launcher` (this binary, without a prefix). The process is registered
/// by PID for a second Ctrl-C, and names the worker's scratch directories.
fn direct(job: &Job, launcher: &Launcher, c: &mut Conversation) -> Result<CaseRun, String> {
    let deadlines = c.deadlines;
    let stderr = if launcher.is_host() {
        Stderr::Inherit
    } else {
        Stderr::Relay(format!("envbench: {}", deadlines.env))
    };
    let oom_before = OomKills::now();
    let mut peer = launcher
        .start(WORKER_ARG, stderr)
        .map_err(|e| format!("cannot start a worker process: {e}"))?;
    let pid = peer.pid();
    crate::cleanup::adopt_worker(pid, NamedDir::paths(&job.dirs), true);
    let job = Job {
        scratch_pid: Some(pid as u32),
        ..job.clone()
    };
    let heard = {
        let mut channel = Direct { peer: &mut peer };
        talk(&mut channel, &job, c)
    };
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
                    "the worker's process did not exit within {} s of its outcome and was \
                     stopped",
                    EXIT_WITHIN.as_secs()
                ));
            }
            Ok(run)
        }
        Err(Silence::Ended) => Err(ended_words(status, oom_before, deadlines)),
        Err(Silence::Why(why)) => Err(format!("the worker process {why}")),
    }
}

/// Why a worker of its own ended without a result: the out-of-memory
/// killer's SIGKILL (its kill counted since `before`; the run sends
/// SIGKILL only to a worker that said nothing in time, which is not this
/// one), or its status.
fn ended_words(status: Option<std::process::ExitStatus>, before: OomKills, d: Deadlines) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    let killed = status.is_some_and(|s| s.signal() == Some(libc::SIGKILL));
    if let Some(evidence) = killed.then(|| OomKills::now().since(before)).flatten() {
        return format!(
            "the worker process {}",
            killed_words(evidence, d.memory_limit_bytes)
        );
    }
    format!(
        "the worker process ended without a result ({}){}",
        status.map_or_else(|| "status unknown".to_string(), |s| s.to_string()),
        status.map_or("", abort_hint)
    )
}

/// A round through `resident`'s launcher, which starts its worker inside
/// the environment and relays its lines; the run waits for the worker to
/// have ended before the next round, and stops the launcher (to be started
/// again) when it cannot end it.
fn through(job: &Job, resident: &mut Resident, c: &mut Conversation) -> Result<CaseRun, Failure> {
    let (deadlines, interrupted) = (c.deadlines, c.interrupted);
    let tried = format!(" in {}", resident.name());
    let peer = resident
        .peer(interrupted)
        .map_err(|why| Failure::Other(format!("no worker could start{tried}: {why}")))?;
    let pid = peer.pid();
    crate::cleanup::adopt_worker(pid, NamedDir::paths(&job.dirs), false);
    let job = Job {
        scratch_pid: Some(pid as u32),
        wait_go: true,
        ..job.clone()
    };
    let mut channel = Relayed {
        peer,
        ended: None,
        oom: None,
        lost: false,
    };
    let heard = talk(&mut channel, &job, c);
    // the worker must have ended before another round starts: after its
    // outcome it may take a moment; else it is killed; a launcher that
    // cannot say it ended (or a run that is ending) is stopped
    let ended = channel.ended.is_some()
        || (heard.is_ok() && channel.wait_ended(EXIT_WITHIN))
        || (!stopped(interrupted)
            && channel.ask(&Request::Kill)
            && channel.wait_ended(KILLED_WITHIN));
    let (lost, worker_end, oom) = (channel.lost, channel.ended.clone(), channel.oom);
    if !ended {
        resident.lose();
    }
    crate::cleanup::release_worker(pid, heard.is_ok() && ended);
    match heard {
        Ok(run) if ended => Ok(run),
        Ok(mut run) => {
            run.notes.push(format!(
                "the worker{tried} did not end within {} s of its outcome; its launcher was \
                 stopped, to start again",
                EXIT_WITHIN.as_secs()
            ));
            Ok(run)
        }
        Err(Silence::Ended) if lost || !ended => Err(Failure::LauncherLost(format!(
            "the launcher{tried} ended during the round"
        ))),
        Err(Silence::Ended) => Err(Failure::Other(match oom {
            Some(evidence) => format!(
                "the worker process{tried} {}",
                killed_words(evidence, deadlines.memory_limit_bytes)
            ),
            None => format!(
                "the worker process{tried} ended without a result ({})",
                worker_end.unwrap_or_else(|| "status unknown".into())
            ),
        })),
        Err(Silence::Why(why)) => Err(Failure::Other(format!("the worker process{tried} {why}"))),
    }
}

/// What a round's conversation with its worker goes by: its deadlines,
/// the run's interrupt, where its progress goes, and its seat among the
/// environments it takes turns with, if it does.
struct Conversation<'c, 'p, 's> {
    deadlines: Deadlines<'c>,
    interrupted: &'c AtomicBool,
    on_progress: &'p mut dyn FnMut(Progress),
    seat: Option<&'s Seat<'s>>,
}

/// Why a conversation gave no outcome.
#[derive(Debug)]
enum Silence {
    /// The worker's stdout closed first.
    Ended,
    /// Late, interrupted, or a line that is not envbench's: what happened.
    Why(String),
}

/// Why a worker that said nothing in time was stopped: it gave no sign of
/// starting, or no outcome once `ready`.
/// The line `heard` brought, or None where the run was interrupted after
/// the worker was `ready` and it may wind down; else why the conversation
/// ends (`watching`: the run's interruption is still watched, none came).
fn line_of(
    heard: Heard,
    ready: bool,
    deadlines: &Deadlines,
    watching: bool,
) -> Result<Option<String>, Silence> {
    match heard {
        Heard::Line(line) => Ok(Some(line)),
        Heard::Closed => Err(Silence::Ended),
        Heard::TooLong => Err(Silence::Why(format!(
            "printed a line longer than {} MiB, which is not envbench's",
            super::peer::LINE_CAP_BYTES >> 20
        ))),
        Heard::Interrupted if !ready => Err(Silence::Why(
            "had not started its round when the run was interrupted, and was stopped".into(),
        )),
        Heard::Interrupted => Ok(None),
        Heard::Late if !watching => Err(Silence::Why(format!(
            "did not end its round within {} s of the interruption and was stopped",
            INTERRUPT_GRACE.as_secs()
        ))),
        Heard::Late => Err(Silence::Why(late(ready, deadlines))),
    }
}

fn late(ready: bool, deadlines: &Deadlines) -> String {
    let awaited = if ready {
        format!(
            "gave no outcome within {} s of starting its round (awaited: its \
             result; the limit is ten times the round's budget, at least {} s)",
            deadlines.round.as_secs(),
            ROUND_FLOOR.as_secs()
        )
    } else {
        format!(
            "gave no sign of starting within {} s (awaited: its ready line; a \
             prefix that does not start envbench, or waits for input?)",
            deadlines.start.as_secs()
        )
    };
    format!("{awaited}, and was stopped")
}

/// Writes `job` to the worker and reads its lines within `deadlines`: its
/// outcome, checked, with the worker's PID and the settling it waited for,
/// or why there is none. After an interruption the worker gets
/// [`INTERRUPT_GRACE`] to report the repetitions it finished.
fn talk(channel: &mut dyn Channel, job: &Job, c: &mut Conversation) -> Result<CaseRun, Silence> {
    let (deadlines, interrupted) = (c.deadlines, c.interrupted);
    let started = Instant::now();
    // a worker that could not read it ends; its status says why
    if !channel.send_job(job) {
        return Err(Silence::Ended);
    }
    let mut ready_at: Option<Instant> = None;
    // how long after this conversation began the worker's own clock began
    let mut origin: Option<Duration> = None;
    let (mut worker_pid, mut settle_secs) = (None, None);
    let mut watched = Some(interrupted);
    let mut until = started + deadlines.start;
    loop {
        let heard = channel.next(until, watched);
        let Some(line) = line_of(heard, ready_at.is_some(), &deadlines, watched.is_some())? else {
            // interrupted: close its stdin, so that it winds down even if
            // no signal reaches it, and give it a grace to end its round
            channel.wind_down();
            watched = None;
            until = Instant::now() + INTERRUPT_GRACE;
            continue;
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
            Line::Ready { pid, kernel } if ready_at.is_none() => {
                if let Some(seat) = c.seat {
                    seat.runs_on(kernel);
                }
                worker_pid = Some(pid);
                settle_secs = channel.go();
                ready_at = Some(Instant::now());
                if watched.is_some() {
                    until = Instant::now() + deadlines.round;
                }
            }
            Line::Ready { .. } => {
                return Err(Silence::Why("said it was ready twice".into()));
            }
            Line::Waiting => {
                let Some(seat) = c.seat else {
                    return Err(Silence::Why(
                        "waited for a turn, which its round does not take".into(),
                    ));
                };
                // interrupted: its stdin closes below, and it winds down
                if let Some(flag) = watched {
                    let t0 = Instant::now();
                    if seat.wait(flag) {
                        channel.next_turn(seat.cpu());
                    }
                    // the other environments' repetitions are not its own
                    until += t0.elapsed();
                }
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
                cpu,
            } => {
                if let (Some(seat), Some(cpu)) = (c.seat, cpu) {
                    seat.ended_on(cpu);
                }
                let elapsed = within(elapsed_secs, waited)
                    .map_err(|why| Silence::Why(format!("reported a repetition {why}")))?;
                // heard after it was said: the least gap is its start, as
                // near as its fastest line came
                if let Some(gap) = started.elapsed().checked_sub(elapsed) {
                    origin = Some(origin.map_or(gap, |o| o.min(gap)));
                }
                (c.on_progress)(Progress { reps_done, elapsed });
            }
            Line::Done(run) => {
                let known = Known {
                    origin,
                    worker_pid,
                    settle_secs,
                };
                return finished(*run, job, waited, known);
            }
        }
    }
}

/// What a conversation learnt of its worker before the outcome.
struct Known {
    /// How long after the conversation began the worker's clock began.
    origin: Option<Duration>,
    /// Its PID, from its ready line.
    worker_pid: Option<u32>,
    /// The settling its environment waited for.
    settle_secs: Option<f64>,
}

/// The worker's outcome, checked, placed on the run's clock, with what
/// was heard of the worker.
fn finished(
    mut run: CaseRun,
    job: &Job,
    waited: Duration,
    known: Known,
) -> Result<CaseRun, Silence> {
    check_outcome(&mut run, job, waited)
        .map_err(|why| Silence::Why(format!("gave an impossible outcome: {why}")))?;
    // its repetitions' times count from its own start, which came after
    // this conversation's (its process, the environment's settling, its
    // checks): placed on the run's clock by its lines, else each
    // environment's times would be early by its own start and two
    // environments' turns misordered (a round with repetitions said a Rep
    // line for each)
    if let (false, Some(late)) = (job.fake_clock, known.origin) {
        for t in &mut run.rep_ends {
            *t += late;
        }
    }
    run.worker_pid = known.worker_pid;
    run.settle_secs = known.settle_secs;
    Ok(run)
}

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
