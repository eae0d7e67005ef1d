//! Runs started in a process group of their own, and the groups seen from
//! /proc, for the tests that check that a run leaves no process of its
//! group behind (tests/cli.rs, tests/interleave.rs).

use std::path::Path;

/// Starts `envbench ARGS` in `dir`, its history under cargo's test scratch
/// directory, in a process group of its own (whose id is its PID), stdout
/// discarded, stderr piped.
pub fn start_in_group(dir: &Path, args: &[&str]) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("envbench"));
    cmd.env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0);
    // SIGHUP at its default, as in a terminal's session, even when the
    // tests themselves run under nohup (which would leave it ignored for
    // envbench too, and envbench keeps an ignored SIGHUP ignored).
    // SAFETY: signal(2) is async-signal-safe, and nothing else runs
    // between fork and exec here.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.spawn().unwrap()
}

/// Processes whose process group is `pgid`, from /proc.
pub fn processes_in_group(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // fields after the ")" of the command name: state ppid pgrp ...
            let rest = &stat[stat.rfind(')')? + 2..];
            let pgrp: i32 = rest.split(' ').nth(2)?.parse().ok()?;
            (pgrp == pgid).then_some(pid)
        })
        .collect()
}
