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

use crate::probe::Fingerprint;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The hidden argument that makes envbench print its environment's
/// fingerprint as JSON (one line on stdout), for the target directories
/// read as JSON on stdin ([`FingerprintRequest`]).
pub const FINGERPRINT_ARG: &str = "__fingerprint";

/// How long the fingerprint through a prefix may take: probing takes a
/// second or two, starting a sandbox or a connection a few more; a prefix
/// that waits for a password typed at the terminal gets time for that.
pub const FINGERPRINT_TIMEOUT: Duration = Duration::from_secs(120);

/// Most bytes read of an answer or of its stderr: a fingerprint is a few
/// kilobytes; a prefix that prints without end is stopped by the timeout.
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
        let argv = self.argv(arg)?;
        let mut cmd = std::process::Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        super::os::wind_down_with_envbench(&mut cmd);
        Ok(cmd)
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
/// [`FINGERPRINT_TIMEOUT`].
///
/// # Errors
/// What was tried (the exact argv) and what happened: the program was not
/// found or could not start, exited with a status (and the last lines of
/// its stderr), printed no fingerprint, or did not answer in time.
pub fn fingerprint(env: &Environment, dirs: &[PathBuf]) -> Result<Fingerprint, String> {
    if env.launcher.is_host() {
        return Ok(crate::probe::probe_live(dirs));
    }
    let argv = env.launcher.argv(FINGERPRINT_ARG)?;
    let tried = format!("tried `{}`", shown(&argv));
    let request = FingerprintRequest {
        dirs: dirs.to_vec(),
    };
    let answer = ask(&env.launcher, &request, FINGERPRINT_TIMEOUT)
        .map_err(|why| format!("{tried}: {why}"))?;
    let line = answer.stdout.lines().rev().find(|l| !l.trim().is_empty());
    line.and_then(|l| serde_json::from_str::<Fingerprint>(l).ok())
        .ok_or_else(|| {
            let printed = match line {
                Some(l) => format!("printed `{}`", cut(l, 120)),
                None => "printed nothing".into(),
            };
            format!(
                "{tried}: it exited with status 0 but {printed}, not a fingerprint: is the \
                 binary at that path an envbench of this version?{}",
                stderr_tail(&answer.stderr)
            )
        })
}

/// What a process printed before it exited with status 0.
struct Answer {
    stdout: String,
    stderr: String,
}

/// Starts `launcher`'s fingerprint command, writes `request` to it and
/// reads what it prints until it exits (killed by PID after `timeout`).
fn ask(
    launcher: &Launcher,
    request: &FingerprintRequest,
    timeout: Duration,
) -> Result<Answer, String> {
    let mut cmd = launcher.command(FINGERPRINT_ARG)?;
    cmd.stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| not_started(&launcher.prefix, &e))?;
    if let Some(mut stdin) = child.stdin.take() {
        let text = serde_json::to_string(request).expect("invariant: requests serialise");
        // a prefix that exits at once closes the pipe: its status says why
        let _ = writeln!(stdin, "{text}");
    }
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Ok(None) => {
                // SAFETY: kill(2) on our own child's PID, not yet reaped.
                unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
                let _ = child.wait();
                return Err(format!(
                    "it gave no answer within {} s and was stopped{}",
                    timeout.as_secs(),
                    stderr_tail(&collected(stderr))
                ));
            }
            Err(e) => return Err(format!("it was lost: {e}")),
        }
    };
    let (stdout, stderr) = (collected(stdout), collected(stderr));
    if !status.success() {
        return Err(format!("it {}{}", ended(status), stderr_tail(&stderr)));
    }
    Ok(Answer { stdout, stderr })
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
        std::io::ErrorKind::PermissionDenied => {
            format!("{what} cannot be run: permission denied ({e})")
        }
        _ => format!("{what} could not start: {e}{}", limit_hint(e)),
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

/// A stream read to its end (at most [`ANSWER_CAP_BYTES`]) on a thread.
type Reading = Option<std::sync::mpsc::Receiver<Vec<u8>>>;

fn read_all(stream: Option<impl Read + Send + 'static>) -> Reading {
    let stream = stream?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("envbench-answer".into())
        .spawn(move || {
            let mut buf = Vec::new();
            let _ = stream.take(ANSWER_CAP_BYTES).read_to_end(&mut buf);
            let _ = tx.send(buf);
        })
        .ok()?;
    Some(rx)
}

/// What a [`read_all`] read, once its stream closed; what it had not got
/// within a second is not waited for (a process the prefix left behind may
/// hold the pipe open).
fn collected(reading: Reading) -> String {
    reading
        .and_then(|rx| rx.recv_timeout(Duration::from_secs(1)).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
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
        .map(|l| format!("\n  | {}", crate::terminal::escape(&cut(l, 200))))
        .collect();
    format!("; its stderr ended with:{}", shown.concat())
}

/// `text` cut to `most` characters, with `...` when cut.
fn cut(text: &str, most: usize) -> String {
    let mut out: String = text.chars().take(most).collect();
    if text.chars().count() > most {
        out.push_str("...");
    }
    out
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
        let err = fingerprint(&env(&["/nonexistent/prog"]), &[]).unwrap_err();
        assert!(err.contains("tried `/nonexistent/prog "), "{err}");
        assert!(err.contains("__fingerprint`"), "{err}");
        assert!(err.contains("was not found"), "{err}");
    }

    #[test]
    fn a_prefix_that_fails_shows_its_status_and_stderr() {
        // `sh -c SCRIPT` takes envbench's path and argument as $0 and $1
        let err = fingerprint(&env(&["sh", "-c", "echo no way in >&2; exit 7"]), &[]).unwrap_err();
        assert!(err.contains("exited with status 7"), "{err}");
        assert!(err.contains("| no way in"), "{err}");
    }

    #[test]
    fn a_prefix_that_prints_no_fingerprint_is_refused() {
        let err = fingerprint(&env(&["echo"]), &[]).unwrap_err();
        assert!(err.contains("exited with status 0 but printed `"), "{err}");
        assert!(err.contains("not a fingerprint"), "{err}");
    }
}
