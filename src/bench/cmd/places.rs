//! Where the files a counted command's calls name lie
//! ([`super::count`]): in the directory the command started in (the
//! `--dir`) or elsewhere, and how many names each path walks below the
//! nearest directory the command holds. A path is read from the command's
//! memory a word at a time (`PTRACE_PEEKDATA`); an open file's place is
//! remembered from its open, or read from `/proc/PID/fd`.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Thread `tid`'s thread group, from /proc/TID/status.
pub(super) fn thread_group(tid: libc::pid_t) -> Option<libc::pid_t> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    crate::probe::process::status_field(&status, "Tgid")?
        .parse()
        .ok()
}

/// Where a call's file lies, decided at its entry.
#[derive(Debug, Default)]
pub(super) struct Placed {
    /// In the command's directory (or not placed).
    pub(super) inside: bool,
    /// The path an open names, remembered for its descriptor.
    pub(super) path: Option<PathBuf>,
    /// The names the path walks below the nearest directory held
    /// ([`Places::names`]); 0 for a descriptor.
    pub(super) names: u64,
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
pub(super) struct Places {
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
    pub(super) fn new(dirs: Vec<PathBuf>) -> Places {
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
    pub(super) fn entry(&mut self, tid: libc::pid_t, nr: libc::c_long, args: &[u64; 6]) -> Placed {
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
    pub(super) fn exit(
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
    pub(super) fn ended(&mut self, tid: libc::pid_t) {
        if self.groups.remove(&tid).is_none_or(|g| g == tid) {
            self.cwd.remove(&tid);
            self.fds.retain(|&(owner, _), _| owner != tid);
        }
    }

    /// Thread `tid`'s process ran a new program: the descriptors it
    /// opened close-on-exec are gone, and the others are read again.
    pub(super) fn exec(&mut self, tid: libc::pid_t) {
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
    let empty = |flags: u64| flags & libc::AT_EMPTY_PATH as u64 != 0;
    Some(match nr {
        // futimens is utimensat without a path; with an empty path (and
        // AT_EMPTY_PATH) these change the descriptor's file
        libc::SYS_utimensat if args[1] == 0 || empty(args[3]) => fd,
        libc::SYS_fchmodat2 if empty(args[3]) => fd,
        libc::SYS_fchownat if empty(args[4]) => fd,
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
        | libc::SYS_renameat2
        | libc::SYS_fchmodat
        | libc::SYS_fchmodat2
        | libc::SYS_fchownat
        | libc::SYS_utimensat => at(0),
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
        | libc::SYS_sync_file_range
        | libc::SYS_fchmod
        | libc::SYS_fchown => fd,
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
        | libc::SYS_rename
        | libc::SYS_chmod
        | libc::SYS_chown
        | libc::SYS_lchown
        | libc::SYS_utime
        | libc::SYS_utimes => Target::Path {
            dirfd: libc::AT_FDCWD,
            addr: args[0],
        },
        libc::SYS_getdents => Target::Fd(args[0] as i32),
        // without a path, the descriptor's file
        libc::SYS_futimesat if args[1] == 0 => Target::Fd(args[0] as i32),
        libc::SYS_futimesat => Target::Path {
            dirfd: args[0] as i32,
            addr: args[1],
        },
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
pub(super) fn lexical(p: &Path) -> PathBuf {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // an attribute change names its file by a path or a descriptor
        assert_eq!(named(libc::SYS_fchmodat), path);
        assert_eq!(named(libc::SYS_utimensat), path);
        assert_eq!(
            target(libc::SYS_utimensat, &[7, 0, 0, 0, 0, 0]),
            Some(Target::Fd(7))
        );
        let empty = libc::AT_EMPTY_PATH as u64;
        assert_eq!(
            target(libc::SYS_fchownat, &[7, 0x1000, 0, 0, empty, 0]),
            Some(Target::Fd(7))
        );
        assert_eq!(
            target(libc::SYS_fchmodat2, &[7, 0x1000, 0, empty, 0, 0]),
            Some(Target::Fd(7))
        );
        assert_eq!(named(libc::SYS_fchmodat2), path);
        assert_eq!(
            target(libc::SYS_fchown, &[7, 0, 0, 0, 0, 0]),
            Some(Target::Fd(7))
        );
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
