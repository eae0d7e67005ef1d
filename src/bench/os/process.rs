//! `os.fork`, `os.fork_cow` and `os.thread`: seed 003's creation costs.
//!
//! Seed 003's method: create N children (or threads) that wait; time from
//! before the first creation to after the last returns; memory per task =
//! (system memory in use after − before) / N, from /proc/meminfo; then
//! release or kill them and reap every one. It found 4.53 ms per process
//! under WSL 1 against 0.045 ms native, 2.19 MB per process against 0.10 MB,
//! and fork 5-6x slower under WSL 1 once the parent had written 256 MB.
//! N is lowered to what RLIMIT_NPROC, the cgroup pids limit and free memory
//! allow, with a note.
//!
//! Memory per task is measured on the tasks themselves, since the whole
//! system's use moved more than 100 children hold (a CV of 379 %): per
//! process, the mean `Pss` of `/proc/PID/smaps_rollup` of every paused
//! child (its private pages plus its share of the pages it shares with the
//! parent and its siblings); per thread, the growth of the process's own
//! `Pss` while the threads wait, divided by N: the pages of each stack that
//! were touched, since untouched stack pages cost nothing. Neither counts
//! page tables or kernel structures. Seed 003's system-wide figure, (memory
//! in use after − before) / N from /proc/meminfo, is kept as the secondary
//! metric `system_memory_per_*`; it can even be negative.

use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial, UNKNOWN};
use super::fork_helper::{
    describe_fork_failure, parse_fork_output, FORK_HELPER_ARG, PARENT_EXTRA_BYTES,
};
use super::tiny::{run_helper, Tiny};
use super::{bounded_count, own_pss_bytes, used_memory_bytes};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::{Assumption, AssumptionKind};
use crate::units::{Direction, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};

/// What the parent holds when it forks (seed 003's three configurations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParentMemory {
    /// Nothing extra.
    None,
    /// 256 MiB allocated, never written.
    Untouched,
    /// 256 MiB allocated and every page written.
    Touched,
}

fn count_for(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 100,
        Suite::Standard | Suite::Full => 1000,
    }
}

fn metrics(what: &'static str) -> Vec<MetricSpec> {
    let (time, mem, system) = match what {
        "thread" => (
            "time_per_thread",
            "memory_per_thread",
            "system_memory_per_thread",
        ),
        _ => (
            "time_per_process",
            "memory_per_process",
            "system_memory_per_process",
        ),
    };
    vec![
        MetricSpec {
            name: time,
            unit: Unit::Microseconds,
            direction: Direction::LowerIsBetter,
        },
        MetricSpec {
            name: mem,
            unit: Unit::Bytes,
            direction: Direction::LowerIsBetter,
        },
        MetricSpec {
            name: system,
            unit: Unit::Bytes,
            direction: Direction::LowerIsBetter,
        },
    ]
}

/// The `os.fork` bench.
#[derive(Debug)]
pub struct Fork;

/// The `os.fork_cow` bench.
#[derive(Debug)]
pub struct ForkCow;

/// The `os.thread` bench.
#[derive(Debug)]
pub struct Thread;

impl Bench for Fork {
    fn references(&self) -> Vec<super::super::reference::Reference> {
        use super::super::reference::{Arg, Cpus, Pick, Reference, Side};
        // seed 003's method: 100 children that pause, one run per fresh
        // process, the median of five
        vec![Reference {
            params: &[],
            metric: "time_per_process",
            band: Some(super::REFERENCE_BAND),
            tools: vec![super::c_reference(
                "a C fork loop (seed 003)",
                &[Arg::Text("fork")],
                Cpus::Any,
                5,
            )],
            pick: Pick::First,
            envbench: Side::AS_PLANNED,
            information_if: None,
        }]
    }
    fn id(&self) -> &'static str {
        ids::OS_FORK
    }
    fn topic(&self) -> &'static str {
        "process creation"
    }
    fn summary(&self) -> &'static str {
        "create N waiting child processes with fork(); time per process, Pss per child, system memory per process"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 (process creation: 4.53 ms WSL 1, 0.082 ms VirtualBox, 0.045 ms native)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        vec![fork_case(
            self.id(),
            count_for(plan.suite),
            ParentMemory::None,
        )]
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        prepare_fork(case, ctx, ParentMemory::None)
    }
}

impl Bench for ForkCow {
    fn id(&self) -> &'static str {
        ids::OS_FORK_COW
    }
    fn topic(&self) -> &'static str {
        "process creation after 256 MiB"
    }
    fn summary(&self) -> &'static str {
        "os.fork after the parent allocated 256 MiB, untouched or written (copy-on-write page-table cost)"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 (fork 5-6x slower under WSL 1 after writing 256 MB)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let n = count_for(plan.suite);
        vec![
            fork_case(self.id(), n, ParentMemory::Untouched),
            fork_case(self.id(), n, ParentMemory::Touched),
        ]
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let mem = match case.params.get("parent_memory").and_then(Value::as_str) {
            Some("untouched") => ParentMemory::Untouched,
            Some("touched") => ParentMemory::Touched,
            _ => {
                return Err(BenchError::Failed(format!(
                    "{}: bad parent_memory",
                    case.key()
                )))
            }
        };
        ctx.require_memory(PARENT_EXTRA_BYTES as u64)?;
        prepare_fork(case, ctx, mem)
    }
}

fn fork_case(bench: &str, n: usize, mem: ParentMemory) -> CaseSpec {
    let mut params = BTreeMap::from([("n".to_string(), Value::from(n))]);
    match mem {
        ParentMemory::None => {}
        ParentMemory::Untouched => {
            drop(params.insert("parent_memory".into(), Value::from("untouched")))
        }
        ParentMemory::Touched => {
            drop(params.insert("parent_memory".into(), Value::from("touched")))
        }
    }
    CaseSpec {
        bench: bench.into(),
        params,
        metrics: metrics("process"),
    }
}

fn prepare_fork(
    case: &CaseSpec,
    ctx: &Context,
    mem: ParentMemory,
) -> Result<Box<dyn Trial>, BenchError> {
    // one task is the helper process itself
    let (n, limit_note) = bounded_count(case.count_usize("n")?, 1, ctx.mem_available_bytes);
    if n == 0 {
        return Err(BenchError::Unsupported(
            limit_note.unwrap_or_else(|| "no process may be created".into()),
        ));
    }
    let mut fallback_note = None;
    let forker = match Tiny::load() {
        Ok(tiny) => Forker::Tiny(tiny),
        Err(why) => {
            let bin = super::spawn::envbench_binary().ok_or_else(|| {
                BenchError::Unsupported(format!(
                    "{why}, and the envbench binary to fork from instead cannot be found"
                ))
            })?;
            fallback_note = Some(format!(
                "{why}: forked from envbench itself, whose larger memory map makes each fork \
                 dearer (about 25 % where this was measured); compare only with runs that say the same"
            ));
            Forker::Envbench(bin)
        }
    };
    Ok(Box::new(ForkTrial {
        memory: MemorySeen::default(),
        n,
        limit_note,
        fallback_note,
        mem,
        forker,
        deadline: ctx.deadline,
    }))
}

/// What forks: the tiny helper, or envbench itself when that cannot run.
#[derive(Debug)]
enum Forker {
    Tiny(Tiny),
    Envbench(std::path::PathBuf),
}

/// What the repetitions saw of `/proc`'s memory figures: the fewest
/// tasks whose Pss was readable, and whether meminfo ever failed.
#[derive(Debug, Default)]
struct MemorySeen {
    fewest_pss: Option<(usize, usize)>,
    meminfo_failed: bool,
}

impl MemorySeen {
    /// Records one repetition: `readable` of `n` Pss figures, and the
    /// meminfo pair if it was read.
    fn saw<T>(&mut self, readable: usize, n: usize, meminfo: Option<T>) {
        if self.fewest_pss.is_none_or(|(r, _)| readable < r) {
            self.fewest_pss = Some((readable, n));
        }
        self.meminfo_failed |= meminfo.is_none();
    }

    /// The memory assumption of `what` (`process`, `thread`): held when
    /// every figure was read; failed naming the unknown metrics and the
    /// files that could not be read (gVisor has no smaps_rollup; WSL 1
    /// emulates Linux 4.4, older than it).
    fn assumption(&self, what: &str, pss_file: &str, tasks: &str) -> Vec<Assumption> {
        let Some((readable, n)) = self.fewest_pss else {
            return Vec::new(); // no repetition ran
        };
        let mut metrics = Vec::new();
        let mut why = Vec::new();
        if readable < n {
            metrics.push(format!("memory_per_{what}"));
            why.push(if n == 1 {
                format!("{pss_file} was not readable")
            } else {
                format!("{pss_file} was readable for {readable} of {n} {tasks}")
            });
        }
        if self.meminfo_failed {
            metrics.push(format!("system_memory_per_{what}"));
            why.push("/proc/meminfo was not readable".to_string());
        }
        let held = metrics.is_empty();
        vec![Assumption {
            kind: AssumptionKind::MemoryReadable,
            held,
            evidence: if held {
                format!("{pss_file} and /proc/meminfo were readable")
            } else {
                format!(
                    "{}: memory per {what} unknown, the time per {what} is measured",
                    why.join("; ")
                )
            },
            metrics,
        }]
    }
}

struct ForkTrial {
    memory: MemorySeen,
    n: usize,
    limit_note: Option<String>,
    fallback_note: Option<String>,
    mem: ParentMemory,
    forker: Forker,
    /// When the helper is stopped: the round's deadline.
    deadline: std::time::Instant,
}

impl Trial for ForkTrial {
    fn once(&mut self, _clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let mode = match self.mem {
            ParentMemory::None => "none",
            ParentMemory::Untouched => "untouched",
            ParentMemory::Touched => "touched",
        };
        let mut cmd = match &self.forker {
            Forker::Tiny(tiny) => {
                let mut c = tiny.command();
                c.arg("fork");
                c
            }
            Forker::Envbench(bin) => {
                let mut c = std::process::Command::new(bin);
                c.arg(FORK_HELPER_ARG);
                crate::cleanup::die_with_envbench(&mut c);
                c
            }
        };
        cmd.args([&self.n.to_string(), mode]);
        let task = format!("forking {} processes", self.n);
        let stdout = run_helper(cmd, &task, self.deadline, |err| {
            describe_fork_failure(err, self.n)
        })?;
        let out = parse_fork_output(&stdout).map_err(BenchError::Failed)?;
        self.memory.saw(
            out.child_pss.len(),
            self.n,
            out.used_before.zip(out.used_after),
        );
        let pss = if out.child_pss.len() == self.n {
            out.child_pss.iter().sum::<u64>() as f64 / self.n as f64
        } else {
            UNKNOWN
        };
        let system = match (out.used_before, out.used_after) {
            (Some(before), Some(after)) => (after - before) as f64 / self.n as f64,
            _ => UNKNOWN,
        };
        Ok(vec![out.ns as f64 / 1e3 / self.n as f64, pss, system])
    }

    fn assumptions(&self) -> Vec<Assumption> {
        self.memory
            .assumption("process", "/proc/PID/smaps_rollup", "children")
    }

    fn details(&mut self) -> Option<Value> {
        let method = match self.forker {
            Forker::Tiny(_) => "timed in envbench's tiny helper, a no_std program linked only with libc (seed 003 forked from a small C program)",
            Forker::Envbench(_) => "timed in a fresh envbench process (the tiny helper could not run)",
        };
        Some(serde_json::json!({
            "processes": self.n,
            "limited": self.limit_note,
            "method": method,
            "memory_method": "memory_per_process: mean Pss of /proc/PID/smaps_rollup of the paused children (private pages plus their share of shared ones; no page tables); system_memory_per_process: (MemTotal - MemAvailable after - before) / N, seed 003's method",
        }))
    }

    fn notes(&self) -> Vec<String> {
        self.limit_note
            .iter()
            .chain(&self.fallback_note)
            .cloned()
            .collect()
    }
}

impl Bench for Thread {
    fn id(&self) -> &'static str {
        ids::OS_THREAD
    }
    fn topic(&self) -> &'static str {
        "thread creation"
    }
    fn summary(&self) -> &'static str {
        "create N waiting threads; time per thread, Pss growth per thread, system memory per thread"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 (thread creation: 0.248 ms WSL 1, 0.0167 ms VirtualBox, 0.0108 ms native)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let n = count_for(plan.suite);
        vec![CaseSpec {
            bench: self.id().into(),
            params: BTreeMap::from([("n".to_string(), Value::from(n))]),
            metrics: metrics("thread"),
        }]
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let (n, note) = bounded_count(case.count_usize("n")?, 0, ctx.mem_available_bytes);
        if n == 0 {
            return Err(BenchError::Unsupported(
                note.unwrap_or_else(|| "no thread may be created".into()),
            ));
        }
        Ok(Box::new(ThreadTrial {
            n,
            note,
            memory: MemorySeen::default(),
        }))
    }
}

struct ThreadTrial {
    n: usize,
    note: Option<String>,
    memory: MemorySeen,
}

/// Releases waiting threads when dropped, so they end on every path.
struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Drop for Gate {
    fn drop(&mut self) {
        let (open, cv) = &*self.0;
        *open.lock().expect("invariant: gate lock not poisoned") = true;
        cv.notify_all();
    }
}

impl ThreadTrial {
    /// Starts `n` threads that wait at `gate`; stops at the first failure.
    fn spawn_all(
        &self,
        gate: &Arc<(Mutex<bool>, Condvar)>,
        handles: &mut Vec<std::thread::JoinHandle<()>>,
    ) -> Result<(), String> {
        for i in 0..self.n {
            let g = Arc::clone(gate);
            let h = std::thread::Builder::new()
                .spawn(move || {
                    let (open, cv) = &*g;
                    let mut o = open.lock().expect("invariant: gate lock not poisoned");
                    while !*o {
                        o = cv.wait(o).expect("invariant: gate lock not poisoned");
                    }
                })
                .map_err(|e| format!("thread creation failed after {i} of {}: {e}", self.n))?;
            handles.push(h);
        }
        Ok(())
    }
}

impl Trial for ThreadTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let release = Gate(Arc::clone(&gate)); // opens the gate even if this unwinds
        let mut handles = Vec::with_capacity(self.n);
        let before = used_memory_bytes();
        let pss_before = own_pss_bytes();
        let t0 = clock.now();
        let spawned = self.spawn_all(&gate, &mut handles);
        let secs = clock.now().saturating_sub(t0).as_secs_f64();
        let after = used_memory_bytes();
        let pss_after = own_pss_bytes();
        drop(release);
        for h in handles {
            let _ = h.join();
        }
        spawned.map_err(BenchError::Failed)?;
        let pss = pss_before.zip(pss_after);
        let system = before.zip(after);
        self.memory.saw(usize::from(pss.is_some()), 1, system);
        Ok(vec![
            secs * 1e6 / self.n as f64,
            pss.map_or(UNKNOWN, |(b, a)| (a as f64 - b as f64) / self.n as f64),
            system.map_or(UNKNOWN, |(b, a)| (a - b) as f64 / self.n as f64),
        ])
    }

    fn assumptions(&self) -> Vec<Assumption> {
        self.memory
            .assumption("thread", "/proc/self/smaps_rollup", "readings")
    }

    fn details(&mut self) -> Option<Value> {
        Some(serde_json::json!({
            "threads": self.n,
            "limited": self.note,
            "memory_method": "memory_per_thread: growth of this process's Pss (/proc/self/smaps_rollup) while the N threads wait, / N: the stack pages each thread touched (untouched stack pages cost nothing) and its allocations; no page tables or kernel structures; system_memory_per_thread: (MemTotal - MemAvailable after - before) / N, seed 003's method",
        }))
    }

    fn notes(&self) -> Vec<String> {
        self.note.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::fork_helper::{fork_helper, ForkOutput};
    use super::*;

    #[test]
    fn fork_helper_rejects_bad_counts() {
        assert_eq!(fork_helper(&["0".into()]), 2);
        assert_eq!(fork_helper(&["x".into()]), 2);
        assert_eq!(fork_helper(&[(super::super::HARD_CAP + 1).to_string()]), 2);
    }

    fn fork_trial(forker: Forker, mem: ParentMemory) -> ForkTrial {
        ForkTrial {
            memory: MemorySeen::default(),
            n: 5,
            limit_note: None,
            fallback_note: None,
            mem,
            forker,
            deadline: std::time::Instant::now() + std::time::Duration::from_secs(60),
        }
    }

    #[test]
    fn both_forkers_measure_time_and_memory() {
        let mut forkers = vec![];
        #[cfg(envbench_tiny)]
        forkers.push(Forker::Tiny(Tiny::load().unwrap()));
        // the fallback needs the envbench binary, which `cargo test` builds
        if let Some(bin) = super::super::spawn::envbench_binary() {
            forkers.push(Forker::Envbench(bin));
        }
        for forker in forkers {
            let label = format!("{forker:?}");
            let mut t = fork_trial(forker, ParentMemory::None);
            let v = t.once(&Clock::real()).unwrap();
            assert_eq!(v.len(), 3, "{label}");
            assert!(v[0] > 0.0 && v[0] < 1e6, "{label}: {v:?}");
            // every paused child holds some pages of its own
            assert!(v[1] > 0.0, "{label}: {v:?}");
            assert!(v[2].is_finite(), "{label}: {v:?}");
        }
    }

    #[test]
    fn fork_output_is_parsed_and_bad_output_refused() {
        let m1 = "MemTotal: 1000 kB\nMemAvailable: 600 kB\n";
        let m2 = "MemTotal: 1000 kB\nMemAvailable: 500 kB\n";
        let rollup = include_str!("../../../tests/fixtures/proc/smaps_rollup");
        let out = format!("12345\0{m1}\0{m2}\0{rollup}\0{rollup}");
        assert_eq!(
            parse_fork_output(out.as_bytes()).unwrap(),
            ForkOutput {
                ns: 12345,
                used_before: Some(400 * 1024),
                used_after: Some(500 * 1024),
                child_pss: vec![282 * 1024, 282 * 1024],
            }
        );
        // an unreadable /proc/meminfo gives empty parts: no memory figure
        let bare = parse_fork_output(b"7\0\0").unwrap();
        assert_eq!(
            (bare.ns, bare.used_before, bare.child_pss.len()),
            (7, None, 0)
        );
        assert!(parse_fork_output(b"").is_err());
        assert!(parse_fork_output(b"12 34 56").is_err());
    }

    #[test]
    fn fork_failures_are_described() {
        assert_eq!(
            describe_fork_failure("fork-failed 37 11\n", 100),
            format!(
                "fork failed after 37 of 100 children: {}",
                std::io::Error::from_raw_os_error(11)
            )
        );
        assert_eq!(
            describe_fork_failure("cannot map 256 MiB\n", 100),
            "fork helper: cannot map 256 MiB"
        );
    }

    #[test]
    fn thread_case_measures_and_joins_every_thread() {
        let mut t = ThreadTrial {
            n: 20,
            note: None,
            memory: MemorySeen::default(),
        };
        let v = t.once(&Clock::real()).unwrap();
        // other tests run in this process, so its Pss may move either way
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(v[0] > 0.0 && v[1].is_finite() && v[2].is_finite(), "{v:?}");
    }

    #[test]
    fn unreadable_memory_voids_only_the_memory_metrics() {
        // gVisor: no smaps_rollup for any child, meminfo readable
        let mut seen = MemorySeen::default();
        seen.saw(100, 100, Some(()));
        seen.saw(0, 100, Some(()));
        let a = seen.assumption("process", "/proc/PID/smaps_rollup", "children");
        assert_eq!(a.len(), 1);
        assert!(!a[0].held, "{a:?}");
        assert_eq!(a[0].metrics, vec!["memory_per_process"]);
        assert!(a[0].voids("memory_per_process") && !a[0].voids("time_per_process"));
        assert!(
            a[0].evidence.contains("readable for 0 of 100 children"),
            "{a:?}"
        );
        // meminfo missing too
        seen.saw::<()>(100, 100, None);
        let a = seen.assumption("process", "/proc/PID/smaps_rollup", "children");
        assert!(a[0].voids("system_memory_per_process"), "{a:?}");
        // everything read: held, voids nothing
        let mut seen = MemorySeen::default();
        seen.saw(5, 5, Some(()));
        let a = seen.assumption("thread", "/proc/self/smaps_rollup", "readings");
        assert!(a[0].held && !a[0].voids("memory_per_thread"), "{a:?}");
        // no repetition: nothing checked
        assert!(MemorySeen::default()
            .assumption("thread", "/proc/self/smaps_rollup", "readings")
            .is_empty());
    }

    #[test]
    fn cow_cases_name_their_parent_memory() {
        let plan = crate::bench::TestEnv::plan(Suite::Quick, 2);
        let keys: Vec<String> = ForkCow.cases(&plan).iter().map(CaseSpec::key).collect();
        assert_eq!(
            keys,
            vec![
                "os.fork_cow[n=100,parent_memory=untouched]",
                "os.fork_cow[n=100,parent_memory=touched]"
            ]
        );
        assert_eq!(
            Fork.cases(&crate::bench::TestEnv::plan(Suite::Standard, 2))[0].key(),
            "os.fork[n=1000]"
        );
    }
}
