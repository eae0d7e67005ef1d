//! Writing result files and other outputs: the checks on an output path
//! before anything is measured, and the atomic writes (a sibling, then a
//! rename that only ever replaces a regular file).

use super::{kind_name, StoreError};
use crate::results::ResultFile;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Checks an output path given as `flag` before anything is measured or
/// rendered, and returns the path to write: `path` itself, or the final
/// target of a symbolic link at `path` (the link is followed, never
/// replaced). An existing regular file needs `force`.
///
/// # Errors
/// A message for a usage error: a device, FIFO, socket or directory, a
/// dangling link, or an existing file without `force`.
pub fn output_path(path: &Path, force: bool, flag: &str) -> Result<PathBuf, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            writable_parent(path, flag)?;
            return Ok(path.to_path_buf());
        }
        // a file where a directory should be: say which
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            writable_parent(path, flag)?;
            return Err(format!("{flag} {}: {e}", path.display()));
        }
        Err(e) => return Err(format!("{flag} {}: {e}", path.display())),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::canonicalize(path).map_err(|e| {
            format!(
                "{flag} {}: a symbolic link whose target cannot be used ({e}); give the target itself",
                path.display()
            )
        })?;
        return output_path(&target, force, flag);
    }
    if !meta.is_file() {
        return Err(format!(
            "{flag} {}: is a {}; results are written only into regular files (writing would replace it)",
            path.display(),
            kind_name(&meta.file_type())
        ));
    }
    if !force {
        return Err(format!(
            "{} exists; choose another {flag} FILE or pass --force to overwrite it",
            path.display()
        ));
    }
    writable_parent(path, flag)?;
    Ok(path.to_path_buf())
}

/// Six hex digits from the kernel's random source (24 bits: two runs of
/// one host in one second collide once in 16 million), or, where
/// `getrandom(2)` fails, from the standard library's per-process random
/// hash keys.
pub fn random_tag() -> String {
    let mut bytes = [0u8; 4];
    // The raw system call, not glibc's wrapper (glibc 2.25+): the portable
    // build links against glibc 2.17 (docs/portable.md).
    // SAFETY: the buffer is 4 writable bytes and outlives the call.
    let got = unsafe {
        libc::syscall(
            libc::SYS_getrandom,
            bytes.as_mut_ptr(),
            bytes.len(),
            0 as libc::c_uint,
        )
    };
    let n = if got == 4 {
        u32::from_le_bytes(bytes)
    } else {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish() as u32
    };
    format!("{:06x}", n & 0xff_ffff)
}

/// The directory `path` is in (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Checks, before anything is measured or read, that the directory of an
/// output exists and takes new files (the output is written through a
/// temporary file beside it): a missing directory or a read-only
/// filesystem once failed a run only at its end.
fn writable_parent(path: &Path, flag: &str) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = dir_of(path);
    let why = match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "does not exist".to_string(),
        Err(e) => e.to_string(),
        Ok(m) if !m.is_dir() => "is not a directory".into(),
        Ok(_) => {
            let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
                .map_err(|_| format!("{flag} {}: holds a NUL byte", path.display()))?;
            // SAFETY: access reads the NUL-terminated path and nothing else.
            if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EROFS) => "is on a read-only filesystem".into(),
                Some(libc::EACCES | libc::EPERM) => "does not let you create files".into(),
                _ => e.to_string(),
            }
        }
    };
    Err(format!(
        "{flag} {}: its directory {} {why}",
        path.display(),
        dir.display()
    ))
}

/// Writes a report (`compare --csv`, `--html`, `--json`) atomically, as
/// result files are: whole or not at all, never into a device or FIFO.
///
/// # Errors
/// [`StoreError`] naming `path`.
pub fn write_document(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic(path, bytes)
}

/// Where writing `path` lands: its directory's canonical path (links and
/// `..` resolved) joined with its last link's final target, so that two
/// spellings of one output (`host/../same.json` and `same.json`, or a link
/// and its target) compare equal before either file exists.
pub fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let dir = std::fs::canonicalize(dir_of(path)).unwrap_or_else(|_| dir_of(path).to_path_buf());
    match path.file_name() {
        Some(name) => dir.join(name),
        None => dir,
    }
}

/// Whether `a` and `b` are one file (same device and inode, links
/// followed): hard links and other spellings of an input included. False
/// when either does not exist.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Writes `file` to `path` atomically.
///
/// # Errors
/// [`StoreError::NotRegular`] when `path` is anything but a regular file
/// or missing; [`StoreError::Io`] naming `path`.
pub fn save(path: &Path, file: &ResultFile) -> Result<(), StoreError> {
    let json = serde_json::to_vec_pretty(file).expect("invariant: result types always serialise");
    write_atomic(path, &json)
}

/// Writes `file` to `path`, which must not exist: the file appears whole
/// or not at all, and a name another process took meanwhile (two runs
/// started in the same second with the same default name) is never
/// replaced.
///
/// # Errors
/// [`StoreError::Taken`] when `path` exists by the time of the write;
/// [`StoreError::Io`] naming `path`.
pub fn save_new(path: &Path, file: &ResultFile) -> Result<(), StoreError> {
    let json = serde_json::to_vec_pretty(file).expect("invariant: result types always serialise");
    place_new(path, &json)
}

/// Writes a temporary file beside `path`, fsyncs it, and moves it to
/// `path` only if nothing is there (RENAME_NOREPLACE, or a hard link where
/// the filesystem lacks renameat2).
pub(super) fn place_new(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    through_temp(path, bytes, |tmp| {
        match renameat2(tmp, path, libc::RENAME_NOREPLACE) {
            // no renameat2 here: a hard link is as exclusive
            Err(e) if is_unsupported(&e) => std::fs::hard_link(tmp, path),
            other => other,
        }
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                StoreError::Taken {
                    path: path.to_path_buf(),
                }
            } else {
                StoreError::Io {
                    path: path.to_path_buf(),
                    cause: e,
                }
            }
        })
    })
}

/// Refuses a destination that exists and is not a regular file.
fn ensure_replaceable(path: &Path) -> Result<(), StoreError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.is_file() => Err(StoreError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_name(&m.file_type()),
        }),
        _ => Ok(()),
    }
}

/// Writes a temporary file beside `path`, fsyncs it, and renames it over
/// `path` only if `path` is a regular file or missing (checked again at the
/// rename itself, so a path that turned into a device meanwhile is kept).
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    ensure_replaceable(path)?;
    through_temp(path, bytes, |tmp| replace_regular(tmp, path))
}

/// Writes `bytes` to a new temporary file beside `path`, fsyncs it, lets
/// `place` put it at `path`, and makes that durable; signals wait until it
/// is done. Whatever regular file is left at the temporary name (ours,
/// after a failure or a hard link) is removed; anything else there (an old
/// device or FIFO that could not be put back) stays.
fn through_temp(
    path: &Path,
    bytes: &[u8],
    place: impl FnOnce(&Path) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    crate::cleanup::uninterrupted(|| temp_then_place(path, bytes, place))
}

/// [`through_temp`]'s work, for a caller that holds the scratch lock.
fn temp_then_place(
    path: &Path,
    bytes: &[u8],
    place: impl FnOnce(&Path) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let io = |cause| StoreError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let name = path
        .file_name()
        .ok_or_else(|| io(std::io::Error::other("names no file")))?;
    let dir = dir_of(path);
    let (tmp, mut f) = create_temp(dir, &name.to_string_lossy()).map_err(io)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    drop(f);
    let placed = written.map_err(io).and_then(|()| place(&tmp));
    if std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.file_type().is_file()) {
        let _ = std::fs::remove_file(&tmp);
    }
    placed?;
    // make the rename itself durable
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// For the emergency exit, which holds the scratch lock (a second Ctrl-C):
/// the result file at `path`, when it still says `running`, says
/// `interrupted`, ended now, with `note`; its cases as they were saved.
/// Read and written as plain JSON, nothing recomputed, so that the exit
/// stays quick.
pub fn mark_interrupted_holding_lock(path: &Path, note: &str) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return;
    };
    if v["status"] != "running" {
        return;
    }
    v["status"] = "interrupted".into();
    v["ended_utc"] = crate::timestamp::utc_iso(crate::timestamp::wall_now_secs()).into();
    if let Some(notes) = v["notes"].as_array_mut() {
        notes.push(note.into());
    }
    if let Ok(bytes) = serde_json::to_vec_pretty(&v) {
        if ensure_replaceable(path).is_ok() {
            let _ = temp_then_place(path, &bytes, |tmp| replace_regular(tmp, path));
        }
    }
}

/// A new file `.NAME.PID.N.partial` in `dir`, never one that exists.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut n = 0u32;
    loop {
        let tmp = dir.join(format!(".{name}.{}.{n}.partial", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            other => return other.map(|f| (tmp, f)),
        }
    }
}

/// `renameat2(2)` on the current directory's paths.
pub fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: both strings are NUL-terminated and outlive the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Moves `tmp` to `path` if `path` is missing or a regular file. With
/// RENAME_EXCHANGE the old `path` lands at `tmp`, where its type is
/// checked: anything but a regular file is swapped back, so even a race
/// loses nothing. Where the filesystem lacks renameat2, a check then a
/// plain rename.
pub(super) fn replace_regular(tmp: &Path, path: &Path) -> Result<(), StoreError> {
    let io = |cause| StoreError::Io {
        path: path.to_path_buf(),
        cause,
    };
    match renameat2(tmp, path, libc::RENAME_EXCHANGE) {
        Ok(()) => {
            if let Err(e) = ensure_replaceable(tmp) {
                // put the old one back; our file returns to `tmp` and is removed by the caller
                renameat2(tmp, path, libc::RENAME_EXCHANGE).map_err(|e| {
                    io(std::io::Error::other(format!(
                        "could not put the old {} back ({e}); it is now at {}",
                        path.display(),
                        tmp.display()
                    )))
                })?;
                return Err(match e {
                    StoreError::NotRegular { kind, .. } => StoreError::NotRegular {
                        path: path.to_path_buf(),
                        kind,
                    },
                    other => other,
                });
            }
            std::fs::remove_file(tmp).map_err(io)
        }
        // nothing at `path`: create it, but never over something that appeared meanwhile
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match renameat2(tmp, path, libc::RENAME_NOREPLACE) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    ensure_replaceable(path)?;
                    Err(io(e))
                }
                Err(e) if is_unsupported(&e) => std::fs::rename(tmp, path).map_err(io),
                other => other.map_err(io),
            }
        }
        Err(e) if is_unsupported(&e) => {
            ensure_replaceable(path)?;
            std::fs::rename(tmp, path).map_err(io)
        }
        Err(e) => Err(io(e)),
    }
}

fn is_unsupported(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS))
}
