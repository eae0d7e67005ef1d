//! `compare --figures DIR` on disk: the files are written into a hidden
//! directory beside DIR, `.DIR.envbench-PID-RANDOM.partial`, made before
//! anything is read and renamed to DIR once every file is whole. Ctrl-C or
//! SIGTERM removes it ([`crate::cleanup`]); SIGKILL leaves it, never a DIR
//! of truncated files, and the next `compare --figures DIR` removes what a
//! process that is gone left (its PID dead here and its lock free).

use anyhow::Context as _;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The hidden directory the figures are written into.
pub struct Staging {
    /// The hidden directory.
    tmp: PathBuf,
    /// Where the figures go: a new directory, or an empty one to replace.
    dir: PathBuf,
    /// An exclusive `flock` on `tmp` while this process lives: a lock
    /// that can be taken tells a later compare that nobody writes there.
    _lock: std::fs::File,
    /// Renamed into place: nothing to remove.
    placed: bool,
}

/// `dir`'s parent and name (`dir` is absolute: the settings made it so).
fn parent_and_name(dir: &Path) -> Result<(&Path, String), String> {
    match (dir.parent(), dir.file_name()) {
        (Some(p), Some(n)) => Ok((p, n.to_string_lossy().into_owned())),
        _ => Err(format!("--figures {}: names no directory", dir.display())),
    }
}

/// The PID in the name of a hidden directory of figures for `name`.
fn owner(entry: &str, name: &str) -> Option<i32> {
    let rest = entry
        .strip_prefix(&format!(".{name}.envbench-"))?
        .strip_suffix(".partial")?;
    rest.split_once('-')?.0.parse().ok()
}

/// Takes an exclusive `flock` on `f` without waiting.
fn try_lock(f: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd as _;
    // SAFETY: flock only reads the descriptor, which `f` keeps open.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Whether no process with `pid` exists here.
fn dead(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0
        && unsafe { libc::kill(pid, 0) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Removes the hidden directories of figures for `name` in `parent` that
/// a killed compare left: its PID is dead here and its lock is free (a
/// compare in another PID namespace holds its lock while it lives).
/// Returns the paths removed.
fn remove_stale(parent: &Path, name: &str) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner(&entry, name) else {
            continue;
        };
        let path = e.path();
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if !is_dir || pid == std::process::id() as i32 || !dead(pid) {
            continue;
        }
        let Ok(f) = std::fs::File::open(&path) else {
            continue;
        };
        if try_lock(&f) && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

impl Staging {
    /// Makes the hidden directory beside `dir`, first removing those that
    /// killed compares left for it.
    ///
    /// # Errors
    /// Why it cannot be made, for a usage error: the settings checked
    /// that the directory takes new entries.
    pub(crate) fn create(dir: &Path) -> Result<Staging, String> {
        let (parent, name) = parent_and_name(dir)?;
        for p in remove_stale(parent, &name) {
            eprintln!(
                "envbench: removed {}, figures a killed compare left unfinished",
                p.display()
            );
        }
        let tmp = parent.join(format!(
            ".{name}.envbench-{}-{}.partial",
            std::process::id(),
            super::random_tag()
        ));
        let why = |e: std::io::Error| {
            format!(
                "--figures {}: cannot create {}: {e}",
                dir.display(),
                tmp.display()
            )
        };
        crate::cleanup::create_scratch(&tmp).map_err(why)?;
        let locked = std::fs::File::open(&tmp).and_then(|f| {
            if try_lock(&f) {
                Ok(f)
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
        match locked {
            Ok(lock) => Ok(Staging {
                tmp,
                dir: dir.to_path_buf(),
                _lock: lock,
                placed: false,
            }),
            Err(e) => {
                crate::cleanup::remove_scratch_dir(&tmp);
                Err(why(e))
            }
        }
    }

    /// Writes `files` (each a new file, synced), then renames the hidden
    /// directory to DIR: a missing DIR is never created over something
    /// that appeared meanwhile, an empty one is replaced (its permission
    /// bits kept), one that is no longer empty is kept.
    ///
    /// # Errors
    /// A file that cannot be written, or DIR taken meanwhile.
    pub(crate) fn write(mut self, files: &[(String, String)]) -> anyhow::Result<()> {
        for (name, text) in files {
            let path = self.tmp.join(name);
            // a signal waits for the file, then removes the whole directory
            crate::cleanup::uninterrupted(|| {
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)?;
                f.write_all(text.as_bytes())?;
                f.sync_all()
            })
            .with_context(|| format!("writing {} for --figures {}", name, self.dir.display()))?;
        }
        let (tmp, dir) = (self.tmp.clone(), self.dir.clone());
        crate::cleanup::keep_scratch(&tmp, || place(&tmp, &dir)).with_context(|| {
            format!(
                "--figures {}: moving the figures from {} into place",
                dir.display(),
                tmp.display()
            )
        })?;
        self.placed = true;
        // make the rename itself durable
        if let Ok(d) = std::fs::File::open(dir.parent().unwrap_or(Path::new("/"))) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.placed {
            crate::cleanup::remove_scratch_dir(&self.tmp);
        }
    }
}

/// Renames the written directory `tmp` to `dir`.
fn place(tmp: &Path, dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(tmp)?.sync_all()?;
    match std::fs::symlink_metadata(dir) {
        // an empty directory given as DIR: replaced whole, as rename(2)
        // does only while it is empty
        Ok(m) if m.is_dir() => {
            std::fs::set_permissions(tmp, std::fs::Permissions::from_mode(m.mode() & 0o7777))?;
            std::fs::rename(tmp, dir).map_err(|e| match e.raw_os_error() {
                Some(libc::ENOTEMPTY | libc::EEXIST) => std::io::Error::new(
                    e.kind(),
                    format!("{} is no longer empty ({e})", dir.display()),
                ),
                _ => e,
            })
        }
        Ok(_) => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} appeared meanwhile, and is no directory", dir.display()),
        )),
        Err(_) => rename_noreplace(tmp, dir),
    }
}

/// `renameat2(RENAME_NOREPLACE)`: `to` is never replaced; where the
/// filesystem lacks it, a plain rename while `to` is missing.
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    match super::renameat2(from, to, libc::RENAME_NOREPLACE) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) && !to.exists() => {
            std::fs::rename(from, to)
        }
        done => done,
    }
}

/// `--figures DIR`: a directory to create, or an empty one (nothing in it
/// is ever replaced), checked before anything is read. The figures are
/// written into a hidden directory beside DIR and renamed into place, so
/// DIR's own directory must take new entries; an existing DIR must be
/// writable too (it is replaced by the new one, its permission bits kept)
/// and on its directory's filesystem (a mount point cannot be renamed
/// over). A symbolic link is followed to its target, never replaced; one
/// to nothing, and anything but a directory, are refused. Returns the
/// directory to write (a link's target).
pub(crate) fn figures_dir(dir: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt as _;
    let refuse = |why: String| {
        format!(
            "--figures {}: {why}; give a new or empty directory",
            dir.display()
        )
    };
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            let target = std::fs::canonicalize(dir).map_err(|e| {
                refuse(format!(
                    "is a symbolic link whose target cannot be used ({e})"
                ))
            })?;
            return figures_dir(&target);
        }
        Ok(m) if m.is_dir() => {
            // `.` or `figs/..`: the directory by its own name, beside which the figures go
            let real = std::fs::canonicalize(dir).map_err(|e| refuse(e.to_string()))?;
            if real.parent().is_none() {
                return Err(refuse("is the root directory".into()));
            }
            if real != dir {
                return figures_dir(&real);
            }
            let mut entries = std::fs::read_dir(dir).map_err(|e| refuse(e.to_string()))?;
            if entries.next().is_some() {
                return Err(refuse("is not empty".into()));
            }
            if let Some(why) = super::why_not_writable(dir) {
                return Err(refuse(format!("not writable: {why}")));
            }
            if std::fs::metadata(parent).is_ok_and(|p| p.dev() != m.dev()) || mount_point(dir) {
                return Err(refuse(format!(
                    "is a mount point (or on another filesystem than {}): the figures are \
                     written beside it and renamed into place",
                    parent.display()
                )));
            }
        }
        Ok(m) => return Err(refuse(format!("is a {}", super::kind_name(&m.file_type())))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            return Err(refuse(format!(
                "a part of its path is not a directory ({e})"
            )))
        }
        Err(e) => return Err(refuse(e.to_string())),
    }
    if !parent.is_dir() {
        return Err(format!(
            "--figures {}: {} is not a directory",
            dir.display(),
            parent.display()
        ));
    }
    if let Some(why) = super::why_not_writable(parent) {
        return Err(refuse(format!(
            "its directory {} is not writable: {why}",
            parent.display()
        )));
    }
    match dir.file_name() {
        // made absolute, so that the directory beside it is its parent's
        Some(name) => Ok(std::fs::canonicalize(parent)
            .map_err(|e| refuse(e.to_string()))?
            .join(name)),
        None => Err(refuse("names no directory".into())),
    }
}

/// Whether `/proc/self/mountinfo` lists the absolute `dir` as a mount
/// point (a bind mount of its own directory's filesystem has its device).
fn mount_point(dir: &Path) -> bool {
    std::fs::read("/proc/self/mountinfo")
        .is_ok_and(|info| crate::probe::storage::lists_mount_point(&info, dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_read_from_the_name_of_its_own_directory_only() {
        assert_eq!(
            owner(".figs.envbench-4242-0a1b2c.partial", "figs"),
            Some(4242)
        );
        assert_eq!(owner(".figs.envbench-4242-0a1b2c.partial", "fig"), None);
        assert_eq!(owner(".figs.envbench-x-0a1b2c.partial", "figs"), None);
        assert_eq!(owner("figs", "figs"), None);
    }

    #[test]
    fn figures_appear_whole_and_what_a_dead_process_left_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("figs");
        // what a killed compare left: a PID that is no process here
        let stale = tmp.path().join(".figs.envbench-2147483646-000000.partial");
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("speedup.csv"), "").unwrap();
        // another directory's, and a live process's, are kept
        let other = tmp.path().join(".other.envbench-2147483646-000000.partial");
        std::fs::create_dir(&other).unwrap();
        let live = tmp
            .path()
            .join(format!(".figs.envbench-{}-0.partial", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        // a PID dead here, but its lock held: a compare in another PID namespace
        let locked = tmp.path().join(".figs.envbench-2147483645-000001.partial");
        std::fs::create_dir(&locked).unwrap();
        let held = std::fs::File::open(&locked).unwrap();
        assert!(try_lock(&held));
        let s = Staging::create(&dir).unwrap();
        assert!(!stale.exists() && other.exists() && live.exists() && locked.exists());
        assert!(!dir.exists(), "nothing at DIR before every file is written");
        let files = vec![("a.svg".to_string(), "<svg/>".to_string())];
        s.write(&files).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("a.svg")).unwrap(),
            "<svg/>"
        );
        // an empty DIR is replaced, its permission bits kept
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o750)).unwrap();
        Staging::create(&empty).unwrap().write(&files).unwrap();
        let m = std::fs::metadata(&empty).unwrap();
        assert_eq!(m.mode() & 0o777, 0o750);
        assert!(empty.join("a.svg").is_file());
        // one that filled meanwhile is kept, and the hidden directory removed
        let s = Staging::create(&empty).unwrap();
        assert!(s.write(&files).is_err());
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".empty."))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
