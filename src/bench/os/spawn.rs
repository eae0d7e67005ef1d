//! `os.spawn`: the cost of starting a program and waiting for it, by
//! fork + exec + wait (UnixBench "Execl Throughput" and "Process Creation")
//! and by posix_spawn + wait. Seed 004 found both far slower under WSL 1.
//!
//! The program started is envbench itself with the hidden argument
//! `__exit`, which returns before parsing anything, so nothing outside the
//! tool is needed and both sides of a comparison start the same binary.

use super::super::clock::Clock;
use super::super::{
    calibrate_from, Bench, BenchError, CaseSpec, Context, Family, MetricSpec, Plan, Trial,
};
use super::Children;
use crate::stats::percentile_of_sorted;
use crate::units::{Direction, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

extern "C" {
    static environ: *const *mut libc::c_char;
}

/// The argument that makes envbench exit at once (see `main.rs`).
pub const EXIT_ARG: &str = "__exit";

/// The envbench binary to start: this executable when it is envbench, else
/// an `envbench` beside it or one directory up (cargo's test layout).
pub fn envbench_binary() -> Option<PathBuf> {
    let me = std::env::current_exe().ok()?;
    if me.file_name().is_some_and(|n| n == "envbench") {
        return Some(me);
    }
    let dir = me.parent()?;
    [dir.join("envbench"), dir.parent()?.join("envbench")]
        .into_iter()
        .find(|p| p.is_file())
}

/// How a case starts its child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    ForkExec,
    PosixSpawn,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::ForkExec => "fork_exec",
            Method::PosixSpawn => "posix_spawn",
        }
    }
}

/// The `os.spawn` bench.
#[derive(Debug)]
pub struct Spawn;

impl Bench for Spawn {
    fn family(&self) -> Family {
        Family::Os
    }
    fn name(&self) -> &'static str {
        "spawn"
    }
    fn summary(&self) -> &'static str {
        "start a trivial program and wait for it: fork+exec+wait and posix_spawn+wait; spawns/s, latency p50/p95"
    }
    fn reproduces(&self) -> &'static str {
        "seed 004 (UnixBench Execl Throughput and Process Creation, WSL 1 vs WSL 2)"
    }
    fn cases(&self, _plan: &Plan) -> Vec<CaseSpec> {
        [Method::ForkExec, Method::PosixSpawn]
            .into_iter()
            .map(|m| CaseSpec {
                bench: self.id(),
                params: BTreeMap::from([("method".to_string(), Value::from(m.name()))]),
                metrics: vec![
                    MetricSpec {
                        name: "spawns_per_sec",
                        unit: Unit::OpsPerSec,
                        direction: Direction::HigherIsBetter,
                    },
                    MetricSpec {
                        name: "latency_p50",
                        unit: Unit::Microseconds,
                        direction: Direction::LowerIsBetter,
                    },
                    MetricSpec {
                        name: "latency_p95",
                        unit: Unit::Microseconds,
                        direction: Direction::LowerIsBetter,
                    },
                ],
            })
            .collect()
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let method = match case.params.get("method").and_then(Value::as_str) {
            Some("fork_exec") => Method::ForkExec,
            Some("posix_spawn") => Method::PosixSpawn,
            _ => return Err(BenchError::Failed(format!("{}: bad method", case.key()))),
        };
        let bin = envbench_binary().ok_or_else(|| {
            BenchError::Unsupported("cannot find the envbench binary to start".into())
        })?;
        let path = CString::new(bin.as_os_str().as_bytes())
            .map_err(|e| BenchError::Failed(e.to_string()))?;
        let arg0 = CString::new("envbench").expect("invariant: no NUL in a literal");
        let arg1 = CString::new(EXIT_ARG).expect("invariant: no NUL in a literal");
        let mut trial = SpawnTrial {
            method,
            path,
            args: [arg0, arg1],
            count: 0,
            latencies_us: Vec::new(),
        };
        trial.count = calibrate_from(ctx, 1, |n| {
            (0..n).try_for_each(|_| trial.spawn_once().map(drop))
        })?;
        Ok(Box::new(trial))
    }
}

struct SpawnTrial {
    method: Method,
    path: CString,
    args: [CString; 2],
    count: u64,
    latencies_us: Vec<f64>,
}

impl SpawnTrial {
    /// Starts the program, waits for it, checks it exited 0.
    fn spawn_once(&self) -> Result<(), BenchError> {
        let argv = [
            self.args[0].as_ptr(),
            self.args[1].as_ptr(),
            std::ptr::null(),
        ];
        let mut kids = Children::default();
        match self.method {
            Method::ForkExec => {
                let (path, argv) = (self.path.as_ptr(), argv.as_ptr());
                // In the child only execv and _exit run: async-signal-safe.
                let pid = super::fork_child(|| unsafe {
                    libc::execv(path, argv);
                    libc::_exit(127);
                })?;
                kids.push(pid);
            }
            Method::PosixSpawn => {
                let mut pid = 0;
                // SAFETY: valid NUL-terminated path and argv, the process's own environment.
                let rc = unsafe {
                    libc::posix_spawn(
                        &mut pid,
                        self.path.as_ptr(),
                        std::ptr::null(),
                        std::ptr::null(),
                        argv.as_ptr() as *const *mut _,
                        environ,
                    )
                };
                if rc != 0 {
                    return Err(BenchError::Failed(format!(
                        "posix_spawn: {}",
                        std::io::Error::from_raw_os_error(rc)
                    )));
                }
                kids.push(pid);
            }
        }
        let pid = kids.pids[0];
        let mut status = 0;
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        kids.pids.clear();
        if r != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            return Err(BenchError::Failed(format!(
                "the spawned program did not exit cleanly (status {status:#x})"
            )));
        }
        Ok(())
    }
}

impl Trial for SpawnTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let mut lat = Vec::with_capacity(self.count as usize);
        let start = clock.now();
        for _ in 0..self.count {
            let t0 = clock.now();
            self.spawn_once()?;
            lat.push(clock.now().saturating_sub(t0).as_secs_f64() * 1e6);
        }
        let secs = clock.now().saturating_sub(start).as_secs_f64();
        lat.sort_by(f64::total_cmp);
        let out = vec![
            self.count as f64 / secs,
            percentile_of_sorted(&lat, 0.5),
            percentile_of_sorted(&lat, 0.95),
        ];
        self.latencies_us = lat;
        Ok(out)
    }

    fn details(&mut self) -> Option<Value> {
        Some(serde_json::json!({
            "program": self.path.to_string_lossy(),
            "spawns_per_repetition": self.count,
            "last_repetition_latencies_us_sorted": self.latencies_us,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    #[test]
    fn both_methods_start_and_reap_the_program() {
        if envbench_binary().is_none() {
            return; // `cargo test --lib` alone does not build the binary
        }
        let env = TestEnv::real(0.005);
        for case in Spawn.cases(&TestEnv::plan(crate::config::Suite::Quick, 1)) {
            let mut t = Spawn.prepare(&case, &env.ctx()).unwrap();
            let v = t.once(&env.clock).unwrap();
            assert!(v[0] > 0.0 && v[1] <= v[2], "{}: {v:?}", case.key());
        }
    }
}
