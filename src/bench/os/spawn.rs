//! `os.spawn`: the cost of starting a program and waiting for it, by
//! fork + exec + wait (UnixBench "Execl Throughput" and "Process Creation")
//! and by posix_spawn + wait. Seed 004 found both far slower under WSL 1.
//!
//! The tiny helper (`helpers/tiny.rs`: 10 KB, linked only with libc, the
//! size of a C `int main(void) { return 0; }`) starts itself with the
//! argument `exit` and times each start, as UnixBench's small C programs
//! do, so neither envbench's larger memory map (which makes every fork
//! dearer) nor its load time is measured, and nothing outside the tool is
//! needed. Where the helper cannot run, envbench spawns itself with the
//! hidden argument `__exit` (a 4 MB binary, much dearer to load), and the
//! result says so.

use super::super::{calibrate_from, Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use super::tiny::Tiny;
use super::Children;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::price::{Cost, Op, Price};
use crate::stats::percentile_of_sorted;
use crate::units::{Direction, Unit};
use crate::view::{Percentiles, View, ViewKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

extern "C" {
    static environ: *const *mut libc::c_char;
}

/// The argument that makes envbench exit at once (see `main.rs`).
pub const EXIT_ARG: &str = "__exit";
/// Most spawns the tiny helper makes in one batch (its MAX_SPAWNS).
const MAX_SPAWNS_PER_BATCH: u64 = 1_000_000;
/// How long the tiny helper spawns untimed before its first batch. A fresh
/// process's first spawns are slower: on the project's Xeon VM (2 vCPUs,
/// 2026-11-29) the scheduler moved each child to the other vCPU at exec
/// for the first 50-75 spawns (about 60 ms), 750-940 us a spawn against
/// 690-730 after, in 8 of 8 fresh helpers. A long UnixBench loop, and
/// seed 004's figures, never see that ramp.
const WARM_MS: u32 = 100;

/// The envbench binary to start: this executable when it is envbench's
/// own, whatever its file is called (a release renamed, a copy kept
/// beside a measurement: [`crate::config::this_is_envbench`]) but for the
/// dynamic loader it was started through (`ld-linux... ./envbench`, which
/// would take the arguments for a program to load), else an `envbench`
/// beside it or one directory up (cargo's test layout, where this is a
/// test harness).
pub(crate) fn envbench_binary() -> Option<PathBuf> {
    let me = std::env::current_exe().ok()?;
    let own = crate::config::is_envbench() && !crate::probe::emulation::is_loader(&me);
    if own || me.file_name().is_some_and(|n| n == "envbench") {
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
    fn references(&self) -> Vec<super::super::reference::Reference> {
        use super::super::reference::{Arg, Cpus, Pick, Reference, Side};
        use crate::results::params::key;
        // the same program started (the tiny helper's `exit`); where the
        // scheduler places the children, and with both spawners and their
        // children on one CPU, where no wake-up crosses CPUs
        [false, true]
            .into_iter()
            .map(|pinned| Reference {
                params: &[(key::METHOD, "fork_exec")],
                metric: "spawns_per_sec",
                band: Some(super::REFERENCE_BAND),
                tools: vec![super::c_reference(
                    "a C fork+exec loop",
                    &[Arg::Text("spawn"), Arg::Tiny],
                    if pinned { Cpus::First } else { Cpus::Any },
                    1,
                )],
                pick: Pick::First,
                envbench: if pinned {
                    Side::ON_FIRST_CPU
                } else {
                    Side::AS_PLANNED
                },
                information_if: None,
            })
            .collect()
    }
    fn id(&self) -> &'static str {
        ids::OS_SPAWN
    }
    fn prices(&self) -> &'static [Price] {
        // a program started and waited for, as a shell or a build does
        &[Price {
            op: Op::Spawn,
            metric: "spawns_per_sec",
            params: &[(crate::results::params::key::METHOD, "fork_exec")],
            on_dir: false,
            cost: Cost::PerSecond,
            names: 0,
        }]
    }
    fn topic(&self) -> &'static str {
        "starting programs"
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
                bench: self.id().into(),
                params: BTreeMap::from([(
                    crate::results::params::key::METHOD.to_string(),
                    Value::from(m.name()),
                )]),
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
    fn views(&self) -> Vec<View> {
        vec![View {
            title: "latency percentiles per spawn",
            kind: ViewKind::Percentiles(Percentiles {
                points: &[("latency_p50", 50.0), ("latency_p95", 95.0)],
                per: "spawn",
            }),
        }]
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let method = match case
            .params
            .get(crate::results::params::key::METHOD)
            .and_then(Value::as_str)
        {
            Some("fork_exec") => Method::ForkExec,
            Some("posix_spawn") => Method::PosixSpawn,
            _ => return Err(BenchError::Failed(format!("{}: bad method", case.key()))),
        };
        let (runner, note) = match Tiny::load() {
            Ok(tiny) => (Runner::Tiny(tiny), None),
            Err(why) => {
                let bin = envbench_binary().ok_or_else(|| {
                    BenchError::Unsupported(format!(
                        "{why}, and the envbench binary to start instead cannot be found"
                    ))
                })?;
                let note = format!(
                    "{why}: envbench started itself instead, a far larger program to fork \
                     and load; compare only with runs that say the same"
                );
                let c = |s: &str| CString::new(s).expect("invariant: no NUL in a literal");
                let path = CString::new(bin.as_os_str().as_bytes())
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                (
                    Runner::Envbench {
                        path,
                        args: [c("envbench"), c(EXIT_ARG)],
                    },
                    Some(note),
                )
            }
        };
        let mut trial = SpawnTrial {
            method,
            runner,
            server: None,
            note,
            count: 0,
            latencies_us: Vec::new(),
        };
        trial.count = trial.calibrate(ctx)?;
        Ok(Box::new(trial))
    }
}

/// Spawns that fill `target` seconds when `probe` spawns took `secs`
/// (the helper's own timing), at least 1, at most the helper's limit.
fn batch_size(target: f64, secs: f64, probe: u64) -> u64 {
    let per_spawn = (secs / probe.max(1) as f64).max(1e-6);
    ((target / per_spawn).round() as u64).clamp(1, MAX_SPAWNS_PER_BATCH)
}

/// Who spawns, and what.
enum Runner {
    /// The tiny helper spawns itself, one process serving every batch of
    /// the trial (`tiny serve METHOD WARM_MS`).
    Tiny(Tiny),
    /// The fallback: this process spawns envbench `__exit`.
    Envbench { path: CString, args: [CString; 2] },
}

struct SpawnTrial {
    method: Method,
    runner: Runner,
    /// The tiny helper serving this trial's batches, once started.
    server: Option<Server>,
    /// Why envbench itself is started, when it is.
    note: Option<String>,
    count: u64,
    latencies_us: Vec<f64>,
}

/// The tiny helper serving batches (`tiny serve`): started at the trial's
/// first batch, warmed up by itself, asked for each batch on its stdin,
/// and ended with the trial (stdin closed, then stopped by its PID and
/// reaped).
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(tiny: &Tiny, method: Method) -> Result<Server, BenchError> {
        let mut child = tiny
            .command()
            .args(["serve", method.name(), &WARM_MS.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
        match stdout {
            Some(out) => Ok(Server {
                child,
                stdin,
                stdout: BufReader::new(out),
            }),
            None => Err(BenchError::Failed("the spawn helper has no stdout".into())),
        }
    }

    /// Asks for `n` spawns and returns the helper's lines for them, or
    /// None when it ended or broke its pipe first.
    fn batch(&mut self, n: u64) -> Option<String> {
        let stdin = self.stdin.as_mut()?;
        writeln!(stdin, "{n}").ok()?;
        stdin.flush().ok()?;
        let mut text = String::new();
        for _ in 0..=n {
            if self.stdout.read_line(&mut text).ok()? == 0 {
                return None;
            }
        }
        Some(text)
    }

    /// Why the helper stopped answering: interrupted (Ctrl-C reached its
    /// process group) or its failure line in words.
    fn failure(mut self) -> BenchError {
        use std::os::unix::process::ExitStatusExt;
        self.stdin = None;
        // one that ended keeps its status; one that did not (an unreadable
        // answer) cannot hold the round
        let _ = self.child.kill();
        let status = self.child.wait();
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut stderr);
        }
        match status {
            Ok(s) if s.signal() == Some(libc::SIGINT) => BenchError::Interrupted,
            _ => BenchError::Failed(describe_spawn_failure(&stderr)),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // its stdin closed, it ends by itself; stopped all the same, so a
        // batch under way cannot hold the trial's end
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A batch of the tiny helper's `serve`: total nanoseconds, then one line
/// per spawn; returns seconds and per-spawn microseconds.
fn parse_spawn_output(text: &str, n: u64) -> Result<(f64, Vec<f64>), String> {
    let nums: Option<Vec<u64>> = text.split_whitespace().map(|t| t.parse().ok()).collect();
    match nums.as_deref() {
        Some([total, lat @ ..]) if lat.len() as u64 == n => Ok((
            *total as f64 / 1e9,
            lat.iter().map(|&ns| ns as f64 / 1e3).collect(),
        )),
        _ => Err(format!(
            "the spawn helper printed {:?}",
            text.chars().take(200).collect::<String>()
        )),
    }
}

/// The tiny helper's failure line in words.
fn describe_spawn_failure(stderr: &str) -> String {
    let words: Vec<&str> = stderr.split_whitespace().collect();
    if let [what, i, code] = words[..] {
        if let (Ok(i), Ok(code)) = (i.parse::<u64>(), code.parse::<u32>()) {
            let code = code as i32;
            match what {
                "spawn-failed" => {
                    return format!(
                        "spawn {} failed: {}",
                        i + 1,
                        std::io::Error::from_raw_os_error(code)
                    )
                }
                "wait-failed" => {
                    return format!(
                        "waiting for spawn {} failed: {}",
                        i + 1,
                        std::io::Error::from_raw_os_error(code)
                    )
                }
                "child-status" => {
                    return format!("the spawned program did not exit cleanly (status {code:#x})")
                }
                _ => {}
            }
        }
    }
    format!("spawn helper: {}", stderr.trim())
}

impl SpawnTrial {
    /// Spawns per repetition. The helper's own start (a fork and exec of
    /// the helper by envbench, and its untimed first spawn) is not a spawn
    /// and is not timed, so the batch is sized on the time the spawns took
    /// (the helper's report), not on the batch's wall time: sized on that,
    /// a quick repetition held 4-6 spawns instead of about 20.
    fn calibrate(&mut self, ctx: &Context) -> Result<u64, BenchError> {
        if ctx.clock.is_fake() || matches!(self.runner, Runner::Envbench { .. }) {
            // the fallback times from this process: wall time is spawn time
            return calibrate_from(ctx, 1, |n| self.batch(n, ctx.clock).map(drop));
        }
        const PROBE: u64 = 4;
        let (secs, _) = self.batch(PROBE, ctx.clock)?;
        Ok(batch_size(ctx.reps.rep_target().as_secs_f64(), secs, PROBE))
    }

    /// Spawns `n` times; returns the seconds in all and each spawn's
    /// microseconds.
    fn batch(&mut self, n: u64, clock: &Clock) -> Result<(f64, Vec<f64>), BenchError> {
        match &self.runner {
            Runner::Tiny(tiny) => {
                if self.server.is_none() {
                    self.server = Some(Server::start(tiny, self.method)?);
                }
                let answer = self.server.as_mut().and_then(|s| s.batch(n));
                match answer {
                    Some(text) => parse_spawn_output(&text, n).map_err(BenchError::Failed),
                    None => Err(self
                        .server
                        .take()
                        .map_or(BenchError::Failed("the spawn helper is gone".into()), |s| {
                            s.failure()
                        })),
                }
            }
            Runner::Envbench { path, args } => {
                let mut lat = Vec::with_capacity(n as usize);
                let start = clock.now();
                for _ in 0..n {
                    let t0 = clock.now();
                    self.spawn_once(path, args)?;
                    lat.push(clock.now().saturating_sub(t0).as_secs_f64() * 1e6);
                }
                Ok((clock.now().saturating_sub(start).as_secs_f64(), lat))
            }
        }
    }

    /// Starts the program from this process, waits for it, checks it exited 0.
    fn spawn_once(&self, path: &CString, args: &[CString; 2]) -> Result<(), BenchError> {
        let argv = [args[0].as_ptr(), args[1].as_ptr(), std::ptr::null()];
        let mut kids = Children::default();
        match self.method {
            Method::ForkExec => {
                let (path, argv) = (path.as_ptr(), argv.as_ptr());
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
                        path.as_ptr(),
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
        let (secs, mut lat) = self.batch(self.count, clock)?;
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
            "program": match self.runner {
                Runner::Tiny(_) => "envbench's tiny helper (exit), started by itself",
                Runner::Envbench { .. } => "envbench __exit, started by envbench",
            },
            "spawns_per_repetition": self.count,
            "untimed_warm_up_ms": match self.runner {
                Runner::Tiny(_) => Some(WARM_MS),
                Runner::Envbench { .. } => None,
            },
            "last_repetition_latencies_us_sorted": self.latencies_us,
        }))
    }

    fn notes(&self) -> Vec<String> {
        self.note.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    #[test]
    fn helper_output_and_failures_are_read() {
        let (secs, lat) = parse_spawn_output("3000\n1000\n2000\n", 2).unwrap();
        assert_eq!((secs, lat), (3e-6, vec![1.0, 2.0]));
        assert!(
            parse_spawn_output("3000\n1000\n", 2).is_err(),
            "one spawn missing"
        );
        assert!(parse_spawn_output("3000\nx\n2000\n", 2).is_err());
        assert_eq!(
            describe_spawn_failure("spawn-failed 4 11\n"),
            format!("spawn 5 failed: {}", std::io::Error::from_raw_os_error(11))
        );
        assert_eq!(
            describe_spawn_failure("child-status 0 32512"),
            "the spawned program did not exit cleanly (status 0x7f00)"
        );
        assert_eq!(describe_spawn_failure("odd"), "spawn helper: odd");
    }

    #[test]
    fn a_batch_is_sized_on_the_spawns_own_time() {
        // quick's 20 ms target, 4 spawns in 4 ms of the helper's time: 20
        // spawns (sized on the wall time of the batch, helper start
        // included, it was 4-6)
        assert_eq!(batch_size(0.02, 0.004, 4), 20);
        assert_eq!(batch_size(0.1, 0.004, 4), 100);
        // a spawn longer than the target: one
        assert_eq!(batch_size(0.02, 0.4, 4), 1);
        // a clock that saw nothing: capped, never infinite
        assert_eq!(batch_size(0.02, 0.0, 4), 20_000);
        assert_eq!(batch_size(1e9, 1e-9, 4), MAX_SPAWNS_PER_BATCH);
    }

    #[test]
    fn the_fallback_spawns_envbench_from_this_process() {
        // `cargo test --lib` alone does not build the binary; `cargo test` does
        let Some(bin) = envbench_binary() else { return };
        let c = |s: &str| CString::new(s).unwrap();
        for method in [Method::ForkExec, Method::PosixSpawn] {
            let mut t = SpawnTrial {
                method,
                server: None,
                runner: Runner::Envbench {
                    path: c(bin.to_str().unwrap()),
                    args: [c("envbench"), c(EXIT_ARG)],
                },
                note: None,
                count: 3,
                latencies_us: Vec::new(),
            };
            let (secs, lat) = t.batch(3, &Clock::real()).unwrap();
            assert!(secs > 0.0 && lat.len() == 3, "{secs} {lat:?}");
        }
    }

    #[test]
    #[cfg(envbench_tiny)]
    fn one_warmed_helper_serves_every_batch_of_a_trial_and_ends_with_it() {
        for method in [Method::ForkExec, Method::PosixSpawn] {
            let mut t = SpawnTrial {
                method,
                runner: Runner::Tiny(Tiny::load().unwrap()),
                server: None,
                note: None,
                count: 3,
                latencies_us: Vec::new(),
            };
            let clock = Clock::real();
            let started = std::time::Instant::now();
            let (s1, l1) = t.batch(2, &clock).unwrap();
            // it spawned untimed for WARM_MS before its first batch
            assert!(started.elapsed().as_millis() >= u128::from(WARM_MS));
            let pid = t.server.as_ref().unwrap().child.id();
            let (s2, l2) = t.batch(5, &clock).unwrap();
            assert_eq!(
                t.server.as_ref().unwrap().child.id(),
                pid,
                "the same helper"
            );
            assert!(s1 > 0.0 && s2 > 0.0 && l1.len() == 2 && l2.len() == 5);
            assert!(l2.iter().sum::<f64>() <= s2 * 1e6 + 1.0, "{s2} {l2:?}");
            drop(t);
            assert!(
                !std::path::Path::new(&format!("/proc/{pid}")).exists(),
                "the helper was reaped with its trial"
            );
        }
    }

    #[test]
    #[cfg(envbench_tiny)]
    fn both_methods_start_and_reap_the_program() {
        let env = TestEnv::real(0.005);
        for case in Spawn.cases(&TestEnv::plan(crate::config::Suite::Quick, 1)) {
            let mut t = Spawn.prepare(&case, &env.ctx()).unwrap();
            let v = t.once(&env.clock).unwrap();
            assert!(v[0] > 0.0 && v[1] <= v[2], "{}: {v:?}", case.key());
        }
    }
}
