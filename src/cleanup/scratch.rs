//! The scratch directories alive in this process, each made and removed
//! under one lock ([`scratch`]), which the emergency exit holds to the
//! end ([`super::emergency_exit`]) and the normal end of a run waits for
//! ([`Settle`]): neither exit cuts the other's cleanup short, and no exit
//! lands in the middle of a creation or a removal.

use super::leftover;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Paths of the scratch directories alive now. Every creation and removal
/// of one happens under this lock, and [`super::emergency_exit`] holds it until
/// the process is gone, so an exit never lands in the middle of either.
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

pub(super) fn scratch() -> MutexGuard<'static, Vec<PathBuf>> {
    // a panic elsewhere while holding it leaves the list itself valid
    SCRATCH.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `place` under the scratch lock and, when it succeeds, forgets the
/// scratch directory `path`: `place` moves it where it is kept (figures
/// renamed into place), and no signal can remove it half-way.
///
/// # Errors
/// The error of `place`; `path` then stays registered.
pub(crate) fn keep_scratch<T>(
    path: &Path,
    place: impl FnOnce() -> std::io::Result<T>,
) -> std::io::Result<T> {
    let mut live = scratch();
    let kept = place()?;
    live.retain(|p| p != path);
    Ok(kept)
}

/// Creates the directory `path` and records it.
///
/// # Errors
/// The error of `create_dir`.
pub(crate) fn create_scratch(path: &Path) -> std::io::Result<()> {
    let mut live = scratch();
    std::fs::create_dir(path)?;
    live.push(path.to_path_buf());
    Ok(())
}

/// [`create_scratch`] for the run process: `create_dir` within `limit`
/// ([`crate::deadline`]); returns the device of the file system it was
/// made on.
///
/// # Errors
/// The error of `create_dir`, or no answer (`TimedOut`): the directory
/// may still be made when its file system answers, unrecorded.
pub(crate) fn create_scratch_within(path: &Path, limit: Duration) -> std::io::Result<Option<u64>> {
    let mut live = scratch();
    let base = path.parent().unwrap_or(path);
    let p = path.to_path_buf();
    let made = crate::deadline::on_dir(base, "making a directory", limit, move || {
        std::fs::create_dir(&p).map(|()| leftover::device_of(&p))
    })
    .map_err(|no| std::io::Error::new(std::io::ErrorKind::TimedOut, no.to_string()))??;
    live.push(path.to_path_buf());
    Ok(made)
}

/// Removes the scratch directory `path`, made on device `dev`, and
/// forgets it; what cannot be removed is recorded ([`leftover::remove_tree`]
/// says why). With `within` (the run process) the removal gets that long
/// ([`crate::deadline`]), the scratch lock held no longer.
pub(crate) fn remove_scratch(path: &Path, dev: Option<u64>, within: Option<Duration>) {
    let mut live = scratch();
    let removed = match within {
        None => leftover::remove_tree(path, dev),
        Some(limit) => {
            let base = path.parent().unwrap_or(path);
            let p = path.to_path_buf();
            crate::deadline::on_dir(base, "removing a directory", limit, move || {
                leftover::remove_tree(&p, dev)
            })
            .unwrap_or_else(|no| Err(no.to_string()))
        }
    };
    if let Err(why) = removed {
        leftover::record(path, why);
    }
    live.retain(|p| p != path);
}

/// Removes the directory `path` with everything in it and forgets it.
pub(crate) fn remove_scratch_dir(path: &Path) {
    let mut live = scratch();
    let _ = std::fs::remove_dir_all(path);
    live.retain(|p| p != path);
}

/// Runs `f` under the scratch lock, so that a second Ctrl-C waits for it:
/// a temporary file created, written and renamed inside `f` is never left
/// behind by an emergency exit.
pub(crate) fn uninterrupted<T>(f: impl FnOnce() -> T) -> T {
    let _live = scratch();
    f()
}

/// Waits for an [`super::emergency_exit`] under way (which never returns), so
/// that the normal end of a run cannot cut it short.
#[derive(Debug)]
pub struct Settle;

impl Drop for Settle {
    fn drop(&mut self) {
        drop(scratch());
    }
}
