//! Starting envbench inside an environment (`run --in NAME=PREFIX`): a
//! [`Launcher`] is a command prefix (`runsc --network=none do`, `ssh -T
//! guest`, `unshare --user --map-root-user`) and the path of envbench
//! inside the environment; a hidden argument follows them ([`WORKER_ARG`]
//! for a case round, [`FINGERPRINT_ARG`] for the environment's
//! fingerprint). The words are handed to `exec` as they are: no shell runs
//! them, so nothing in a name, a path or a label is ever interpreted.
//!
//! [`fingerprint`] asks the environment for its fingerprint through the
//! prefix before anything is measured; it is also the check that the
//! prefix can start envbench at all, and says what was tried and what
//! happened when it cannot.
//!
//! [`WORKER_ARG`]: super::worker::WORKER_ARG

use super::peer::{Heard, Peer, Stderr};
use crate::probe::Fingerprint;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The hidden argument that makes envbench print its environment's
/// fingerprint as JSON (one line on stdout), for the target directories
/// read as JSON on stdin ([`FingerprintRequest`]).
pub const FINGERPRINT_ARG: &str = "__fingerprint";

/// How long the fingerprint through a prefix may take: probing takes a
/// second or two, starting a sandbox or a connection a few more; a prefix
/// that waits for a password typed at the terminal gets time for that.
pub const FINGERPRINT_TIMEOUT: Duration = Duration::from_secs(120);

/// Most bytes read of an answer: a fingerprint is a few kilobytes; a
/// prefix that prints more is stopped.
const ANSWER_CAP_BYTES: u64 = 4 << 20;

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

/// An environment of an interleaved run: its name (the label of its
/// result file) and how envbench starts in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// `--in NAME`: `[A-Za-z0-9_-]+`, unique in the run.
    pub name: String,
    /// Its prefix and binary.
    pub launcher: Launcher,
}

impl Launcher {
    /// Whether this is the host as it is: no prefix, this binary.
    pub fn is_host(&self) -> bool {
        self.prefix.is_empty() && self.binary.is_none()
    }

    /// The whole command: prefix, binary, `arg`.
    ///
    /// # Errors
    /// This binary's path cannot be found (`/proc/self/exe`).
    pub fn argv(&self, arg: &str) -> Result<Vec<OsString>, String> {
        let binary = match &self.binary {
            Some(b) => b.clone(),
            None => std::env::current_exe()
                .map_err(|e| format!("cannot find envbench's binary: {e}"))?,
        };
        Ok(self
            .prefix
            .iter()
            .map(OsString::from)
            .chain([binary.into_os_string(), OsString::from(arg)])
            .collect())
    }

    /// A command for `argv`, which dies with envbench (SIGTERM when
    /// envbench dies, even by SIGKILL), its standard streams piped but
    /// stderr, which is inherited.
    ///
    /// # Errors
    /// As [`Launcher::argv`].
    pub fn command(&self, arg: &str) -> Result<std::process::Command, String> {
        let mut argv = self.argv(arg)?;
        if let Some(program) = self.prefix.first() {
            // the prefix runs under a guard of envbench's own, its program
            // found here first (not found, a directory: said as such)
            let path = super::guard::resolve(program).map_err(|e| not_started(&self.prefix, &e))?;
            argv[0] = path.into_os_string();
            let me = std::env::current_exe()
                .map_err(|e| format!("cannot find envbench's binary: {e}"))?;
            argv.splice(
                0..0,
                [me.into_os_string(), OsString::from(super::guard::GUARD_ARG)],
            );
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
    pub fn start(&self, arg: &str, stderr: Stderr) -> Result<Peer, String> {
        let cmd = self.command(arg)?;
        Peer::start(cmd, !self.is_host(), stderr)
            .map_err(|e| format!("{}{}", not_started(&self.prefix, &e), limit_hint(&e)))
    }
}

/// `argv` as a person would type it: words with anything but
/// `[A-Za-z0-9_./=:,@%+-]` in single quotes, control characters escaped.
pub fn shown(argv: &[OsString]) -> String {
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

/// What [`FINGERPRINT_ARG`] reads on stdin: the target directories whose
/// filesystems the fingerprint describes, as paths inside the environment.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FingerprintRequest {
    /// The `--dir` paths.
    #[serde(default)]
    pub dirs: Vec<PathBuf>,
}

/// The environment's side of [`fingerprint`]: reads a
/// [`FingerprintRequest`] line on stdin, probes, prints the fingerprint as
/// one line of JSON. Exit code 0 once it is written, 2 for a request it
/// cannot read.
pub fn serve_fingerprint() -> ExitCode {
    let mut text = String::new();
    let read = std::io::stdin().lock().read_line(&mut text);
    let Some(request) = read
        .ok()
        .and_then(|_| serde_json::from_str::<FingerprintRequest>(&text).ok())
    else {
        eprintln!("envbench: {FINGERPRINT_ARG} reads {{\"dirs\": [PATH, ...]}} as JSON on stdin");
        return ExitCode::from(2);
    };
    let fp = crate::probe::probe_live(&request.dirs);
    let line = serde_json::to_string(&fp).expect("invariant: fingerprints serialise");
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{line}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

/// The fingerprint of `env` for the target directories `dirs`: probed
/// here for the host as it is, otherwise through its prefix within
/// [`FINGERPRINT_TIMEOUT`], or until `interrupted`. The prefix's process
/// and all it started are stopped on every way out ([`Peer`]).
///
/// # Errors
/// What was tried (the exact argv) and what happened: the program was not
/// found or could not start, exited with a status (and the last lines of
/// its stderr), printed anything but one fingerprint of this version, a
/// fingerprint no machine can have, or did not answer in time.
pub fn fingerprint(
    env: &Environment,
    dirs: &[PathBuf],
    interrupted: &AtomicBool,
) -> Result<Fingerprint, String> {
    if env.launcher.is_host() {
        return Ok(crate::probe::probe_live(dirs));
    }
    let argv = env.launcher.argv(FINGERPRINT_ARG)?;
    let tried = format!("tried `{}`", shown(&argv));
    let request = FingerprintRequest {
        dirs: dirs.to_vec(),
    };
    let answer = ask(&env.launcher, &request, FINGERPRINT_TIMEOUT, interrupted)
        .map_err(|why| format!("{tried}: {why}"))?;
    let lines: Vec<&str> = answer
        .stdout
        .iter()
        .map(String::as_str)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let fp = match lines.as_slice() {
        [line] => serde_json::from_str::<Fingerprint>(line).ok(),
        _ => None,
    };
    let Some(fp) = fp else {
        let printed = match lines.as_slice() {
            [] => "printed nothing".to_string(),
            [line] => format!("printed `{}`", cut(line, 120)),
            [first, ..] => {
                return Err(format!(
                    "{tried}: it printed {} lines where envbench prints one (the first: `{}`): \
                     a prefix must leave stdout to envbench, whose workers answer there; send \
                     its own messages to stderr",
                    lines.len(),
                    cut(first, 120)
                ))
            }
        };
        return Err(format!(
            "{tried}: it exited with status 0 but {printed}, not one fingerprint: is the \
             binary at that path an envbench of this version?{}",
            stderr_tail(&answer.stderr)
        ));
    };
    let ours = env!("CARGO_PKG_VERSION");
    if fp.build.version != ours {
        return Err(format!(
            "{tried}: it is envbench {}, and this is {ours}: its workers speak another version \
             of the protocol; install this version there (--in-binary NAME=PATH)",
            crate::terminal::escape(&fp.build.version)
        ));
    }
    if let Some(why) = fp.impossible() {
        return Err(format!(
            "{tried}: its fingerprint cannot be a machine's: {}",
            crate::terminal::escape(&why)
        ));
    }
    Ok(fp)
}

/// What a process printed before it exited with status 0.
struct Answer {
    stdout: Vec<String>,
    stderr: String,
}

/// Starts `launcher`'s fingerprint command, writes `request` to it and
/// reads what it prints until it exits; stopped, with all it started,
/// after `timeout` or once `interrupted`.
fn ask(
    launcher: &Launcher,
    request: &FingerprintRequest,
    timeout: Duration,
    interrupted: &AtomicBool,
) -> Result<Answer, String> {
    let mut peer = launcher.start(FINGERPRINT_ARG, Stderr::Keep)?;
    let text = serde_json::to_string(request).expect("invariant: requests serialise");
    // a prefix that exits at once closes the pipe: its status says why
    let _ = peer.send(&text);
    let until = Instant::now() + timeout;
    let mut stdout = Vec::new();
    let mut read = 0usize;
    loop {
        match peer.next(until, Some(interrupted)) {
            Heard::Line(line) => {
                read += line.len();
                if read as u64 > ANSWER_CAP_BYTES {
                    peer.stop();
                    return Err(format!(
                        "it printed more than {} MiB, far more than a fingerprint, and was stopped",
                        ANSWER_CAP_BYTES >> 20
                    ));
                }
                stdout.push(line);
            }
            Heard::Closed => break,
            Heard::TooLong => {
                peer.stop();
                return Err("it printed a line without end, and was stopped".into());
            }
            Heard::Interrupted => {
                peer.stop();
                return Err("interrupted while it answered".into());
            }
            Heard::Late => {
                peer.stop();
                return Err(format!(
                    "it gave no answer within {} s and was stopped, with all it started{}",
                    timeout.as_secs(),
                    stderr_tail(&peer.stderr())
                ));
            }
        }
    }
    // its stdout closed: it exits now, or is stopped
    let (status, _) = {
        let stderr_first = peer.stderr();
        let (status, stopped) = peer.finish(Duration::from_secs(5));
        ((status, stderr_first), stopped)
    };
    let (status, stderr) = status;
    match status {
        Some(s) if s.success() => Ok(Answer { stdout, stderr }),
        Some(s) => Err(format!("it {}{}", ended(s), stderr_tail(&stderr))),
        None => Err(format!("it was lost{}", stderr_tail(&stderr))),
    }
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
pub fn limit_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EAGAIN) => {
            "; the limit on processes and threads (ulimit -u) allows no more: raise it or stop other processes"
        }
        Some(libc::ENOMEM) => "; out of memory, or a memory limit (ulimit -v) reached",
        _ => "",
    }
}

/// "exited with status N" or "was killed by signal N".
fn ended(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => format!("ended ({status})"),
    }
}

/// The last lines of `stderr`, for a message; empty when it said nothing.
fn stderr_tail(stderr: &str) -> String {
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

    fn env(prefix: &[&str]) -> Environment {
        Environment {
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
    fn a_missing_prefix_program_is_named_with_the_argv_tried() {
        let err =
            fingerprint(&env(&["/nonexistent/prog"]), &[], &AtomicBool::new(false)).unwrap_err();
        assert!(err.contains("tried `/nonexistent/prog "), "{err}");
        assert!(err.contains("__fingerprint`"), "{err}");
        assert!(err.contains("was not found"), "{err}");
    }

    // a prefix that fails or prints no fingerprint runs under the guard,
    // envbench's own binary: tests/bad_input.rs's rows `--in x=false` and
    // `--in x=true` hold those messages
}
