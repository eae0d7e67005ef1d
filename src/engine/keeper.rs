//! The fixtures a run keeps for its cases' later rounds (a tree of files,
//! a file set: [`crate::bench::Context::kept`]) live in directories of the
//! run's own, which it removes when it ends, on Ctrl-C and on a second
//! Ctrl-C. SIGKILL cannot be caught, so a keeper process stands by: it
//! reads the directories' paths on stdin (each ended by a NUL byte), waits for its stdin to close (the
//! run ended, or died: the kernel closes the pipe either way) and removes
//! what is still there. A run that ends normally has removed them first,
//! and the keeper finds nothing.

use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The hidden argument that makes envbench a keeper.
pub const KEEPER_ARG: &str = "__keeper";

/// How long the run waits for its keeper to end after closing its stdin.
const END_WITHIN: Duration = Duration::from_secs(2);

/// The keeper's side: reads paths, each ended by a NUL, until stdin closes, then
/// removes each that names one of envbench's scratch directories
/// (`envbench-` at the start of its name), with everything in it. It
/// ignores the signals a terminal or a dropped connection sends the whole
/// process group: the run cleans up then, and the keeper after it.
pub(crate) fn serve() -> ExitCode {
    // SAFETY: ignoring signals has no preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
    let mut given = Vec::new();
    // an error ends the wait as the end of stdin does
    let _ = std::io::stdin().lock().read_to_end(&mut given);
    let paths = given
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(std::ffi::OsString::from_vec(p.to_vec())));
    // tried again for a while: a worker winding down may still be moving
    // a fixture into one
    crate::cleanup::remove_dirs(&paths.filter(|p| is_scratch(p)).collect::<Vec<_>>());
    ExitCode::SUCCESS
}

/// Whether `path` names a scratch directory of envbench's.
fn is_scratch(path: &std::path::Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("envbench-"))
}

/// The run's side: a keeper for some directories. Dropping it closes the
/// keeper's stdin and waits for it to end (the directories removed by
/// then, by the run or by it).
#[derive(Debug)]
pub(crate) struct Keeper {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Keeper {
    /// Starts a keeper (this binary, as this process was started) for
    /// `dirs`.
    ///
    /// # Errors
    /// The binary cannot be found or started, or the paths not handed on.
    pub(crate) fn start(dirs: &[PathBuf]) -> Result<Keeper, String> {
        let own = crate::probe::emulation::own_command()?;
        let mut child = std::process::Command::new(&own[0])
            .args(&own[1..])
            .arg(KEEPER_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the process that keeps fixtures: {e}"))?;
        let mut stdin = child.stdin.take();
        let mut given = Vec::new();
        for d in dirs {
            given.extend_from_slice(d.as_os_str().as_bytes());
            given.push(0);
        }
        let handed = stdin
            .as_mut()
            .map(|s| s.write_all(&given).and_then(|()| s.flush()));
        let keeper = Keeper { child, stdin };
        match handed {
            Some(Ok(())) => Ok(keeper),
            _ => Err("cannot hand the kept directories to their keeper".into()),
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stdin = None;
        let until = Instant::now() + END_WITHIN;
        while Instant::now() < until {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        // a keeper held by a file system that does not answer is left to
        // end when it does: the run does not wait for it again
        let _ = self.child.kill();
        let until = Instant::now() + END_WITHIN;
        while Instant::now() < until && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_scratch_directories_are_the_keepers_to_remove() {
        assert!(is_scratch(std::path::Path::new("/d/envbench-12-kept0-0")));
        assert!(!is_scratch(std::path::Path::new("/d/home")));
        assert!(!is_scratch(std::path::Path::new("/")));
    }
}
