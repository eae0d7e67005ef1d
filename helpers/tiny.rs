//! envbench's tiny helper: a `no_std` program of the same shape as seed
//! 003's C program, built by `build.rs` and carried inside envbench.
//!
//! Why it exists: fork copies the parent's memory map, so its cost grows
//! with the mappings and written pages of the process that forks. envbench
//! itself (a 4 MB Rust binary with libm, libgcc_s and a signal stack: 35
//! mappings) made each fork about 25 % dearer than seed 003's small C
//! program (23 mappings). This helper links only libc and has 22, so
//! `os.fork` measures the environment, not envbench.
//!
//! Usage (envbench starts it; nobody else needs to):
//!   tiny fork N none|untouched|touched
//!     Maps 256 MiB first for `untouched` / `touched` (and writes one byte
//!     per page for `touched`), reads /proc/meminfo, forks N children that
//!     pause, reads /proc/meminfo again, then kills and reaps every child.
//!     Writes to stdout, separated by NUL bytes: the nanoseconds from before
//!     the first fork to after the last, the first meminfo, the second, then
//!     /proc/PID/smaps_rollup of each paused child (read before the kill).
//!     On a fork failure it kills and reaps the children it made and writes
//!     `fork-failed MADE ERRNO` to stderr, exit 1. Bad arguments: exit 2.
//!   tiny serve fork_exec|posix_spawn WARM_MS
//!     Starts itself (`/proc/self/exe exit`) untimed until WARM_MS
//!     milliseconds have passed (at least once), then, for each decimal
//!     COUNT line read from stdin, COUNT times, waiting for each, and
//!     writes the total nanoseconds, then each spawn's nanoseconds, one per
//!     line; it ends at the end of stdin (0), or at a bad line (2). A
//!     failure writes `spawn-failed|wait-failed|child-status DONE CODE` to
//!     stderr, exit 1. Spawning from this small process keeps envbench's
//!     own memory map out of the fork, as for `fork`; spawning from one
//!     long-lived, warmed process keeps out a fresh process's slower first
//!     starts (the scheduler moves the child to another CPU at exec until
//!     the spawner has run a while), which a long UnixBench loop never sees.
//!   tiny exit
//!     Returns 0 at once: the trivial program `serve` starts.
//!
//! It must not panic (there is no unwinding and no std); every path is
//! checked by hand instead.
#![no_std]
#![no_main]

use core::ffi::{c_char, c_int, c_long, c_void, CStr};

#[repr(C)]
struct Timespec {
    sec: c_long,
    nsec: c_long,
}

#[link(name = "c")]
unsafe extern "C" {
    fn fork() -> c_int;
    fn pause() -> c_int;
    fn getpid() -> c_int;
    fn getppid() -> c_int;
    fn prctl(option: c_int, ...) -> c_int;
    fn kill(pid: c_int, sig: c_int) -> c_int;
    fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    fn write(fd: c_int, buf: *const c_void, len: usize) -> isize;
    fn read(fd: c_int, buf: *mut c_void, len: usize) -> isize;
    fn open(path: *const c_char, flags: c_int, ...) -> c_int;
    fn close(fd: c_int) -> c_int;
    fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        off: c_long,
    ) -> *mut c_void;
    fn _exit(code: c_int) -> !;
    fn __errno_location() -> *mut c_int;
    fn execv(path: *const c_char, argv: *const *const c_char) -> c_int;
    fn posix_spawn(
        pid: *mut c_int,
        path: *const c_char,
        file_actions: *const c_void,
        attr: *const c_void,
        argv: *const *const c_char,
        envp: *const *const c_char,
    ) -> c_int;
    static environ: *const *const c_char;
}

const CLOCK_MONOTONIC: c_int = 1;
const SIGKILL: c_int = 9;
const EINTR: c_int = 4;
const PROT_READ_WRITE: c_int = 0x1 | 0x2;
const MAP_PRIVATE_ANONYMOUS: c_int = 0x02 | 0x20;
/// envbench's `HARD_CAP`: never more children than this.
const MAX_CHILDREN: usize = 4096;
/// Seed 003's extra parent memory.
const EXTRA_BYTES: usize = 256 << 20;
const MEMINFO_BYTES: usize = 8192;
/// At most this many spawns in one batch of `serve`.
const MAX_SPAWNS: usize = 1_000_000;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: _exit has no preconditions.
    unsafe { _exit(101) }
}

/// core's unoptimised code refers to this symbol even with panic=abort,
/// where it is never called; defining it lets any opt-level link.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}

#[allow(clippy::useless_conversion)] // c_long is i32 on 32-bit targets
fn now_ns() -> i64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    i64::from(ts.sec) * 1_000_000_000 + i64::from(ts.nsec)
}

fn errno() -> c_int {
    // SAFETY: glibc's errno location is valid for this thread.
    unsafe { *__errno_location() }
}

fn write_all(fd: c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a valid readable buffer of its length.
        let n = unsafe { write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = bytes.get(n as usize..).unwrap_or(&[]);
        } else if n < 0 && errno() == EINTR {
            continue;
        } else {
            return;
        }
    }
}

/// Writes `v` in decimal.
fn write_u64(fd: c_int, v: u64) {
    let mut buf = [0u8; 20];
    write_all(fd, decimal(v, &mut buf));
}

/// `v` in decimal, in the tail of `buf`.
fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        if let Some(d) = buf.get_mut(i) {
            *d = b'0' + (v % 10) as u8;
        }
        v /= 10;
        if v == 0 || i == 0 {
            break;
        }
    }
    buf.get(i..).unwrap_or(&[])
}

fn parse_count(arg: &CStr) -> Option<usize> {
    let bytes = arg.to_bytes();
    if bytes.is_empty() || bytes.len() > 7 {
        return None;
    }
    let mut n = 0usize;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (b - b'0') as usize;
    }
    Some(n)
}

/// Reads /proc/meminfo into `buf`; returns the length read (0 on failure).
fn read_meminfo(buf: &mut [u8; MEMINFO_BYTES]) -> usize {
    read_file(c"/proc/meminfo".as_ptr(), buf)
}

/// Writes /proc/PID/smaps_rollup of `pid` to stdout (nothing if unreadable).
fn write_rollup(pid: c_int, buf: &mut [u8; MEMINFO_BYTES]) {
    let mut path = [0u8; 48];
    let mut len = 0;
    let mut push = |bytes: &[u8]| {
        for &b in bytes {
            if let Some(slot) = path.get_mut(len) {
                *slot = b;
                len += 1;
            }
        }
    };
    push(b"/proc/");
    let mut digits = [0u8; 20];
    push(decimal(pid as u64, &mut digits));
    push(b"/smaps_rollup\0");
    let n = read_file(path.as_ptr().cast(), buf);
    write_all(1, buf.get(..n).unwrap_or(&[]));
}

/// Reads the file at the NUL-terminated `path` into `buf`; returns the
/// length read (0 on failure).
fn read_file(path: *const c_char, buf: &mut [u8; MEMINFO_BYTES]) -> usize {
    // SAFETY: a NUL-terminated path; flags 0 is O_RDONLY.
    let fd = unsafe { open(path, 0) };
    if fd < 0 {
        return 0;
    }
    let mut len = 0;
    while len < buf.len() {
        let rest = buf.get_mut(len..).unwrap_or(&mut []);
        // SAFETY: `rest` is a valid writable buffer of its length.
        let n = unsafe { read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        if n > 0 {
            len += n as usize;
        } else if n < 0 && errno() == EINTR {
            continue;
        } else {
            break;
        }
    }
    // SAFETY: `fd` is open and ours.
    unsafe { close(fd) };
    len
}

/// A fresh zeroed private anonymous mapping of `len` bytes.
fn map_anonymous(len: usize) -> Option<*mut u8> {
    // SAFETY: an anonymous private mapping with no address hint.
    let p = unsafe {
        mmap(
            core::ptr::null_mut(),
            len,
            PROT_READ_WRITE,
            MAP_PRIVATE_ANONYMOUS,
            -1,
            0,
        )
    };
    (p as isize != -1).then_some(p.cast())
}

/// Writes `WHAT A B` to stderr (a line envbench reads) and returns 1.
fn fail(what: &[u8], a: u64, b: u64) -> c_int {
    write_all(2, what);
    write_all(2, b" ");
    write_u64(2, a);
    write_all(2, b" ");
    write_u64(2, b);
    write_all(2, b"\n");
    1
}

/// Kills and reaps `pids`; returns how many were reaped.
fn reap(pids: &[c_int]) -> usize {
    for &pid in pids {
        // SAFETY: `pid` is our own unreaped child.
        unsafe { kill(pid, SIGKILL) };
    }
    let mut reaped = 0;
    for &pid in pids {
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child; `status` is writable.
            let r = unsafe { waitpid(pid, &mut status, 0) };
            if r == pid {
                reaped += 1;
                break;
            }
            if r < 0 && errno() == EINTR {
                continue;
            }
            break;
        }
    }
    reaped
}

fn fork_mode(n: usize, extra: &CStr) -> c_int {
    let (map, touch) = match extra.to_bytes() {
        b"none" => (false, false),
        b"untouched" => (true, false),
        b"touched" => (true, true),
        _ => return 2,
    };
    if map {
        let Some(base) = map_anonymous(EXTRA_BYTES) else {
            write_all(2, b"cannot map 256 MiB\n");
            return 1;
        };
        if touch {
            let mut off = 0;
            while off < EXTRA_BYTES {
                // SAFETY: `off` < EXTRA_BYTES, inside the mapping just made.
                unsafe { base.add(off).write_volatile(1) };
                off += 4096;
            }
        }
    }
    let mut pids = [0 as c_int; MAX_CHILDREN];
    let mut before = [0u8; MEMINFO_BYTES];
    let mut after = [0u8; MEMINFO_BYTES];
    let before_len = read_meminfo(&mut before);
    let t0 = now_ns();
    // SAFETY: getpid has no preconditions.
    let helper = unsafe { getpid() };
    let mut made = 0;
    while made < n {
        // SAFETY: the child only calls prctl and pause (async-signal-safe).
        let pid = unsafe { fork() };
        if pid == 0 {
            // die with this helper: if envbench is killed while the helper
            // writes the children's smaps_rollup (before reaping them), the
            // helper dies of SIGPIPE and no paused child outlives it
            // SAFETY: PR_SET_PDEATHSIG (1) with SIGKILL (9) has no memory effects.
            unsafe { prctl(1, 9 as core::ffi::c_ulong) };
            // the helper died between the fork and the prctl: go now
            // SAFETY: getppid has no preconditions; _exit is async-signal-safe.
            if unsafe { getppid() } != helper {
                unsafe { _exit(1) };
            }
            loop {
                // SAFETY: pause has no preconditions.
                unsafe { pause() };
            }
        }
        if pid < 0 {
            let e = errno();
            reap(pids.get(..made).unwrap_or(&[]));
            return fail(b"fork-failed", made as u64, e as u64);
        }
        if let Some(slot) = pids.get_mut(made) {
            *slot = pid;
        }
        made += 1;
    }
    let elapsed = now_ns() - t0;
    let after_len = read_meminfo(&mut after);
    write_u64(1, elapsed.max(0) as u64);
    write_all(1, b"\0");
    write_all(1, before.get(..before_len).unwrap_or(&[]));
    write_all(1, b"\0");
    write_all(1, after.get(..after_len).unwrap_or(&[]));
    for &pid in pids.get(..made).unwrap_or(&[]) {
        write_all(1, b"\0");
        write_rollup(pid, &mut before);
    }
    let reaped = reap(pids.get(..made).unwrap_or(&[]));
    if reaped != made {
        write_all(2, b"reaped ");
        write_u64(2, reaped as u64);
        write_all(2, b" of ");
        write_u64(2, made as u64);
        write_all(2, b" children\n");
        return 1;
    }
    0
}

/// Starts this program (`/proc/self/exe exit`) and waits for it; on failure
/// returns what failed and the errno or wait status.
fn spawn_self(posix: bool) -> Result<(), (&'static [u8], c_int)> {
    let path = c"/proc/self/exe".as_ptr();
    let argv = [
        c"envbench-tiny".as_ptr(),
        c"exit".as_ptr(),
        core::ptr::null(),
    ];
    let mut pid = 0;
    if posix {
        // SAFETY: valid path and NULL-terminated argv; this process's environment.
        let rc = unsafe {
            posix_spawn(
                &mut pid,
                path,
                core::ptr::null(),
                core::ptr::null(),
                argv.as_ptr(),
                environ,
            )
        };
        if rc != 0 {
            return Err((b"spawn-failed", rc));
        }
    } else {
        // SAFETY: the child only calls execv and _exit.
        pid = unsafe { fork() };
        if pid == 0 {
            // SAFETY: valid path and NULL-terminated argv.
            unsafe {
                execv(path, argv.as_ptr());
                _exit(127)
            }
        }
        if pid < 0 {
            return Err((b"spawn-failed", errno()));
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child; `status` is writable.
        let r = unsafe { waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if r < 0 && errno() == EINTR {
            continue;
        }
        return Err((b"wait-failed", errno()));
    }
    if status != 0 {
        return Err((b"child-status", status));
    }
    Ok(())
}

/// Parses the method argument: fork + execv (false) or posix_spawn (true).
fn posix_method(method: &CStr) -> Option<bool> {
    match method.to_bytes() {
        b"fork_exec" => Some(false),
        b"posix_spawn" => Some(true),
        _ => None,
    }
}

/// Starts this program `lat.len()` times, waiting for each, and writes the
/// total nanoseconds and then each spawn's, one number per line; on a
/// failure writes its line to stderr and returns 1.
fn timed_batch(posix: bool, lat: &mut [u64]) -> c_int {
    let start = now_ns();
    let mut prev = start;
    for (i, slot) in lat.iter_mut().enumerate() {
        if let Err((what, code)) = spawn_self(posix) {
            return fail(what, (i + 1) as u64, code as u32 as u64);
        }
        let t = now_ns();
        *slot = (t - prev).max(0) as u64;
        prev = t;
    }
    write_u64(1, (prev - start).max(0) as u64);
    for &ns in lat.iter() {
        write_all(1, b"\n");
        write_u64(1, ns);
    }
    write_all(1, b"\n");
    0
}

/// What one line of `serve`'s stdin held.
enum Ask {
    Count(usize),
    End,
    Bad,
}

/// Reads one decimal line from stdin (byte by byte: a few bytes between
/// batches, never timed).
fn read_ask() -> Ask {
    let mut n = 0usize;
    let mut digits = 0;
    loop {
        let mut b = 0u8;
        // SAFETY: one writable byte.
        let r = unsafe { read(0, (&mut b as *mut u8).cast(), 1) };
        if r < 0 && errno() == EINTR {
            continue;
        }
        if r <= 0 {
            return if digits == 0 { Ask::End } else { Ask::Bad };
        }
        match b {
            b'\n' if digits > 0 && n > 0 && n <= MAX_SPAWNS => return Ask::Count(n),
            b'0'..=b'9' if digits < 7 => {
                n = n * 10 + (b - b'0') as usize;
                digits += 1;
            }
            _ => return Ask::Bad,
        }
    }
}

/// One long-lived spawner: starts this program untimed until `warm_ms`
/// milliseconds have passed (at least once), then, for each count read
/// from stdin, makes that many timed starts and writes them
/// ([`timed_batch`]); ends at the end of stdin.
fn serve_mode(method: &CStr, warm_ms: usize) -> c_int {
    let Some(posix) = posix_method(method) else {
        return 2;
    };
    let Some(buf) = map_anonymous(MAX_SPAWNS * 8) else {
        write_all(2, b"cannot map the latency buffer\n");
        return 1;
    };
    // SAFETY: a fresh zeroed mapping of MAX_SPAWNS u64s, used only here
    // (pages are touched only as far as a batch reaches).
    let all = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u64>(), MAX_SPAWNS) };
    let until = now_ns() + warm_ms as i64 * 1_000_000;
    loop {
        if let Err((what, code)) = spawn_self(posix) {
            return fail(what, 0, code as u32 as u64);
        }
        if now_ns() >= until {
            break;
        }
    }
    loop {
        match read_ask() {
            Ask::End => return 0,
            Ask::Bad => return 2,
            Ask::Count(n) => {
                let rc = timed_batch(posix, all.get_mut(..n).unwrap_or(&mut []));
                if rc != 0 {
                    return rc;
                }
            }
        }
    }
}

/// # Safety
/// Called by the C runtime with a valid `argv` of `argc` strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    let arg = |i: c_int| -> Option<&CStr> {
        if i >= argc {
            return None;
        }
        // SAFETY: i < argc, so argv[i] is a valid NUL-terminated string.
        Some(unsafe { CStr::from_ptr(*argv.add(i as usize)) })
    };
    match arg(1).map(CStr::to_bytes) {
        Some(b"exit") => 0,
        Some(b"serve") => match (arg(2), arg(3).and_then(parse_count)) {
            (Some(method), Some(warm_ms)) if warm_ms <= 60_000 => serve_mode(method, warm_ms),
            _ => 2,
        },
        Some(b"fork") => match (arg(2).and_then(parse_count), arg(3)) {
            (Some(n), Some(extra)) if n > 0 && n <= MAX_CHILDREN => fork_mode(n, extra),
            _ => 2,
        },
        _ => 2,
    }
}
