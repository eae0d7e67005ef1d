//! `cpu.primes`: sysbench 1.0's cpu test, so events/s reads beside
//! sysbench's (seed 001: 1257-1269 events/s in WSL 2 against 1347 native at
//! `--cpu-max-prime=20000 --threads=4`).
//!
//! An event counts the primes below `max_prime` by trial division up to the
//! square root, exactly as sysbench's `cpu_execute_event`: `t = sqrt(c)` in
//! double precision, divisors `l = 2..` while `l <= t`, 64-bit `c % l`. Each
//! thread runs events back to back until the repetition's time is up (the
//! last event finishes, as in sysbench); events/s = all events / elapsed.
//! Figures per repetition are the ones sysbench prints: events/s, event
//! latency min/avg/max/p95 (ms), and thread fairness (events and execution
//! time per thread, avg/stddev; population stddev, 0 with one thread).

use super::super::reference::{Arg, Cpus, Pick, Prog, Read, Reference, Side, Tool};
use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::{ids, params::key};
use crate::stats::band::Band;
use crate::stats::percentile_of_sorted;
use crate::units::{Direction, Unit};
use crate::view::{Percentiles, View, ViewKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The `cpu.primes` bench.
#[derive(Debug)]
pub struct Primes;

/// `a % b` with a full-width 64-bit `div`, as GCC compiles sysbench's
/// `c % l` on unsigned long long. LLVM would test whether both operands fit
/// in 32 bits and then use the 2-3x faster 32-bit `div` (they always fit
/// here), which made events/s 2.2x sysbench's on the same machine.
#[inline(always)]
fn rem_u64(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let rem: u64;
        // SAFETY: `div` divides rdx:rax by `b`; rdx = 0 and b >= 2 here, so
        // the quotient fits and there is no division by zero.
        unsafe {
            std::arch::asm!(
                "div {b}",
                b = in(reg) b,
                inout("rax") a => _,
                inout("rdx") 0u64 => rem,
                options(pure, nomem, nostack)
            );
        }
        rem
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        a % b
    }
}

/// Primes in 3..max_prime, by sysbench's trial division (2 is not counted).
///
/// The arithmetic is sysbench's; the instruction choices follow what GCC
/// makes of it in Debian's sysbench binary, so events/s compare: the
/// division by 2 is a parity test, divisors convert to double with a signed
/// conversion (exact: they are far below 2^63), and other remainders use a
/// full-width `div` ([`rem_u64`]).
pub(crate) fn count_primes(max_prime: u64) -> u64 {
    let as_f64 = |v: u64| v as i64 as f64;
    let mut n = 0;
    for c in 3..max_prime {
        let t = as_f64(c).sqrt();
        let mut l = 2u64;
        if 2.0 <= t {
            if c & 1 == 0 {
                continue; // 2 divides c, and 2 <= t: not a prime
            }
            l = 3;
            while as_f64(l) <= t {
                if rem_u64(c, l) == 0 {
                    break;
                }
                l += 1;
            }
        }
        if as_f64(l) > t {
            n += 1;
        }
    }
    n
}

/// (max_prime values, seconds per repetition) per suite; 10 s is sysbench's default `--time`.
fn plan_for(suite: Suite) -> (&'static [u64], f64) {
    match suite {
        Suite::Quick => (&[10_000], 0.25),
        Suite::Standard => (&[10_000, 20_000], 1.0),
        Suite::Full => (&[10_000, 20_000], 10.0),
    }
}

const METRICS: [(&str, Unit, Direction); 9] = [
    ("events_per_sec", Unit::OpsPerSec, Direction::HigherIsBetter),
    ("latency_avg", Unit::Milliseconds, Direction::LowerIsBetter),
    ("latency_min", Unit::Milliseconds, Direction::LowerIsBetter),
    ("latency_max", Unit::Milliseconds, Direction::LowerIsBetter),
    ("latency_p95", Unit::Milliseconds, Direction::LowerIsBetter),
    (
        "events_per_thread_avg",
        Unit::Count,
        Direction::HigherIsBetter,
    ),
    (
        "events_per_thread_stddev",
        Unit::Count,
        Direction::LowerIsBetter,
    ),
    (
        "exec_time_per_thread_avg",
        Unit::Seconds,
        Direction::HigherIsBetter,
    ),
    (
        "exec_time_per_thread_stddev",
        Unit::Seconds,
        Direction::LowerIsBetter,
    ),
];

fn case(max_prime: u64, threads: usize, time_secs: f64) -> CaseSpec {
    CaseSpec {
        bench: Primes.id().into(),
        params: BTreeMap::from([
            ("max_prime".to_string(), Value::from(max_prime)),
            ("threads".to_string(), Value::from(threads)),
            ("time_secs".to_string(), Value::from(time_secs)),
        ]),
        metrics: METRICS
            .iter()
            .map(|&(name, unit, direction)| MetricSpec {
                name,
                unit,
                direction,
            })
            .collect(),
    }
}

impl Bench for Primes {
    fn id(&self) -> &'static str {
        ids::CPU_PRIMES
    }
    fn topic(&self) -> &'static str {
        "prime search"
    }
    fn summary(&self) -> &'static str {
        "sysbench 1.0 cpu test: primes below max_prime by trial division per event; events/s, latency, fairness"
    }
    fn reproduces(&self) -> &'static str {
        "seed 001 (sysbench cpu --cpu-max-prime=20000, WSL 2 vs native)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let (primes, secs) = plan_for(plan.suite);
        primes
            .iter()
            .flat_map(|&p| {
                plan.thread_counts()
                    .into_iter()
                    .map(move |t| case(p, t, secs))
            })
            .collect()
    }
    fn views(&self) -> Vec<View> {
        vec![View {
            title: "latency percentiles per event",
            kind: ViewKind::Percentiles(Percentiles {
                points: &[
                    ("latency_min", 0.0),
                    ("latency_p95", 95.0),
                    ("latency_max", 100.0),
                ],
                per: "event",
            }),
        }]
    }

    /// sysbench's own cpu test at the same max_prime and threads, held to
    /// ±5 %: the same trial division, compiled by GCC (sysbench runs 1 s,
    /// the quick case's repetitions 0.25 s; both rates).
    fn references(&self) -> Vec<Reference> {
        const SYSBENCH: Tool = Tool {
            name: "sysbench cpu",
            program: Prog::Path("sysbench"),
            args: &[
                Arg::Text("cpu"),
                Arg::Param {
                    prefix: "--cpu-max-prime=",
                    key: "max_prime",
                },
                Arg::Param {
                    prefix: "--threads=",
                    key: key::THREADS,
                },
                Arg::Text("--time=1"),
                Arg::Text("run"),
            ],
            env: &[],
            on: Cpus::Any,
            read: Read::After("events per second:"),
            processes: 1,
            input: None,
            check: None,
            on_dir: None,
            beside: None,
        };
        [&[(key::THREADS, "1")], &[(key::THREADS, "2")]]
            .into_iter()
            .map(|params| Reference {
                params,
                metric: "events_per_sec",
                band: Some(Band::new(0.95, 1.05)),
                tools: vec![SYSBENCH],
                pick: Pick::First,
                envbench: Side::AS_PLANNED,
                information_if: None,
            })
            .collect()
    }

    fn one_cpu(&self, case: &CaseSpec) -> bool {
        case.one_thread()
    }

    fn prepare(&self, case: &CaseSpec, _ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let max_prime = case.count("max_prime")?;
        let threads = case.count_usize("threads")?;
        let secs = case.number("time_secs")?;
        Ok(Box::new(PrimesTrial {
            max_prime,
            expected: count_primes(max_prime),
            threads,
            duration: Duration::from_secs_f64(secs),
            events_total: 0,
        }))
    }
}

struct PrimesTrial {
    max_prime: u64,
    expected: u64,
    threads: usize,
    duration: Duration,
    events_total: u64,
}

/// One thread's events: latencies in ms and time spent in events.
struct ThreadRun {
    latencies_ms: Vec<f64>,
    busy_secs: f64,
}

fn run_thread(
    clock: &Clock,
    deadline: Duration,
    max_prime: u64,
    expected: u64,
    wrong: &AtomicBool,
) -> ThreadRun {
    let mut run = ThreadRun {
        latencies_ms: Vec::new(),
        busy_secs: 0.0,
    };
    while clock.now() < deadline {
        let t0 = clock.now();
        let n = count_primes(black_box(max_prime));
        let dt = clock.now().saturating_sub(t0).as_secs_f64();
        if black_box(n) != expected {
            wrong.store(true, Ordering::Relaxed);
        }
        run.latencies_ms.push(dt * 1e3);
        run.busy_secs += dt;
    }
    run
}

/// Mean and population standard deviation.
fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len().max(1) as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (
        mean,
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt(),
    )
}

/// sysbench's figures from one repetition's per-thread runs.
fn figures(runs: &[ThreadRun], elapsed_secs: f64) -> Vec<f64> {
    let mut all: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.latencies_ms.iter().copied())
        .collect();
    all.sort_by(f64::total_cmp);
    let events = all.len() as f64;
    let per_thread: Vec<f64> = runs.iter().map(|r| r.latencies_ms.len() as f64).collect();
    let busy: Vec<f64> = runs.iter().map(|r| r.busy_secs).collect();
    let (ev_avg, ev_sd) = mean_sd(&per_thread);
    let (busy_avg, busy_sd) = mean_sd(&busy);
    vec![
        events / elapsed_secs,
        all.iter().sum::<f64>() / events,
        all[0],
        all[all.len() - 1],
        percentile_of_sorted(&all, 0.95),
        ev_avg,
        ev_sd,
        busy_avg,
        busy_sd,
    ]
}

impl Trial for PrimesTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let wrong = AtomicBool::new(false);
        let start = clock.now();
        let deadline = start + self.duration;
        let runs: Vec<ThreadRun> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.threads)
                .map(|_| {
                    s.spawn(|| run_thread(clock, deadline, self.max_prime, self.expected, &wrong))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("invariant: prime threads do not panic"))
                .collect()
        });
        let elapsed = clock.now().saturating_sub(start).as_secs_f64();
        if wrong.load(Ordering::Relaxed) {
            return Err(BenchError::Invalid(format!(
                "an event counted a different number of primes below {} than {} (a computation error)",
                self.max_prime, self.expected
            )));
        }
        if runs.iter().all(|r| r.latencies_ms.is_empty()) {
            return Err(BenchError::Failed("no event completed".into()));
        }
        self.events_total += runs
            .iter()
            .map(|r| r.latencies_ms.len() as u64)
            .sum::<u64>();
        Ok(figures(&runs, elapsed))
    }

    fn details(&mut self) -> Option<Value> {
        Some(
            serde_json::json!({ "primes_per_event": self.expected, "events_total": self.events_total }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    /// sysbench, where installed, reads the planned case's max_prime and
    /// threads; elsewhere the row says it is not there.
    #[test]
    fn sysbench_runs_the_planned_case_or_is_said_missing() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = crate::bench::reference::Workshop::new(base.path()).unwrap();
        let mut case = Primes.cases(&TestEnv::plan(Suite::Quick, 1))[0]
            .params
            .clone();
        case.insert("max_prime".into(), Value::from(1000));
        let tool = &Primes.references()[0].tools[0];
        match shop.ready(tool, &case) {
            // a figure read (events/s, finite and positive), not a speed
            Ok(ready) => assert!(ready.measure().is_ok()),
            Err(e) => assert!(e.contains("sysbench is not on"), "{e}"),
        }
    }

    #[test]
    fn counts_known_prime_counts() {
        // π(10000) = 1229 and π(20000) = 2262; sysbench starts at 3, so 2 is not counted.
        assert_eq!(count_primes(10_000) + 1, 1229);
        assert_eq!(count_primes(20_000) + 1, 2262);
        assert_eq!(count_primes(3), 0);
        assert_eq!(count_primes(12), 4); // 3 5 7 11
    }

    #[test]
    fn full_width_remainder_matches_the_operator() {
        for (a, b) in [(10, 3), (9999, 7), (u64::MAX, 2), (1 << 40, (1 << 33) + 1)] {
            assert_eq!(rem_u64(a, b), a % b);
        }
    }

    #[test]
    fn fairness_figures_on_a_fake_run() {
        let runs = [
            ThreadRun {
                latencies_ms: vec![1.0, 2.0, 3.0],
                busy_secs: 0.006,
            },
            ThreadRun {
                latencies_ms: vec![1.0],
                busy_secs: 0.002,
            },
        ];
        let f = figures(&runs, 0.5);
        assert_eq!(f[0], 8.0); // 4 events in 0.5 s
        assert_eq!(f[1], 7.0 / 4.0);
        assert_eq!((f[2], f[3]), (1.0, 3.0));
        assert_eq!((f[5], f[6]), (2.0, 1.0)); // events per thread 3 and 1
        assert!((f[7] - 0.004).abs() < 1e-12 && (f[8] - 0.002).abs() < 1e-12);
    }

    #[test]
    fn a_repetition_runs_every_thread_until_the_time_is_up() {
        let env = TestEnv::real(0.01);
        let mut t = Primes.prepare(&case(1000, 2, 0.05), &env.ctx()).unwrap();
        let v = t.once(&env.clock).unwrap();
        assert!(v[0] > 0.0 && v[5] >= 1.0, "{v:?}");
        assert!(v[2] <= v[1] && v[1] <= v[3]);
    }
}
