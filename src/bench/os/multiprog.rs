//! `os.multiprog`: seed 002's overload experiment. N CPU-bound processes
//! start at once, each doing the same fixed work (about `work_secs` alone);
//! each records its own start, end, CPU time and context switches. The
//! seed ran 100-300 simultaneous Linpack processes on Windows NT and Linux
//! and drew one bar per process (its figures 6.1-6.5); the per-process
//! start/end pairs of the last repetition are kept for that timeline.
//!
//! Children time themselves with CLOCK_MONOTONIC (the fake clock of tests
//! cannot reach into them) and report through a pipe with one atomic write.
//! N = 2, 8 and 32 processes (full adds 128), the same on every machine,
//! lowered to the limits; the overload is read from makespan_ratio.

use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use super::{bounded_count, fork_child, Children};
use crate::bench::cpu::loops::int_loops;
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::params::key;
use crate::units::{Direction, Unit};
use crate::view::{Timeline, View, ViewKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// One child's report: index, start and end (ns, CLOCK_MONOTONIC), CPU time (ns), context switches.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct Record {
    /// Which child.
    pub index: u64,
    /// When it began its work.
    pub start_ns: u64,
    /// When it finished.
    pub end_ns: u64,
    /// User + system CPU time it used.
    pub cpu_ns: u64,
    /// Voluntary + involuntary context switches.
    pub switches: u64,
}

const RECORD_BYTES: usize = std::mem::size_of::<Record>();

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is writable; clock_gettime is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// (work per process in seconds, process counts) per suite. The counts are
/// fixed, not multiples of the CPUs this environment reports, so that a
/// guest or container with fewer CPUs than its host runs the same cases
/// (seed 002 too ran fixed counts, 100 to 300 processes); the overload is
/// read from `makespan_ratio`. Quick and standard use less work than the
/// issue's 0.5 s and 2 s so that 32 processes stay inside their budgets
/// (32 x 2 s is 32 s a repetition on 2 CPUs). Quick leaves 32 processes to
/// standard: their 3.2 s a repetition on 2 CPUs, at least three of them,
/// took 10-16 s of the quick suite's minute on its own. Quick's 0.1 s is
/// still 30 or more of the scheduler's slices a process; at 0.2 s the
/// eight processes' three rounds took 3 s of the quick suite, inside
/// gVisor and out.
fn plan_for(suite: Suite) -> (f64, &'static [usize]) {
    match suite {
        Suite::Quick => (0.1, &[2, 8]),
        Suite::Standard => (0.5, &[2, 8, 32]),
        Suite::Full => (2.0, &[2, 8, 32, 128]),
    }
}

/// Figures of one overload run, from the records and the parent's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Last end − first fork, seconds.
    pub makespan: f64,
    /// Makespan / ideal, where ideal = max(T, N·T/CPUs) and T is the mean CPU time.
    pub makespan_ratio: f64,
    /// Mean of end − first fork, seconds.
    pub mean_turnaround: f64,
    /// Last start − first start, seconds.
    pub start_spread: f64,
    /// Jain's fairness index of turnarounds: (Σx)² / (n·Σx²), 1 when all are equal.
    pub jain: f64,
    /// Mean context switches per process.
    pub switches: f64,
}

/// Computes [`Figures`] from records; `t0_ns` is the parent's clock before the first fork.
pub(crate) fn figures(records: &[Record], t0_ns: u64, cpus: usize) -> Figures {
    let n = records.len() as f64;
    let turn: Vec<f64> = records
        .iter()
        .map(|r| r.end_ns.saturating_sub(t0_ns) as f64 / 1e9)
        .collect();
    let makespan = turn.iter().copied().fold(0.0, f64::max);
    let cpu_mean = records.iter().map(|r| r.cpu_ns as f64 / 1e9).sum::<f64>() / n;
    let ideal = cpu_mean.max(n * cpu_mean / cpus as f64);
    let first = records.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let last = records.iter().map(|r| r.start_ns).max().unwrap_or(0);
    let sum: f64 = turn.iter().sum();
    let sum_sq: f64 = turn.iter().map(|x| x * x).sum();
    Figures {
        makespan,
        makespan_ratio: makespan / ideal,
        mean_turnaround: sum / n,
        start_spread: (last - first) as f64 / 1e9,
        jain: if sum_sq > 0.0 {
            sum * sum / (n * sum_sq)
        } else {
            1.0
        },
        switches: records.iter().map(|r| r.switches as f64).sum::<f64>() / n,
    }
}

/// The `os.multiprog` bench.
#[derive(Debug)]
pub struct Multiprog;

impl Bench for Multiprog {
    fn id(&self) -> &'static str {
        ids::OS_MULTIPROG
    }
    fn topic(&self) -> &'static str {
        "many processes at once"
    }
    fn summary(&self) -> &'static str {
        "N simultaneous CPU-bound processes (2, 8; 32 from standard, 128 in full): makespan vs ideal, turnaround, start spread, Jain fairness"
    }
    fn reproduces(&self) -> &'static str {
        "seed 002 (100-300 simultaneous Linpack processes, Windows NT vs Linux, timelines)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let (work, counts) = plan_for(plan.suite);
        counts
            .iter()
            .map(|n| CaseSpec {
                bench: self.id().into(),
                params: BTreeMap::from([
                    (key::PROCESSES.to_string(), Value::from(*n)),
                    ("work_secs".to_string(), Value::from(work)),
                ]),
                metrics: vec![
                    MetricSpec {
                        name: "makespan",
                        unit: Unit::Seconds,
                        direction: Direction::LowerIsBetter,
                    },
                    MetricSpec {
                        name: "makespan_ratio",
                        unit: Unit::Ratio,
                        direction: Direction::LowerIsBetter,
                    },
                    MetricSpec {
                        name: "mean_turnaround",
                        unit: Unit::Seconds,
                        direction: Direction::LowerIsBetter,
                    },
                    MetricSpec {
                        name: "start_spread",
                        unit: Unit::Seconds,
                        direction: Direction::LowerIsBetter,
                    },
                    MetricSpec {
                        name: "jain_fairness",
                        unit: Unit::Ratio,
                        direction: Direction::HigherIsBetter,
                    },
                    MetricSpec {
                        name: "context_switches",
                        unit: Unit::Count,
                        direction: Direction::LowerIsBetter,
                    },
                ],
            })
            .collect()
    }
    fn needs_warmup(&self) -> bool {
        false // every repetition starts cold processes; that is what it measures
    }
    fn views(&self) -> Vec<View> {
        vec![View {
            title: "one bar per process (seed 002's figures 6.1-6.5)",
            kind: ViewKind::Timeline(Timeline {
                detail: "timeline_last_repetition",
                start: "start_s",
                end: "end_s",
            }),
        }]
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let (Ok(n), Ok(work)) = (case.number("processes"), case.number("work_secs")) else {
            return Err(BenchError::Failed(format!(
                "{}: bad parameters",
                case.key()
            )));
        };
        let (n, note) = bounded_count(n as usize, 0, ctx.mem_available_bytes);
        if n == 0 {
            return Err(BenchError::Unsupported(
                note.unwrap_or_else(|| "no process may be created".into()),
            ));
        }
        Ok(Box::new(MultiprogTrial {
            n,
            loops: loops_for(work, ctx.clock),
            cpus: ctx.cpus,
            note,
            timeline: Vec::new(),
        }))
    }
}

/// Loops of the integer work that take about `secs` alone.
fn loops_for(secs: f64, clock: &Clock) -> u64 {
    if clock.is_fake() {
        return 10_000;
    }
    let mut n = 1u64 << 14;
    loop {
        let t0 = monotonic_ns();
        black_box(int_loops(black_box(n)));
        let dt = (monotonic_ns() - t0) as f64 / 1e9;
        if dt > 0.05 {
            return (n as f64 * secs / dt) as u64;
        }
        n *= 4;
    }
}

struct MultiprogTrial {
    n: usize,
    loops: u64,
    cpus: usize,
    note: Option<String>,
    timeline: Vec<Record>,
}

fn child_work(index: u64, loops: u64, report: i32) {
    let start_ns = monotonic_ns();
    black_box(int_loops(black_box(loops)));
    let end_ns = monotonic_ns();
    // SAFETY: getrusage writes into the zeroed struct; async-signal-safe.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    let rec = Record {
        index,
        start_ns,
        end_ns,
        cpu_ns: tv(ru.ru_utime) + tv(ru.ru_stime),
        switches: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
    };
    // One write of 40 bytes < PIPE_BUF: atomic, never interleaved.
    // SAFETY: `rec` is plain data of RECORD_BYTES bytes.
    unsafe { libc::write(report, (&rec as *const Record).cast(), RECORD_BYTES) };
}

impl Trial for MultiprogTrial {
    fn once(&mut self, _clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let (r, w) = {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for two descriptors.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(io::Error::last_os_error().into());
            }
            // SAFETY: just created, owned here.
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
        };
        let mut kids = Children::default();
        let t0 = monotonic_ns();
        let (loops, wfd) = (self.loops, w.as_raw_fd());
        for i in 0..self.n {
            let pid = fork_child(|| child_work(i as u64, loops, wfd)).map_err(|e| {
                BenchError::Failed(format!(
                    "fork failed after {i} of {} processes: {e}",
                    self.n
                ))
            })?;
            kids.push(pid);
        }
        drop(w);
        let mut records = Vec::with_capacity(self.n);
        let mut buf = [0u8; RECORD_BYTES];
        while records.len() < self.n {
            // SAFETY: `buf` is writable for RECORD_BYTES.
            let got = unsafe { libc::read(r.as_raw_fd(), buf.as_mut_ptr().cast(), RECORD_BYTES) };
            if got != RECORD_BYTES as isize {
                break; // end of file: a child died without reporting
            }
            // SAFETY: the bytes are a Record written by a child of this same binary.
            records.push(unsafe { std::ptr::read_unaligned(buf.as_ptr().cast::<Record>()) });
        }
        let reaped = kids.wait_all();
        if reaped != self.n {
            return Err(BenchError::Failed(format!(
                "reaped {reaped} of {} processes",
                self.n
            )));
        }
        if records.len() != self.n {
            return Err(BenchError::Failed(format!(
                "{} of {} processes reported",
                records.len(),
                self.n
            )));
        }
        let f = figures(&records, t0, self.cpus);
        records.sort_by_key(|r| r.index);
        for r in &mut records {
            r.start_ns = r.start_ns.saturating_sub(t0);
            r.end_ns = r.end_ns.saturating_sub(t0);
        }
        self.timeline = records;
        Ok(vec![
            f.makespan,
            f.makespan_ratio,
            f.mean_turnaround,
            f.start_spread,
            f.jain,
            f.switches,
        ])
    }

    fn details(&mut self) -> Option<Value> {
        let timeline: Vec<Value> = self
            .timeline
            .iter()
            .map(|r| serde_json::json!({ "start_s": r.start_ns as f64 / 1e9, "end_s": r.end_ns as f64 / 1e9, "cpu_s": r.cpu_ns as f64 / 1e9 }))
            .collect();
        Some(serde_json::json!({
            "processes": self.n,
            "loops_per_process": self.loops,
            "limited": self.note,
            "timeline_last_repetition": timeline,
            "timeline_note": "seconds since the first fork, one entry per process in fork order",
        }))
    }

    fn notes(&self) -> Vec<String> {
        self.note.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: u64, start: u64, end: u64, cpu: u64) -> Record {
        Record {
            index: i,
            start_ns: start,
            end_ns: end,
            cpu_ns: cpu,
            switches: 2,
        }
    }

    #[test]
    fn jain_index_of_equal_turnarounds_is_one() {
        let rs: Vec<Record> = (0..4)
            .map(|i| rec(i, 0, 2_000_000_000, 1_000_000_000))
            .collect();
        let f = figures(&rs, 0, 2);
        assert!((f.jain - 1.0).abs() < 1e-12);
        // 4 processes of 1 s CPU on 2 CPUs: ideal 2 s, makespan 2 s
        assert!((f.makespan_ratio - 1.0).abs() < 1e-12);
        assert_eq!(f.switches, 2.0);
    }

    #[test]
    fn unfair_runs_score_lower_and_spread_is_measured() {
        let rs = vec![
            rec(0, 0, 1_000_000_000, 1_000_000_000),
            rec(1, 500_000_000, 3_000_000_000, 1_000_000_000),
        ];
        let f = figures(&rs, 0, 2);
        // turnarounds 1 and 3: (4)^2 / (2 * 10) = 0.8
        assert!((f.jain - 0.8).abs() < 1e-12);
        assert_eq!(f.start_spread, 0.5);
        assert_eq!(f.makespan, 3.0);
        assert_eq!(f.mean_turnaround, 2.0);
    }

    #[test]
    fn a_small_overload_runs_and_reaps_every_child() {
        let mut t = MultiprogTrial {
            n: 4,
            loops: 20_000,
            cpus: 2,
            note: None,
            timeline: Vec::new(),
        };
        let v = t.once(&Clock::real()).unwrap();
        assert!(v[0] > 0.0 && v[4] > 0.0 && v[4] <= 1.0 + 1e-9, "{v:?}");
        assert_eq!(t.timeline.len(), 4);
    }
}
