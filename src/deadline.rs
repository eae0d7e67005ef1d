//! File-system calls the run process makes on a `--dir`, each given a
//! deadline: a file system that stops answering (a FUSE daemon stopped, a
//! network share gone) must not hold the run, which has no deadline
//! above it (a worker has the run's).
//!
//! A call runs on a thread of its own ([`on_dir`]); past its deadline the
//! caller goes on without it and the thread is abandoned: it ends when the
//! file system answers, or with the process (a request a FUSE daemon has
//! not read yet is abandoned when the process exits). The directory is
//! then remembered as silent, and no later call on it (or on anything
//! under it) is made: each would strand another thread and cost the
//! deadline again.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How long a call that asks a `--dir` one question (statfs, a look
/// inside) may take: far beyond a busy network share's answer.
pub(crate) const ASK_WITHIN: Duration = Duration::from_secs(10);

/// How long removing a case's files may take: a tree of fixtures on a
/// slow share (9p under an emulator) takes seconds.
pub(crate) const REMOVE_WITHIN: Duration = Duration::from_secs(60);

/// The directories that gave no answer in time, with what was asked.
static SILENT: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());

/// Why a call on a directory gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NoAnswer {
    /// The directory asked.
    pub dir: PathBuf,
    /// What it gave no answer to, and within how long: `statfs within 10 s`.
    pub what: String,
    /// Whether it went silent earlier in this run (so it was not asked
    /// again now).
    pub earlier: bool,
}

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let when = if self.earlier {
            " earlier in this run, and is not asked again"
        } else {
            ""
        };
        write!(
            f,
            "{} gave no answer ({}){when}: a FUSE daemon stopped, a network share gone?",
            self.dir.display(),
            self.what
        )
    }
}

/// Runs `f`, a call on the directory `dir` described by `what`
/// (`statfs`, `removing its scratch directories`), on a thread of its own
/// for at most `limit`. A directory that gave no answer before (it or one
/// it lies under) is not asked again.
///
/// # Errors
/// [`NoAnswer`] when `f` did not return within `limit` (the directory is
/// then remembered as silent), or `dir` went silent before. A thread that
/// cannot be started is no answer either.
///
/// # Panics
/// When `f` panics, on the caller's thread.
pub(crate) fn on_dir<T: Send + 'static>(
    dir: &Path,
    what: &str,
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, NoAnswer> {
    if let Some(earlier) = silent(dir) {
        return Err(earlier);
    }
    within(limit, f).map_err(|late| {
        let what = match late {
            Late::Time => {
                let asked = format!("{what} within {} s", limit.as_secs_f64());
                silence(dir, &asked);
                asked
            }
            Late::NoThread(e) => format!("{what}: no thread to ask on: {e}"),
        };
        NoAnswer {
            dir: dir.to_path_buf(),
            what,
            earlier: false,
        }
    })
}

/// Why [`within`] has no answer.
#[derive(Debug)]
pub(crate) enum Late {
    /// The call did not return in time; its thread is left to it.
    Time,
    /// No thread could be started for it.
    NoThread(std::io::Error),
}

/// Runs `f` on a thread of its own and waits for it at most `limit`.
///
/// # Errors
/// [`Late`]: past `limit` (the thread is abandoned), or no thread.
///
/// # Panics
/// When `f` panics, on the caller's thread.
pub(crate) fn within<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Late> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let handle = std::thread::Builder::new()
        .name("envbench-fs".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(Late::NoThread)?;
    match rx.recv_timeout(limit) {
        Ok(answer) => Ok(answer),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(Late::Time),
        // the sender is gone without sending: `f` panicked
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => unreachable!("invariant: the thread sends before it ends"),
        },
    }
}

/// Why `path` (or a directory it lies under) is known to give no answer,
/// if it is.
pub(crate) fn silent(path: &Path) -> Option<NoAnswer> {
    let known = SILENT.lock().unwrap_or_else(PoisonError::into_inner);
    known
        .iter()
        .find(|(dir, _)| path.starts_with(dir))
        .map(|(dir, what)| NoAnswer {
            dir: dir.clone(),
            what: what.clone(),
            earlier: true,
        })
}

/// Remembers `dir` as silent, asked `what`.
fn silence(dir: &Path, what: &str) {
    let mut known = SILENT.lock().unwrap_or_else(PoisonError::into_inner);
    if !known.iter().any(|(d, _)| d == dir) {
        known.push((dir.to_path_buf(), what.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_answers_in_time_gives_its_answer() {
        let tmp = tempfile::tempdir().unwrap();
        let answer = on_dir(tmp.path(), "a look", Duration::from_secs(5), || 42);
        assert_eq!(answer, Ok(42));
        assert_eq!(silent(tmp.path()), None);
    }

    #[test]
    fn a_call_past_its_deadline_is_left_and_its_directory_not_asked_again() {
        let dir = Path::new("/envbench-test-silent/dir");
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let late = on_dir(dir, "statfs", Duration::from_millis(50), move || {
            let _ = rx.recv();
        })
        .unwrap_err();
        assert!(!late.earlier);
        let said = late.to_string();
        assert!(
            said.contains("/envbench-test-silent/dir gave no answer (statfs within 0.05 s)"),
            "{said}"
        );
        // the thread left behind ends when its call does
        drop(tx);
        let again = on_dir(&dir.join("under"), "a look", Duration::from_secs(5), || ());
        let again = again.unwrap_err();
        assert!(again.earlier && again.dir == dir, "{again:?}");
        assert!(again.to_string().contains("not asked again"), "{again}");
    }
}
