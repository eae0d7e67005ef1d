//! `os.syscall`: the cost of entering and leaving the kernel.
//!
//! Two cases. `getppid`: a null system call made with `syscall(2)` directly,
//! so no libc can answer it from a cache (what `perf bench syscall basic`
//! times). `mix`: UnixBench's "System Call Overhead" loop, close(dup(fd)),
//! getpid, getuid, umask, one loop per iteration (seed 004 ran it under
//! WSL 1 and WSL 2). WSL 1 translates every call in the NT kernel and
//! hypervisors may trap some, so this is where environments first differ.
//! See: UnixBench `src/syscall.c`; perf `bench/syscall.c`.

use super::super::{calibrate, Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::price::{Cost, Op, Price};
use crate::units::{Direction, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::hint::black_box;
use std::os::fd::AsRawFd;

/// The `os.syscall` bench.
#[derive(Debug)]
pub struct Syscall;

/// Which loop a case times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Getppid,
    Mix,
}

impl Call {
    const ALL: [Call; 2] = [Call::Getppid, Call::Mix];

    fn name(self) -> &'static str {
        match self {
            Call::Getppid => "getppid",
            Call::Mix => "mix",
        }
    }

    fn from_case(case: &CaseSpec) -> Option<Call> {
        let name = case.params.get("call")?.as_str()?;
        Call::ALL.into_iter().find(|c| c.name() == name)
    }
}

fn metrics() -> Vec<MetricSpec> {
    vec![
        MetricSpec {
            name: "latency",
            unit: Unit::Nanoseconds,
            direction: Direction::LowerIsBetter,
        },
        MetricSpec {
            name: "rate",
            unit: Unit::OpsPerSec,
            direction: Direction::HigherIsBetter,
        },
    ]
}

impl Bench for Syscall {
    fn references(&self) -> Vec<super::super::reference::Reference> {
        use super::super::reference::{Arg, Cpus, Pick, Reference, Side};
        vec![
            Reference {
                params: &[("call", "getppid")],
                metric: "latency",
                band: Some(super::REFERENCE_BAND),
                tools: vec![
                    super::perf_reference(
                        "perf bench syscall basic",
                        &[
                            Arg::Text("bench"),
                            Arg::Text("syscall"),
                            Arg::Text("basic"),
                            Arg::Text("-l"),
                            Arg::Text("2000000"),
                        ],
                        Cpus::Any,
                        1000.0,
                    ),
                    super::c_reference(
                        "a C getppid loop",
                        &[Arg::Text("getppid"), Arg::Text("2000000")],
                        Cpus::Any,
                        1,
                    ),
                ],
                pick: Pick::First,
                envbench: Side::AS_PLANNED,
                information_if: None,
            },
            Reference {
                params: &[("call", "mix")],
                metric: "latency",
                band: Some(super::REFERENCE_BAND),
                tools: vec![super::c_reference(
                    "a C UnixBench-mix loop",
                    &[Arg::Text("mix"), Arg::Text("500000")],
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
        ids::OS_SYSCALL
    }
    fn prices(&self) -> &'static [Price] {
        &[Price {
            op: Op::Syscall,
            metric: "latency",
            params: &[("call", "getppid")],
            on_dir: false,
            cost: Cost::Nanoseconds,
            names: 0,
        }]
    }
    fn topic(&self) -> &'static str {
        "system calls"
    }
    fn summary(&self) -> &'static str {
        "null system call (raw getppid) and UnixBench's syscall mix (dup/close/getpid/getuid/umask); ns per call or loop"
    }
    fn reproduces(&self) -> &'static str {
        "seed 004 (UnixBench System Call Overhead, WSL 1 vs WSL 2); perf bench syscall basic"
    }
    fn cases(&self, _plan: &Plan) -> Vec<CaseSpec> {
        Call::ALL
            .into_iter()
            .map(|c| CaseSpec {
                bench: self.id().into(),
                params: BTreeMap::from([("call".to_string(), Value::from(c.name()))]),
                metrics: metrics(),
            })
            .collect()
    }
    fn one_cpu(&self, _case: &CaseSpec) -> bool {
        true
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let call = Call::from_case(case)
            .ok_or_else(|| BenchError::Failed(format!("unknown case {}", case.key())))?;
        // UnixBench dups fd 0; stdin may be closed under CI, so dup a file we own.
        let devnull = File::open("/dev/null")
            .map_err(|e| BenchError::Unsupported(format!("cannot open /dev/null: {e}")))?;
        let mut trial = SyscallTrial {
            call,
            devnull,
            iterations: 0,
        };
        trial.iterations = calibrate(ctx, |n| trial.spin(n))?;
        Ok(Box::new(trial))
    }
}

struct SyscallTrial {
    call: Call,
    devnull: File,
    iterations: u64,
}

impl SyscallTrial {
    fn spin(&self, n: u64) -> Result<(), BenchError> {
        match self.call {
            Call::Getppid => {
                for _ in 0..n {
                    // SAFETY: getppid takes no arguments and cannot fail.
                    black_box(unsafe { libc::syscall(libc::SYS_getppid) });
                }
            }
            Call::Mix => {
                let fd = self.devnull.as_raw_fd();
                for _ in 0..n {
                    // SAFETY: plain system calls on a descriptor this trial owns;
                    // the duplicate is closed at once.
                    unsafe {
                        let dup = libc::dup(fd);
                        if dup < 0 {
                            return Err(std::io::Error::last_os_error().into());
                        }
                        libc::close(dup);
                        black_box(libc::syscall(libc::SYS_getpid));
                        black_box(libc::getuid());
                        libc::umask(0o022);
                    }
                }
            }
        }
        Ok(())
    }
}

impl Trial for SyscallTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t0 = clock.now();
        self.spin(self.iterations)?;
        let secs = clock.now().saturating_sub(t0).as_secs_f64();
        let n = self.iterations as f64;
        Ok(vec![secs * 1e9 / n, n / secs])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;
    use crate::config::Suite;

    #[test]
    fn real_getppid_latency_is_positive_and_finite() {
        let env = TestEnv::real(0.002);
        let plan = TestEnv::plan(Suite::Quick, 1);
        for case in Syscall.cases(&plan) {
            let mut t = Syscall.prepare(&case, &env.ctx()).unwrap();
            let v = t.once(&env.clock).unwrap();
            assert!(v[0].is_finite() && v[0] > 0.0, "{v:?}");
            // latency (ns) and rate (1/s) describe the same interval
            assert!((v[0] * v[1] / 1e9 - 1.0).abs() < 1e-9);
        }
    }

    #[test]
    fn cases_are_getppid_and_mix() {
        let plan = TestEnv::plan(Suite::Quick, 1);
        let keys: Vec<String> = Syscall.cases(&plan).iter().map(CaseSpec::key).collect();
        assert_eq!(
            keys,
            vec!["os.syscall[call=getppid]", "os.syscall[call=mix]"]
        );
    }
}
