//! A counting layer over SQLite's own file layer (its default VFS, `unix`),
//! registered once under [`NAME`]: every file the database opens, reads,
//! writes, syncs, deletes or asks about, and every lock, size, truncate
//! and close of its open files, goes through it and is counted, on
//! the calling thread, before SQLite's own code does the work. `app.db`
//! opens its connections on this VFS, so its counts are those of the
//! calls SQLite made, not an estimate of them; everything else SQLite does
//! is unchanged (locking, the WAL index, sector sizes are the unix VFS's).
//!
//! Not counted, as they do not pass through the VFS's methods: the WAL
//! index (`-shm`), which the unix VFS opens, maps and removes itself, and
//! the directory a sync may also sync. Both are in the case's time, not
//! in its counts.
//!
//! The shape is SQLite's own for shims (its `vfstrace` and `multiplex`
//! extensions): a file of this VFS is the counting header followed by the
//! unix VFS's file, and each method forwards to the latter's.

use super::OpCounts;
use crate::bench::BenchError;
use rusqlite::ffi;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// The VFS's name, as connections name it.
pub(crate) const NAME: &str = "envbench-count";
const NAME_C: &CStr = c"envbench-count";

thread_local! {
    static COUNTS: Cell<OpCounts> = Cell::new(OpCounts::default());
}

fn count(f: impl FnOnce(&mut OpCounts)) {
    COUNTS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    });
}

/// What this thread's connections did since the last call, and a fresh
/// start.
pub(crate) fn take() -> OpCounts {
    COUNTS.with(|c| c.replace(OpCounts::default()))
}

/// Registers the VFS, once per process (SQLite keeps it until exit).
///
/// # Errors
/// SQLite failed to initialise, has no default VFS, or refused the
/// registration.
pub(crate) fn register() -> Result<(), BenchError> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        // SAFETY: sqlite3_initialize and sqlite3_vfs_find are safe to call
        // at any time; the copy of the default VFS is a plain C struct,
        // leaked so that it outlives every connection, as SQLite requires
        // of a registered VFS.
        unsafe {
            if ffi::sqlite3_initialize() != ffi::SQLITE_OK {
                return Err("SQLite failed to initialise".into());
            }
            let base = ffi::sqlite3_vfs_find(std::ptr::null());
            if base.is_null() {
                return Err("SQLite has no default file layer (VFS)".into());
            }
            let mut v: ffi::sqlite3_vfs = std::ptr::read(base);
            v.szOsFile = HEADER as c_int + (*base).szOsFile;
            v.pNext = std::ptr::null_mut();
            v.zName = NAME_C.as_ptr();
            v.pAppData = base.cast::<c_void>();
            v.xOpen = Some(x_open);
            v.xDelete = Some(x_delete);
            v.xAccess = Some(x_access);
            let rc = ffi::sqlite3_vfs_register(Box::into_raw(Box::new(v)), 0);
            if rc == ffi::SQLITE_OK {
                Ok(())
            } else {
                Err(format!("SQLite refused the counting file layer: code {rc}"))
            }
        }
    })
    .clone()
    .map_err(BenchError::Failed)
}

/// A file of this VFS: the header, then the default VFS's file.
#[repr(C)]
struct Counted {
    base: ffi::sqlite3_file,
    inner: *mut ffi::sqlite3_file,
}

/// The header's size, a multiple of 8 so that the inner file is aligned.
const HEADER: usize = std::mem::size_of::<Counted>().next_multiple_of(8);

/// The default VFS, kept in this VFS's application data.
unsafe fn base_vfs(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    (*vfs).pAppData.cast()
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let base = base_vfs(vfs);
    let counted = file.cast::<Counted>();
    let inner = file.cast::<u8>().add(HEADER).cast::<ffi::sqlite3_file>();
    (*counted).base.pMethods = std::ptr::null();
    (*counted).inner = inner;
    (*inner).pMethods = std::ptr::null();
    let Some(open) = (*base).xOpen else {
        return ffi::SQLITE_CANTOPEN;
    };
    let rc = open(base, name, inner, flags, out_flags);
    // SQLite closes a file whose methods are set, even after a failed open
    if !(*inner).pMethods.is_null() {
        (*counted).base.pMethods = &METHODS;
    }
    if rc == ffi::SQLITE_OK {
        count(|c| c.opens += 1);
    }
    rc
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    let base = base_vfs(vfs);
    let Some(delete) = (*base).xDelete else {
        return ffi::SQLITE_IOERR_DELETE;
    };
    let rc = delete(base, name, sync_dir);
    if rc == ffi::SQLITE_OK {
        count(|c| c.unlinks += 1);
    }
    rc
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    let base = base_vfs(vfs);
    let Some(access) = (*base).xAccess else {
        return ffi::SQLITE_IOERR_ACCESS;
    };
    let rc = access(base, name, flags, out);
    if rc == ffi::SQLITE_OK {
        if *out != 0 {
            count(|c| c.stats += 1);
        } else {
            count(|c| c.misses += 1);
        }
    }
    rc
}

/// The default VFS's file behind `f`, and its methods.
unsafe fn inner(
    f: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    let i = (*f.cast::<Counted>()).inner;
    (i, &*(*i).pMethods)
}

unsafe extern "C" fn x_close(f: *mut ffi::sqlite3_file) -> c_int {
    count(|c| c.calls += 1);
    let (i, m) = inner(f);
    m.xClose.map_or(ffi::SQLITE_OK, |x| x(i))
}

unsafe extern "C" fn x_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    n: c_int,
    at: i64,
) -> c_int {
    let (i, m) = inner(f);
    count(|c| {
        c.preads += 1;
        c.pread_bytes += u64::try_from(n).unwrap_or(0);
    });
    m.xRead.map_or(ffi::SQLITE_IOERR_READ, |x| x(i, buf, n, at))
}

unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    n: c_int,
    at: i64,
) -> c_int {
    let (i, m) = inner(f);
    count(|c| {
        c.pwrites += 1;
        c.pwrite_bytes += u64::try_from(n).unwrap_or(0);
    });
    m.xWrite
        .map_or(ffi::SQLITE_IOERR_WRITE, |x| x(i, buf, n, at))
}

unsafe extern "C" fn x_truncate(f: *mut ffi::sqlite3_file, size: i64) -> c_int {
    count(|c| c.calls += 1);
    let (i, m) = inner(f);
    m.xTruncate
        .map_or(ffi::SQLITE_IOERR_TRUNCATE, |x| x(i, size))
}

unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let (i, m) = inner(f);
    count(|c| c.syncs += 1);
    m.xSync.map_or(ffi::SQLITE_IOERR_FSYNC, |x| x(i, flags))
}

unsafe extern "C" fn x_file_size(f: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    count(|c| c.calls += 1);
    let (i, m) = inner(f);
    m.xFileSize.map_or(ffi::SQLITE_IOERR_FSTAT, |x| x(i, size))
}

unsafe extern "C" fn x_lock(f: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    count(|c| c.calls += 1);
    let (i, m) = inner(f);
    m.xLock.map_or(ffi::SQLITE_IOERR_LOCK, |x| x(i, level))
}

unsafe extern "C" fn x_unlock(f: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    count(|c| c.calls += 1);
    let (i, m) = inner(f);
    m.xUnlock.map_or(ffi::SQLITE_IOERR_UNLOCK, |x| x(i, level))
}

unsafe extern "C" fn x_check_reserved_lock(f: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    count(|c| c.calls += 1);
    let (i, m) = inner(f);
    m.xCheckReservedLock
        .map_or(ffi::SQLITE_IOERR_CHECKRESERVEDLOCK, |x| x(i, out))
}

unsafe extern "C" fn x_file_control(
    f: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let (i, m) = inner(f);
    m.xFileControl
        .map_or(ffi::SQLITE_NOTFOUND, |x| x(i, op, arg))
}

unsafe extern "C" fn x_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    let (i, m) = inner(f);
    m.xSectorSize.map_or(4096, |x| x(i))
}

unsafe extern "C" fn x_device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    let (i, m) = inner(f);
    m.xDeviceCharacteristics.map_or(0, |x| x(i))
}

unsafe extern "C" fn x_shm_map(
    f: *mut ffi::sqlite3_file,
    page: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (i, m) = inner(f);
    m.xShmMap
        .filter(|_| m.iVersion >= 2)
        .map_or(ffi::SQLITE_IOERR_SHMMAP, |x| x(i, page, size, extend, out))
}

unsafe extern "C" fn x_shm_lock(
    f: *mut ffi::sqlite3_file,
    at: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    let (i, m) = inner(f);
    m.xShmLock
        .filter(|_| m.iVersion >= 2)
        .map_or(ffi::SQLITE_IOERR_SHMLOCK, |x| x(i, at, n, flags))
}

unsafe extern "C" fn x_shm_barrier(f: *mut ffi::sqlite3_file) {
    let (i, m) = inner(f);
    if let Some(x) = m.xShmBarrier.filter(|_| m.iVersion >= 2) {
        x(i);
    }
}

unsafe extern "C" fn x_shm_unmap(f: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let (i, m) = inner(f);
    m.xShmUnmap
        .filter(|_| m.iVersion >= 2)
        .map_or(ffi::SQLITE_OK, |x| x(i, delete))
}

unsafe extern "C" fn x_fetch(
    f: *mut ffi::sqlite3_file,
    at: i64,
    n: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (i, m) = inner(f);
    match m.xFetch {
        Some(x) if m.iVersion >= 3 => x(i, at, n, out),
        _ => {
            *out = std::ptr::null_mut();
            ffi::SQLITE_OK
        }
    }
}

unsafe extern "C" fn x_unfetch(f: *mut ffi::sqlite3_file, at: i64, p: *mut c_void) -> c_int {
    let (i, m) = inner(f);
    match m.xUnfetch {
        Some(x) if m.iVersion >= 3 => x(i, at, p),
        _ => ffi::SQLITE_OK,
    }
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};
