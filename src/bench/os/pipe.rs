//! `os.pipe`: UnixBench's pipe throughput (a 512-byte write and read in one
//! process, loops/s) and a pipe ping-pong between two processes, one byte
//! each way: a round trip is two context switches, what `perf bench sched
//! pipe` reports (seed 004 ran UnixBench's pipe and context-switch tests
//! under WSL 1 and WSL 2).
//!
//! The ping-pong runs with both processes on one CPU (`cpus=same`: a round
//! trip is two context switches) and on two (`cpus=split`: two cross-CPU
//! wake-ups), placed by envbench with sched_setaffinity; left to the
//! scheduler, the figure flips between the two from run to run. The
//! reference for `same` is `taskset -c CPU perf bench sched pipe`.
//!
//! Across CPUs the processes first run [`SETTLE_SECS`] of untimed round
//! trips: a wake-up from another CPU costs what the (virtual) CPUs' idle
//! states make it, and those follow what ran just before.

use super::super::{calibrate, Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use super::{fork_child, Children};
use crate::bench::affinity::{self, Pinned, Placement};
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::params::key;
use crate::units::{Direction, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// UnixBench's message size for pipe throughput.
pub const MESSAGE_BYTES: usize = 512;

/// Untimed round trips across CPUs before the first repetition. On the
/// Intel Xeon VM (2026-11-29, a cross-CPU wake-up about 40 us) windows of
/// 256 round trips read 55-80 us right after other work and 80-90 us once
/// the ping-pong had run for a few tenths of a second, as a C loop of
/// 20 000 round trips does throughout. The quick suite's five 20 ms
/// repetitions, timed right after calibration, read 56-100 us (medians
/// 64-81) against the C loop's 87-89; the standard suite's 0.1 s
/// repetitions 82-88.
pub const SETTLE_SECS: f64 = 0.25;

/// A pipe with close-on-exec ends: (read, write).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn write_all(fd: RawFd, buf: &[u8]) -> Result<(), BenchError> {
    // SAFETY: `buf` is valid for its length; pipes of this size write whole.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n != buf.len() as isize {
        return Err(BenchError::Failed(format!(
            "pipe write: {}",
            io::Error::last_os_error()
        )));
    }
    Ok(())
}

fn read_exact(fd: RawFd, buf: &mut [u8]) -> Result<(), BenchError> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: the remaining part of `buf` is valid and writable.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n <= 0 {
            return Err(BenchError::Failed(format!(
                "pipe read: {}",
                if n == 0 {
                    "end of file".to_string()
                } else {
                    io::Error::last_os_error().to_string()
                }
            )));
        }
        got += n as usize;
    }
    Ok(())
}

/// The `os.pipe` bench.
#[derive(Debug)]
pub struct Pipe;

impl Bench for Pipe {
    fn references(&self) -> Vec<super::super::reference::Reference> {
        use super::super::reference::{Arg, Cpus, Pick, Reference, Side};
        vec![
            // both processes on the first CPU, as envbench pins them
            Reference {
                params: &[(key::CPUS, "same"), ("mode", "pingpong")],
                metric: "round_trip",
                band: Some(super::REFERENCE_BAND),
                tools: vec![super::perf_reference(
                    "perf bench sched pipe",
                    &[
                        Arg::Text("bench"),
                        Arg::Text("sched"),
                        Arg::Text("pipe"),
                        Arg::Text("-l"),
                        Arg::Text("200000"),
                    ],
                    Cpus::First,
                    1.0,
                )],
                pick: Pick::First,
                envbench: Side::AS_PLANNED,
                information_if: None,
            },
            // each process on its own CPU, as envbench places them (perf
            // can only allow both CPUs to both)
            Reference {
                params: &[(key::CPUS, "split"), ("mode", "pingpong")],
                metric: "round_trip",
                band: Some(super::REFERENCE_BAND),
                tools: vec![super::c_reference(
                    "a C ping-pong, one process on each of the first two CPUs",
                    &[Arg::Text("pingpong"), Arg::FirstCpu, Arg::SecondCpu],
                    Cpus::Any,
                    1,
                )],
                pick: Pick::First,
                envbench: Side::AS_PLANNED,
                information_if: None,
            },
        ]
    }
    fn id(&self) -> &'static str {
        ids::OS_PIPE
    }
    fn topic(&self) -> &'static str {
        "pipes"
    }
    fn summary(&self) -> &'static str {
        "pipe throughput (512-byte write+read, one process) and ping-pong round trip between two processes"
    }
    fn reproduces(&self) -> &'static str {
        "seed 004 (UnixBench Pipe Throughput and Pipe-based Context Switching); perf bench sched pipe"
    }
    fn cases(&self, _plan: &Plan) -> Vec<CaseSpec> {
        vec![CaseSpec {
            bench: self.id().into(),
            params: BTreeMap::from([("mode".to_string(), Value::from("throughput"))]),
            metrics: vec![MetricSpec {
                name: "loops_per_sec",
                unit: Unit::OpsPerSec,
                direction: Direction::HigherIsBetter,
            }],
        }]
        .into_iter()
        .chain([Placement::Same, Placement::Split].map(|p| CaseSpec {
            bench: self.id().into(),
            params: BTreeMap::from([
                (key::CPUS.to_string(), Value::from(p.name())),
                ("mode".to_string(), Value::from("pingpong")),
            ]),
            metrics: vec![
                MetricSpec {
                    name: "round_trip",
                    unit: Unit::Microseconds,
                    direction: Direction::LowerIsBetter,
                },
                MetricSpec {
                    name: "round_trips_per_sec",
                    unit: Unit::OpsPerSec,
                    direction: Direction::HigherIsBetter,
                },
            ],
        }))
        .collect()
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        match case.params.get("mode").and_then(Value::as_str) {
            Some("throughput") => {
                let (r, w) = pipe()?;
                let mut t = Throughput {
                    r,
                    w,
                    buf: [0u8; MESSAGE_BYTES],
                    loops: 0,
                };
                t.loops = calibrate(ctx, |n| t.spin(n))?;
                Ok(Box::new(t))
            }
            Some("pingpong") => {
                let placement = affinity::case_placement(case)?.ok_or_else(|| {
                    BenchError::Failed(format!("{}: a ping-pong needs cpus", case.key()))
                })?;
                let mut t = PingPong::start(Some(placement))?;
                t.loops = calibrate(ctx, |n| t.spin(n))?;
                if placement == Placement::Split && !ctx.clock.is_fake() {
                    t.settle(ctx.clock, SETTLE_SECS)?;
                }
                Ok(Box::new(t))
            }
            _ => Err(BenchError::Failed(format!("{}: bad mode", case.key()))),
        }
    }
}

struct Throughput {
    r: OwnedFd,
    w: OwnedFd,
    buf: [u8; MESSAGE_BYTES],
    loops: u64,
}

impl Throughput {
    fn spin(&mut self, n: u64) -> Result<(), BenchError> {
        for _ in 0..n {
            write_all(self.w.as_raw_fd(), &self.buf)?;
            read_exact(self.r.as_raw_fd(), &mut self.buf)?;
        }
        Ok(())
    }
}

impl Trial for Throughput {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t0 = clock.now();
        self.spin(self.loops)?;
        Ok(vec![
            self.loops as f64 / clock.now().saturating_sub(t0).as_secs_f64(),
        ])
    }
}

/// Parent's ends of two pipes and the echoing child. Fields drop in order:
/// closing `to_child` first makes the child read end-of-file and exit,
/// then `_child` reaps it.
struct PingPong {
    to_child: OwnedFd,
    from_child: OwnedFd,
    _child: Children,
    loops: u64,
    /// The placement and its (parent, child) CPUs, when one was asked for.
    placed: Option<(Placement, usize, usize)>,
    /// The parent's pin, undone on drop (after the child is reaped).
    _pinned: Option<Pinned>,
    /// The untimed round trips' time before the first repetition, if any.
    settled_secs: Option<f64>,
}

impl PingPong {
    /// Starts the echo child; with a placement, pins this thread and the
    /// child to their CPUs first.
    ///
    /// # Errors
    /// [`BenchError::Unsupported`] when the placement cannot be made.
    fn start(placement: Option<Placement>) -> Result<PingPong, BenchError> {
        let unplaceable =
            |why: String| BenchError::Unsupported(format!("cannot place the processes: {why}"));
        let cpus = match placement {
            Some(p) => {
                let allowed = affinity::allowed_cpus().map_err(|e| unplaceable(e.to_string()))?;
                let (a, b) = p.cpus(&allowed).map_err(unplaceable)?;
                Some((p, a, b))
            }
            None => None,
        };
        let (down_r, down_w) = pipe()?;
        let (up_r, up_w) = pipe()?;
        let (cr, cw, pw, pr) = (
            down_r.as_raw_fd(),
            up_w.as_raw_fd(),
            down_w.as_raw_fd(),
            up_r.as_raw_fd(),
        );
        // The child echoes bytes until end of file, using only read, write, close.
        let pid = fork_child(|| unsafe {
            libc::close(pw);
            libc::close(pr);
            let mut b = 0u8;
            while libc::read(cr, (&mut b as *mut u8).cast(), 1) == 1 {
                if libc::write(cw, (&b as *const u8).cast(), 1) != 1 {
                    break;
                }
            }
        })?;
        let mut child = Children::default();
        child.push(pid);
        drop((down_r, up_w));
        let mut _pinned = None;
        if let Some((_, parent_cpu, child_cpu)) = cpus {
            // on failure `child` drops: the child is killed and reaped
            affinity::pin(pid, child_cpu)
                .map_err(|e| unplaceable(format!("child to CPU {child_cpu}: {e}")))?;
            _pinned = Some(
                Pinned::to(parent_cpu)
                    .map_err(|e| unplaceable(format!("parent to CPU {parent_cpu}: {e}")))?,
            );
        }
        Ok(PingPong {
            to_child: down_w,
            from_child: up_r,
            _child: child,
            loops: 0,
            placed: cpus,
            _pinned,
            settled_secs: None,
        })
    }

    /// Runs repetitions untimed for at least `secs`, and records it.
    fn settle(&mut self, clock: &Clock, secs: f64) -> Result<(), BenchError> {
        let t0 = clock.now();
        while clock.now().saturating_sub(t0).as_secs_f64() < secs {
            self.spin(self.loops)?;
        }
        self.settled_secs = Some(clock.now().saturating_sub(t0).as_secs_f64());
        Ok(())
    }

    fn spin(&mut self, n: u64) -> Result<(), BenchError> {
        let mut b = [1u8];
        for _ in 0..n {
            write_all(self.to_child.as_raw_fd(), &b)?;
            read_exact(self.from_child.as_raw_fd(), &mut b)?;
        }
        Ok(())
    }
}

impl Trial for PingPong {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t0 = clock.now();
        self.spin(self.loops)?;
        let secs = clock.now().saturating_sub(t0).as_secs_f64();
        Ok(vec![
            secs * 1e6 / self.loops as f64,
            self.loops as f64 / secs,
        ])
    }

    fn details(&mut self) -> Option<Value> {
        let (p, parent, child) = self.placed?;
        Some(serde_json::json!({
            "cpus": p.name(),
            "parent_cpu": parent,
            "child_cpu": child,
            "placement": "sched_setaffinity by envbench",
            "settle_secs": self.settled_secs,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    #[test]
    fn both_modes_measure() {
        let env = TestEnv::real(0.005);
        for case in Pipe.cases(&TestEnv::plan(crate::config::Suite::Quick, 1)) {
            let mut t = match Pipe.prepare(&case, &env.ctx()) {
                Ok(t) => t,
                // one usable CPU: split cannot be placed
                Err(BenchError::Unsupported(why)) if case.params["cpus"] == "split" => {
                    assert!(why.contains("only one"), "{why}");
                    continue;
                }
                Err(e) => panic!("{}: {e}", case.key()),
            };
            let v = t.once(&env.clock).unwrap();
            assert!(v.iter().all(|x| *x > 0.0), "{}: {v:?}", case.key());
            if case.params.contains_key("cpus") {
                let details = t.details().unwrap();
                assert_eq!(details["cpus"], case.params["cpus"]);
                // only a ping-pong across CPUs runs untimed first, that long
                match details["settle_secs"].as_f64() {
                    Some(secs) => {
                        assert_eq!(case.params["cpus"], "split");
                        assert!(secs >= SETTLE_SECS, "{secs}");
                    }
                    None => assert_eq!(case.params["cpus"], "same"),
                }
            }
        }
    }

    #[test]
    fn the_echo_child_is_reaped_when_the_trial_drops() {
        let mut t = PingPong::start(None).unwrap();
        t.spin(10).unwrap();
        let pid = t._child.pids[0];
        drop(t);
        // ECHILD for that PID: it was reaped (waiting on one PID cannot steal another test's child)
        let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        assert_eq!(r, -1);
    }
}
