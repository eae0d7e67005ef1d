//! Programs a case starts that are not envbench itself: the environment's
//! C compiler and the program it built, `/bin/sh` asked where utilities
//! are, the tiny helper, a person's command. Each runs as a worker does:
//!
//! - in a process group of its own, so that whatever it starts in the
//!   background is stopped with it: when it ends, its group is killed,
//!   and anything it left that escaped the group (a new session) was
//!   adopted by this process ([`crate::cleanup::adopt_orphans`]) and is
//!   killed too;
//! - within a deadline (the round's, [`super::Context::deadline`]) and
//!   until the run is interrupted: then its whole tree is stopped, at the
//!   first signal, with workers on or off (its own process group does not
//!   get the terminal's Ctrl-C);
//! - its output read up to a cap ([`Program::keep_stdout`]; the rest is
//!   read and dropped), and the last
//!   lines of its stderr kept for the reason of a failure, which names the
//!   program, what it was asked to do and how it ended.
//!
//! - killed with envbench, should envbench be killed (`PR_SET_PDEATHSIG`,
//!   set between the fork and the exec), except a program started bare
//!   ([`Program::started_bare`]): a person's timed command, started as
//!   hyperfine starts it.
//!
//! Nothing here times anything: a case times around [`Program::run`] or
//! reads its program's own figures.

use super::BenchError;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How much of stderr's end is kept for a failure's reason.
const TAIL_BYTES: usize = 4096;
/// Lines of stderr's end a reason quotes, and the characters of each.
const TAIL_LINES: usize = 4;
const LINE_CHARS: usize = 200;
/// How long output is still read after a program's group was stopped:
/// what it wrote before it ended is in the pipe already.
const DRAIN: Duration = Duration::from_millis(500);
/// How often a running program's deadline and the run's interruption
/// are looked at.
const TICK: Duration = Duration::from_millis(100);

/// A program to run: the command, what it is asked to do (for messages:
/// "compiling f0003.c"), its deadline and how much output to keep.
pub(crate) struct Program {
    cmd: Command,
    task: String,
    deadline: Instant,
    stdout_cap: usize,
    stderr_cap: usize,
    /// Whether it is killed should envbench be killed ([`Program::started_bare`]).
    dies_with_envbench: bool,
}

/// How a program ended, with what was kept of its output.
#[derive(Debug)]
pub(crate) struct Ended {
    /// Its exit status.
    pub status: ExitStatus,
    /// From just before it was started to the moment its exit was seen,
    /// as hyperfine times a command: its start is in, its tree's stop and
    /// the reading of its last output are not.
    pub elapsed: Duration,
    /// Its user and system CPU time, with that of the descendants it
    /// waited for (the kernel's rusage of its wait).
    pub cpu: Duration,
    /// The start of its stdout, up to the cap asked for.
    pub stdout: Vec<u8>,
    /// The start of its stderr, up to the cap asked for.
    pub stderr: Vec<u8>,
    /// The end of its stderr, whatever the cap.
    tail: VecDeque<u8>,
}

impl Program {
    /// `cmd`, asked to do `task`, with the round's `deadline`. Its stdin
    /// is empty, its stdout discarded and its stderr's end kept unless
    /// asked otherwise; it dies with envbench.
    pub(crate) fn new(mut cmd: Command, task: impl Into<String>, deadline: Instant) -> Program {
        cmd.process_group(0).stdin(Stdio::null());
        Program {
            cmd,
            task: task.into(),
            deadline,
            stdout_cap: 0,
            stderr_cap: 0,
            dies_with_envbench: true,
        }
    }

    /// Starts it as hyperfine starts a command: no code of envbench's
    /// runs between the fork and the exec, so the C library spawns it
    /// with a `vfork`-like clone that copies nothing, where a fork of
    /// envbench would copy its page tables. On the Zen 4 VM a fork cost
    /// `true` 0.3 ms beside hyperfine's 0.7 ms (docs/log/fidelity.md). It
    /// is then not killed by the kernel should envbench be: the process
    /// that started it stops its tree on every other way out (its end, its
    /// deadline, Ctrl-C, a worker's wind-down when envbench dies), but a
    /// worker killed with SIGKILL itself leaves it running, as hyperfine
    /// killed would. The spawn needs glibc 2.29 or later where a working
    /// directory is set, as it always is for a command: on older ones (the
    /// portable build's floor) the standard library forks all the same.
    pub(crate) fn started_bare(mut self) -> Program {
        self.dies_with_envbench = false;
        self
    }

    /// Stops it `limit` from now where that comes before its deadline:
    /// for a question a program answers at once (`cc --version`).
    pub(crate) fn within(mut self, limit: Duration) -> Program {
        if let Some(sooner) = Instant::now().checked_add(limit) {
            self.deadline = self.deadline.min(sooner);
        }
        self
    }

    /// Keeps the first `bytes` of its stdout (the rest is read and dropped).
    pub(crate) fn keep_stdout(mut self, bytes: usize) -> Program {
        self.stdout_cap = bytes;
        self
    }

    /// Keeps the first `bytes` of its stderr (its end is kept anyway).
    pub(crate) fn keep_stderr(mut self, bytes: usize) -> Program {
        self.stderr_cap = bytes;
        self
    }

    /// The program and its task, as a failure names them: "cc (compiling
    /// f0003.c)".
    pub(crate) fn name(&self) -> String {
        let program = self.cmd.get_program().to_string_lossy();
        let program = program.rsplit('/').next().unwrap_or(&program).to_string();
        if self.task.is_empty() {
            program
        } else {
            format!("{program} ({})", self.task)
        }
    }

    /// Runs it to its end, its deadline or the run's interruption.
    ///
    /// # Errors
    /// It cannot start, or did not end by its deadline (both name it), or
    /// the run was interrupted; its whole tree is stopped in every case.
    pub(crate) fn run(mut self) -> Result<Ended, BenchError> {
        let name = self.name();
        let stdout = if self.stdout_cap > 0 {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        crate::cleanup::adopt_orphans();
        let before = crate::cleanup::children(std::process::id());
        self.cmd.stdout(stdout).stderr(Stdio::piped());
        if self.dies_with_envbench {
            crate::cleanup::die_with_envbench(&mut self.cmd);
        }
        let started = Instant::now();
        let mut child = self
            .cmd
            .spawn()
            .map_err(|e| BenchError::Failed(format!("cannot start {name}: {e}")))?;
        let mut out = Outputs::of(&mut child, self.stdout_cap, self.stderr_cap);
        let ended = watch(child.id(), &mut out, self.deadline);
        let elapsed = started.elapsed();
        let (status, cpu) = stop_tree(child.id() as i32, &before, !matches!(ended, Watch::Ended));
        out.drain(Instant::now() + DRAIN);
        match ended {
            Watch::Ended => Ok(out.into_ended(status, elapsed, cpu)),
            Watch::Interrupted => Err(BenchError::Interrupted),
            Watch::Late(limit) => Err(BenchError::Failed(format!(
                "{name} did not end within {} s and was stopped with what it started{}",
                limit.as_secs(),
                out.tail_words()
            ))),
        }
    }

    /// Runs it and wants it to succeed; returns what it kept.
    ///
    /// # Errors
    /// As [`Program::run`], and its failure (its exit or the signal that
    /// ended it, with the last lines of its stderr); a program killed by
    /// SIGINT is an interruption.
    pub(crate) fn output(self) -> Result<Ended, BenchError> {
        let name = self.name();
        let ended = self.run()?;
        if ended.status.success() {
            return Ok(ended);
        }
        if ended.status.signal() == Some(libc::SIGINT) {
            return Err(BenchError::Interrupted);
        }
        Err(BenchError::Failed(format!(
            "{name} failed ({}){}",
            ended.status,
            ended.tail_words()
        )))
    }
}

impl Ended {
    /// The last lines of its stderr, each cut short, joined by " / ".
    pub(crate) fn last_lines(&self) -> String {
        last_lines(&self.tail)
    }

    /// ": LAST LINES", or nothing where it wrote nothing to stderr.
    fn tail_words(&self) -> String {
        with_colon(self.last_lines())
    }
}

fn with_colon(lines: String) -> String {
    if lines.is_empty() {
        lines
    } else {
        format!(": {lines}")
    }
}

/// The last [`TAIL_LINES`] non-empty lines of `tail`, each at most
/// [`LINE_CHARS`] characters, joined by " / ".
fn last_lines(tail: &VecDeque<u8>) -> String {
    let bytes: Vec<u8> = tail.iter().copied().collect();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    lines[from..]
        .iter()
        .map(|l| match l.char_indices().nth(LINE_CHARS) {
            Some((at, _)) => format!("{}...", &l[..at]),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

/// How watching a program ended.
enum Watch {
    /// It exited (it is not reaped yet, so its group's ID stays its own).
    Ended,
    Interrupted,
    /// Its deadline passed: the time it had.
    Late(Duration),
}

/// Reads the output of child `pid` until it ends, its deadline passes or
/// the run is interrupted. Its end wakes the wait at once through
/// [`end_of`]'s descriptor; where there is none, it is looked for every
/// millisecond.
fn watch(pid: u32, out: &mut Outputs, deadline: Instant) -> Watch {
    let started = Instant::now();
    out.pidfd = end_of(pid);
    let tick = if out.pidfd.is_some() {
        TICK
    } else {
        Duration::from_millis(1)
    };
    loop {
        if exited(pid) {
            return Watch::Ended;
        }
        if crate::cleanup::interrupted() {
            return Watch::Interrupted;
        }
        let now = Instant::now();
        if now >= deadline {
            return Watch::Late(deadline.saturating_duration_since(started));
        }
        out.read_for((deadline - now).min(tick));
    }
}

/// A descriptor that poll finds readable once child `pid` has ended: its
/// pidfd where the kernel has one, else the read end of a pipe whose
/// write end a thread closes when its blocking wait for `pid` returns
/// ([`waiter`]); None where neither can be had.
///
/// Where there is no pidfd (gVisor of 2022, WSL 1, kernels before 5.3)
/// the wait was a poll every millisecond, three system calls each, on a
/// CPU the command timed may want (in gVisor a system call costs tens of
/// microseconds). No change in a command's figure was measured from it
/// (docs/log/attribution.md): the thread is less work, not a fix.
fn end_of(pid: u32) -> Option<std::os::fd::OwnedFd> {
    pidfd(pid).or_else(|| waiter(pid))
}

/// The read end of a pipe whose write end a thread of this process holds
/// while it waits, blocked, for child `pid` to end (`waitid` with
/// WNOWAIT, so the child is left for [`stop_tree`] to reap). The thread
/// starts before [`stop_tree`] can reap the child; should it call
/// `waitid` only after, it gets ECHILD and ends (a PID is not reused
/// within microseconds).
fn waiter(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let mut ends = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two descriptors into `ends`.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: both are new descriptors this process now owns.
    let (read, write) = unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(ends[0]),
            std::os::fd::OwnedFd::from_raw_fd(ends[1]),
        )
    };
    std::thread::Builder::new()
        .name("envbench-wait".into())
        .stack_size(64 << 10)
        .spawn(move || {
            let _held = write;
            loop {
                // SAFETY: an all-zero siginfo_t is valid; waitid writes
                // only `info`.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                let flags = libc::WEXITED | libc::WNOWAIT;
                // SAFETY: as above.
                let r = unsafe { libc::waitid(libc::P_PID, pid, &mut info, flags) };
                if r == 0
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    break;
                }
            }
        })
        .ok()
        .map(|_| read)
}

/// A descriptor of process `pid` that poll finds readable once it has
/// ended (`pidfd_open`, by its raw system call: the portable build links
/// an older glibc); None where the kernel has none.
fn pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a PID and flags and returns a new
    // descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a non-negative result is a descriptor this process now owns.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Whether child `pid` has exited, leaving it unreaped (WNOWAIT).
fn exited(pid: u32) -> bool {
    // SAFETY: an all-zero siginfo_t is valid; waitid writes only `info`.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: as above; `pid` is this process's child.
    let r = unsafe { libc::waitid(libc::P_PID, pid, &mut info, flags) };
    // SAFETY: si_pid is set by waitid where a child changed state (0 else).
    r != 0 || unsafe { info.si_pid() } != 0
}

/// Stops `leader`'s tree: every descendant it has now (where it is still
/// `running`) and its process group; then the leader is reaped (its wait
/// status and CPU time returned), and so are the orphans it left that
/// this process adopted ([`crate::cleanup::adopt_orphans`]): children that
/// were not among `before` and are in the leader's group or in a session
/// of their own (envbench starts nothing in a new session: a prefix's
/// processes are its guard's).
///
/// A leader that has exited has no children: the kernel gave them to this
/// process (or, where it adopts none, to another reaper) before the
/// leader became a zombie, so its descendants are not looked for. That
/// search reads every process's `/proc/PID/stat`, and between a command's
/// repetitions it slowed the next one: `ls -la` of 200 files ran 15-25 %
/// slower after a `find /proc` under hyperfine (docs/log/fidelity.md).
fn stop_tree(leader: i32, before: &[u32], running: bool) -> (ExitStatus, Duration) {
    let proc_root = std::path::Path::new("/proc");
    let mut doomed = if running {
        crate::cleanup::descendants(leader, proc_root)
    } else {
        Vec::new()
    };
    doomed.push(-leader);
    kill_all(&doomed);
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 writes only `status` and `usage`; the leader is this
    // process's child, whose Child handle is not waited again.
    unsafe { libc::wait4(leader, &mut status, 0, &mut usage) };
    let leader_status = (ExitStatus::from_raw(status), cpu_of(&usage));
    let me = std::process::id();
    let my_session = session_of(me);
    for _ in 0..10 {
        let adopted: Vec<i32> = crate::cleanup::children(me)
            .into_iter()
            .filter(|c| !before.contains(c))
            .filter(|&c| {
                let (group, session) = (group_of(c), session_of(c));
                group == Some(leader) || (session.is_some() && session != my_session)
            })
            .map(|c| c as i32)
            .collect();
        if adopted.is_empty() {
            break;
        }
        for &orphan in &adopted {
            let mut tree = crate::cleanup::descendants(orphan, proc_root);
            tree.push(orphan);
            kill_all(&tree);
            // SAFETY: as above; `orphan` is a child this process adopted.
            unsafe { libc::waitpid(orphan, &mut status, 0) };
        }
    }
    leader_status
}

/// The user and system time of `usage`.
fn cpu_of(usage: &libc::rusage) -> Duration {
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// SIGKILL to each of `pids` (a negative one: a process group).
fn kill_all(pids: &[i32]) {
    for &pid in pids {
        // SAFETY: kill has no memory-safety preconditions; each is a
        // program's process, its group, or one it left to this process.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Process `pid`'s group and session.
fn group_of(pid: u32) -> Option<i32> {
    crate::probe::process::Stat::of(i64::from(pid))?.group()
}

fn session_of(pid: u32) -> Option<i32> {
    crate::probe::process::Stat::of(i64::from(pid))?.session()
}

/// The program's pipes (stdout, stderr: None once at their end or never
/// piped) and what is kept of them.
struct Outputs {
    pipes: [Option<std::fs::File>; 2],
    /// The program's pidfd, polled beside its pipes ([`watch`]).
    pidfd: Option<std::os::fd::OwnedFd>,
    kept: [Vec<u8>; 2],
    caps: [usize; 2],
    tail: VecDeque<u8>,
}

/// Index of stderr in [`Outputs`]' arrays.
const ERR: usize = 1;

impl Outputs {
    fn of(child: &mut Child, stdout_cap: usize, stderr_cap: usize) -> Outputs {
        let pipe = |fd: Option<std::os::fd::OwnedFd>| {
            fd.map(|fd| {
                set_nonblocking(fd.as_raw_fd());
                std::fs::File::from(fd)
            })
        };
        Outputs {
            pipes: [
                pipe(child.stdout.take().map(Into::into)),
                pipe(child.stderr.take().map(Into::into)),
            ],
            pidfd: None,
            kept: [Vec::new(), Vec::new()],
            caps: [stdout_cap, stderr_cap],
            tail: VecDeque::with_capacity(TAIL_BYTES),
        }
    }

    fn open(&self) -> bool {
        self.pipes.iter().any(Option::is_some)
    }

    /// Waits up to `wait` for output and reads what came.
    fn read_for(&mut self, wait: Duration) {
        let mut fds: Vec<libc::pollfd> = self
            .pipes
            .iter()
            .flatten()
            .map(|f| f.as_raw_fd())
            .chain(self.pidfd.as_ref().map(|p| p.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        if fds.is_empty() {
            std::thread::sleep(wait);
            return;
        }
        let ms = wait.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: `fds` is a valid array of its length, alive for the call.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        for i in 0..2 {
            self.read_ready(i);
        }
    }

    /// Reads whatever pipe `i` holds now; a pipe at its end is closed.
    fn read_ready(&mut self, i: usize) {
        let mut buf = [0u8; 16 * 1024];
        while let Some(file) = &mut self.pipes[i] {
            match std::io::Read::read(file, &mut buf) {
                Ok(0) => self.pipes[i] = None,
                Ok(n) => {
                    let room = self.caps[i].saturating_sub(self.kept[i].len()).min(n);
                    self.kept[i].extend_from_slice(&buf[..room]);
                    if i == ERR {
                        keep_tail(&mut self.tail, &buf[..n]);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => self.pipes[i] = None,
            }
        }
    }

    /// Reads what is left until both pipes end or `until` passes (a
    /// process that escaped every stop may hold one open).
    fn drain(&mut self, until: Instant) {
        // the program has ended: its pidfd would wake every poll
        self.pidfd = None;
        while self.open() {
            let now = Instant::now();
            if now >= until {
                break;
            }
            self.read_for((until - now).min(TICK));
        }
        self.pipes = [None, None];
    }

    fn tail_words(&self) -> String {
        with_colon(last_lines(&self.tail))
    }

    fn into_ended(self, status: ExitStatus, elapsed: Duration, cpu: Duration) -> Ended {
        let [stdout, stderr] = self.kept;
        Ended {
            status,
            elapsed,
            cpu,
            stdout,
            stderr,
            tail: self.tail,
        }
    }
}

fn keep_tail(tail: &mut VecDeque<u8>, bytes: &[u8]) {
    let bytes = &bytes[bytes.len().saturating_sub(TAIL_BYTES)..];
    let over = (tail.len() + bytes.len()).saturating_sub(TAIL_BYTES);
    tail.drain(..over);
    tail.extend(bytes);
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor this process owns, with valid flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soon(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.args(["-c", script]);
        c
    }

    /// Whether process `pid` is gone (a zombie of another parent counts as
    /// running: it is not).
    fn gone(pid: u32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        stat.is_err()
    }

    fn pid_in(bytes: &[u8]) -> u32 {
        String::from_utf8_lossy(bytes).trim().parse().unwrap()
    }

    #[test]
    fn a_program_started_bare_is_in_its_own_group_without_the_death_signal() {
        // what the started process finds: its parent-death signal
        // (PR_GET_PDEATHSIG) and whether it leads its own process group
        const ASK: &str = "import ctypes, os\n\
            s = ctypes.c_int()\n\
            ctypes.CDLL(None).prctl(2, ctypes.byref(s), 0, 0, 0)\n\
            print(s.value, os.getpgrp() == os.getpid())";
        if crate::cleanup::resolve("python3").is_err() {
            eprintln!("skipped: no python3 here");
            return;
        }
        let ask = |bare: bool| {
            let mut c = Command::new("python3");
            c.args(["-c", ASK]);
            let p = Program::new(c, "", soon(20_000)).keep_stdout(64);
            let p = if bare { p.started_bare() } else { p };
            String::from_utf8(p.output().unwrap().stdout).unwrap()
        };
        assert_eq!(ask(false).trim(), format!("{} True", libc::SIGKILL));
        assert_eq!(ask(true).trim(), "0 True");
    }

    #[test]
    fn what_it_starts_in_the_background_is_stopped_with_it() {
        let ended = Program::new(sh("sleep 300 >/dev/null 2>&1 & echo $!"), "", soon(20_000))
            .keep_stdout(64)
            .output()
            .unwrap();
        assert!(gone(pid_in(&ended.stdout)));
    }

    #[test]
    fn a_child_holding_its_stderr_does_not_keep_the_round_waiting() {
        let t = Instant::now();
        let ended = Program::new(sh("sleep 300 & echo $!"), "", soon(20_000))
            .keep_stdout(64)
            .output()
            .unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(gone(pid_in(&ended.stdout)));
    }

    #[test]
    fn a_child_in_a_session_of_its_own_is_stopped_too() {
        if crate::cleanup::resolve("setsid").is_err() {
            eprintln!("skipped: no setsid here");
            return;
        }
        let ended = Program::new(
            sh("setsid sleep 300 >/dev/null 2>&1 & echo $!; sleep 0.2"),
            "",
            soon(20_000),
        )
        .keep_stdout(64)
        .output()
        .unwrap();
        assert!(gone(pid_in(&ended.stdout)));
    }

    #[test]
    fn a_program_past_its_deadline_is_stopped_and_named() {
        let t = Instant::now();
        let got = Program::new(
            sh("echo working >&2; sleep 300 & echo $! >&2; wait"),
            "hanging",
            soon(400),
        )
        .run();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        let Err(BenchError::Failed(why)) = got else {
            panic!("{got:?}")
        };
        assert!(why.starts_with("sh (hanging) did not end within"), "{why}");
        assert!(why.contains(": working / "), "{why}");
        let pid: u32 = why.rsplit(" / ").next().unwrap().parse().unwrap();
        assert!(gone(pid));
    }

    #[test]
    fn its_output_is_kept_up_to_the_cap_and_the_rest_read() {
        let ended = Program::new(
            sh("head -c 3000000 /dev/zero; yes | head -c 3000000 >&2; echo last >&2"),
            "",
            soon(20_000),
        )
        .keep_stdout(1000)
        .output()
        .unwrap();
        assert_eq!(ended.stdout.len(), 1000);
        assert!(ended.stderr.is_empty());
        assert!(ended.tail.len() <= TAIL_BYTES);
        assert!(
            ended.last_lines().ends_with("last"),
            "{}",
            ended.last_lines()
        );
    }

    #[test]
    fn a_failure_names_the_program_its_task_its_exit_and_its_last_lines() {
        let lines: String = (1..=9).map(|i| format!("echo line{i} >&2;")).collect();
        let long = "x".repeat(1000);
        let got = Program::new(
            sh(&format!("{lines} echo {long} >&2; exit 3")),
            "building",
            soon(20_000),
        )
        .output();
        let Err(BenchError::Failed(why)) = got else {
            panic!("{got:?}")
        };
        let cut = format!("{}...", "x".repeat(LINE_CHARS));
        assert_eq!(
            why,
            format!("sh (building) failed (exit status: 3): line7 / line8 / line9 / {cut}")
        );
    }

    #[test]
    fn its_time_runs_from_its_start_to_its_end_and_its_cpu_is_counted() {
        let ended = Program::new(
            sh("i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.2"),
            "",
            soon(20_000),
        )
        .output()
        .unwrap();
        assert!(ended.elapsed >= Duration::from_millis(200), "{ended:?}");
        assert!(ended.elapsed < Duration::from_secs(10), "{ended:?}");
        assert!(ended.cpu > Duration::ZERO, "{ended:?}");
        assert!(ended.cpu < ended.elapsed, "{ended:?}");
    }

    #[test]
    fn without_a_pidfd_a_waiting_thread_wakes_the_poll_when_the_child_ends() {
        let mut child = Command::new("sleep").arg("0.3").spawn().unwrap();
        let began = Instant::now();
        let fd = waiter(child.id()).expect("a pipe and a thread");
        let polled = |ms| {
            let mut p = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, alive for the call.
            unsafe { libc::poll(&mut p, 1, ms) }
        };
        assert_eq!(polled(0), 0, "readable before the child ended");
        assert_eq!(polled(20_000), 1, "not readable after it ended");
        assert!(began.elapsed() >= Duration::from_millis(250));
        // WNOWAIT: the child is still there to be reaped, with its status
        assert!(exited(child.id()));
        assert!(child.wait().unwrap().success());
        // a child reaped before the thread waits: readable at once, and
        // watch's own look (`exited`) says it ended, so no poll spins
        let mut gone = Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let fd = waiter(gone.id()).expect("a pipe and a thread");
        let mut p = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, alive for the call.
        assert_eq!(unsafe { libc::poll(&mut p, 1, 5_000) }, 1);
        assert!(exited(gone.id()));
    }

    #[test]
    fn a_program_that_cannot_start_is_named() {
        let got = Program::new(
            Command::new("/nonexistent/envbench-cc"),
            "compiling",
            soon(1000),
        )
        .run();
        let Err(BenchError::Failed(why)) = got else {
            panic!("{got:?}")
        };
        assert!(
            why.starts_with("cannot start envbench-cc (compiling): "),
            "{why}"
        );
    }
}
