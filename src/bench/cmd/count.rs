//! A person's command, counted: a hidden helper of envbench's own
//! (`envbench __cmd-count PROGRAM ARGS...`) starts the command under
//! ptrace, follows every process and thread it starts, and sorts each
//! system call it made by what it did into [`OpCounts`]: names looked up
//! (found or not), files opened and created, bytes read and written,
//! directories listed, made and removed, files removed and renamed, syncs,
//! changes of a file's mode, owner or times, processes started, and every
//! other call. It prints them as one line of
//! JSON; the case runs it once per environment, outside its timed
//! repetitions ([`super::Trial`]).
//!
//! The system call's number, arguments and result come from
//! `PTRACE_GET_SYSCALL_INFO` (Linux 5.3), or from the registers where the
//! kernel does not have it (x86-64). Each file a call names is placed
//! ([`Places`], in `places.rs`): in the directory the command started in
//! (the `--dir`), or elsewhere (the root file system's programs, headers
//! and libraries), which the counts made elsewhere say again apart. A file
//! that cannot be placed counts as in the directory.

use super::places::{lexical, thread_group, Placed, Places};
use crate::results::counts::OpCounts;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

/// The hidden argument that makes envbench the counter.
pub const COUNT_ARG: &str = "__cmd-count";

/// What the counter prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    /// The operations, sorted.
    pub counts: OpCounts,
    /// Those of them on files outside the command's directory (its
    /// other calls and programs are in none).
    #[serde(default)]
    pub elsewhere: OpCounts,
    /// Those of them in the command's directory made by a thread while
    /// another thread of its process was alive besides its first (git's
    /// preloaded index: a thread per 500 files): operations that may
    /// overlap in time.
    #[serde(default)]
    pub parallel: OpCounts,
    /// How many such threads were alive, on average over those
    /// operations, at most the CPUs the command could use; 0 without any.
    /// Alive, not seen to overlap: a pool whose threads take turns
    /// (libuv's, a runtime's idle helpers) counts as together too, and a
    /// thread that ended counts until its end is reported.
    #[serde(default)]
    pub threads: f64,
    /// Every system call seen.
    pub syscalls: u64,
    /// The command's exit code (128 + N for a signal N).
    pub exit: i32,
    /// Why it could not count, where it could not (nothing else is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The counter's side: `args` are the program and its arguments. It
/// prints one [`Counted`] line and exits 0, with the reason inside where
/// the command could not be counted.
pub(crate) fn serve(args: &[String]) -> ExitCode {
    let counted = count(args).unwrap_or_else(|error| Counted {
        error: Some(error),
        ..Counted::default()
    });
    println!("{}", serde_json::to_string(&counted).unwrap_or_default());
    ExitCode::SUCCESS
}

/// The argument before the command that names its directory as the run
/// was given it (a path through a symbolic link, which the kernel names
/// otherwise): files under either name are in it.
pub const DIR_ARG: &str = "--dir";

/// Runs `argv` under ptrace to its end and counts what it did.
fn count(argv: &[String]) -> Result<Counted, String> {
    let (given, argv) = match argv {
        [flag, dir, rest @ ..] if flag == DIR_ARG => (Some(PathBuf::from(dir)), rest),
        _ => (None, argv),
    };
    let (program, rest) = argv.split_first().ok_or("no command to count")?;
    let mut cmd = Command::new(program);
    cmd.args(rest).stdin(Stdio::null()).stdout(Stdio::null());
    // SAFETY: ptrace(PTRACE_TRACEME) is async-signal-safe: one system call.
    unsafe {
        cmd.pre_exec(|| {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {program} under ptrace: {e}"))?;
    let root = child.id() as libc::pid_t;
    // it stops at its exec: set what to follow, then let it go
    let mut status = 0;
    // SAFETY: waitpid writes only `status`; `root` is this process's child.
    if unsafe { libc::waitpid(root, &mut status, libc::__WALL) } != root {
        return Err(format!("ptrace: {}", std::io::Error::last_os_error()));
    }
    let options = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_EXITKILL;
    // SAFETY: the tracee is stopped; the options are valid flags.
    if unsafe { libc::ptrace(libc::PTRACE_SETOPTIONS, root, 0, options) } == -1 {
        let err = std::io::Error::last_os_error();
        // SAFETY: kill has no memory-safety preconditions; `root` is ours.
        unsafe { libc::kill(root, libc::SIGKILL) };
        return Err(format!("ptrace cannot follow the command here: {err}"));
    }
    let dir = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("the command's directory cannot be named: {e}"))?;
    let mut dirs = vec![dir];
    dirs.extend(given.filter(|g| g.is_absolute()).map(|g| lexical(&g)));
    let mut tracer = Tracer::new(root, dirs);
    resume(root, 0);
    tracer.follow()?;
    Ok(tracer.finish())
}

/// Lets stopped tracee `pid` run to its next system call, delivering
/// `signal` (0: none).
fn resume(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: ptrace on a tracee of this process; a vanished one fails.
    unsafe { libc::ptrace(libc::PTRACE_SYSCALL, pid, 0, signal) };
}

/// The tracing loop's state.
struct Tracer {
    root: libc::pid_t,
    /// Each thread's system call under way: its number and arguments,
    /// and where the file it names lies.
    pending: BTreeMap<libc::pid_t, (u64, [u64; 6], Placed)>,
    /// Where the files the calls name lie.
    places: Places,
    /// Threads seen, and whether each is known to be a thread of an
    /// existing process (false: a new process's first thread).
    seen: BTreeSet<libc::pid_t>,
    /// Each live thread that is not its process's first, with its
    /// process.
    workers: HashMap<libc::pid_t, libc::pid_t>,
    /// The CPUs the command may run on: the most threads taken to run at
    /// once.
    cpus: u64,
    /// The tallies.
    tally: Tally,
    exit: i32,
    /// Whether the kernel answers PTRACE_GET_SYSCALL_INFO (else the
    /// registers are read and each thread's stops alternate).
    info: bool,
}

impl Tracer {
    fn new(root: libc::pid_t, dirs: Vec<PathBuf>) -> Tracer {
        Tracer {
            root,
            pending: BTreeMap::new(),
            places: Places::new(dirs),
            seen: BTreeSet::from([root]),
            workers: HashMap::new(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
            tally: Tally::default(),
            exit: 0,
            info: true,
        }
    }

    /// Waits for every tracee's stops until none is left.
    fn follow(&mut self) -> Result<(), String> {
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes only `status`; every child of this
            // process is a tracee (it starts nothing else).
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
            if pid == -1 {
                return match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::ECHILD) => Ok(()),
                    Some(libc::EINTR) => continue,
                    _ => Err(format!("ptrace: {}", std::io::Error::last_os_error())),
                };
            }
            self.on_status(pid, status);
        }
    }

    fn on_status(&mut self, pid: libc::pid_t, status: libc::c_int) {
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            self.pending.remove(&pid);
            // its id may come back as another's
            self.seen.remove(&pid);
            self.workers.remove(&pid);
            self.places.ended(pid);
            if pid == self.root {
                self.exit = if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else {
                    128 + libc::WTERMSIG(status)
                };
            }
            return;
        }
        if !libc::WIFSTOPPED(status) {
            return;
        }
        let signal = libc::WSTOPSIG(status);
        if signal == libc::SIGTRAP | 0x80 {
            self.on_syscall(pid);
            resume(pid, 0);
        } else if signal == libc::SIGTRAP && status >> 16 != 0 {
            // a clone, fork, vfork or exec event: the new one stops by
            // itself; an exec closed the files opened close-on-exec
            if status >> 16 == libc::PTRACE_EVENT_EXEC {
                self.places.exec(pid);
            }
            resume(pid, 0);
        } else if signal == libc::SIGSTOP && self.seen.insert(pid) {
            // a new tracee's first stop: a new process unless its thread
            // group is another's (a thread of it, alive until it ends)
            match thread_group(pid) {
                Some(g) if g != pid => {
                    self.workers.insert(pid, g);
                }
                _ => self.tally.counts.spawns += 1,
            }
            resume(pid, 0);
        } else {
            resume(pid, signal);
        }
    }

    /// A system-call stop of `pid`: its entry is kept, its exit tallied.
    fn on_syscall(&mut self, pid: libc::pid_t) {
        let stop = if self.info {
            match syscall_info(pid) {
                Some(s) => s,
                None => {
                    self.info = false;
                    self.registers(pid)
                }
            }
        } else {
            self.registers(pid)
        };
        match stop {
            Stop::Entry(nr, args) => {
                let placed = self.places.entry(pid, nr as libc::c_long, &args);
                self.pending.insert(pid, (nr, args, placed));
            }
            Stop::Exit(ret) => {
                if let Some((nr, args, placed)) = self.pending.remove(&pid) {
                    let threads = self.threads_beside(pid);
                    self.tally
                        .exit(nr, &args, ret, (placed.inside, placed.names, threads));
                    self.places
                        .exit(pid, nr as libc::c_long, &args, ret, placed.path);
                }
            }
            Stop::Other => {}
        }
    }

    /// The threads of `tid`'s process besides its first that are alive,
    /// where `tid` is one of them, at most [`Tracer::cpus`]; 1 otherwise.
    fn threads_beside(&self, tid: libc::pid_t) -> u64 {
        let Some(g) = self.workers.get(&tid) else {
            return 1;
        };
        let alive = self.workers.values().filter(|w| *w == g).count() as u64;
        alive.clamp(1, self.cpus.max(1))
    }

    /// The stop read from the registers: an entry unless this thread has
    /// one pending.
    fn registers(&self, pid: libc::pid_t) -> Stop {
        registers(pid, self.pending.contains_key(&pid))
    }

    fn finish(self) -> Counted {
        Counted {
            counts: self.tally.counts(),
            elsewhere: self.tally.elsewhere,
            parallel: self.tally.parallel,
            threads: self.tally.threads(),
            syscalls: self.tally.total,
            exit: self.exit,
            error: None,
        }
    }
}

/// One system-call stop.
enum Stop {
    /// Entering call `nr` with its arguments.
    Entry(u64, [u64; 6]),
    /// Leaving a call with its result (negative: -errno).
    Exit(i64),
    /// Neither (a seccomp stop).
    Other,
}

/// `struct ptrace_syscall_info` (linux/ptrace.h): the union as 64-bit words.
#[repr(C)]
struct SyscallInfo {
    op: u8,
    _pad: [u8; 3],
    _arch: u32,
    _ip: u64,
    _sp: u64,
    data: [u64; 8],
}

const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;

/// The stop of `pid` as PTRACE_GET_SYSCALL_INFO tells it; None where the
/// kernel does not answer it.
fn syscall_info(pid: libc::pid_t) -> Option<Stop> {
    // SAFETY: an all-zero SyscallInfo is valid.
    let mut info: SyscallInfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<SyscallInfo>();
    // SAFETY: the kernel writes at most `size` bytes into `info`.
    let n = unsafe { libc::ptrace(PTRACE_GET_SYSCALL_INFO, pid, size, &mut info) };
    if n <= 0 {
        return None;
    }
    let d = info.data;
    Some(match info.op {
        1 => Stop::Entry(d[0], [d[1], d[2], d[3], d[4], d[5], d[6]]),
        2 => Stop::Exit(d[0] as i64),
        _ => Stop::Other,
    })
}

/// The stop of `pid` from its registers: an exit where `in_call`.
#[cfg(target_arch = "x86_64")]
fn registers(pid: libc::pid_t, in_call: bool) -> Stop {
    // SAFETY: an all-zero user_regs_struct is valid.
    let mut r: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes the registers into `r`.
    if unsafe { libc::ptrace(libc::PTRACE_GETREGS, pid, 0, &mut r) } == -1 {
        return Stop::Other;
    }
    if in_call {
        Stop::Exit(r.rax as i64)
    } else {
        Stop::Entry(r.orig_rax, [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9])
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn registers(_pid: libc::pid_t, _in_call: bool) -> Stop {
    Stop::Other
}

/// The tallies of system calls by kind.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Tally {
    counts: OpCounts,
    /// The file operations of `counts` on files outside the command's
    /// directory.
    elsewhere: OpCounts,
    /// Every call.
    total: u64,
    /// Calls sorted into a kind (the rest are other calls).
    sorted: u64,
    /// read and close calls: each open's first read and its close are in
    /// the price of a small file's read.
    reads: u64,
    closes: u64,
    /// The file operations of `counts` in the command's directory made
    /// while another thread of the process was alive besides its first.
    parallel: OpCounts,
    /// The threads alive at each of those, summed.
    threads_sum: u64,
    /// How many of those there were.
    parallel_ops: u64,
}

impl Tally {
    /// Tallies call `nr` with `args`, which returned `ret`, on a file in
    /// the command's directory or not (`inside`), its path walking `names`
    /// names, made by a thread with `threads` of its process's threads
    /// alive besides the first (1: by a process's only or first thread).
    pub(super) fn exit(
        &mut self,
        nr: u64,
        args: &[u64; 6],
        ret: i64,
        (inside, names, threads): (bool, u64, u64),
    ) {
        self.total += 1;
        let Some(kind) = kind(nr as libc::c_long, args) else {
            return;
        };
        match kind {
            Kind::Read => self.reads += 1,
            Kind::Close => self.closes += 1,
            _ => {}
        }
        let sorted = sort(&mut self.counts, kind, ret);
        let walked = if walks(kind, ret) { names } else { 0 };
        self.counts.names += walked;
        if !inside {
            sort(&mut self.elsewhere, kind, ret);
            self.elsewhere.names += walked;
        } else if threads > 1 {
            // only an operation counted (not a listing's empty end)
            let before = self.parallel.file_operations();
            sort(&mut self.parallel, kind, ret);
            if self.parallel.file_operations() > before {
                self.parallel.names += walked;
                self.threads_sum += threads;
                self.parallel_ops += 1;
            }
        }
        self.sorted += u64::from(sorted);
    }

    /// How many threads were alive, on average, at each operation made
    /// while several were; 0 where none was.
    pub(super) fn threads(&self) -> f64 {
        if self.parallel_ops == 0 {
            return 0.0;
        }
        self.threads_sum as f64 / self.parallel_ops as f64
    }

    /// The counts, with every call not sorted into a kind as an other
    /// call, less each open's first read and its close.
    pub(super) fn counts(&self) -> OpCounts {
        let in_opens = self.reads.min(self.counts.reads) + self.closes.min(self.counts.reads);
        OpCounts {
            calls: self.total - self.sorted - in_opens.min(self.total - self.sorted),
            ..self.counts
        }
    }
}

/// Whether a call that returned `ret` found no such name.
fn missing(ret: i64) -> bool {
    ret == -(libc::ENOENT as i64) || ret == -(libc::ENOTDIR as i64)
}

/// Whether call `kind`, which returned `ret`, is counted as an operation
/// whose path's names are priced (a stat or miss, a read, a create, an
/// unlink, a rename, an attribute change by path).
fn walks(kind: Kind, ret: i64) -> bool {
    match kind {
        Kind::Lookup | Kind::Open { .. } => ret >= 0 || missing(ret),
        Kind::Unlink | Kind::Rename | Kind::SetAttr => ret >= 0,
        _ => false,
    }
}

/// Counts call `kind`, which returned `ret`, into `c`: true where it is
/// sorted into a kind of operation (not an other call).
fn sort(c: &mut OpCounts, kind: Kind, ret: i64) -> bool {
    let ok = ret >= 0;
    let missing = missing(ret);
    match kind {
        Kind::Lookup if ok => bump(&mut c.stats),
        Kind::Lookup | Kind::Open { .. } if missing => bump(&mut c.misses),
        Kind::Open { create: true } if ok => bump(&mut c.creates),
        Kind::Open { create: false } if ok => bump(&mut c.reads),
        Kind::Read => {
            c.read_bytes += ret.max(0) as u64;
            false
        }
        Kind::Write => {
            c.write_bytes += ret.max(0) as u64;
            false
        }
        // a batch of a directory's entries; the empty answer that ends
        // a listing is part of it
        Kind::List if ret > 0 => bump(&mut c.readdirs),
        Kind::List => true,
        Kind::Mkdir if ok => bump(&mut c.mkdirs),
        Kind::Rmdir if ok => bump(&mut c.rmdirs),
        Kind::Unlink if ok => bump(&mut c.unlinks),
        Kind::Rename if ok => bump(&mut c.renames),
        Kind::Sync if ok => bump(&mut c.syncs),
        Kind::SetAttr if ok => bump(&mut c.setattrs),
        _ => false,
    }
}

fn bump(n: &mut u64) -> bool {
    *n += 1;
    true
}

/// What a system call does, as the counts sort it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Lookup,
    Open { create: bool },
    Read,
    Write,
    Close,
    List,
    Mkdir,
    Rmdir,
    Unlink,
    Rename,
    Sync,
    SetAttr,
}

/// The kind of call `nr` with `args`; None for every other call.
fn kind(nr: libc::c_long, args: &[u64; 6]) -> Option<Kind> {
    let empty_path = |flags: u64| flags & libc::AT_EMPTY_PATH as u64 != 0;
    let create = |flags: u64| flags & libc::O_CREAT as u64 != 0;
    Some(match nr {
        libc::SYS_newfstatat if !empty_path(args[3]) => Kind::Lookup,
        libc::SYS_statx if !empty_path(args[2]) => Kind::Lookup,
        libc::SYS_faccessat | libc::SYS_faccessat2 | libc::SYS_readlinkat => Kind::Lookup,
        libc::SYS_openat => Kind::Open {
            create: create(args[2]),
        },
        libc::SYS_openat2 => Kind::Open { create: false },
        libc::SYS_read | libc::SYS_pread64 | libc::SYS_readv | libc::SYS_preadv => Kind::Read,
        libc::SYS_write | libc::SYS_pwrite64 | libc::SYS_writev | libc::SYS_pwritev => Kind::Write,
        libc::SYS_close => Kind::Close,
        libc::SYS_getdents64 => Kind::List,
        libc::SYS_mkdirat => Kind::Mkdir,
        libc::SYS_unlinkat if args[2] & libc::AT_REMOVEDIR as u64 != 0 => Kind::Rmdir,
        libc::SYS_unlinkat => Kind::Unlink,
        libc::SYS_renameat | libc::SYS_renameat2 => Kind::Rename,
        libc::SYS_fsync | libc::SYS_fdatasync | libc::SYS_syncfs | libc::SYS_sync_file_range => {
            Kind::Sync
        }
        libc::SYS_fchmod
        | libc::SYS_fchmodat
        | libc::SYS_fchmodat2
        | libc::SYS_fchown
        | libc::SYS_fchownat
        | libc::SYS_utimensat => Kind::SetAttr,
        _ => return legacy(nr, args),
    })
}

/// The calls x86-64 keeps from before the `*at` calls.
#[cfg(target_arch = "x86_64")]
fn legacy(nr: libc::c_long, args: &[u64; 6]) -> Option<Kind> {
    Some(match nr {
        libc::SYS_stat | libc::SYS_lstat | libc::SYS_access | libc::SYS_readlink => Kind::Lookup,
        libc::SYS_open => Kind::Open {
            create: args[1] & libc::O_CREAT as u64 != 0,
        },
        libc::SYS_creat => Kind::Open { create: true },
        libc::SYS_getdents => Kind::List,
        libc::SYS_mkdir => Kind::Mkdir,
        libc::SYS_rmdir => Kind::Rmdir,
        libc::SYS_unlink => Kind::Unlink,
        libc::SYS_rename => Kind::Rename,
        libc::SYS_chmod
        | libc::SYS_chown
        | libc::SYS_lchown
        | libc::SYS_utime
        | libc::SYS_utimes
        | libc::SYS_futimesat => Kind::SetAttr,
        _ => return None,
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn legacy(_nr: libc::c_long, _args: &[u64; 6]) -> Option<Kind> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(t: &mut Tally, nr: libc::c_long, args: [u64; 6], ret: i64) {
        t.exit(nr as u64, &args, ret, (true, 1, 1));
    }

    #[test]
    fn calls_are_sorted_by_what_they_did_worked_by_hand() {
        let mut t = Tally::default();
        let at = libc::AT_FDCWD as u64;
        // two lookups found, one missing, one fstat by an empty path
        call(&mut t, libc::SYS_newfstatat, [at, 0, 0, 0, 0, 0], 0);
        call(&mut t, libc::SYS_statx, [at, 0, 0, 0, 0, 0], 0);
        call(&mut t, libc::SYS_newfstatat, [at, 0, 0, 0, 0, 0], -2);
        let empty = libc::AT_EMPTY_PATH as u64;
        call(&mut t, libc::SYS_newfstatat, [3, 0, 0, empty, 0, 0], 0);
        // an open read twice and closed; a create written; a failed open
        call(&mut t, libc::SYS_openat, [at, 0, 0, 0, 0, 0], 3);
        call(&mut t, libc::SYS_read, [3, 0, 4096, 0, 0, 0], 4096);
        call(&mut t, libc::SYS_read, [3, 0, 4096, 0, 0, 0], 100);
        call(&mut t, libc::SYS_close, [3, 0, 0, 0, 0, 0], 0);
        let creat = (libc::O_CREAT | libc::O_WRONLY) as u64;
        call(&mut t, libc::SYS_openat, [at, 0, creat, 0, 0, 0], 4);
        call(&mut t, libc::SYS_write, [4, 0, 10, 0, 0, 0], 10);
        call(
            &mut t,
            libc::SYS_openat,
            [at, 0, 0, 0, 0, 0],
            -(libc::ENOENT as i64),
        );
        call(
            &mut t,
            libc::SYS_openat,
            [at, 0, 0, 0, 0, 0],
            -(libc::EACCES as i64),
        );
        // a listing, a directory made and removed, an unlink, a rename, a sync
        call(&mut t, libc::SYS_getdents64, [3, 0, 0, 0, 0, 0], 512);
        call(&mut t, libc::SYS_getdents64, [3, 0, 0, 0, 0, 0], 0);
        call(&mut t, libc::SYS_mkdirat, [at, 0, 0, 0, 0, 0], 0);
        let rmdir = libc::AT_REMOVEDIR as u64;
        call(&mut t, libc::SYS_unlinkat, [at, 0, rmdir, 0, 0, 0], 0);
        call(&mut t, libc::SYS_unlinkat, [at, 0, 0, 0, 0, 0], 0);
        call(&mut t, libc::SYS_renameat2, [at, 0, at, 0, 0, 0], 0);
        call(&mut t, libc::SYS_fsync, [4, 0, 0, 0, 0, 0], 0);
        // the created file's mode and owner restored, as tar does; a
        // change of times refused
        call(&mut t, libc::SYS_fchmod, [4, 0o644, 0, 0, 0, 0], 0);
        call(&mut t, libc::SYS_fchownat, [at, 0, 0, 0, 0, 0], 0);
        call(
            &mut t,
            libc::SYS_utimensat,
            [at, 0, 0, 0, 0, 0],
            -(libc::EPERM as i64),
        );
        call(&mut t, libc::SYS_getpid, [0; 6], 42);
        let c = t.counts();
        assert_eq!((c.stats, c.misses), (2, 2));
        assert_eq!((c.reads, c.read_bytes), (1, 4196));
        assert_eq!((c.creates, c.write_bytes), (1, 10));
        assert_eq!((c.readdirs, c.mkdirs, c.rmdirs), (1, 1, 1));
        assert_eq!((c.unlinks, c.renames, c.syncs), (1, 1, 1));
        assert_eq!(c.setattrs, 2);
        // 23 calls: 15 sorted (the listing's end with it); of the other 8
        // (the fstat, two reads, the close, the write, the refused open,
        // the refused change of times, getpid) the open's first read and
        // its close are in its price: 6
        assert_eq!((t.total, t.sorted), (23, 15));
        assert_eq!(c.calls, 6);
        // one name each as given here (the places give a call on a
        // descriptor none): the two stats and the miss, the two
        // opens and the missing one, the unlink, the rename and the two
        // attribute changes; not the refused open, the directories made
        // and removed
        assert_eq!(c.names, 10);
        assert_eq!(t.elsewhere, OpCounts::default());
    }

    #[test]
    fn calls_on_files_outside_the_directory_are_counted_again_apart() {
        let mut t = Tally::default();
        let at = libc::AT_FDCWD as u64;
        t.exit(
            libc::SYS_newfstatat as u64,
            &[at, 0, 0, 0, 0, 0],
            0,
            (false, 2, 1),
        );
        t.exit(
            libc::SYS_newfstatat as u64,
            &[at, 0, 0, 0, 0, 0],
            0,
            (true, 1, 1),
        );
        t.exit(
            libc::SYS_openat as u64,
            &[at, 0, 0, 0, 0, 0],
            -2,
            (false, 3, 1),
        );
        t.exit(libc::SYS_read as u64, &[3, 0, 9, 0, 0, 0], 9, (false, 0, 1));
        t.exit(libc::SYS_getpid as u64, &[0; 6], 1, (true, 0, 1));
        let (c, e) = (t.counts(), t.elsewhere);
        assert_eq!((c.stats, c.misses, c.read_bytes), (2, 1, 9));
        assert_eq!((e.stats, e.misses, e.read_bytes, e.calls), (1, 1, 9, 0));
        assert_eq!((c.names, e.names), (6, 5));
    }

    #[test]
    fn operations_of_threads_alive_together_are_counted_again_apart() {
        let mut t = Tally::default();
        let at = libc::AT_FDCWD as u64;
        let stat = libc::SYS_newfstatat as u64;
        // by a first thread, by one of two threads, by one of three, one
        // elsewhere by one of two (not in the directory's), a failed one
        t.exit(stat, &[at, 0, 0, 0, 0, 0], 0, (true, 2, 1));
        t.exit(stat, &[at, 0, 0, 0, 0, 0], 0, (true, 2, 2));
        t.exit(stat, &[at, 0, 0, 0, 0, 0], -2, (true, 3, 3));
        t.exit(stat, &[at, 0, 0, 0, 0, 0], 0, (false, 2, 2));
        t.exit(stat, &[at, 0, 0, 0, 0, 0], -13, (true, 2, 2));
        t.exit(libc::SYS_getpid as u64, &[0; 6], 1, (true, 0, 2));
        // a listing's empty end is no operation and moves no average
        t.exit(
            libc::SYS_getdents64 as u64,
            &[3, 0, 0, 0, 0, 0],
            0,
            (true, 0, 4),
        );
        let p = t.parallel;
        assert_eq!((p.stats, p.misses, p.names, p.calls), (1, 1, 5, 0));
        assert_eq!(t.threads(), 2.5);
        assert_eq!(t.counts().stats, 3);
        assert_eq!(Tally::default().threads(), 0.0);
    }
}
