//! One resident launcher per environment (`run --in NAME=PREFIX`): envbench
//! enters each environment once, through its prefix, as a launcher that
//! lives for the whole run, and the launcher starts every case round's
//! worker inside the environment, a fresh process each time. Entering a
//! sandbox, a container or an ssh session is paid once, not per round, and
//! no sandbox's start-up shares the CPUs with a round.
//!
//! The launcher speaks JSON lines. The run asks ([`Request`]): the
//! environment's fingerprint, a round's job, `go` (the environment has
//! settled: measure), `end` (wind the round down), `kill`. The launcher
//! answers ([`Says`]) with the fingerprint, relays its worker's lines as
//! they come (`ready`, `rep`, `done`: [`super::worker::Line`]), and says
//! when its worker has `ended`. Its stdin closing (the run gone) stops its
//! worker and ends it; it dies with the process that started it.
//!
//! The run's side ([`Resident`]) starts the launcher under its prefix's
//! guard ([`super::guard`]), checks its first answer (one fingerprint, of
//! this version, that a machine can have), and restarts it once if it dies;
//! a round it took down is measured again after the restart.

use super::launch::{cut, FingerprintRequest, Place};
use super::peer::{Heard, Peer, Stderr};
use super::worker::{next_line, Job, GO_LINE, WORKER_ARG};
use crate::probe::Fingerprint;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ExitCode, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The hidden argument that makes envbench a launcher.
pub const LAUNCHER_ARG: &str = "__launcher";

/// How long a launcher may take to answer for its fingerprint: probing
/// takes a second or two, starting a sandbox or a connection a few more; a
/// prefix that waits for a password typed at the terminal gets time for
/// that.
pub const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Times a launcher that died is started again, in a run.
const RESTARTS: u32 = 1;

/// The window over which the launcher's process tree must be quiet before
/// a worker measures: its CPU time grows by less than a tenth of it.
pub const SETTLE_WINDOW: Duration = Duration::from_millis(10);

/// The longest the run waits for quiet; then the worker measures anyway.
pub const SETTLE_MOST: Duration = Duration::from_secs(1);

/// What the run asks a launcher, one JSON line each.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// The environment's fingerprint for these directories.
    Fingerprint(FingerprintRequest),
    /// Start a worker for this round.
    Job(Box<Job>),
    /// The environment has settled: the worker may measure.
    Go,
    /// The worker's turn has come ([`Job::turns`]), with the round's CPU
    /// once it has one ([`super::worker::next_line`]).
    Next {
        /// The CPU the round's first repetition ended on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<u32>,
    },
    /// Wind the round down (the worker's stdin closes).
    End,
    /// Kill the worker and all it started.
    Kill,
}

/// What a launcher says besides its worker's lines, one JSON line each.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Says {
    /// The environment's fingerprint.
    Fingerprint(Box<Fingerprint>),
    /// Its worker has ended: its exit code, or the signal that ended it.
    Ended {
        /// Exit code, when it exited.
        code: Option<i32>,
        /// Signal, when one killed it.
        signal: Option<i32>,
        /// What shows the out-of-memory killer sent its SIGKILL, if
        /// anything does ([`super::oom`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oom: Option<super::oom::OomEvidence>,
    },
    /// A request it could not carry out, and why.
    Failed(String),
}

impl Says {
    /// The words for a worker's end: "exit status: 0", "signal 9".
    pub(crate) fn ended_words(code: Option<i32>, signal: Option<i32>) -> String {
        match (code, signal) {
            (Some(c), _) => format!("exit status: {c}"),
            (None, Some(s)) => format!("signal {s}"),
            _ => "status unknown".into(),
        }
    }
}

/// The launcher's worker under way.
struct Running {
    stdin: Option<ChildStdin>,
    /// Taken by the relay thread to wait for it; None once reaped.
    child: Arc<Mutex<Option<Child>>>,
}

/// The launcher's side: answers [`Request`]s on stdin until it closes.
/// Exit code 0 when it closes, 2 for a request it cannot read.
pub(crate) fn serve() -> ExitCode {
    // SAFETY: prctl only sets flags of this process; signal(2) sets SIGINT
    // ignored (the run decides what Ctrl-C stops).
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    crate::cleanup::quiet_exit();
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let say = |out: &Arc<Mutex<std::io::Stdout>>, what: &Says| {
        let line = serde_json::to_string(what).expect("invariant: answers serialise");
        let mut o = out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = writeln!(o, "{line}").and_then(|()| o.flush());
    };
    let mut worker: Option<Running> = None;
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Request>(&line) else {
            eprintln!("envbench: {LAUNCHER_ARG} reads requests as JSON lines on stdin");
            stop_worker(worker.take());
            return ExitCode::from(2);
        };
        match request {
            Request::Fingerprint(r) => {
                let fp = crate::probe::probe_live(&r.dirs);
                say(&out, &Says::Fingerprint(Box::new(fp)));
            }
            Request::Job(job) => {
                if worker.as_ref().is_some_and(|w| alive(&w.child)) {
                    say(&out, &Says::Failed("a round is under way".into()));
                    continue;
                }
                match start_worker(&job, &out) {
                    Ok(w) => worker = Some(w),
                    Err(why) => say(&out, &Says::Failed(why)),
                }
            }
            Request::Go | Request::Next { .. } => {
                let line = match request {
                    Request::Next { cpu } => next_line(cpu),
                    _ => GO_LINE.to_string(),
                };
                if let Some(stdin) = worker.as_mut().and_then(|w| w.stdin.as_mut()) {
                    let _ = writeln!(stdin, "{line}").and_then(|()| stdin.flush());
                }
            }
            Request::End => {
                if let Some(w) = worker.as_mut() {
                    w.stdin = None;
                }
            }
            Request::Kill => kill_tree(worker.as_ref()),
        }
    }
    // stdin closed: the run is gone or done
    stop_worker(worker.take());
    ExitCode::SUCCESS
}

/// Whether the worker in `child` is not yet reaped.
fn alive(child: &Arc<Mutex<Option<Child>>>) -> bool {
    child
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .is_some()
}

/// Starts a worker for `job` (this binary, as the environment sees it),
/// hands it the job and relays its lines to `out` on a thread, saying
/// [`Says::Ended`] once it has ended.
fn start_worker(job: &Job, out: &Arc<Mutex<std::io::Stdout>>) -> Result<Running, String> {
    // through the emulator or loader this launcher runs under, if any
    let me = crate::probe::emulation::own_command()?;
    let mut cmd = std::process::Command::new(&me[0]);
    cmd.args(&me[1..])
        .arg(WORKER_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    crate::cleanup::wind_down_with_envbench(&mut cmd);
    let oom_before = super::oom::OomKills::now();
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot start a worker process: {e}{}",
            super::launch::limit_hint(&e)
        )
    })?;
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    if let Some(s) = stdin.as_mut() {
        let text = serde_json::to_string(job).expect("invariant: jobs serialise");
        let _ = writeln!(s, "{text}").and_then(|()| s.flush());
    }
    let child = Arc::new(Mutex::new(Some(child)));
    let (slot, out) = (Arc::clone(&child), Arc::clone(out));
    std::thread::Builder::new()
        .name("envbench-relay".into())
        .spawn(move || {
            if let Some(stdout) = stdout {
                let reader = std::io::BufReader::new(stdout);
                for line in reader.lines() {
                    let Ok(line) = line else { break };
                    let mut o = out.lock().unwrap_or_else(PoisonError::into_inner);
                    let _ = writeln!(o, "{line}").and_then(|()| o.flush());
                }
            }
            let taken = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
            let status = taken.and_then(|mut c| c.wait().ok());
            use std::os::unix::process::ExitStatusExt as _;
            let signal = status.and_then(|s| s.signal());
            let ended = Says::Ended {
                code: status.and_then(|s| s.code()),
                signal,
                oom: (signal == Some(libc::SIGKILL))
                    .then(|| super::oom::OomKills::now().since(oom_before))
                    .flatten(),
            };
            let line = serde_json::to_string(&ended).expect("invariant: answers serialise");
            let mut o = out.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = writeln!(o, "{line}").and_then(|()| o.flush());
        })
        .map_err(|e| format!("cannot start the launcher's relay thread: {e}"))?;
    Ok(Running { stdin, child })
}

/// Kills the worker and every process beneath it (the launcher is their
/// subreaper, so none escapes by its parent's exit).
fn kill_tree(worker: Option<&Running>) {
    let Some(w) = worker else { return };
    let guard = w.child.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(child) = guard.as_ref() {
        let pid = child.id() as i32;
        let below = crate::cleanup::descendants(pid, std::path::Path::new("/proc"));
        // SAFETY: kill has no memory-safety preconditions; `pid` is our
        // unreaped child (held under the lock) and `below` its descendants.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            for p in below {
                libc::kill(p, libc::SIGKILL);
            }
        }
    }
}

/// Winds the worker down (its stdin closed), gives it two seconds, and
/// kills what is left.
fn stop_worker(worker: Option<Running>) {
    let Some(mut w) = worker else { return };
    w.stdin = None;
    let until = Instant::now() + Duration::from_secs(2);
    while alive(&w.child) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    kill_tree(Some(&w));
}

/// The run's side of one environment's launcher.
pub struct Resident {
    /// The environment: its name and prefix.
    env: Place,
    /// The directories its fingerprint describes.
    dirs: Vec<PathBuf>,
    /// The launcher, while it runs.
    peer: Option<Peer>,
    /// Times it was started in this run.
    pub launches: u32,
    /// Seconds its first start took, to its fingerprint.
    pub start_secs: f64,
}

impl Resident {
    /// Starts `env`'s launcher through its prefix and asks it for its
    /// fingerprint for `dirs` within [`START_TIMEOUT`] (stopped at once
    /// when `interrupted`).
    ///
    /// # Errors
    /// What was tried and what happened: the prefix's program was not
    /// found, the launcher exited (its status and the last lines of its
    /// stderr), printed anything but one fingerprint of this version, one
    /// no machine can have, or did not answer in time.
    pub(crate) fn start(
        env: &Place,
        dirs: &[PathBuf],
        interrupted: &AtomicBool,
    ) -> Result<(Resident, Fingerprint), String> {
        let mut r = Resident {
            env: env.clone(),
            dirs: dirs.to_vec(),
            peer: None,
            launches: 0,
            start_secs: 0.0,
        };
        let t = Instant::now();
        let fp = r.launch(interrupted)?;
        r.start_secs = t.elapsed().as_secs_f64();
        Ok((r, fp))
    }

    /// The environment's name.
    pub(crate) fn name(&self) -> &str {
        &self.env.name
    }

    /// The running launcher, started again (once in a run) if it died;
    /// None when it cannot be had, with why.
    ///
    /// # Errors
    /// It died and was restarted already, or the restart failed.
    pub(crate) fn peer(&mut self, interrupted: &AtomicBool) -> Result<&mut Peer, String> {
        if self.peer.as_mut().is_some_and(Peer::exited) {
            self.peer = None;
        }
        if self.peer.is_none() {
            if self.launches > RESTARTS {
                return Err(format!(
                    "its launcher ended {} times; no round is started there again",
                    self.launches
                ));
            }
            self.launch(interrupted)
                .map_err(|why| format!("its launcher ended and could not start again: {why}"))?;
        }
        Ok(self.peer.as_mut().expect("invariant: launched above"))
    }

    /// Stops the launcher at once (a round it could not end).
    pub(crate) fn lose(&mut self) {
        if let Some(mut p) = self.peer.take() {
            p.stop();
        }
    }

    /// Ends the launcher: its stdin closed (it ends its worker and exits,
    /// and its prefix ends the way it ends: a container removed, a sandbox
    /// torn down), `within` to exit, then stopped.
    pub(crate) fn finish(&mut self, within: Duration) {
        if let Some(p) = self.peer.take() {
            let _ = p.finish(within);
        }
    }

    /// Starts the launcher and checks its fingerprint.
    fn launch(&mut self, interrupted: &AtomicBool) -> Result<Fingerprint, String> {
        let launcher = &self.env.launcher;
        let argv = launcher.argv(LAUNCHER_ARG)?;
        let tried = format!("tried `{}`", super::launch::shown(&argv));
        let label = format!("envbench: {}", self.env.name);
        let mut peer = launcher
            .start(LAUNCHER_ARG, Stderr::KeepThenRelay(label))
            .map_err(|why| format!("{tried}: {why}"))?;
        self.launches += 1;
        let request = Request::Fingerprint(FingerprintRequest {
            dirs: self.dirs.clone(),
        });
        let text = serde_json::to_string(&request).expect("invariant: requests serialise");
        // a launcher that exits at once closes the pipe: its status says why
        let _ = peer.send(&text);
        let fp = first_answer(&mut peer, interrupted).map_err(|why| {
            // interrupted: stopped at once, its last words not awaited
            let tail = if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
                String::new()
            } else {
                super::launch::stderr_tail(&peer.stderr())
            };
            peer.stop();
            format!("{tried}: {why}{tail}")
        })?;
        check(&fp).map_err(|why| {
            peer.stop();
            format!("{tried}: {why}")
        })?;
        peer.relay_stderr();
        self.peer = Some(peer);
        Ok(fp)
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        self.finish(Duration::from_secs(10));
    }
}

/// The launcher's first answer, its fingerprint, within [`START_TIMEOUT`]:
/// a line before it that is not the protocol's means the prefix writes on
/// stdout, which would break every round.
fn first_answer(peer: &mut Peer, interrupted: &AtomicBool) -> Result<Fingerprint, String> {
    let until = Instant::now() + START_TIMEOUT;
    let mut before: Vec<String> = Vec::new();
    loop {
        match peer.next(until, Some(interrupted)) {
            Heard::Line(line) if line.trim().is_empty() => {}
            Heard::Line(line) => match serde_json::from_str::<Says>(&line) {
                Ok(Says::Fingerprint(fp)) if before.is_empty() => return Ok(*fp),
                Ok(Says::Fingerprint(_)) => {
                    return Err(format!(
                        "it printed {} line(s) before envbench's answer (the first: `{}`): a \
                         prefix must leave stdout to envbench, whose workers answer there; send \
                         its own messages to stderr",
                        before.len(),
                        cut(&before[0], 120)
                    ))
                }
                _ => before.push(line),
            },
            Heard::Closed => {
                let status = match peer.wait_until(Instant::now() + Duration::from_secs(5)) {
                    Some(s) if s.success() => None,
                    Some(s) => Some(super::launch::ended(s)),
                    None => None,
                };
                let printed = match before.first() {
                    None => "printed nothing".to_string(),
                    Some(l) => format!("printed `{}`", cut(l, 120)),
                };
                return Err(match status {
                    Some(ended) => format!("it {ended}"),
                    None => format!(
                        "it exited with status 0 but {printed}, not one fingerprint: is the \
                         binary at that path an envbench of this version?"
                    ),
                });
            }
            Heard::TooLong => return Err("it printed a line without end".into()),
            Heard::Interrupted => return Err("interrupted while it started".into()),
            Heard::Late => {
                return Err(format!(
                    "it gave no answer within {} s and was stopped, with all it started",
                    START_TIMEOUT.as_secs()
                ))
            }
        }
    }
}

/// A fingerprint from another environment, checked: this version of
/// envbench, and nothing a machine cannot have.
fn check(fp: &Fingerprint) -> Result<(), String> {
    let ours = env!("CARGO_PKG_VERSION");
    if fp.build.version != ours {
        return Err(format!(
            "it is envbench {}, and this is {ours}: its workers speak another version of the \
             protocol; install this version there (--in-binary NAME=PATH)",
            crate::terminal::escape(&fp.build.version)
        ));
    }
    if let Some(why) = fp.impossible() {
        return Err(format!(
            "its fingerprint cannot be a machine's: {}",
            crate::terminal::escape(&why)
        ));
    }
    Ok(())
}

/// Waits until the process tree under `pid` (a launcher's guard: the
/// prefix, a sandbox's or a container's processes, the idle worker) is
/// quiet: its CPU time grows by less than a tenth of [`SETTLE_WINDOW`]
/// over one window, for at most [`SETTLE_MOST`]. The seconds it waited;
/// 0 where the tree's CPU time cannot be read.
pub(crate) fn settle(pid: i32) -> f64 {
    let t = Instant::now();
    let Some(mut before) = tree_cpu_ns(pid) else {
        return 0.0;
    };
    let quiet = SETTLE_WINDOW.as_nanos() as u64 / 10;
    while t.elapsed() < SETTLE_MOST {
        std::thread::sleep(SETTLE_WINDOW);
        let Some(now) = tree_cpu_ns(pid) else {
            break;
        };
        if now.saturating_sub(before) < quiet {
            break;
        }
        before = now;
    }
    t.elapsed().as_secs_f64()
}

/// The CPU time, in nanoseconds, of every thread of `pid` and of its
/// descendants (`/proc/PID/task/TID/schedstat`'s first field: time on a
/// CPU, in ns); None when `pid`'s cannot be read.
fn tree_cpu_ns(pid: i32) -> Option<u64> {
    let proc = std::path::Path::new("/proc");
    let threads = |p: i32| -> Option<u64> {
        let tasks = std::fs::read_dir(proc.join(p.to_string()).join("task")).ok()?;
        Some(
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
                .filter_map(|s| crate::probe::process::schedstat_ns(&s))
                .sum(),
        )
    };
    let own = threads(pid)?;
    let below: u64 = crate::cleanup::descendants(pid, proc)
        .into_iter()
        .filter_map(threads)
        .sum();
    Some(own + below)
}
