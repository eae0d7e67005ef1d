//! What envbench could not remove: a scratch directory or a kept fixture
//! left on a file system that went away (a FUSE mount unmounted under the
//! run), turned read-only, or stopped answering. Each is recorded here
//! with its path and the error ([`record`]); a worker hands the run its
//! own with its round's outcome, and the run names every one in its
//! result file's notes and on stderr.
//!
//! A directory is removed only from the file system it was made on
//! ([`remove_tree`]): where another file system now lies at its path (the
//! mount gone from under it), what is there is not touched, and the
//! directory, out of reach, is named as left.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The most leftovers a worker hands on for one round; the rest are
/// counted in the last one's words.
pub(crate) const MOST_PER_ROUND: usize = 16;

/// A directory envbench made and could not remove.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Leftover {
    /// The directory, as the process that made it saw it.
    pub path: PathBuf,
    /// Why it was not removed: the error, or what happened to its file
    /// system.
    pub why: String,
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not removed: {}: {}", self.path.display(), self.why)
    }
}

/// What this process could not remove and has not handed on yet.
static LEFT: Mutex<Vec<Leftover>> = Mutex::new(Vec::new());

/// Records that `path` could not be removed, and why.
pub(crate) fn record(path: &Path, why: String) {
    let mut left = LEFT.lock().unwrap_or_else(PoisonError::into_inner);
    left.push(Leftover {
        path: path.to_path_buf(),
        why,
    });
}

/// What this process could not remove since the last call.
pub(crate) fn take() -> Vec<Leftover> {
    std::mem::take(&mut *LEFT.lock().unwrap_or_else(PoisonError::into_inner))
}

/// At most [`MOST_PER_ROUND`] of `left`, the last saying how many more
/// there were.
pub(crate) fn capped(mut left: Vec<Leftover>) -> Vec<Leftover> {
    if left.len() > MOST_PER_ROUND {
        let more = left.len() - MOST_PER_ROUND + 1;
        left.truncate(MOST_PER_ROUND);
        let last = left.last_mut().expect("invariant: MOST_PER_ROUND > 0");
        last.why = format!("{} (and {more} more not named)", last.why);
    }
    left
}

/// `dev` as the fingerprint writes a device: `major:minor`.
pub(crate) fn device_words(dev: u64) -> String {
    format!("{}:{}", libc::major(dev), libc::minor(dev))
}

/// Removes the directory `path`, made on the file system of device `dev`
/// (None: not known), with everything in it.
///
/// # Errors
/// Why it is still there: the removal's error, or another file system at
/// its path (or at its parent's, when it is gone from there) than the
/// one it was made on: that one is out of reach, and left untouched.
pub(crate) fn remove_tree(path: &Path, dev: Option<u64>) -> Result<(), String> {
    let moved = |now: u64, made: u64, at: &Path| {
        format!(
            "the file system it was made on (device {}) is no longer at {} (device {} is \
             there now): left on it, out of reach",
            device_words(made),
            at.display(),
            device_words(now)
        )
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) => match dev {
            Some(made) if m.dev() != made => Err(moved(m.dev(), made, path)),
            _ => match std::fs::remove_dir_all(path) {
                Ok(()) => Ok(()),
                Err(_) if !path.exists() => Ok(()),
                Err(e) => Err(e.to_string()),
            },
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // gone: removed by someone, or its file system left its path
            let parent = path
                .parent()
                .and_then(|p| Some((p, p.symlink_metadata().ok()?)));
            match (dev, parent) {
                (Some(made), Some((p, m))) if m.dev() != made => Err(moved(m.dev(), made, p)),
                _ => Ok(()),
            }
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The device of the file system `path` lies on, when it can be read.
pub(crate) fn device_of(path: &Path) -> Option<u64> {
    std::fs::symlink_metadata(path).ok().map(|m| m.dev())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_on_its_own_file_system_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("envbench-1-t-0");
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/b/f"), b"x").unwrap();
        let dev = device_of(&dir);
        assert_eq!(remove_tree(&dir, dev), Ok(()));
        assert!(!dir.exists());
        // already gone from a parent on the same file system: nothing left
        assert_eq!(remove_tree(&dir, dev), Ok(()));
    }

    #[test]
    fn a_tree_whose_file_system_left_its_path_is_named_and_not_touched() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("envbench-1-t-0");
        std::fs::create_dir(&dir).unwrap();
        let dev = device_of(&dir).unwrap();
        // what stands at the path now is another file system's
        let why = remove_tree(&dir, Some(dev ^ 1)).unwrap_err();
        assert!(
            why.contains("is no longer at") && why.contains("out of reach"),
            "{why}"
        );
        assert!(dir.exists(), "another file system's directory was removed");
        // gone from its path, its parent another file system's now
        std::fs::remove_dir(&dir).unwrap();
        let why = remove_tree(&dir, Some(dev ^ 1)).unwrap_err();
        assert!(why.contains(&tmp.path().display().to_string()), "{why}");
    }

    #[test]
    fn leftovers_are_named_and_capped() {
        let mut many: Vec<Leftover> = (0..20)
            .map(|i| Leftover {
                path: PathBuf::from(format!("/d/envbench-9-x-{i}")),
                why: "Read-only file system (os error 30)".into(),
            })
            .collect();
        assert_eq!(
            many[0].to_string(),
            "not removed: /d/envbench-9-x-0: Read-only file system (os error 30)"
        );
        many = capped(many);
        assert_eq!(many.len(), MOST_PER_ROUND);
        assert!(
            many[15].why.ends_with("(and 5 more not named)"),
            "{:?}",
            many[15]
        );
    }
}
