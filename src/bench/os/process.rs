//! `os.fork`, `os.fork_cow` and `os.thread`: seed 003's creation costs.
//!
//! Seed 003's method: create N children (or threads) that wait; time from
//! before the first creation to after the last returns; memory per task =
//! (system memory in use after − before) / N, from /proc/meminfo; then
//! release or kill them and reap every one. It found 4.53 ms per process
//! under WSL 1 against 0.045 ms native, 2.19 MB per process against 0.10 MB,
//! and fork 5-6x slower under WSL 1 once the parent had written 256 MB.
//! N is lowered to what RLIMIT_NPROC, the cgroup pids limit and free memory
//! allow, with a note. The memory figure is noisy (the whole system's use);
//! it can even be negative, and is reported as measured.

use super::super::clock::Clock;
use super::super::{Bench, BenchError, CaseSpec, Context, Family, MetricSpec, Plan, Trial};
use super::{bounded_count, fork_child, pause_forever, used_memory_bytes, Children};
use crate::config::Suite;
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

/// Seed 003's extra parent memory.
const PARENT_EXTRA_BYTES: usize = 256 << 20;

fn count_for(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 100,
        Suite::Standard | Suite::Full => 1000,
    }
}

fn metrics(what: &'static str) -> Vec<MetricSpec> {
    let (time, mem) = match what {
        "thread" => ("time_per_thread", "memory_per_thread"),
        _ => ("time_per_process", "memory_per_process"),
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
    ]
}

fn get_usize(case: &CaseSpec, key: &str) -> Result<usize, BenchError> {
    case.params
        .get(key)
        .and_then(Value::as_u64)
        .map(|v| v as usize)
        .filter(|&v| v > 0)
        .ok_or_else(|| BenchError::Failed(format!("{}: bad parameter {key}", case.key())))
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
    fn family(&self) -> Family {
        Family::Os
    }
    fn name(&self) -> &'static str {
        "fork"
    }
    fn summary(&self) -> &'static str {
        "create N waiting child processes with fork(); time and system memory per process"
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
    fn family(&self) -> Family {
        Family::Os
    }
    fn name(&self) -> &'static str {
        "fork_cow"
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

fn fork_case(bench: String, n: usize, mem: ParentMemory) -> CaseSpec {
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
        bench,
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
    let (n, note) = bounded_count(get_usize(case, "n")? + 1, ctx.mem_available_bytes);
    let n = n.saturating_sub(1);
    if n == 0 {
        return Err(BenchError::Unsupported(
            note.unwrap_or_else(|| "no process may be created".into()),
        ));
    }
    let bin = super::spawn::envbench_binary().ok_or_else(|| {
        BenchError::Unsupported("cannot find the envbench binary to run the fork helper".into())
    })?;
    Ok(Box::new(ForkTrial { n, note, mem, bin }))
}

/// The hidden argument that runs [`fork_helper`] in a fresh envbench process.
pub const FORK_HELPER_ARG: &str = "__fork";

/// Runs in a freshly started envbench (`envbench __fork N MODE`): forks N
/// children that pause, timing from before the first fork to after the
/// last, reads system memory before and after, kills and reaps them, and
/// prints `elapsed_ns used_before used_after`. A fresh process is used
/// because fork copies the parent's page tables: from envbench's own,
/// larger process (4 MB resident here) each fork cost ~30 % more than from
/// seed 003's small C program, a cost of envbench, not of the environment.
/// Returns the exit code.
pub fn fork_helper(args: &[String]) -> i32 {
    let n: usize = match args.first().and_then(|a| a.parse().ok()) {
        Some(n) if n > 0 && n <= super::HARD_CAP => n,
        _ => return 2,
    };
    let extra = match args.get(1).map(String::as_str) {
        Some("untouched") => vec![0u8; PARENT_EXTRA_BYTES],
        Some("touched") => vec![1u8; PARENT_EXTRA_BYTES],
        _ => Vec::new(),
    };
    let mut kids = Children::default();
    kids.pids.reserve(n);
    let before = used_memory_bytes().unwrap_or(-1);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        match fork_child(pause_forever) {
            Ok(pid) => kids.push(pid),
            Err(e) => {
                eprintln!("fork failed after {} of {n} children: {e}", kids.len());
                return 1; // `kids` kills and reaps the started children
            }
        }
    }
    let elapsed = t0.elapsed().as_nanos();
    let after = used_memory_bytes().unwrap_or(-1);
    let reaped = kids.reap_all(libc::SIGKILL);
    std::hint::black_box(&extra);
    if reaped != n {
        eprintln!("reaped {reaped} of {n} children");
        return 1;
    }
    println!("{elapsed} {before} {after}");
    0
}

struct ForkTrial {
    n: usize,
    note: Option<String>,
    mem: ParentMemory,
    bin: std::path::PathBuf,
}

impl Trial for ForkTrial {
    fn once(&mut self, _clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let mode = match self.mem {
            ParentMemory::None => "none",
            ParentMemory::Untouched => "untouched",
            ParentMemory::Touched => "touched",
        };
        let out = std::process::Command::new(&self.bin)
            .args([FORK_HELPER_ARG, &self.n.to_string(), mode])
            .stdin(std::process::Stdio::null())
            .output()?;
        if !out.status.success() {
            use std::os::unix::process::ExitStatusExt;
            if out.status.signal() == Some(libc::SIGINT) {
                return Err(BenchError::Interrupted);
            }
            return Err(BenchError::Failed(format!(
                "fork helper: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<i64> = text
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect();
        let [ns, before, after] = v[..] else {
            return Err(BenchError::Failed(format!("fork helper printed {text:?}")));
        };
        if before < 0 || after < 0 {
            return Err(BenchError::Unsupported(
                "/proc/meminfo is not readable".into(),
            ));
        }
        Ok(vec![
            ns as f64 / 1e3 / self.n as f64,
            (after - before) as f64 / self.n as f64,
        ])
    }

    fn details(&mut self) -> Option<Value> {
        Some(serde_json::json!({
            "processes": self.n,
            "limited": self.note,
            "method": "timed in a fresh envbench helper process (seed 003 forked from a small C program)",
        }))
    }

    fn notes(&self) -> Vec<String> {
        self.note.iter().cloned().collect()
    }
}

impl Bench for Thread {
    fn family(&self) -> Family {
        Family::Os
    }
    fn name(&self) -> &'static str {
        "thread"
    }
    fn summary(&self) -> &'static str {
        "create N waiting threads; time and system memory per thread"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 (thread creation: 0.248 ms WSL 1, 0.0167 ms VirtualBox, 0.0108 ms native)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let n = count_for(plan.suite);
        vec![CaseSpec {
            bench: self.id(),
            params: BTreeMap::from([("n".to_string(), Value::from(n))]),
            metrics: metrics("thread"),
        }]
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let (n, note) = bounded_count(get_usize(case, "n")?, ctx.mem_available_bytes);
        if n == 0 {
            return Err(BenchError::Unsupported(
                note.unwrap_or_else(|| "no thread may be created".into()),
            ));
        }
        Ok(Box::new(ThreadTrial { n, note }))
    }
}

struct ThreadTrial {
    n: usize,
    note: Option<String>,
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
        let t0 = clock.now();
        let spawned = self.spawn_all(&gate, &mut handles);
        let secs = clock.now().saturating_sub(t0).as_secs_f64();
        let after = used_memory_bytes();
        drop(release);
        for h in handles {
            let _ = h.join();
        }
        spawned.map_err(BenchError::Failed)?;
        match (before, after) {
            (Some(b), Some(a)) => Ok(vec![
                secs * 1e6 / self.n as f64,
                (a - b) as f64 / self.n as f64,
            ]),
            _ => Err(BenchError::Unsupported(
                "/proc/meminfo is not readable".into(),
            )),
        }
    }

    fn details(&mut self) -> Option<Value> {
        Some(serde_json::json!({ "threads": self.n, "limited": self.note }))
    }

    fn notes(&self) -> Vec<String> {
        self.note.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_helper_rejects_bad_counts() {
        assert_eq!(fork_helper(&["0".into()]), 2);
        assert_eq!(fork_helper(&["x".into()]), 2);
        assert_eq!(fork_helper(&[(super::super::HARD_CAP + 1).to_string()]), 2);
    }

    #[test]
    fn thread_case_measures_and_joins_every_thread() {
        let mut t = ThreadTrial { n: 20, note: None };
        let v = t.once(&Clock::real()).unwrap();
        assert!(v[0] > 0.0 && v[1].is_finite(), "{v:?}");
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
