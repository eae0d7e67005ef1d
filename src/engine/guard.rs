//! The guard between envbench and an environment's prefix: a small
//! process of envbench's own (`envbench __guard PROGRAM ARGS...`) that
//! starts the prefix and keeps every process the prefix starts beneath it,
//! so that all of them end with it, however envbench ends.
//!
//! - It is a subreaper (`PR_SET_CHILD_SUBREAPER`): a process the prefix
//!   starts stays its descendant even when its parent exits or it makes a
//!   session of its own (`setsid sleep 1000 &`).
//! - It dies with envbench (SIGTERM when envbench dies, even by SIGKILL),
//!   and on SIGTERM it stops every descendant: SIGTERM, [`GRACE`] to clean
//!   up (runsc removes its sandbox's directory then), SIGKILL.
//! - When the prefix's own process exits, the guard gives what it left
//!   behind [`LINGER`] to end by itself (a container runtime's cleanup),
//!   stops the rest, and exits with the prefix's status (128 + N for a
//!   signal N).
//! - It stays in envbench's process group, so a prefix that asks for a
//!   password at the terminal can read it; it ignores SIGINT itself (the
//!   run decides what a Ctrl-C stops) and holds none of the prefix's pipes
//!   open, so the run sees them close when the prefix's processes end.

use std::ffi::CString;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The hidden argument that makes envbench a guard.
pub const GUARD_ARG: &str = "__guard";

/// How long the guard's descendants get between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// How long what a prefix left behind may take to end by itself after
/// the prefix's own process exited.
pub const LINGER: Duration = Duration::from_secs(5);

/// Exit status when the program could not be started.
const NOT_STARTED: u8 = 127;

/// The guard's side: `args` are the program (a path) and its arguments.
pub(crate) fn serve(args: &[String]) -> ExitCode {
    let Some(program) = args.first() else {
        eprintln!("envbench: {GUARD_ARG} PROGRAM ARGS...");
        return ExitCode::from(2);
    };
    let argv: Result<Vec<CString>, _> = args.iter().map(|a| CString::new(a.as_bytes())).collect();
    let Ok(argv) = argv else {
        eprintln!("envbench: {GUARD_ARG}: an argument holds a NUL byte");
        return ExitCode::from(2);
    };
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let message = CString::new(format!(
        "envbench: cannot start {}\n",
        crate::terminal::escape(program)
    ))
    .unwrap_or_default();
    // SAFETY: the signal mask and dispositions of this single-threaded
    // process; sigset_t is plain data, zeroed then filled by sigemptyset.
    let mask = unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    // SAFETY: fork in a process with one thread; the child only makes
    // async-signal-safe calls (sigprocmask, signal, execv, write, _exit).
    let child = unsafe { libc::fork() };
    if child == 0 {
        // SAFETY: as above.
        unsafe {
            libc::sigprocmask(libc::SIG_UNBLOCK, &mask, std::ptr::null_mut());
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::execv(ptrs[0], ptrs.as_ptr());
            libc::write(2, message.as_ptr().cast(), message.as_bytes().len());
            libc::_exit(i32::from(NOT_STARTED));
        }
    }
    if child < 0 {
        eprintln!(
            "envbench: {GUARD_ARG}: cannot fork: {}",
            std::io::Error::last_os_error()
        );
        return ExitCode::from(NOT_STARTED);
    }
    release_pipes();
    watch(child, &mask)
}

/// Points the guard's stdin and stdout at /dev/null: the prefix holds the
/// pipes to envbench, and their ends must close when its processes end.
fn release_pipes() {
    // SAFETY: open and dup2 on this process's own descriptors.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            if null > 2 {
                libc::close(null);
            }
        }
    }
}

/// Waits for the prefix's process `child` and for the signals in `mask`;
/// stops every descendant when either comes; the exit code to leave with.
fn watch(child: libc::pid_t, mask: &libc::sigset_t) -> ExitCode {
    let tick = libc::timespec {
        tv_sec: 0,
        tv_nsec: 20_000_000,
    };
    loop {
        // SAFETY: sigtimedwait fills no info (null) and waits at most `tick`.
        let signal = unsafe { libc::sigtimedwait(mask, std::ptr::null_mut(), &tick) };
        if signal > 0 {
            stop_all(Duration::ZERO);
            return ExitCode::from(128 + signal as u8);
        }
        if let Some(status) = reap(Some(child)) {
            // what it left behind gets a moment to end by itself
            stop_all(LINGER);
            return ExitCode::from(code_of(status));
        }
    }
}

/// Reaps every ended child (orphans adopted as a subreaper included);
/// the status of `wanted` when it was among them.
fn reap(wanted: Option<libc::pid_t>) -> Option<i32> {
    let mut found = None;
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only `status`.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return found;
        }
        if Some(pid) == wanted {
            found = Some(status);
        }
    }
}

/// Every descendant of this process.
fn below() -> Vec<i32> {
    crate::cleanup::descendants(std::process::id() as i32, std::path::Path::new("/proc"))
}

/// Waits up to `first` for the descendants to end by themselves (none:
/// at once), then sends them SIGTERM, waits up to [`GRACE`], and kills
/// what is left.
fn stop_all(first: Duration) {
    if !wait_empty(first) {
        signal_all(libc::SIGTERM);
        if !wait_empty(GRACE) {
            signal_all(libc::SIGKILL);
            wait_empty(GRACE);
        }
    }
}

/// Sends `signal` to every descendant.
fn signal_all(signal: libc::c_int) {
    for pid in below() {
        // SAFETY: kill has no memory-safety preconditions; `pid` descends
        // from this process (and, being unreaped, is still that process).
        unsafe { libc::kill(pid, signal) };
    }
}

/// Reaps until no descendant is left, for at most `limit`; whether none is.
fn wait_empty(limit: Duration) -> bool {
    let until = Instant::now() + limit;
    loop {
        reap(None);
        // zombies of grandchildren are reaped by their own parents
        let alive = below().into_iter().any(running);
        if !alive {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `pid` is running (not a zombie).
fn running(pid: i32) -> bool {
    crate::probe::process::running(i64::from(pid))
}

/// The exit code that tells the run how the prefix ended: its own, or 128
/// + the signal that killed it.
fn code_of(status: i32) -> u8 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status) as u8
    } else if libc::WIFSIGNALED(status) {
        128u8.saturating_add(libc::WTERMSIG(status) as u8)
    } else {
        1
    }
}
