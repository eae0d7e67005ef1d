//! The directory a case works in under a target directory, made fresh
//! and removed on every path ([`ScratchDir`]).

use super::BenchError;
use std::path::PathBuf;

/// A directory envbench creates for a case under a target directory and
/// removes, with everything in it, when dropped: on success, on error and
/// when Ctrl-C unwinds the case; a second Ctrl-C removes it through
/// [`crate::cleanup`]. It never reuses an existing path. It is removed
/// only from the file system it was made on; what cannot be removed is
/// named ([`crate::cleanup::leftover`]).
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    /// The device of the file system it was made on.
    dev: Option<u64>,
    /// Whether the run process made it: its file system then gets
    /// [`crate::deadline::ASK_WITHIN`] to make it and
    /// [`crate::deadline::REMOVE_WITHIN`] to remove it. A worker's are
    /// bounded by the run's deadline for the worker.
    bounded: bool,
}

impl ScratchDir {
    /// Creates `<base>/envbench-<pid>-<purpose>-<n>`, a new directory
    /// (`pid` as [`crate::cleanup::scratch_owner`] gives it).
    ///
    /// # Errors
    /// [`BenchError::Failed`] when it cannot be created.
    pub fn new(base: &std::path::Path, purpose: &str) -> Result<ScratchDir, BenchError> {
        ScratchDir::make(base, purpose, false)
    }

    /// [`ScratchDir::new`] for the run process itself, whose calls on a
    /// `--dir` each have a deadline ([`crate::deadline`]).
    ///
    /// # Errors
    /// [`BenchError::Failed`] when it cannot be created in time.
    pub(crate) fn new_bounded(
        base: &std::path::Path,
        purpose: &str,
    ) -> Result<ScratchDir, BenchError> {
        ScratchDir::make(base, purpose, true)
    }

    fn make(
        base: &std::path::Path,
        purpose: &str,
        bounded: bool,
    ) -> Result<ScratchDir, BenchError> {
        for n in 0..1000 {
            let path = base.join(format!(
                "envbench-{}-{purpose}-{n}",
                crate::cleanup::scratch_owner()
            ));
            let made = if bounded {
                crate::cleanup::create_scratch_within(&path, crate::deadline::ASK_WITHIN)
            } else {
                crate::cleanup::create_scratch(&path)
                    .map(|()| crate::cleanup::leftover::device_of(&path))
            };
            match made {
                Ok(dev) => return Ok(ScratchDir { path, dev, bounded }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    if e.kind() == std::io::ErrorKind::TimedOut {
                        // it may be made when its file system answers
                        crate::cleanup::leftover::record(&path, e.to_string());
                    }
                    return Err(BenchError::Failed(format!(
                        "cannot create a directory in {}: {e}",
                        base.display()
                    )));
                }
            }
        }
        Err(BenchError::Failed(format!(
            "no free scratch name in {}",
            base.display()
        )))
    }

    /// The directory.
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let within = self.bounded.then_some(crate::deadline::REMOVE_WITHIN);
        crate::cleanup::remove_scratch(&self.path, self.dev, within);
    }
}
