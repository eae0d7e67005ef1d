//! What the benches share: Ctrl-C heard, and envbench timed.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A flag that Ctrl-C and SIGTERM set, so that a bench stops at its next
/// step and its temporary directories are removed as it returns.
pub fn interrupts() -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|e| format!("cannot watch for Ctrl-C: {e}"))?;
    }
    Ok(stop)
}

/// A temporary directory of the bench's own, removed when it drops.
pub fn scratch(prefix: &str) -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| format!("cannot make a temporary directory: {e}"))
}

/// The envbench a bench times: `--envbench PATH` (another build, to
/// compare two), else the one cargo built with the bench.
pub fn envbench(given: Option<String>) -> String {
    given.unwrap_or_else(|| env!("CARGO_BIN_EXE_envbench").to_string())
}

/// Runs `body` with the flag Ctrl-C sets; the bench's exit status: 0 where
/// it succeeded, 130 where Ctrl-C came, 1 where it failed (the error said
/// on stderr after `name`).
pub fn run_main(name: &str, body: impl FnOnce(&AtomicBool) -> Result<(), String>) -> ExitCode {
    let got = interrupts().and_then(|stop| {
        let r = body(&stop);
        heard(&stop).and(r)
    });
    match got {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::from(if e == "interrupted" { 130 } else { 1 })
        }
    }
}

/// Whether Ctrl-C came: an error that says so.
pub fn heard(stop: &AtomicBool) -> Result<(), String> {
    if stop.load(Ordering::Relaxed) {
        Err("interrupted".into())
    } else {
        Ok(())
    }
}

/// Seconds `exe` took with `args` (its output discarded, its history
/// under `data_home` and no shared store, never a person's); an error
/// where it failed or Ctrl-C came.
pub fn timed(
    exe: &str,
    args: &[String],
    data_home: &Path,
    stop: &AtomicBool,
) -> Result<f64, String> {
    let t0 = Instant::now();
    let out = Command::new(exe)
        .args(args)
        .env("XDG_DATA_HOME", data_home)
        .env_remove("ENVBENCH_DB")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start envbench: {e}"))?;
    let secs = t0.elapsed().as_secs_f64();
    heard(stop)?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let last: Vec<char> = said.trim().chars().rev().take(400).collect();
        let tail: String = last.into_iter().rev().collect();
        return Err(format!(
            "envbench {}: {}: {tail}",
            args.first().map_or("", String::as_str),
            out.status
        ));
    }
    Ok(secs)
}
