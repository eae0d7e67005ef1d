//! The operating-system family: system calls, process and thread creation,
//! spawn, pipes, shell scripts and multiprogramming overload (seeds 002,
//! 003, 004), plus what they share: a guard that reaps every child on every
//! path, and the headroom that bounds how many processes a case may create.

pub mod fork_helper;
pub mod multiprog;
pub mod pipe;
pub mod process;
pub mod shell;
pub mod spawn;
pub mod syscall;
pub mod tiny;

use super::reference::{Arg, Cpus, Prog, Read, Tool};
use super::{Bench, Family};
use crate::stats::band::Band;
use std::io;

/// The band the family's cases are held to against their reference tools
/// (docs/fidelity.md): a process's start and a system call's cost depend
/// on where the scheduler wakes what, within about 15 % between tools that
/// do the same.
const REFERENCE_BAND: Band = Band::new(0.85, 1.15);

/// The family's C reference program (`reference.c`) with `args`, run on
/// `on`, one process a round unless `processes` say more.
fn c_reference(name: &'static str, args: &'static [Arg], on: Cpus, processes: usize) -> Tool {
    Tool {
        name,
        program: Prog::C {
            name: "os/reference.c",
            source: include_str!("reference.c"),
            flags: &["-O2"],
        },
        args,
        env: &[],
        on,
        read: Read::Number,
        processes,
        input: None,
        check: None,
        on_dir: None,
        beside: None,
    }
}

/// `perf bench` with `args` (after `bench`), run on `on`, its usecs/op
/// times `scale`: what perf times where the kernel lets it run.
fn perf_reference(name: &'static str, args: &'static [Arg], on: Cpus, scale: f64) -> Tool {
    Tool {
        name,
        program: Prog::Path("perf"),
        args,
        env: &[],
        on,
        read: Read::PerfPerOp { scale },
        processes: 1,
        input: None,
        check: None,
        on_dir: None,
        beside: None,
    }
}

/// The family's name, the first part of its ids.
pub const NAME: &str = crate::results::ids::OS;

/// The operating-system family: its benches and the helper processes they
/// start from envbench's own binary.
#[derive(Debug)]
pub struct Os;

impl Family for Os {
    fn name(&self) -> &'static str {
        NAME
    }

    fn benches(&self) -> &'static [&'static dyn Bench] {
        &[
            &syscall::Syscall,
            &process::Fork,
            &process::ForkCow,
            &process::Thread,
            &spawn::Spawn,
            &pipe::Pipe,
            &shell::Shell,
            &multiprog::Multiprog,
        ]
    }

    /// `__exit` (the trivial program os.spawn starts when the tiny helper
    /// cannot run) or `__fork N MODE` (see [`fork_helper::fork_helper`]).
    fn helper(&self, args: &[String]) -> Option<std::process::ExitCode> {
        let (first, rest) = args.split_first()?;
        if first == spawn::EXIT_ARG {
            return Some(std::process::ExitCode::SUCCESS);
        }
        if first == fork_helper::FORK_HELPER_ARG {
            return Some(std::process::ExitCode::from(
                fork_helper::fork_helper(rest) as u8
            ));
        }
        None
    }
}

/// Never more processes or threads than this in one case, whatever the
/// limits allow: envbench measures, it does not stress-test.
pub const HARD_CAP: usize = 4096;

/// Memory assumed per extra process when bounding counts by free memory
/// (seed 003 saw 2.19 MB per process under WSL 1; 4 MiB leaves room).
const BYTES_PER_PROCESS: u64 = 4 << 20;

/// Children this process started; on drop each is killed and reaped, so
/// an error or Ctrl-C in the middle of a case leaves no child behind.
#[derive(Debug, Default)]
pub struct Children {
    pids: Vec<libc::pid_t>,
}

impl Children {
    /// Takes ownership of a started child.
    pub(crate) fn push(&mut self, pid: libc::pid_t) {
        self.pids.push(pid);
    }

    /// Sends `signal` to every child (only those started here, by PID),
    /// then waits for each; returns how many were reaped.
    pub(crate) fn reap_all(&mut self, signal: libc::c_int) -> usize {
        for &pid in &self.pids {
            // SAFETY: `pid` is a child of this process that has not been reaped.
            unsafe { libc::kill(pid, signal) };
        }
        self.wait_all()
    }

    /// Waits for every child to exit by itself; returns how many were reaped.
    pub(crate) fn wait_all(&mut self) -> usize {
        let mut reaped = 0;
        for pid in self.pids.drain(..) {
            let mut status = 0;
            // SAFETY: waiting for our own child; `status` is writable.
            while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
                if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            reaped += 1;
        }
        reaped
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.reap_all(libc::SIGKILL);
    }
}

/// Forks a child that runs `child` and then `_exit(0)`s. In the child,
/// SIGINT and SIGTERM get their default action again (so Ctrl-C at the
/// terminal ends it at once) and `child` may only make async-signal-safe
/// calls: no allocation, no locks (the parent may have other threads).
///
/// # Errors
/// The `fork` error (EAGAIN at a process limit).
pub(crate) fn fork_child(child: impl FnOnce()) -> io::Result<libc::pid_t> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork has no preconditions; the child only runs `child`
    // (async-signal-safe by contract) and _exit.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // SAFETY: resetting dispositions and _exit are async-signal-safe.
            unsafe {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
            }
            crate::cleanup::die_with_parent(parent, libc::SIGKILL);
            child();
            unsafe { libc::_exit(0) }
        }
        pid => Ok(pid),
    }
}

/// A child body that waits for a signal forever.
pub(crate) fn pause_forever() {
    loop {
        // SAFETY: pause has no preconditions.
        unsafe { libc::pause() };
    }
}

/// This process's proportional set size, bytes.
pub(crate) fn own_pss_bytes() -> Option<u64> {
    crate::probe::memory::parse_pss_bytes(&std::fs::read_to_string("/proc/self/smaps_rollup").ok()?)
}

/// System memory in use, bytes: MemTotal − MemAvailable (what seed 003
/// read with `free` before and after creating its processes).
pub(crate) fn used_memory_bytes() -> Option<i64> {
    let m = crate::probe::memory::parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?);
    Some(m.total_bytes? as i64 - m.available_bytes? as i64)
}

/// Limits on how many more tasks this process may create: RLIMIT_NPROC
/// (counted against this user's running tasks), the cgroup pids limit,
/// free memory and [`HARD_CAP`].
#[derive(Debug, Clone, PartialEq)]
pub struct Headroom {
    /// The largest count allowed.
    pub max: usize,
    /// Which limit set it.
    pub limited_by: String,
}

/// How many of `wanted` tasks may be created now, and why not more.
pub(crate) fn headroom(mem_available_bytes: Option<u64>) -> Headroom {
    let mut best = Headroom {
        max: HARD_CAP,
        limited_by: format!("envbench's cap of {HARD_CAP}"),
    };
    let mut consider = |max: usize, why: String| {
        if max < best.max {
            best = Headroom {
                max,
                limited_by: why,
            };
        }
    };
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) } == 0
        && rl.rlim_cur != libc::RLIM_INFINITY
    {
        let running = user_tasks().unwrap_or(0);
        let free = (rl.rlim_cur as usize).saturating_sub(running);
        consider(
            margin(free),
            format!(
                "RLIMIT_NPROC {} with {running} task(s) of this user running",
                rl.rlim_cur
            ),
        );
    }
    if let Some((max, current)) = cgroup_pids() {
        consider(
            margin(max.saturating_sub(current)),
            format!("cgroup pids.max {max} with {current} in use"),
        );
    }
    if let Some(avail) = mem_available_bytes {
        consider(
            margin((avail / BYTES_PER_PROCESS) as usize),
            format!("{} MiB of available memory", avail >> 20),
        );
    }
    best
}

/// Keeps a tenth (and at least 8 tasks) free for the rest of the system.
fn margin(free: usize) -> usize {
    free.saturating_sub((free / 10).max(8))
}

/// Tasks (threads included) owned by this real user, from /proc.
fn user_tasks() -> Option<usize> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() }.to_string();
    let mut tasks = 0;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let field = |k: &str| crate::probe::process::status_field(&status, k);
        if field("Uid").and_then(|u| u.split_whitespace().next()) == Some(uid.as_str()) {
            tasks += field("Threads")
                .and_then(|t| t.parse::<usize>().ok())
                .unwrap_or(1);
        }
    }
    Some(tasks)
}

/// (pids.max, pids.current) of this process's cgroup, v2 or v1.
fn cgroup_pids() -> Option<(usize, usize)> {
    let roots = crate::probe::Roots::live();
    let (mounts, _) = crate::probe::storage::parse_mountinfo(&roots.read("/proc/self/mountinfo")?);
    let (max, current) = crate::probe::cgroup::pids_in_use(&roots, &mounts)?;
    Some((
        usize::try_from(max).unwrap_or(usize::MAX),
        usize::try_from(current).unwrap_or(usize::MAX),
    ))
}

/// `wanted`, lowered to the headroom left after `reserved` other tasks the
/// case needs (a helper process), with a note when lowered.
pub(crate) fn bounded_count(
    wanted: usize,
    reserved: usize,
    mem_available_bytes: Option<u64>,
) -> (usize, Option<String>) {
    let h = headroom(mem_available_bytes);
    let allowed = h.max.saturating_sub(reserved);
    if wanted <= allowed {
        (wanted, None)
    } else {
        let helper = match reserved {
            0 => String::new(),
            1 => ", keeping one task for the helper process".into(),
            r => format!(", keeping {r} tasks for helper processes"),
        };
        (
            allowed,
            Some(format!(
                "lowered from {wanted} to {allowed} by {}{helper}",
                h.limited_by
            )),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_are_reaped_when_the_guard_drops() {
        let mut kids = Children::default();
        for _ in 0..3 {
            kids.push(fork_child(pause_forever).unwrap());
        }
        let pids = kids.pids.clone();
        drop(kids);
        for pid in pids {
            // reaped: no such child any more
            let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
            assert_eq!(r, -1, "child {pid} still exists");
        }
    }

    #[test]
    fn margin_keeps_room_free() {
        assert_eq!(margin(100), 90);
        assert_eq!(margin(20), 12);
        assert_eq!(margin(3), 0);
    }

    #[test]
    fn little_memory_bounds_the_count() {
        let (n, note) = bounded_count(1000, 0, Some(64 << 20));
        assert!(n < 1000);
        assert!(note.unwrap().contains("MiB of available memory"));
        assert_eq!(bounded_count(5, 0, None).0, 5);
    }

    #[test]
    fn a_reserved_helper_task_is_taken_off_and_said() {
        let (free, _) = bounded_count(1000, 0, Some(64 << 20));
        let (n, note) = bounded_count(1000, 1, Some(64 << 20));
        assert_eq!(n, free - 1);
        let note = note.unwrap();
        assert!(
            note.starts_with(&format!("lowered from 1000 to {n} by")),
            "{note}"
        );
        assert!(
            note.ends_with("keeping one task for the helper process"),
            "{note}"
        );
    }

    #[test]
    fn used_memory_is_known_on_linux() {
        assert!(used_memory_bytes().unwrap() > 0);
    }

    #[test]
    fn a_live_child_and_grandchild_are_descendants() {
        use crate::cleanup::descendants;
        use std::path::Path;
        let mut kids = Children::default();
        let child = fork_child(pause_forever).unwrap();
        kids.push(child);
        // a second child that itself forks a grandchild, then pauses
        let middle = fork_child(|| {
            // SAFETY: fork and pause are async-signal-safe.
            unsafe {
                if libc::fork() == 0 {
                    loop {
                        libc::pause();
                    }
                }
                loop {
                    libc::pause();
                }
            }
        })
        .unwrap();
        kids.push(middle);
        let start = std::time::Instant::now();
        let grandchildren = loop {
            let g = descendants(middle, Path::new("/proc"));
            if !g.is_empty() || start.elapsed() > std::time::Duration::from_secs(5) {
                break g;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        // the grandchild is ours too: killed by PID on every path, before
        // `kids` kills and reaps the children
        let _grandchildren = KillOnDrop(grandchildren.clone());
        assert_eq!(grandchildren.len(), 1, "the middle child forked one");
        let found = descendants(std::process::id() as i32, Path::new("/proc"));
        for p in [child, middle].iter().chain(&grandchildren) {
            assert!(found.contains(p), "{p} not in {found:?}");
        }
    }

    /// Kills the listed processes (started by the test) when dropped.
    struct KillOnDrop(Vec<i32>);

    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            for &pid in &self.0 {
                // SAFETY: `pid` is a process this test started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}
