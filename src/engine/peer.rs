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
//! - **Its whole tree stopped.** A prefix's process starts in a process
//!   group of its own (envbench's own worker stays in envbench's);
//!   [`Peer::stop`] sends SIGTERM to that group and to every descendant of
//!   the process (a prefix's children that left the group included),
//!   waits [`STOP_GRACE`] for them to clean up (runsc removes its
//!   sandbox's directory then), and kills what is left. A peer dropped
//!   without [`Peer::finish`] is stopped so.
//!
//! The process also gets SIGTERM when envbench dies, even by SIGKILL
//! ([`crate::cleanup::wind_down_with_envbench`]), and its stdin stays open while
//! it is spoken to: a worker that sees its stdin close knows envbench is
//! gone, through any prefix that forwards stdin, whether or not the prefix
//! passes signals on.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How often a wait looks at the run's `interrupted` flag.
pub const POLL: Duration = Duration::from_millis(50);

/// How long a stopped process tree gets to clean up after SIGTERM before
/// what is left is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// The longest line read from a peer: a worker's outcome with its samples
/// and telemetry is well under a megabyte.
pub const LINE_CAP_BYTES: usize = 64 << 20;

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
    stderr: Option<Receiver<Vec<u8>>>,
    ended: Option<ExitStatus>,
    /// Whether it leads a process group of its own (a prefix's process).
    own_group: bool,
}

impl Peer {
    /// Starts `cmd` (its stdin and stdout piped), in a process group of
    /// its own when `own_group`: a prefix's processes get one, to be
    /// stopped as one, while envbench's own worker stays in envbench's
    /// group, where a terminal's Ctrl-C and hangup reach it as they reach
    /// envbench. Its stderr is piped too when `capture_stderr` (kept for a
    /// message, [`Peer::stderr`]), else inherited.
    ///
    /// # Errors
    /// The process cannot start.
    pub fn start(
        mut cmd: std::process::Command,
        own_group: bool,
        capture_stderr: bool,
    ) -> Result<Peer, std::io::Error> {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        if own_group {
            cmd.process_group(0);
        }
        if capture_stderr {
            cmd.stderr(Stdio::piped());
        }
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take();
        let lines = read_lines(child.stdout.take());
        let stderr = child.stderr.take().map(read_capped);
        Ok(Peer {
            child,
            stdin,
            lines,
            stderr,
            ended: None,
            own_group,
        })
    }

    /// The process's PID (its process group's too, for a prefix's).
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Writes `line` and a newline to its stdin.
    ///
    /// # Errors
    /// The pipe is closed (the process ended) or stdin was closed.
    pub fn send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin is closed"))?;
        writeln!(stdin, "{line}")?;
        stdin.flush()
    }

    /// Closes its stdin: a worker winds its round down when it sees that.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line, waiting until `until` at most; [`Heard::Interrupted`]
    /// as soon as `interrupted` is set (None: not watched).
    pub fn next(&mut self, until: Instant, interrupted: Option<&AtomicBool>) -> Heard {
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

    /// Waits until `until` for the process to exit; its status, or None
    /// when it is still running.
    pub fn wait_until(&mut self, until: Instant) -> Option<ExitStatus> {
        loop {
            if let Some(s) = self.ended {
                return Some(s);
            }
            if let Ok(Some(s)) = self.child.try_wait() {
                self.ended = Some(s);
                return Some(s);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Closes stdin and waits up to `within` for the process to exit; a
    /// process still there then is stopped ([`Peer::stop`]). Its status,
    /// and whether it had to be stopped.
    pub fn finish(mut self, within: Duration) -> (Option<ExitStatus>, bool) {
        self.close_stdin();
        if let Some(s) = self.wait_until(Instant::now() + within) {
            // a prefix's children that outlived it in its group go too
            self.signal_tree(libc::SIGKILL, &[]);
            return (Some(s), false);
        }
        self.stop();
        (self.ended, true)
    }

    /// Stops the process and everything it started: SIGTERM to its group
    /// and its descendants, [`STOP_GRACE`] to end, then SIGKILL to what is
    /// left; reaps it.
    pub fn stop(&mut self) {
        self.close_stdin();
        let below = self.signal_tree(libc::SIGTERM, &[]);
        let _ = self.wait_until(Instant::now() + STOP_GRACE);
        self.signal_tree(libc::SIGKILL, &below);
        if self.ended.is_none() {
            self.ended = self.child.wait().ok();
        }
        self.settle_group();
    }

    /// Waits up to [`STOP_GRACE`] until no process of its group is left,
    /// reaping those this process adopted ([`crate::cleanup::adopt_orphans`]):
    /// a prefix's child orphaned by the stop is then gone, not a zombie.
    fn settle_group(&self) {
        if !self.own_group {
            return;
        }
        let until = Instant::now() + STOP_GRACE;
        loop {
            crate::cleanup::reap_orphans();
            // SAFETY: signal 0 only checks that the group has a member.
            let gone = unsafe { libc::kill(-self.pid(), 0) } != 0;
            if gone || Instant::now() >= until {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends `signal` to the process's group, and, while the process is
    /// not yet reaped (its PID still its own), to the process and each of
    /// its descendants (those that made groups or sessions of their own),
    /// and to those of `earlier` (descendants found before) that are still
    /// the same processes. Returns the descendants signalled.
    fn signal_tree(&mut self, signal: libc::c_int, earlier: &[(i32, u64)]) -> Vec<(i32, u64)> {
        let pid = self.pid();
        if self.own_group {
            // the group's id stays reserved while any member lives: never another's
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(-pid, signal) };
        }
        if self.ended.is_none() {
            self.ended = self.child.try_wait().ok().flatten();
        }
        if self.ended.is_none() {
            let mut below: Vec<(i32, u64)> =
                crate::cleanup::descendants(pid, std::path::Path::new("/proc"))
                    .into_iter()
                    .filter_map(|p| Some((p, started(p)?)))
                    .collect();
            below.extend(earlier.iter().filter(|(p, t)| started(*p) == Some(*t)));
            // SAFETY: as above; `pid` is our unreaped child, `below` its
            // descendants, each checked to be the process found then.
            unsafe {
                libc::kill(pid, signal);
                for (p, _) in &below {
                    libc::kill(*p, signal);
                }
            }
            return below;
        }
        // reaped: its PID may be another's now; only the group and the
        // processes found before, still the same ones
        for (p, t) in earlier {
            if started(*p) == Some(*t) {
                // SAFETY: as above, checked to be the process found before.
                unsafe { libc::kill(*p, signal) };
            }
        }
        Vec::new()
    }

    /// What it wrote on stderr so far, when captured: what a second's wait
    /// gets once its stderr closed.
    pub fn stderr(&mut self) -> String {
        self.stderr
            .take()
            .and_then(|rx| rx.recv_timeout(Duration::from_secs(1)).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if self.ended.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            self.stop();
        } else {
            self.signal_tree(libc::SIGKILL, &[]);
        }
    }
}

/// When process `pid` started (`/proc/PID/stat`'s 22nd field, clock ticks
/// since boot): with its PID, what tells it from a later process that got
/// the same PID.
fn started(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // after the command name in parentheses: state is field 3, starttime 22
    stat.get(stat.rfind(')')? + 2..)?
        .split(' ')
        .nth(19)?
        .parse()
        .ok()
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
                pending.extend_from_slice(&chunk[..n]);
                while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                    let line = String::from_utf8_lossy(&pending[..end]).into_owned();
                    pending.drain(..=end);
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

/// `stream` read to its end on a thread, at most a megabyte kept.
fn read_capped(stream: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("envbench-peer-err".into())
        .spawn(move || {
            let mut buf = Vec::new();
            let _ = stream.take(1 << 20).read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer running `sh -c SCRIPT` in a group of its own.
    fn sh(script: &str, capture_stderr: bool) -> Peer {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", script]);
        Peer::start(cmd, true, capture_stderr).unwrap()
    }

    fn alive(pid: i32) -> bool {
        // a zombie is dead: read its state
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                let rest = &s[s.rfind(')')? + 2..];
                rest.chars().next()
            })
            .is_some_and(|state| state != 'Z' && state != 'X')
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
        let mut p = sh("sleep 1000", false);
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
