//! Starting envbench inside an environment (`run --in NAME=PREFIX`): a
//! [`Launcher`] is a command prefix (`runsc --network=none do`, `ssh -T
//! guest`, `unshare --user --map-root-user`) and the path of envbench
//! inside the environment; a hidden argument follows them (the resident
//! launcher's, [`super::resident::LAUNCHER_ARG`]). The words are handed to
//! `exec` as they are, under a guard ([`super::guard`]): no shell runs
//! them, so nothing in a name, a path or a label is ever interpreted. What
//! a failure to start says (not found, a directory, the exit status and
//! the last lines of stderr) is worded here.

use super::peer::{Peer, Stderr};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;

/// Lines of a failed prefix's stderr shown in the message.
const STDERR_LINES: usize = 6;

/// How envbench is started in an environment: `prefix`, then `binary`
/// (this binary's path when None), then the hidden argument.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launcher {
    /// The prefix's words, as split from `--in NAME=PREFIX`; empty: none.
    pub prefix: Vec<String>,
    /// envbench's path inside the environment (`--in-binary`); None: the
    /// path of this binary, which a prefix that shares the host's file
    /// system (runsc do, unshare, bwrap) sees as the host does.
    pub binary: Option<PathBuf>,
}

/// A place a run measures in (an environment of an interleaved run, `--in
/// NAME[=PREFIX]`): its name (the label of its result file) and how
/// envbench starts in it. Not `compare::Environment`, a label's runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// `--in NAME`: `[A-Za-z0-9_-]+`, unique in the run.
    pub name: String,
    /// Its prefix and binary.
    pub launcher: Launcher,
}

impl Launcher {
    /// Whether this is the host as it is: no prefix, this binary.
    pub(crate) fn is_host(&self) -> bool {
        self.prefix.is_empty() && self.binary.is_none()
    }

    /// The whole command: prefix, binary, `arg`.
    ///
    /// # Errors
    /// This binary's path cannot be found (`/proc/self/exe`).
    pub(crate) fn argv(&self, arg: &str) -> Result<Vec<OsString>, String> {
        // this binary started as this process was: through the emulator
        // or loader it runs under, if any
        let own = match &self.binary {
            Some(b) => vec![b.clone().into_os_string()],
            None => crate::probe::emulation::own_command()?,
        };
        Ok(self
            .prefix
            .iter()
            .map(OsString::from)
            .chain(own)
            .chain([OsString::from(arg)])
            .collect())
    }

    /// A command for `argv`, which dies with envbench (SIGTERM when
    /// envbench dies, even by SIGKILL), its standard streams piped but
    /// stderr, which is inherited.
    ///
    /// # Errors
    /// As [`Launcher::argv`].
    pub(crate) fn command(&self, arg: &str) -> Result<std::process::Command, String> {
        let mut argv = self.argv(arg)?;
        if let Some(program) = self.prefix.first() {
            // the prefix runs under a guard of envbench's own, its program
            // found here first (not found, a directory: said as such)
            let path =
                crate::cleanup::resolve(program).map_err(|e| not_started(&self.prefix, &e))?;
            argv[0] = path.into_os_string();
            // the guard is this binary too, started as this process was
            // (through the loader or an emulator, if any)
            let mut guard = crate::probe::emulation::own_command()?;
            guard.push(OsString::from(super::guard::GUARD_ARG));
            argv.splice(0..0, guard);
        }
        let mut cmd = std::process::Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        crate::cleanup::wind_down_with_envbench(&mut cmd);
        Ok(cmd)
    }

    /// Starts its command for `arg` as a [`Peer`]: through a prefix under
    /// a guard ([`super::guard`]); its stderr as `stderr` says.
    ///
    /// # Errors
    /// The prefix's program or envbench's binary cannot be found or run
    /// (the message says which and why), or the process cannot start.
    pub(crate) fn start(&self, arg: &str, stderr: Stderr) -> Result<Peer, String> {
        let cmd = self.command(arg)?;
        Peer::start(cmd, !self.is_host(), stderr)
            .map_err(|e| format!("{}{}", not_started(&self.prefix, &e), limit_hint(&e)))
    }
}

/// `argv` as a person would type it: words with anything but
/// `[A-Za-z0-9_./=:,@%+-]` in single quotes, control characters escaped.
pub(crate) fn shown(argv: &[OsString]) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./=:,@%+-".contains(c);
    let words: Vec<String> = argv
        .iter()
        .map(|w| {
            let w = w.to_string_lossy();
            if !w.is_empty() && w.chars().all(plain) {
                w.into_owned()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    crate::terminal::escape(&words.join(" "))
}

/// What a launcher's fingerprint describes: the target directories, whose
/// filesystems it names, as paths inside the environment.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FingerprintRequest {
    /// The `--dir` paths.
    #[serde(default)]
    pub dirs: Vec<PathBuf>,
}

/// Why a prefix's program (or the binary, without one) could not start.
fn not_started(prefix: &[String], e: &std::io::Error) -> String {
    let what = if prefix.is_empty() {
        "envbench's binary"
    } else {
        "the prefix's program"
    };
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("{what} was not found ({e})"),
        std::io::ErrorKind::IsADirectory => format!("{what} is a directory, not a program"),
        std::io::ErrorKind::PermissionDenied => {
            format!("{what} cannot be run: permission denied ({e})")
        }
        _ => format!("{what} could not start: {e}"),
    }
}

/// What a failure to start a process most likely means, for the message:
/// EAGAIN from fork is the per-user process limit.
pub(crate) fn limit_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EAGAIN) => {
            "; the limit on processes and threads (ulimit -u) allows no more: raise it or stop other processes"
        }
        Some(libc::ENOMEM) => "; out of memory, or a memory limit (ulimit -v) reached",
        _ => "",
    }
}

/// "exited with status N" or "was killed by signal N".
pub(super) fn ended(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => format!("ended ({status})"),
    }
}

/// The last lines of `stderr`, for a message; empty when it said nothing.
pub(super) fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "; its stderr was empty".into();
    }
    let from = lines.len().saturating_sub(STDERR_LINES);
    let shown: Vec<String> = lines[from..]
        .iter()
        .map(|l| format!("\n  | {}", cut(l, 200)))
        .collect();
    format!("; its stderr ended with:{}", shown.concat())
}

/// `text` cut to `most` characters, with `...` when cut, escaped for the
/// terminal.
pub(super) fn cut(text: &str, most: usize) -> String {
    let mut out: String = text.chars().take(most).collect();
    if text.chars().count() > most {
        out.push_str("...");
    }
    crate::terminal::escape(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(prefix: &[&str]) -> Place {
        Place {
            name: "x".into(),
            launcher: Launcher {
                prefix: prefix.iter().map(|s| s.to_string()).collect(),
                binary: None,
            },
        }
    }

    #[test]
    fn the_command_is_the_prefix_then_the_binary_then_the_argument() {
        let l = Launcher {
            prefix: vec!["ssh".into(), "-T".into(), "guest".into()],
            binary: Some("/usr/local/bin/envbench".into()),
        };
        let argv = l.argv("__case").unwrap();
        assert_eq!(shown(&argv), "ssh -T guest /usr/local/bin/envbench __case");
        assert!(!l.is_host() && Launcher::default().is_host());
    }

    #[test]
    fn words_are_shown_quoted_as_a_shell_would_read_them() {
        let argv: Vec<OsString> = ["runsc", "--network=none", "do", "a b", "it's", ""]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(shown(&argv), r"runsc --network=none do 'a b' 'it'\''s' ''");
    }

    #[test]
    fn a_prefix_program_that_cannot_run_is_named_before_anything_starts() {
        let no = |prefix: &[&str]| match env(prefix).launcher.start("x", Stderr::Keep) {
            Ok(_) => panic!("{prefix:?} started"),
            Err(e) => e,
        };
        assert!(no(&["/nonexistent/prog"]).contains("was not found"));
        assert!(no(&["no-such-program-here"]).contains("was not found"));
        assert!(no(&["/tmp"]).contains("is a directory, not a program"));
    }

    // a prefix that fails or prints no fingerprint runs under the guard,
    // envbench's own binary: tests/bad_input.rs's rows `--in x=false` and
    // `--in x=true` hold those messages
}
