//! The tiny helper (`helpers/tiny.rs`) at run time.
//!
//! `build.rs` compiles it; its bytes are carried inside envbench and run
//! from an anonymous memory file (memfd), so nothing is written to disk and
//! no second file has to be installed. Where a kernel or policy forbids
//! executing a memfd, it is written to a new directory under the temporary
//! directory instead (removed afterwards); where that cannot run either
//! (or the build has no helper), [`Tiny::load`] says why and the caller
//! falls back.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::super::program::Program;
use super::super::{BenchError, ScratchDir};

#[cfg(envbench_tiny)]
const BYTES: Option<&[u8]> = Some(include_bytes!(concat!(env!("OUT_DIR"), "/envbench-tiny")));
#[cfg(not(envbench_tiny))]
const BYTES: Option<&[u8]> = None;

/// The helper, loaded and checked to run.
#[derive(Debug)]
pub struct Tiny {
    /// The path to execute.
    path: PathBuf,
    /// What keeps that path alive: a read-only descriptor of the memfd
    /// (closed on exec), or the scratch directory holding a copy.
    _keep: Keep,
}

#[derive(Debug)]
#[expect(dead_code, reason = "the fields are held only for their Drop")]
enum Keep {
    Memfd(File),
    Scratch(ScratchDir),
}

impl Tiny {
    /// Loads the helper into a memfd, or failing that into a new directory
    /// under the temporary directory (removed when this is dropped), and
    /// checks that it runs (`exit`).
    ///
    /// # Errors
    /// Why the helper cannot run here, in words for a result note.
    pub fn load() -> Result<Tiny, String> {
        let bytes = BYTES.ok_or("this envbench was built without its tiny helper")?;
        let in_memfd = in_memfd(bytes).and_then(Tiny::checked);
        in_memfd.or_else(|memfd_err| {
            in_scratch(bytes, &std::env::temp_dir())
                .and_then(Tiny::checked)
                .map_err(|scratch_err| format!("{memfd_err}; {scratch_err}"))
        })
    }

    /// The helper as a file in a new directory under `base` (removed when
    /// this is dropped), checked to run: for a program other than envbench
    /// that starts it (`envbench fidelity`'s C spawn loop).
    ///
    /// # Errors
    /// Why it cannot be written there or run.
    pub(crate) fn load_in(base: &Path) -> Result<Tiny, String> {
        let bytes = BYTES.ok_or("this envbench was built without its tiny helper")?;
        in_scratch(bytes, base).and_then(Tiny::checked)
    }

    /// The path it runs from.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// `tiny` if `tiny exit` succeeds.
    fn checked(tiny: Tiny) -> Result<Tiny, String> {
        let status = tiny
            .command()
            .arg("exit")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| {
                format!(
                    "cannot execute the tiny helper at {}: {e}",
                    tiny.path.display()
                )
            })?;
        if !status.success() {
            return Err(format!("the tiny helper failed to start: {status}"));
        }
        Ok(tiny)
    }

    /// A command that runs the helper (add its arguments).
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new(&self.path);
        cmd.arg0("envbench-tiny");
        crate::cleanup::die_with_envbench(&mut cmd);
        cmd
    }
}

/// The helper in an anonymous memory file: nothing touches a disk.
fn in_memfd(bytes: &[u8]) -> Result<Tiny, String> {
    let fd = memfd().map_err(|e| format!("cannot create a memfd for the tiny helper: {e}"))?;
    let mut writable = File::from(fd);
    writable
        .write_all(bytes)
        .map_err(|e| format!("cannot write the tiny helper to a memfd: {e}"))?;
    // exec refuses a file that is open for writing (ETXTBSY): keep a
    // read-only descriptor of the same memfd and close the writable one.
    let file = File::open(format!("/proc/self/fd/{}", writable.as_raw_fd()))
        .map_err(|e| format!("cannot reopen the tiny helper's memfd: {e}"))?;
    drop(writable);
    // The child inherits the descriptor until its exec succeeds.
    Ok(Tiny {
        path: PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd())),
        _keep: Keep::Memfd(file),
    })
}

/// The helper as a file in a new directory under `base`.
fn in_scratch(bytes: &[u8], base: &Path) -> Result<Tiny, String> {
    let dir = ScratchDir::new(base, "tiny").map_err(|e| e.to_string())?;
    let path = dir.path().join("envbench-tiny");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .open(&path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| format!("cannot write the tiny helper to {}: {e}", path.display()))?;
    Ok(Tiny {
        path,
        _keep: Keep::Scratch(dir),
    })
}

/// What is kept of a helper's stdout (its figures) and stderr (its
/// reason for failing).
const HELPER_STDOUT: usize = 1 << 20;
const HELPER_STDERR: usize = 64 * 1024;

/// Runs a helper command, asked to do `task`, to completion within
/// `deadline` (as [`Program`] runs every program a case starts) and
/// returns its stdout. A helper killed by SIGINT (Ctrl-C reached it) is an
/// interruption; any other failure is `describe(stderr)`.
///
/// # Errors
/// [`BenchError::Interrupted`], or [`BenchError::Failed`] with the words
/// of `describe`, or why it could not start or end in time.
pub(crate) fn run_helper(
    cmd: Command,
    task: &str,
    deadline: std::time::Instant,
    describe: impl FnOnce(&str) -> String,
) -> Result<Vec<u8>, BenchError> {
    use std::os::unix::process::ExitStatusExt;
    let out = Program::new(cmd, task, deadline)
        .keep_stdout(HELPER_STDOUT)
        .keep_stderr(HELPER_STDERR)
        .run()?;
    if out.status.success() {
        return Ok(out.stdout);
    }
    if out.status.signal() == Some(libc::SIGINT) {
        return Err(BenchError::Interrupted);
    }
    Err(BenchError::Failed(describe(&String::from_utf8_lossy(
        &out.stderr,
    ))))
}

fn memfd() -> io::Result<OwnedFd> {
    let name = c"envbench-tiny";
    // MFD_EXEC asks for an executable memfd where the kernel's
    // vm.memfd_noexec policy knows the flag (Linux 6.3+); older kernels
    // reject the flag with EINVAL and allow exec anyway.
    for flags in [libc::MFD_CLOEXEC | libc::MFD_EXEC, libc::MFD_CLOEXEC] {
        // The raw system call, not glibc's wrapper (glibc 2.27+): the
        // portable build links against glibc 2.17 (docs/portable.md).
        // SAFETY: `name` is NUL-terminated; the flags are valid.
        let fd = unsafe { libc::syscall(libc::SYS_memfd_create, name.as_ptr(), flags) };
        let fd = fd as libc::c_int;
        if fd >= 0 {
            // SAFETY: `fd` was just created and is owned by nobody else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINVAL) {
            return Err(err);
        }
    }
    Err(io::Error::from_raw_os_error(libc::EINVAL))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests below are compiled only with the helper; without this one
    /// a failed helper build would make them vanish and CI still pass.
    #[test]
    fn the_tiny_helper_was_built() {
        assert!(
            BYTES.is_some_and(|b| b.starts_with(b"\x7fELF")),
            "build.rs could not build helpers/tiny.rs: see its cargo warning"
        );
    }

    #[test]
    #[cfg(envbench_tiny)]
    fn the_scratch_copy_runs_and_is_removed() {
        let base = tempfile::tempdir().unwrap();
        let tiny = in_scratch(BYTES.unwrap(), base.path()).and_then(Tiny::checked);
        let tiny = tiny.unwrap();
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 1);
        let out = tiny.command().args(["fork", "3", "none"]).output().unwrap();
        assert!(out.status.success());
        drop(tiny);
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
    }

    #[test]
    #[cfg(envbench_tiny)]
    fn tiny_helper_runs_from_a_memfd_and_rejects_bad_arguments() {
        let tiny = in_memfd(BYTES.unwrap()).and_then(Tiny::checked).unwrap();
        for args in [
            &["fork", "0", "none"][..],
            &["fork", "4097", "none"],
            &["fork", "10", "bogus"],
            &["fork", "x", "none"],
            &["bogus"],
        ] {
            let st = tiny.command().args(args).status().unwrap();
            assert_eq!(st.code(), Some(2), "{args:?}");
        }
        for args in [
            &["serve", "bogus", "0"][..],
            &["serve", "fork_exec", "x"],
            &["serve", "fork_exec", "60001"],
        ] {
            let st = tiny.command().args(args).status().unwrap();
            assert_eq!(st.code(), Some(2), "{args:?}");
        }
        // serve: a bad count line ends it with 2, the end of stdin with 0
        for (asked, code) in [("0\n", 2), ("2x\n", 2), ("", 0), ("1\n", 0)] {
            let mut child = tiny
                .command()
                .args(["serve", "fork_exec", "0"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(asked.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(code), "{asked:?}");
            let lines = String::from_utf8(out.stdout).unwrap().lines().count();
            assert_eq!(lines, if asked == "1\n" { 2 } else { 0 }, "{asked:?}");
        }
    }
}
