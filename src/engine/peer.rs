//! A process envbench talks to by lines (a worker measuring a case round,
//! an environment answering for its fingerprint), started directly or
//! through an environment's prefix, and every wait on it bounded.
//!
//! - **Deadlines.** Each line is awaited until a deadline the caller
//!   gives; past it the caller hears [`Heard::Late`] and says what was
//!   awaited. A prefix that never starts envbench, or a worker that stops
//!   talking, fails its round instead of hanging the run.
//! - **Ctrl-C.** Every wait polls the run's `interrupted` flag, so a first
//!   signal is heard within [`POLL`] whether or not the prefix passed it on.
//! - **Bounded lines.** A line longer than [`LINE_CAP_BYTES`] is not read
//!   into memory: the caller hears [`Heard::TooLong`].
//! - **Its whole tree stopped.** A prefix runs under a guard
//!   ([`super::guard`]), a subreaper that keeps every process the prefix
//!   starts beneath it and stops them all on SIGTERM, or when envbench
//!   dies; [`Peer::stop`] asks the guard, and kills the guard and every
//!   descendant left after [`STOP_GRACE`] more. envbench's own worker,
//!   started directly, gets SIGTERM with its descendants, then SIGKILL.
//!   A peer dropped without [`Peer::finish`] is stopped so.
//! - **Its stderr kept or escaped.** An environment's stderr is read by
//!   envbench, never handed the terminal or a file: a message is kept for
//!   the error that names it, or relayed line by line with its escape
//!   sequences escaped ([`Stderr`]).
//!
//! The process also gets SIGTERM when envbench dies, even by SIGKILL
//! ([`crate::cleanup::wind_down_with_envbench`]), and its stdin stays open
//! while it is spoken to: a worker that sees its stdin close knows envbench
//! is gone, through any prefix that forwards stdin, whether or not the
//! prefix passes signals on.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How often a wait looks at the run's `interrupted` flag.
pub const POLL: Duration = Duration::from_millis(50);

/// How long a stopped process tree gets to clean up after SIGTERM before
/// what is left is killed (a guard's own grace, and a little more).
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// The longest line read from a peer: a worker's outcome with its samples
/// and telemetry is well under a megabyte.
pub const LINE_CAP_BYTES: usize = 64 << 20;

/// What becomes of a peer's stderr.
#[derive(Debug, Clone)]
pub enum Stderr {
    /// Shared with envbench's (envbench's own worker).
    Inherit,
    /// Kept, its last lines, for a message ([`Peer::stderr`]).
    Keep,
    /// Each line written to envbench's stderr after this label, escaped.
    Relay(String),
    /// Kept until [`Peer::relay_stderr`], then relayed as [`Stderr::Relay`]
    /// (a resident launcher's: its start's words go in a message if it
    /// fails, its workers' reach the terminal).
    KeepThenRelay(String),
}

/// Most lines of a peer's stderr kept for a message.
const KEPT_LINES: usize = 64;

/// A peer's stderr as its reading thread leaves it.
#[derive(Default)]
struct ErrState {
    /// The last [`KEPT_LINES`] lines kept, before relaying began.
    kept: std::sync::Mutex<std::collections::VecDeque<String>>,
    /// The label to relay lines after, once relaying.
    relay: std::sync::Mutex<Option<String>>,
    /// Whether the stream has ended.
    closed: AtomicBool,
}

/// What a wait for a line heard.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    /// A whole line, without its newline (invalid UTF-8 replaced).
    Line(String),
    /// Stdout closed: the process ended or closed it.
    Closed,
    /// Nothing before the deadline.
    Late,
    /// The run was interrupted meanwhile.
    Interrupted,
    /// A line longer than [`LINE_CAP_BYTES`]; nothing more is read.
    TooLong,
}

/// A running process spoken to by lines.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Heard>,
    stderr: Option<std::sync::Arc<ErrState>>,
    /// The label its stderr is relayed after, once [`Peer::relay_stderr`].
    relay_label: Option<String>,
    ended: Option<ExitStatus>,
    /// Whether it is a guard ([`super::guard`]) that stops its own tree.
    guarded: bool,
}

impl Peer {
    /// Starts `cmd` (its stdin and stdout piped); `guarded` when it is a
    /// guard that stops its own tree on SIGTERM. Its stderr as `stderr`
    /// says.
    ///
    /// # Errors
    /// The process cannot start.
    pub(crate) fn start(
        mut cmd: std::process::Command,
        guarded: bool,
        stderr: Stderr,
    ) -> Result<Peer, std::io::Error> {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        if !matches!(stderr, Stderr::Inherit) {
            cmd.stderr(Stdio::piped());
        }
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take();
        let lines = read_lines(child.stdout.take());
        let (relay_now, relay_label) = match stderr {
            Stderr::Inherit | Stderr::Keep => (None, None),
            Stderr::Relay(label) => (Some(label), None),
            Stderr::KeepThenRelay(label) => (None, Some(label)),
        };
        let stderr = child.stderr.take().map(|e| {
            let state = std::sync::Arc::new(ErrState::default());
            *state.relay.lock().unwrap_or_else(|p| p.into_inner()) = relay_now;
            read_stderr(e, std::sync::Arc::clone(&state));
            state
        });
        Ok(Peer {
            child,
            stdin,
            lines,
            stderr,
            relay_label,
            ended: None,
            guarded,
        })
    }

    /// The process's PID.
    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Writes `line` and a newline to its stdin.
    ///
    /// # Errors
    /// The pipe is closed (the process ended) or stdin was closed.
    pub(crate) fn send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin is closed"))?;
        writeln!(stdin, "{line}")?;
        stdin.flush()
    }

    /// Closes its stdin: a worker winds its round down when it sees that.
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line, waiting until `until` at most; [`Heard::Interrupted`]
    /// as soon as `interrupted` is set (None: not watched).
    pub(crate) fn next(&mut self, until: Instant, interrupted: Option<&AtomicBool>) -> Heard {
        loop {
            if interrupted.is_some_and(|i| i.load(Ordering::SeqCst)) {
                return Heard::Interrupted;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Heard::Late;
            }
            match self.lines.recv_timeout(left.min(POLL)) {
                Ok(heard) => return heard,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Heard::Closed,
            }
        }
    }

    /// Whether the process has exited (reaping it).
    pub(crate) fn exited(&mut self) -> bool {
        self.wait_until(Instant::now()).is_some()
    }

    /// Waits until `until` for the process to exit; its status, or None
    /// when it is still running. It looks again after 0.1 ms, then twice
    /// as long each time up to 5 ms: a worker that has sent its outcome
    /// ends within a millisecond or so, and a fixed 5 ms sleep cost each
    /// of a quick run's ~390 rounds 5 ms natively (2 s of the run).
    pub(crate) fn wait_until(&mut self, until: Instant) -> Option<ExitStatus> {
        let mut pause = Duration::from_micros(100);
        loop {
            if let Some(s) = self.ended {
                return Some(s);
            }
            if let Ok(Some(s)) = self.child.try_wait() {
                self.ended = Some(s);
                return Some(s);
            }
            let now = Instant::now();
            if now >= until {
                return None;
            }
            std::thread::sleep(pause.min(until - now));
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    /// Closes stdin and waits up to `within` for the process to exit (a
    /// guard's wait for what its prefix left is in it); a process still
    /// there then is stopped ([`Peer::stop`]). Its status, and whether it
    /// had to be stopped.
    pub(crate) fn finish(mut self, within: Duration) -> (Option<ExitStatus>, bool) {
        self.close_stdin();
        if let Some(s) = self.wait_until(Instant::now() + within) {
            return (Some(s), false);
        }
        self.stop();
        (self.ended, true)
    }

    /// Stops the process and everything it started: SIGTERM (a guard
    /// stops its own tree then), [`STOP_GRACE`] to end, then SIGKILL to it
    /// and every descendant left; reaps it, waiting [`STOP_GRACE`] more at
    /// most.
    pub(crate) fn stop(&mut self) {
        self.close_stdin();
        let below = self.signal_tree(libc::SIGTERM, &[]);
        let _ = self.wait_until(Instant::now() + STOP_GRACE);
        self.signal_tree(libc::SIGKILL, &below);
        // one stuck in the kernel (a request to a file system that no
        // longer answers) outlives SIGKILL until it is answered: the run
        // does not wait for that
        if self.ended.is_none() {
            self.ended = self.wait_until(Instant::now() + STOP_GRACE);
        }
        crate::cleanup::reap_orphans();
    }

    /// Sends `signal` to the process while it is not yet reaped (its PID
    /// still its own) and, unless it is a guard being asked to stop its
    /// tree itself, to each of its descendants; and to those of `earlier`
    /// (descendants found before) that are still the same processes.
    /// Returns the descendants found.
    fn signal_tree(&mut self, signal: libc::c_int, earlier: &[(i32, u64)]) -> Vec<(i32, u64)> {
        let pid = self.pid();
        if self.ended.is_none() {
            self.ended = self.child.try_wait().ok().flatten();
        }
        let mut below: Vec<(i32, u64)> = Vec::new();
        if self.ended.is_none() {
            below = crate::cleanup::descendants(pid, std::path::Path::new("/proc"))
                .into_iter()
                .filter_map(|p| Some((p, started(p)?)))
                .collect();
            // SAFETY: kill has no memory-safety preconditions; `pid` is our
            // unreaped child.
            unsafe { libc::kill(pid, signal) };
        }
        // a guard gets the SIGTERM alone: it stops its tree in order
        let to_tree = !(self.guarded && signal == libc::SIGTERM);
        for (p, t) in below.iter().chain(earlier) {
            if to_tree && started(*p) == Some(*t) {
                // SAFETY: as above; each checked to be the process found.
                unsafe { libc::kill(*p, signal) };
            }
        }
        below.extend_from_slice(earlier);
        below
    }

    /// The last lines it wrote on stderr while they were kept, waiting up
    /// to a second for its stderr to close.
    pub(crate) fn stderr(&mut self) -> String {
        let Some(state) = &self.stderr else {
            return String::new();
        };
        let until = Instant::now() + Duration::from_secs(1);
        while !state.closed.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let kept = state.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.iter().map(|l| format!("{l}\n")).collect()
    }

    /// From now on its stderr is relayed ([`Stderr::KeepThenRelay`]),
    /// beginning with the lines kept so far.
    pub(crate) fn relay_stderr(&mut self) {
        if let (Some(state), Some(label)) = (&self.stderr, self.relay_label.take()) {
            let mut relay = state.relay.lock().unwrap_or_else(|p| p.into_inner());
            let mut kept = state.kept.lock().unwrap_or_else(|p| p.into_inner());
            for line in kept.drain(..) {
                eprintln!("{label}: {}", crate::terminal::escape(&line));
            }
            *relay = Some(label);
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if self.ended.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}

/// When process `pid` started: with its PID, what tells it from a later
/// process that got the same PID.
fn started(pid: i32) -> Option<u64> {
    crate::probe::process::Stat::of(i64::from(pid))?.start_ticks()
}

/// Lines of `stream` sent one by one on a thread of its own; the channel
/// closes at the stream's end or after a line beyond [`LINE_CAP_BYTES`].
fn read_lines(stream: Option<impl Read + Send + 'static>) -> Receiver<Heard> {
    let (tx, rx) = std::sync::mpsc::channel();
    let Some(mut stream) = stream else {
        return rx;
    };
    let spawned = std::thread::Builder::new()
        .name("envbench-peer".into())
        .spawn(move || {
            let mut pending: Vec<u8> = Vec::new();
            let mut chunk = vec![0u8; 64 << 10];
            loop {
                let n = match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                // only the bytes just read can hold the next line's end:
                // a long line is scanned once, not once per chunk
                let mut from = pending.len();
                pending.extend_from_slice(&chunk[..n]);
                while let Some(at) = pending[from..].iter().position(|&b| b == b'\n') {
                    let end = from + at;
                    let line = String::from_utf8_lossy(&pending[..end]).into_owned();
                    pending.drain(..=end);
                    from = 0;
                    if tx.send(Heard::Line(line)).is_err() {
                        return;
                    }
                }
                if pending.len() > LINE_CAP_BYTES {
                    let _ = tx.send(Heard::TooLong);
                    return;
                }
            }
        });
    if spawned.is_err() {
        // no thread: the caller hears the stream closed at once
        drop(rx);
        return std::sync::mpsc::channel().1;
    }
    rx
}

/// Reads `stream` line by line (at most 4 KiB of a line) on a thread of
/// its own: each line kept in `state` (the last [`KEPT_LINES`]) or, once
/// `state` has a label, written to envbench's stderr after it, escaped.
/// What an environment writes there never reaches the terminal raw.
fn read_stderr(stream: impl Read + Send + 'static, state: std::sync::Arc<ErrState>) {
    let spawned = std::thread::Builder::new()
        .name("envbench-stderr".into())
        .spawn({
            let state = std::sync::Arc::clone(&state);
            move || {
                use std::io::BufRead as _;
                let mut reader = std::io::BufReader::new(stream);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    match (&mut reader).take(4096).read_until(b'\n', &mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                    let text = String::from_utf8_lossy(&line);
                    let text = text.trim_end_matches(['\n', '\r']);
                    if text.is_empty() {
                        continue;
                    }
                    let relay = state
                        .relay
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone();
                    match relay {
                        Some(label) => eprintln!("{label}: {}", crate::terminal::escape(text)),
                        None => {
                            let mut kept = state.kept.lock().unwrap_or_else(|p| p.into_inner());
                            if kept.len() == KEPT_LINES {
                                kept.pop_front();
                            }
                            kept.push_back(text.to_string());
                        }
                    }
                }
                state.closed.store(true, Ordering::SeqCst);
            }
        });
    if spawned.is_err() {
        state.closed.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer running `sh -c SCRIPT` directly (the guard is envbench's
    /// own binary, which a unit test does not have: tests/interleave.rs
    /// runs prefixes under it), its stderr kept when `keep`.
    fn sh(script: &str, keep: bool) -> Peer {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", script]);
        let stderr = if keep { Stderr::Keep } else { Stderr::Inherit };
        Peer::start(cmd, false, stderr).unwrap()
    }

    fn alive(pid: i32) -> bool {
        // a zombie is dead
        crate::probe::process::running(i64::from(pid))
    }

    #[test]
    fn lines_arrive_in_order_then_the_end() {
        let mut p = sh("echo one; echo two", false);
        let until = Instant::now() + Duration::from_secs(10);
        assert_eq!(p.next(until, None), Heard::Line("one".into()));
        assert_eq!(p.next(until, None), Heard::Line("two".into()));
        assert_eq!(p.next(until, None), Heard::Closed);
        let (status, stopped) = p.finish(Duration::from_secs(5));
        assert!(status.unwrap().success() && !stopped);
    }

    #[test]
    fn a_silent_process_is_late_and_its_whole_group_is_stopped() {
        // sh's child (sleep) is the grandchild of envbench's command
        let mut p = sh("sleep 1000 & echo $!; wait", false);
        let until = Instant::now() + Duration::from_secs(10);
        let Heard::Line(grandchild) = p.next(until, None) else {
            panic!("no pid")
        };
        let grandchild: i32 = grandchild.trim().parse().unwrap();
        let t = Instant::now();
        assert_eq!(
            p.next(Instant::now() + Duration::from_millis(200), None),
            Heard::Late
        );
        assert!(t.elapsed() < Duration::from_secs(2));
        let pid = p.pid();
        p.stop();
        assert!(!alive(pid), "the started process is gone");
        // the grandchild was reparented and may be a zombie for a moment
        let gone = Instant::now() + Duration::from_secs(5);
        while alive(grandchild) && Instant::now() < gone {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(grandchild), "the grandchild is gone too");
    }

    #[test]
    fn an_interruption_is_heard_while_waiting() {
        // exec: the shell becomes the sleep, so that stopping it at once
        // cannot miss a child the shell was still forking (a `sleep 1000`
        // was left behind so, once in a full test run)
        let mut p = sh("exec sleep 1000", false);
        let flag = AtomicBool::new(true);
        let t = Instant::now();
        let far = Instant::now() + Duration::from_secs(100);
        assert_eq!(p.next(far, Some(&flag)), Heard::Interrupted);
        assert!(t.elapsed() < Duration::from_secs(1));
        drop(p);
    }

    #[test]
    fn a_line_without_end_is_cut_off_not_read_into_memory() {
        // 80 MiB of 'a' and no newline
        let mut p = sh("head -c 83886080 /dev/zero | tr '\\0' a", false);
        let until = Instant::now() + Duration::from_secs(60);
        assert_eq!(p.next(until, None), Heard::TooLong);
        p.stop();
    }

    #[test]
    fn stderr_is_kept_for_the_message() {
        let mut p = sh("echo why >&2; exit 3", true);
        let until = Instant::now() + Duration::from_secs(10);
        assert_eq!(p.next(until, None), Heard::Closed);
        assert_eq!(p.stderr(), "why\n");
        let (status, _) = p.finish(Duration::from_secs(5));
        assert_eq!(status.unwrap().code(), Some(3));
    }
}
