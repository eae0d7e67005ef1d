//! What a second Ctrl-C (or SIGTERM) must still clean up before envbench
//! exits at once: the processes it started, directly or through a helper,
//! and the scratch directories it created; and the processes that die with
//! envbench however it ends ([`die_with_envbench`],
//! [`wind_down_with_envbench`]).
//!
//! The first signal only sets a flag and the current case winds down by
//! itself, reaping its children and removing its directories as usual. The
//! second one cannot wait for that, so [`emergency_exit`] stops every
//! descendant of envbench (each was started by envbench or by a child it
//! started), kills them by PID, removes every live scratch directory (the
//! benches' `ScratchDir`s register here) and exits with 130. Scratch directories are created and removed under one lock,
//! which the emergency exit holds to the end, and the normal end of a run
//! ([`Settle`]) waits for that lock: neither exit can cut the other's
//! cleanup short.
//!
//! `compare` only writes: its first signal already exits ([`exit_on_signal`]),
//! once the file being written through a temporary one is whole, removing
//! the figures directory it was filling (registered here as scratch).

pub(crate) mod leftover;
mod scratch;

use crate::deadline::REMOVE_WITHIN;
use crate::probe::process::Stat;
pub use leftover::Leftover;
use scratch::scratch;
pub use scratch::Settle;
pub(crate) use scratch::{
    create_scratch, create_scratch_within, keep_scratch, remove_scratch, remove_scratch_dir,
    uninterrupted,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long a second Ctrl-C's removal of scratch directories may take
/// before envbench exits all the same, naming what it could not remove.
const EXIT_REMOVE_WITHIN: Duration = Duration::from_secs(5);

/// Worker processes envbench started (a case round measured in a fresh
/// process), with the directories they may create scratch directories
/// in. A worker's scratch directories are its own (`envbench-PID-...`,
/// see the benches' `ScratchDir`); when the second interrupt kills it,
/// they are removed by that name.
static WORKERS: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// A worker process registered: its PID, where it may create scratch
/// directories, and whether the first Ctrl-C passes it SIGTERM.
struct Worker {
    pid: i32,
    bases: Vec<PathBuf>,
    signalled: bool,
}

fn workers() -> MutexGuard<'static, Vec<Worker>> {
    WORKERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The PID that names this process's scratch directories
/// (`envbench-PID-...`) when it is not its own: a worker started through a
/// prefix (`run --in NAME=PREFIX`) may live in another PID namespace
/// (gVisor, `unshare --pid`) or below the prefix's process, so the run
/// hands it the PID it knows it by ([`crate::engine::worker::Job`]), and a
/// second Ctrl-C finds what it left by that name.
static SCRATCH_OWNER: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// Names this process's scratch directories after `pid` from now on (set
/// once; a later call changes nothing).
pub(crate) fn set_scratch_owner(pid: u32) {
    let _ = SCRATCH_OWNER.set(pid);
}

/// The PID in this process's scratch directory names: the one
/// [`set_scratch_owner`] gave, else its own.
pub(crate) fn scratch_owner() -> u32 {
    SCRATCH_OWNER
        .get()
        .copied()
        .unwrap_or_else(std::process::id)
}

/// Registers worker `pid`, which may create scratch directories in
/// `bases`; the first Ctrl-C passes it SIGTERM when `signalled` (a resident
/// launcher is told to end its round instead: SIGTERM would end the
/// launcher).
pub(crate) fn adopt_worker(pid: i32, bases: Vec<PathBuf>, signalled: bool) {
    workers().push(Worker {
        pid,
        bases,
        signalled,
    });
}

/// Forgets worker `pid`, which has ended. One that ended without its
/// outcome (`clean` false) may have been killed before it could clean up
/// (a prefix's `--die-with-parent`, a sandbox stopped, a crash): the
/// scratch directories named after it are removed. One that gave its
/// outcome removed its own, and what bears its PID may be another
/// namespace's.
///
/// The removal is the run's own call on each `--dir`, so it is given a
/// deadline ([`crate::deadline`]), made without holding the workers' lock
/// (a Ctrl-C meanwhile is heard); what it could not remove is recorded
/// ([`leftover::record`]).
pub(crate) fn release_worker(pid: i32, clean: bool) {
    let bases = match workers().iter().find(|w| w.pid == pid) {
        Some(w) if !clean => w.bases.clone(),
        _ => Vec::new(),
    };
    for base in bases {
        let what = format!("removing what worker {pid} left");
        let b = base.clone();
        let removed = crate::deadline::on_dir(&base, &what, REMOVE_WITHIN, move || {
            remove_dirs(&left_by(pid, &[b]))
        });
        match removed {
            Ok(left) => left
                .into_iter()
                .for_each(|l| leftover::record(&l.path, l.why)),
            Err(no) => leftover::record(&base.join(format!("envbench-{pid}-*")), no.to_string()),
        }
    }
    workers().retain(|w| w.pid != pid);
}

/// Whether this process adopts its orphaned descendants ([`adopt_orphans`]).
static ADOPTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process the reaper of its orphaned descendants
/// (`PR_SET_CHILD_SUBREAPER`): a worker whose prefix died without passing
/// a signal on (bwrap does not) stays envbench's descendant, so a second
/// Ctrl-C still finds and kills it, and [`reap_orphans`] collects it. For
/// a run whose workers start through prefixes, which run one at a time.
pub(crate) fn adopt_orphans() {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only sets a flag of this process.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } == 0 {
        ADOPTS.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// After a worker has been waited for: reaps the orphans this process
/// adopted ([`adopt_orphans`]) that have ended, so none stays a zombie.
/// Does nothing unless it adopts them: only then has it no children of its
/// own left to wait for at this point.
pub(crate) fn reap_orphans() {
    if !ADOPTS.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    let mut status = 0;
    // SAFETY: waitpid writes only `status`; -1 with WNOHANG collects
    // any ended child without blocking.
    while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
}

/// The scratch directories worker `pid` left in `bases`.
fn left_by(pid: i32, bases: &[PathBuf]) -> Vec<PathBuf> {
    let prefix = format!("envbench-{pid}-");
    bases
        .iter()
        .filter_map(|b| std::fs::read_dir(b).ok())
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// The flag the first signal sets in this process ([`watch_signals`]),
/// for what runs below a case without its context: a program a case
/// started is stopped when it is set ([`crate::bench::program`]).
static INTERRUPTED: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
    std::sync::OnceLock::new();

/// Whether this process was interrupted (its first signal, or a worker's
/// run gone): false where no signal is watched.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED
        .get()
        .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
}

/// The child processes of `pid`, from each of its threads'
/// `/proc/PID/task/TID/children` (empty where the kernel lacks it).
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|list| crate::probe::process::children_pids(&list))
        .collect()
}

/// The first SIGINT, SIGTERM or SIGHUP sets `interrupted` (the current case
/// winds down and the run ends marked interrupted) and is passed on to the
/// live workers as SIGTERM; the second exits at once through
/// [`emergency_exit`]. A thread waits for them, so the exit path may
/// allocate and touch the filesystem. SIGHUP is what a run started over SSH
/// with a terminal gets when the connection drops (a fleet's playbook
/// stopped with Ctrl-C); under `nohup` it is ignored and stays so.
///
/// # Errors
/// The signal handler or the thread cannot be set up.
pub(crate) fn watch_signals(
    interrupted: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::io::Result<()> {
    use std::sync::atomic::Ordering;
    let _ = INTERRUPTED.set(std::sync::Arc::clone(&interrupted));
    on_signals(move || {
        if interrupted.swap(true, Ordering::SeqCst) {
            emergency_exit();
        }
        for w in workers().iter().filter(|w| w.signalled) {
            // SAFETY: kill has no memory-safety preconditions; `pid`
            // is a worker this process started and has not reaped.
            unsafe { libc::kill(w.pid, libc::SIGTERM) };
        }
    })
}

/// Runs `each` on a thread of its own for every SIGINT, SIGTERM and
/// SIGHUP (unless ignored, as under `nohup`).
fn on_signals(mut each: impl FnMut() + Send + 'static) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut kinds = vec![SIGINT, SIGTERM];
    if !ignored(SIGHUP) {
        kinds.push(SIGHUP);
    }
    let mut signals = signal_hook::iterator::Signals::new(kinds)?;
    std::thread::Builder::new()
        .name("envbench-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                each();
            }
        })?;
    Ok(())
}

/// For a command that only writes its outputs (`compare`): the first
/// SIGINT, SIGTERM or SIGHUP (unless ignored) removes every registered
/// scratch directory (figures being written) and exits with 130. It takes
/// the scratch lock first, so a file being written through a temporary
/// one under [`uninterrupted`] is finished and renamed (or removed) before
/// the exit: no partial file stays.
///
/// # Errors
/// The signal handler or the thread cannot be set up.
pub(crate) fn exit_on_signal() -> std::io::Result<()> {
    on_signals(|| {
        // held until exit: nothing is written or renamed after this
        let live = scratch();
        remove_dirs(&live);
        eprintln!(
            "envbench: interrupted: the outputs written so far are whole, the rest are not \
             written"
        );
        std::process::exit(130)
    })
}

/// Whether `signal` is ignored in this process (as `nohup` leaves SIGHUP).
pub(crate) fn ignored(signal: libc::c_int) -> bool {
    // SAFETY: a null new action only reads the current one into `old`.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    let read = unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) };
    read == 0 && old.sa_sigaction == libc::SIG_IGN
}

/// Every process whose chain of parents (read from `proc_root`) reaches
/// `root`, excluding `root`.
pub(crate) fn descendants(root: i32, proc_root: &Path) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let parent: Vec<(i32, i32)> = dir
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            Some((pid, Stat::from_text(stat).ppid()?))
        })
        .collect();
    let mut found = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid) in &parent {
            if ppid == p && pid != root && found.insert(pid) {
                frontier.push(pid);
            }
        }
    }
    found.into_iter().collect()
}

/// Stops every descendant of this process (SIGSTOP, so none can start
/// another), looks again until no new one appears, then kills them all
/// (SIGKILL, then SIGCONT so a stopped one dies at once). Returns how
/// many were killed. Only processes started from this one are touched.
pub(crate) fn kill_descendants() -> usize {
    let me = std::process::id() as i32;
    let proc_root = Path::new("/proc");
    let mut all = BTreeSet::new();
    for _ in 0..10 {
        let fresh: Vec<i32> = descendants(me, proc_root)
            .into_iter()
            .filter(|p| !all.contains(p))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for &pid in &fresh {
            // SAFETY: kill has no memory-safety preconditions; `pid` descends from us.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
            all.insert(pid);
        }
    }
    for &pid in &all {
        // SAFETY: as above.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::kill(pid, libc::SIGCONT);
        }
    }
    reap_children(std::time::Duration::from_secs(1));
    all.len()
}

/// Waits up to `limit` for this process's own children to be reaped, so
/// none is left a zombie for PID 1 to collect (an init that reaps lazily,
/// such as a VM's agent, keeps them in the process group for a while).
fn reap_children(limit: std::time::Duration) {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        let mut status = 0;
        // SAFETY: waitpid writes only `status`; -1 waits for any own child.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        match pid {
            0 => std::thread::sleep(std::time::Duration::from_millis(2)),
            p if p > 0 => continue,
            _ => return, // ECHILD: none left
        }
    }
}

/// Removes `paths` with everything in them; returns those it could not
/// remove, with the last error.
pub(crate) fn remove_dirs(paths: &[PathBuf]) -> Vec<Leftover> {
    let mut left = Vec::new();
    for p in paths {
        // a killed child may still hold a file open for a moment: try again
        let mut last = None;
        for attempt in 0..20 {
            last = match std::fs::remove_dir_all(p) {
                Err(e) if p.exists() => Some(e),
                _ => None,
            };
            if last.is_none() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5 * (attempt + 1)));
        }
        left.extend(last.map(|e| Leftover {
            path: p.clone(),
            why: e.to_string(),
        }));
    }
    left
}

/// The second interrupt: kill descendants, remove scratch directories
/// (within [`EXIT_REMOVE_WITHIN`]), say so on stderr with what could not
/// be removed, exit 130. The result file already holds every finished
/// case (it is saved after each).
pub(crate) fn emergency_exit() -> ! {
    // held until exit: no scratch directory is created or half-removed after this
    let live = scratch();
    let workers = workers();
    let killed = kill_descendants();
    let mine = live.clone();
    let theirs: Vec<(i32, Vec<PathBuf>)> =
        workers.iter().map(|w| (w.pid, w.bases.clone())).collect();
    let removal = crate::deadline::within(EXIT_REMOVE_WITHIN, move || {
        let mut paths = mine;
        for (pid, bases) in &theirs {
            paths.extend(left_by(*pid, bases));
        }
        // a file system that went silent in this run is not asked again
        let (silent, asked): (Vec<PathBuf>, Vec<PathBuf>) = paths
            .into_iter()
            .partition(|p| crate::deadline::silent(p).is_some());
        let mut left = remove_dirs(&asked);
        let removed = asked.len() - left.len();
        left.extend(silent.into_iter().filter_map(|path| {
            let why = crate::deadline::silent(&path)?.to_string();
            Some(Leftover { path, why })
        }));
        (removed, left)
    });
    if let Some(last) = LAST_WORDS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
    {
        last();
    }
    // a worker's run says what happened; the worker itself says nothing
    if !QUIET_EXIT.load(std::sync::atomic::Ordering::SeqCst) {
        let (removed, left, late) = match removal {
            Ok((removed, left)) => (removed, left, false),
            Err(late) => (0, Vec::new(), matches!(late, crate::deadline::Late::Time)),
        };
        eprintln!(
            "envbench: interrupted twice: stopped {killed} process(es) it started, removed \
             {removed} scratch director{}; the result file holds every finished case",
            if removed == 1 { "y" } else { "ies" }
        );
        for l in left {
            eprintln!("envbench: {}", crate::terminal::escape(&l.to_string()));
        }
        if late {
            eprintln!(
                "envbench: removing its scratch directories took over {} s and was left \
                 (a file system that does not answer?)",
                EXIT_REMOVE_WITHIN.as_secs()
            );
        }
    }
    std::process::exit(130)
}

/// What the emergency exit does last, holding the scratch lock (a run
/// marks its result files interrupted): set by [`on_emergency`].
type LastWords = Box<dyn Fn() + Send>;
static LAST_WORDS: Mutex<Option<LastWords>> = Mutex::new(None);

/// Whether the emergency exit says nothing (a worker process: its run
/// speaks for it).
static QUIET_EXIT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets what the emergency exit does last, holding the scratch lock, so
/// that nothing else writes meanwhile: it must not take that lock itself
/// (`store::mark_interrupted_holding_lock` does not).
pub(crate) fn on_emergency(last: impl Fn() + Send + 'static) {
    *LAST_WORDS.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(last));
}

/// Makes the emergency exit of this process silent (a worker's).
pub(crate) fn quiet_exit() {
    QUIET_EXIT.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// In a new child: asks the kernel for SIGKILL when the thread that forked
/// it ends, so that no child outlives envbench even when envbench is
/// killed with SIGKILL (no cleanup of its own can run then); and exits at
/// once if `parent` already died between the fork and this call.
/// Async-signal-safe: two system calls.
pub(crate) fn die_with_parent(parent: libc::pid_t, signal: libc::c_int) {
    // SAFETY: prctl(PR_SET_PDEATHSIG) and getppid only make system calls;
    // _exit is async-signal-safe.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, signal);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
}

/// `cmd`'s process dies with envbench (see [`die_with_parent`]): for the
/// helpers and shells a case starts, which must not outlive a SIGKILL.
pub(crate) fn die_with_envbench(cmd: &mut std::process::Command) -> &mut std::process::Command {
    on_envbench_death(cmd, libc::SIGKILL)
}

/// `cmd`'s process gets SIGTERM when envbench dies, even by SIGKILL: for
/// envbench's own worker processes, which then stop after the repetition
/// under way and remove their scratch directories, as on Ctrl-C.
pub(crate) fn wind_down_with_envbench(
    cmd: &mut std::process::Command,
) -> &mut std::process::Command {
    on_envbench_death(cmd, libc::SIGTERM)
}

fn on_envbench_death(
    cmd: &mut std::process::Command,
    signal: libc::c_int,
) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and only makes the
    // async-signal-safe calls of die_with_parent.
    unsafe {
        cmd.pre_exec(move || {
            die_with_parent(parent, signal);
            Ok(())
        })
    }
}

/// The path of `program` as exec would find it: itself when it holds a
/// '/', else the first executable file of that name on PATH.
///
/// # Errors
/// Not found, a directory, or not executable, as an I/O error of that kind
/// (a directory: `IsADirectory`).
pub(crate) fn resolve(program: &str) -> std::io::Result<std::path::PathBuf> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::fs::PermissionsExt as _;
    let check = |p: &std::path::Path| -> std::io::Result<()> {
        let meta = std::fs::metadata(p)?;
        if meta.is_dir() {
            return Err(Error::new(ErrorKind::IsADirectory, "is a directory"));
        }
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(Error::new(ErrorKind::PermissionDenied, "not executable"));
        }
        Ok(())
    };
    if program.contains('/') {
        let p = std::path::PathBuf::from(program);
        check(&p)?;
        return Ok(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| check(p).is_ok())
        .ok_or_else(|| Error::new(ErrorKind::NotFound, "not found on PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_follow_the_parent_chain_in_a_recorded_proc() {
        let tmp = tempfile::tempdir().unwrap();
        // 10 is the root; 11 and 12 its children; 13 a grandchild; 20 a stranger
        for (pid, ppid) in [(10, 1), (11, 10), (12, 10), (13, 12), (20, 1), (21, 20)] {
            let d = tmp.path().join(pid.to_string());
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("stat"), format!("{pid} (x y) S {ppid} 1 1 0")).unwrap();
        }
        std::fs::create_dir(tmp.path().join("self")).unwrap();
        assert_eq!(descendants(10, tmp.path()), vec![11, 12, 13]);
        assert_eq!(descendants(13, tmp.path()), Vec::<i32>::new());
    }

    #[test]
    fn registered_scratch_directories_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("envbench-cleanup-test");
        create_scratch(&path).unwrap();
        std::fs::write(path.join("f"), b"x").unwrap();
        assert!(scratch().contains(&path));
        // what the second interrupt does while the directory is still in
        // use (only to this test's directory: other tests' are alive too)
        assert!(remove_dirs(std::slice::from_ref(&path)).is_empty());
        assert!(!path.exists());
        // its owner's own removal finds nothing left and is quiet
        remove_scratch_dir(&path);
        assert!(!scratch().contains(&path));
    }
}
