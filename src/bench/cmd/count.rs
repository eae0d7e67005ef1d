//! A person's command, counted: a hidden helper of envbench's own
//! (`envbench __cmd-count PROGRAM ARGS...`) starts the command under
//! ptrace, follows every process and thread it starts, and sorts each
//! system call it made by what it did into [`OpCounts`]: names looked up
//! (found or not), files opened and created, bytes read and written,
//! directories listed, made and removed, files removed and renamed, syncs,
//! processes started, and every other call. It prints them as one line of
//! JSON; the case runs it once per environment, outside its timed
//! repetitions ([`super::Trial`]).
//!
//! The system call's number, arguments and result come from
//! `PTRACE_GET_SYSCALL_INFO` (Linux 5.3), or from the registers where the
//! kernel does not have it (x86-64). Each file a call names is placed
//! ([`Places`]): in the directory the command started in (the `--dir`),
//! or elsewhere (the root file system's programs, headers and libraries),
//! which the counts made elsewhere say again apart. A path is read from
//! the command's memory a word at a time (`PTRACE_PEEKDATA`); an open
//! file's place is remembered from its open, or read from
//! `/proc/PID/fd`. A file that cannot be placed counts as in the
//! directory.

use crate::results::counts::OpCounts;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
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

/// Thread `tid`'s thread group, from /proc/TID/status.
fn thread_group(tid: libc::pid_t) -> Option<libc::pid_t> {
    std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Tgid:"))
                .and_then(|v| v.trim().parse::<libc::pid_t>().ok())
        })
}

/// Where a call's file lies, decided at its entry.
#[derive(Debug, Default)]
struct Placed {
    /// In the command's directory (or not placed).
    inside: bool,
    /// The path an open names, remembered for its descriptor.
    path: Option<PathBuf>,
    /// The names the path walks below the nearest directory held
    /// ([`Places::names`]); 0 for a descriptor.
    names: u64,
}

/// The file a call names: a path (relative to a directory descriptor or
/// the working directory) or an open descriptor.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    Path { dirfd: i32, addr: u64 },
    Fd(i32),
}

/// Where the files the command's calls name lie, from their paths, its
/// processes' working directories and their open descriptors.
struct Places {
    /// The directory the command started in, as the kernel names it and
    /// as the run was given it.
    dirs: Vec<PathBuf>,
    /// Each thread's thread group (a process's threads share its
    /// working directory and descriptors).
    groups: HashMap<libc::pid_t, libc::pid_t>,
    /// Each process's working directory, once read.
    cwd: HashMap<libc::pid_t, PathBuf>,
    /// Each process's open descriptors' paths, once known.
    fds: HashMap<(libc::pid_t, i32), PathBuf>,
}

impl Places {
    fn new(dirs: Vec<PathBuf>) -> Places {
        Places {
            dirs,
            groups: HashMap::new(),
            cwd: HashMap::new(),
            fds: HashMap::new(),
        }
    }

    fn group(&mut self, tid: libc::pid_t) -> libc::pid_t {
        *self
            .groups
            .entry(tid)
            .or_insert_with(|| thread_group(tid).unwrap_or(tid))
    }

    /// Where the file call `nr` of thread `tid` names lies, at its entry.
    fn entry(&mut self, tid: libc::pid_t, nr: libc::c_long, args: &[u64; 6]) -> Placed {
        let (path, names) = match target(nr, args) {
            None => return Placed::default(),
            Some(Target::Fd(fd)) => (self.fd_path(tid, fd), 0),
            Some(Target::Path { dirfd, addr }) => {
                let path = self.path_at(tid, dirfd, addr);
                let names = path.as_deref().map_or(0, |p| self.names(tid, p));
                (path, names)
            }
        };
        let mut inside = path.as_deref().is_none_or(|p| self.within(p));
        let mut names = names;
        // a rename walks to where it goes too, and into the directory
        // changes it
        if let Some((dirfd, addr)) = rename_to(nr, args) {
            let to = self.path_at(tid, dirfd, addr);
            names += to.as_deref().map_or(0, |p| self.names(tid, p));
            inside = inside || to.as_deref().is_none_or(|p| self.within(p));
        }
        Placed {
            inside,
            path,
            names,
        }
    }

    /// The names path `p` walks below the nearest directory held: a
    /// working directory, or a directory or file open, of any of the
    /// command's processes (each holds every directory above it too,
    /// as the kernel keeps a held entry's parents; `/` is always held). A
    /// share that keeps no entry it is not asked to hold (a QEMU guest's
    /// cacheless 9p) looks each of them up again. Read from the path as
    /// written, without links: a miss counts the names after the first
    /// one missing too, `a/../b` one name where the kernel looks up `a`
    /// as well, and a descriptor inherited and not yet used is not known.
    fn names(&mut self, tid: libc::pid_t, p: &Path) -> u64 {
        let g = self.group(tid);
        if let std::collections::hash_map::Entry::Vacant(e) = self.cwd.entry(g) {
            if let Ok(c) = std::fs::read_link(format!("/proc/{tid}/cwd")) {
                e.insert(c);
            }
        }
        let common = |h: &PathBuf| {
            p.components()
                .zip(h.components())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let held = self
            .cwd
            .values()
            .chain(self.fds.values())
            .map(common)
            .max()
            .unwrap_or(0)
            .max(1);
        p.components().count().saturating_sub(held) as u64
    }

    /// Whether `p` lies in the command's directory, under either name.
    fn within(&self, p: &Path) -> bool {
        self.dirs.iter().any(|d| p.starts_with(d))
    }

    /// What call `nr` of thread `tid` changed, at its exit (`ret`): a
    /// descriptor opened, copied or closed, a working directory changed.
    fn exit(
        &mut self,
        tid: libc::pid_t,
        nr: libc::c_long,
        args: &[u64; 6],
        ret: i64,
        path: Option<PathBuf>,
    ) {
        let g = self.group(tid);
        // a close that fails (EIO, EINTR) has freed its descriptor anyway
        if nr == libc::SYS_close && ret != -(libc::EBADF as i64) {
            self.fds.remove(&(g, args[0] as i32));
        }
        if ret < 0 {
            return;
        }
        let fd = |v: u64| v as i32;
        let copy = |places: &mut Places, from: i32, to: i32| match places.fds.get(&(g, from)) {
            Some(p) => {
                let p = p.clone();
                places.fds.insert((g, to), p);
            }
            None => {
                places.fds.remove(&(g, to));
            }
        };
        match nr {
            libc::SYS_openat | libc::SYS_openat2 => {
                if let Some(p) = path {
                    self.fds.insert((g, ret as i32), p);
                }
            }
            // forgotten above, whatever it returned but EBADF
            libc::SYS_close => {}
            libc::SYS_dup => copy(self, fd(args[0]), ret as i32),
            libc::SYS_dup3 => copy(self, fd(args[0]), fd(args[1])),
            libc::SYS_fcntl if matches!(args[1] as i32, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) => {
                copy(self, fd(args[0]), ret as i32)
            }
            libc::SYS_chdir | libc::SYS_fchdir => {
                self.cwd.remove(&g);
            }
            _ => self.legacy_exit(g, nr, args, ret, path),
        }
    }

    /// [`Places::exit`] for x86-64's calls from before the `*at` calls.
    #[cfg(target_arch = "x86_64")]
    fn legacy_exit(
        &mut self,
        g: libc::pid_t,
        nr: libc::c_long,
        args: &[u64; 6],
        ret: i64,
        path: Option<PathBuf>,
    ) {
        match nr {
            libc::SYS_open | libc::SYS_creat => {
                if let Some(p) = path {
                    self.fds.insert((g, ret as i32), p);
                }
            }
            libc::SYS_dup2 => match self.fds.get(&(g, args[0] as i32)).cloned() {
                Some(p) => {
                    self.fds.insert((g, args[1] as i32), p);
                }
                None => {
                    self.fds.remove(&(g, args[1] as i32));
                }
            },
            _ => {}
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn legacy_exit(
        &mut self,
        _g: libc::pid_t,
        _nr: libc::c_long,
        _args: &[u64; 6],
        _ret: i64,
        _path: Option<PathBuf>,
    ) {
    }

    /// Thread `tid` ended: its id may be another's next, and where it led
    /// its process, that process's directory and descriptors are gone.
    fn ended(&mut self, tid: libc::pid_t) {
        if self.groups.remove(&tid).is_none_or(|g| g == tid) {
            self.cwd.remove(&tid);
            self.fds.retain(|&(owner, _), _| owner != tid);
        }
    }

    /// Thread `tid`'s process ran a new program: the descriptors it
    /// opened close-on-exec are gone, and the others are read again.
    fn exec(&mut self, tid: libc::pid_t) {
        let g = self.group(tid);
        self.fds.retain(|&(owner, _), _| owner != g);
    }

    /// The path of descriptor `fd` of thread `tid`'s process.
    fn fd_path(&mut self, tid: libc::pid_t, fd: i32) -> Option<PathBuf> {
        let g = self.group(tid);
        if let Some(p) = self.fds.get(&(g, fd)) {
            return Some(p.clone());
        }
        let p = std::fs::read_link(format!("/proc/{tid}/fd/{fd}")).ok()?;
        self.fds.insert((g, fd), p.clone());
        Some(p)
    }

    /// The path at `addr` in thread `tid`'s memory, relative to `dirfd`,
    /// made absolute and without `.` and `..`.
    fn path_at(&mut self, tid: libc::pid_t, dirfd: i32, addr: u64) -> Option<PathBuf> {
        use std::os::unix::ffi::OsStringExt as _;
        let named = PathBuf::from(std::ffi::OsString::from_vec(read_c_string(tid, addr)?));
        if named.is_absolute() {
            return Some(lexical(&named));
        }
        let base = if dirfd == libc::AT_FDCWD {
            let g = self.group(tid);
            match self.cwd.get(&g) {
                Some(p) => p.clone(),
                None => {
                    let p = std::fs::read_link(format!("/proc/{tid}/cwd")).ok()?;
                    self.cwd.insert(g, p.clone());
                    p
                }
            }
        } else {
            self.fd_path(tid, dirfd)?
        };
        Some(lexical(&base.join(named)))
    }
}

/// The file that call `nr` with `args` names, if it names one.
fn target(nr: libc::c_long, args: &[u64; 6]) -> Option<Target> {
    let at = |i: usize| Target::Path {
        dirfd: args[i] as i32,
        addr: args[i + 1],
    };
    let fd = Target::Fd(args[0] as i32);
    Some(match nr {
        libc::SYS_newfstatat
        | libc::SYS_statx
        | libc::SYS_faccessat
        | libc::SYS_faccessat2
        | libc::SYS_readlinkat
        | libc::SYS_openat
        | libc::SYS_openat2
        | libc::SYS_mkdirat
        | libc::SYS_unlinkat
        | libc::SYS_renameat
        | libc::SYS_renameat2 => at(0),
        libc::SYS_read
        | libc::SYS_pread64
        | libc::SYS_readv
        | libc::SYS_preadv
        | libc::SYS_write
        | libc::SYS_pwrite64
        | libc::SYS_writev
        | libc::SYS_pwritev
        | libc::SYS_getdents64
        | libc::SYS_fsync
        | libc::SYS_fdatasync
        | libc::SYS_syncfs
        | libc::SYS_sync_file_range => fd,
        _ => return legacy_target(nr, args),
    })
}

/// Where rename call `nr` with `args` moves its file: a path relative to
/// a directory descriptor; None for any other call.
fn rename_to(nr: libc::c_long, args: &[u64; 6]) -> Option<(i32, u64)> {
    match nr {
        libc::SYS_renameat | libc::SYS_renameat2 => Some((args[2] as i32, args[3])),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rename => Some((libc::AT_FDCWD, args[1])),
        _ => None,
    }
}

/// [`target`] for x86-64's calls from before the `*at` calls.
#[cfg(target_arch = "x86_64")]
fn legacy_target(nr: libc::c_long, args: &[u64; 6]) -> Option<Target> {
    Some(match nr {
        libc::SYS_stat
        | libc::SYS_lstat
        | libc::SYS_access
        | libc::SYS_readlink
        | libc::SYS_open
        | libc::SYS_creat
        | libc::SYS_mkdir
        | libc::SYS_rmdir
        | libc::SYS_unlink
        | libc::SYS_rename => Target::Path {
            dirfd: libc::AT_FDCWD,
            addr: args[0],
        },
        libc::SYS_getdents => Target::Fd(args[0] as i32),
        _ => return None,
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn legacy_target(_nr: libc::c_long, _args: &[u64; 6]) -> Option<Target> {
    None
}

/// The longest path read from a command's memory.
const PATH_MOST: usize = 4096;

/// The NUL-ended string at `addr` in stopped tracee `tid`'s memory, read
/// a word at a time; None where it cannot be read or is longer than
/// [`PATH_MOST`].
fn read_c_string(tid: libc::pid_t, addr: u64) -> Option<Vec<u8>> {
    if addr == 0 {
        return None;
    }
    let word = std::mem::size_of::<libc::c_long>();
    let mut out = Vec::new();
    while out.len() < PATH_MOST {
        let at = addr.checked_add(out.len() as u64)?;
        // SAFETY: errno is this thread's; PEEKDATA reads the tracee's
        // memory and returns the word, or -1 with errno set.
        let w = unsafe {
            *libc::__errno_location() = 0;
            libc::ptrace(libc::PTRACE_PEEKDATA, tid, at as usize, 0)
        };
        // SAFETY: errno is this thread's.
        if w == -1 && unsafe { *libc::__errno_location() } != 0 {
            return None;
        }
        for b in w.to_ne_bytes().into_iter().take(word) {
            if b == 0 {
                return Some(out);
            }
            out.push(b);
        }
    }
    None
}

/// `p` without `.` and with each `..` taking the name before it away, as
/// far as its root: the kernel's reading where no symbolic link is met.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
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
/// unlink, a rename).
fn walks(kind: Kind, ret: i64) -> bool {
    match kind {
        Kind::Lookup | Kind::Open { .. } => ret >= 0 || missing(ret),
        Kind::Unlink | Kind::Rename => ret >= 0,
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
        call(&mut t, libc::SYS_getpid, [0; 6], 42);
        let c = t.counts();
        assert_eq!((c.stats, c.misses), (2, 2));
        assert_eq!((c.reads, c.read_bytes), (1, 4196));
        assert_eq!((c.creates, c.write_bytes), (1, 10));
        assert_eq!((c.readdirs, c.mkdirs, c.rmdirs), (1, 1, 1));
        assert_eq!((c.unlinks, c.renames, c.syncs), (1, 1, 1));
        // 20 calls: 13 sorted (the listing's end with it); of the other 7
        // (the fstat, two reads, the close, the write, the refused open,
        // getpid) the open's first read and its close are in its price: 5
        assert_eq!((t.total, t.sorted), (20, 13));
        assert_eq!(c.calls, 5);
        // one name each: the two stats and the miss, the two opens and the
        // missing one, the unlink and the rename; not the refused open,
        // the directories made and removed
        assert_eq!(c.names, 8);
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

    #[test]
    fn the_directory_is_known_by_the_kernel_s_name_and_by_the_one_given() {
        let places = Places::new(vec![PathBuf::from("/var/home/w"), PathBuf::from("/home/w")]);
        assert!(places.within(Path::new("/home/w/a")));
        assert!(places.within(Path::new("/var/home/w/a")));
        assert!(!places.within(Path::new("/home/wx/a")));
        assert!(!places.within(Path::new("/usr/include/stdio.h")));
    }

    #[test]
    fn a_path_walks_the_names_below_the_nearest_directory_held_worked_by_hand() {
        let me = std::process::id() as libc::pid_t;
        let mut places = Places::new(vec![PathBuf::from("/w")]);
        let g = places.group(me);
        places.cwd.insert(g, PathBuf::from("/w"));
        let names = |places: &mut Places, p: &str| places.names(me, Path::new(p));
        assert_eq!(names(&mut places, "/w/a/b/f"), 3);
        assert_eq!(names(&mut places, "/w/f"), 1);
        // the working directory and everything above it are held
        assert_eq!(names(&mut places, "/w"), 0);
        assert_eq!(names(&mut places, "/"), 0);
        assert_eq!(names(&mut places, "/usr/lib/x"), 3);
        // a directory open holds it; a file open holds its directories
        places.exit(
            me,
            libc::SYS_openat,
            &[0; 6],
            7,
            Some(PathBuf::from("/w/a/b")),
        );
        assert_eq!(names(&mut places, "/w/a/b/f"), 1);
        assert_eq!(names(&mut places, "/w/a/c/f"), 2);
        places.exit(
            me,
            libc::SYS_openat,
            &[0; 6],
            8,
            Some(PathBuf::from("/usr/lib/y")),
        );
        assert_eq!(names(&mut places, "/usr/lib/x"), 1);
        // closed: no longer held
        places.exit(me, libc::SYS_close, &[7, 0, 0, 0, 0, 0], 0, None);
        assert_eq!(names(&mut places, "/w/a/b/f"), 3);
        // another process's working directory holds it too
        places.cwd.insert(g + 1, PathBuf::from("/w/a"));
        assert_eq!(names(&mut places, "/w/a/b/f"), 2);
    }

    #[test]
    fn a_path_is_read_as_the_kernel_reads_it_without_links() {
        let p = |s: &str| lexical(Path::new(s));
        assert_eq!(p("/w/d/../f"), PathBuf::from("/w/f"));
        assert_eq!(p("/w/./d/"), PathBuf::from("/w/d"));
        assert_eq!(p("/../.."), PathBuf::from("/"));
        assert!(p("/w/d/..").starts_with("/w"));
        assert!(!p("/w/../wx").starts_with("/w"));
    }

    #[test]
    fn the_files_a_call_names_are_found_in_its_arguments() {
        let at = libc::AT_FDCWD as u64;
        let named = |nr| target(nr, &[at, 0x1000, 0, 0, 0, 0]);
        let path = Some(Target::Path {
            dirfd: libc::AT_FDCWD,
            addr: 0x1000,
        });
        assert_eq!(named(libc::SYS_openat), path);
        assert_eq!(named(libc::SYS_renameat2), path);
        assert_eq!(
            target(libc::SYS_getdents64, &[7, 0, 0, 0, 0, 0]),
            Some(Target::Fd(7))
        );
        assert_eq!(named(libc::SYS_getpid), None);
    }

    #[test]
    fn a_descriptor_s_place_follows_its_opens_copies_and_closes() {
        let me = std::process::id() as libc::pid_t;
        let mut places = Places::new(vec![PathBuf::from("/w")]);
        let open = |places: &mut Places, fd: i64, path: &str| {
            places.exit(me, libc::SYS_openat, &[0; 6], fd, Some(PathBuf::from(path)))
        };
        open(&mut places, 40, "/w/a");
        open(&mut places, 41, "/usr/include/stdio.h");
        let inside = |places: &mut Places, fd: u64| {
            places
                .entry(me, libc::SYS_read, &[fd, 0, 0, 0, 0, 0])
                .inside
        };
        assert!(inside(&mut places, 40));
        assert!(!inside(&mut places, 41));
        // dup3(41, 40): 40 now names the header
        places.exit(me, libc::SYS_dup3, &[41, 40, 0, 0, 0, 0], 40, None);
        assert!(!inside(&mut places, 40));
        places.exit(me, libc::SYS_close, &[41, 0, 0, 0, 0, 0], 0, None);
        assert!(!places.fds.contains_key(&(me, 41)));
        // a close that failed but for a bad descriptor freed it too
        open(&mut places, 42, "/w/b");
        places.exit(me, libc::SYS_close, &[42, 0, 0, 0, 0, 0], -4, None);
        assert!(!places.fds.contains_key(&(me, 42)));
        // a new program: descriptors are read again from /proc
        places.exec(me);
        assert!(places.fds.is_empty());
        // an ended process's directory and descriptors go with it
        open(&mut places, 43, "/w/c");
        places.ended(me);
        assert!(places.fds.is_empty() && places.groups.is_empty());
    }
}
