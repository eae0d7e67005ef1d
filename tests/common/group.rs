//! Runs started in a session of their own (and so a process group whose
//! id is their PID), and the groups and sessions seen from /proc, for the
//! tests that check that a run leaves no process behind (tests/cli.rs,
//! tests/interleave.rs). An environment's prefix runs in a process group
//! of its own, in the run's session.

use std::path::Path;

/// Starts `envbench ARGS` in `dir`, its history under cargo's test scratch
/// directory, in a session and process group of its own (whose id is its
/// PID), stdout discarded, stderr piped.
pub fn start_in_group(dir: &Path, args: &[&str]) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("envbench"));
    cmd.env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // SIGHUP at its default, as in a terminal's session, even when the
    // tests themselves run under nohup (which would leave it ignored for
    // envbench too, and envbench keeps an ignored SIGHUP ignored); SIGINT
    // too, which a background job's shell leaves ignored.
    // SAFETY: signal(2) and setsid(2) are async-signal-safe, and nothing
    // else runs between fork and exec here.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn().unwrap()
}

/// Processes whose process group is `pgid`, from /proc.
pub fn processes_in_group(pgid: i32) -> Vec<i32> {
    processes_where(2, pgid)
}

/// Processes of group `pgid` that are still running (not zombies) once
/// those that end within `within` have ended.
pub fn running_in_group(pgid: i32, within: std::time::Duration) -> Vec<i32> {
    let until = std::time::Instant::now() + within;
    loop {
        let running: Vec<i32> = processes_in_group(pgid)
            .into_iter()
            .filter(|&p| !zombie(p))
            .collect();
        if running.is_empty() || std::time::Instant::now() >= until {
            return running;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether `pid` has ended and waits to be reaped (state Z or X).
fn zombie(pid: i32) -> bool {
    stat_field(pid, 0).is_some_and(|state| state == "Z" || state == "X")
}

/// Field `field` after the command name in /proc/PID/stat (0: state, 1:
/// ppid, 2: pgrp, 3: session); None once the process is gone.
fn stat_field(pid: i32, field: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name may hold spaces and parentheses: it ends at the last ")"
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    rest.split(' ').nth(field).map(str::to_string)
}

/// Processes whose session is `sid`, from /proc: a run's own and those
/// its environments' prefixes started, in groups of their own.
pub fn processes_in_session(sid: i32) -> Vec<i32> {
    processes_where(3, sid)
}

/// Processes whose `field` after the command name in /proc/PID/stat (0:
/// state, 1: ppid, 2: pgrp, 3: session) is `value`.
fn processes_where(field: usize, value: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let found: i32 = stat_field(pid, field)?.parse().ok()?;
            (found == value).then_some(pid)
        })
        .collect()
}

/// What a test says of a process left behind: its stat line and command.
pub fn describe(pid: i32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .unwrap_or_default();
    format!("{} | {}", stat.trim(), cmd.trim())
}
