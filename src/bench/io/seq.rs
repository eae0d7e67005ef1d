//! `io.seq`: IOzone's write, rewrite, read and re-read in throughput mode
//! (seed 000 ran `iozone` with 1 to 16 threads and found WSL 2's rewrite
//! 78.5 % below native). Each thread has its own file of the case's size,
//! written and read in records (IOzone -r); the threads start each
//! operation together, and the aggregate rate is all bytes over the time
//! from the first thread's start to the last one's end, as IOzone's
//! "Children see throughput" over the whole group; the slowest and the
//! fastest thread are reported beside it.
//!
//! One case per directory and thread count carries all four operations as
//! metrics, because IOzone runs them as one sequence on the same files (a
//! rewrite needs the file the write made, a re-read the read before it):
//! separate cases would each have to write the file first, doubling the
//! I/O of a suite that must fit a minute. The initial write is the
//! headline: it is the operation that must reach the storage (it ends with
//! fsync and allocates the blocks), while reads that follow at once are
//! served from the page cache as in IOzone without -I.

use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use super::{create_new, failed, mb_per_sec, read_blocks, write_blocks, Block, Target};
use crate::bench::affinity;
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::params::key;
use crate::results::price::{Cost, Op, Price};
use crate::units::{size_label, size_text};
use crate::units::{Direction, Unit};
use crate::view::{Grid, GridRows, Lines, Scale, View, ViewKind, YValue};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Condvar, Mutex};
use std::time::Duration;

/// The operations in IOzone's order.
const OPS: [&str; 4] = ["write", "rewrite", "read", "reread"];
/// `<op>_slowest_thread` for each of [`OPS`].
const SLOWEST: [&str; 4] = [
    "write_slowest_thread",
    "rewrite_slowest_thread",
    "read_slowest_thread",
    "reread_slowest_thread",
];
/// `<op>_fastest_thread` for each of [`OPS`].
const FASTEST: [&str; 4] = [
    "write_fastest_thread",
    "rewrite_fastest_thread",
    "read_fastest_thread",
    "reread_fastest_thread",
];

/// IOzone's record of 1 MiB per read and write call.
pub const DEFAULT_RECORD: u64 = 1 << 20;

/// The file per thread of a suite: small enough that one repetition stays
/// short (the runner repeats it at least 5 times in standard), large
/// enough that fsync has real work. Seed 000's files were 2 GiB (full).
pub(crate) fn suite_file_size(suite: Suite) -> u64 {
    match suite {
        Suite::Quick => 16 << 20,
        Suite::Standard => 256 << 20,
        Suite::Full => 2 << 30,
    }
}

/// The `io.seq` bench.
#[derive(Debug)]
pub struct Seq;

impl Bench for Seq {
    fn references(&self) -> Vec<crate::bench::reference::Reference> {
        super::references::seq()
    }
    fn id(&self) -> &'static str {
        ids::IO_SEQ
    }
    fn prices(&self) -> &'static [Price] {
        // one thread's pass, as a workload reads and writes
        const fn one_thread(op: Op, metric: &'static str) -> Price {
            Price {
                op,
                metric,
                params: &[(key::THREADS, "1")],
                on_dir: true,
                cost: Cost::MegabytesPerSecond,
                names: 0,
            }
        }
        const PRICES: &[Price] = &[
            one_thread(Op::ByteRead, "read"),
            one_thread(Op::ByteWritten, "write"),
        ];
        PRICES
    }
    fn topic(&self) -> &'static str {
        "sequential file I/O"
    }
    fn summary(&self) -> &'static str {
        "IOzone throughput mode: a file per thread written (with fsync), rewritten, read and re-read \
         in 1 MiB records; aggregate, slowest and fastest thread in MB/s; writes 16 MiB (quick), \
         256 MiB (standard), 2 GiB (full) per thread and repetition"
    }
    fn reproduces(&self) -> &'static str {
        "seed 000 (IOzone write/rewrite/read/re-read, 1-16 threads, WSL 2 vs native)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let io = super::IoOptions::of(plan);
        let file = io.file_size.unwrap_or(suite_file_size(plan.suite));
        let record = io.record.unwrap_or(DEFAULT_RECORD);
        let mut metrics: Vec<MetricSpec> = OPS.iter().map(|n| rate(n)).collect();
        for i in 0..OPS.len() {
            metrics.push(rate(SLOWEST[i]));
            metrics.push(rate(FASTEST[i]));
        }
        let mut cases = Vec::new();
        for dir in &plan.dirs {
            for threads in plan.thread_counts() {
                cases.push(CaseSpec {
                    bench: self.id().into(),
                    params: BTreeMap::from([
                        ("dir".to_string(), Value::from(dir.name.clone())),
                        ("threads".to_string(), Value::from(threads)),
                        ("file_size".to_string(), Value::from(size_label(file))),
                        ("record".to_string(), Value::from(size_label(record))),
                    ]),
                    metrics: metrics.clone(),
                });
            }
        }
        cases
    }
    fn views(&self) -> Vec<View> {
        let by_threads = |title, metric| View {
            title,
            kind: ViewKind::Lines(Lines {
                metric,
                y_label: "aggregate rate",
                y: YValue::Metric,
                y_scale: Scale::Linear,
                x: "threads",
                x_label: "threads",
                x_scale: Scale::Linear,
                by: &["dir", "file_size", "record"],
            }),
        };
        vec![
            View {
                title: "operations by threads against the baseline (seed 000's Table 4)",
                kind: ViewKind::Grid(Grid {
                    rows: GridRows::Metrics(&["write", "rewrite", "read", "reread"]),
                    columns: "threads",
                }),
            },
            by_threads("initial write by threads", "write"),
            by_threads("read by threads", "read"),
        ]
    }

    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        // a file per thread
        let threads = case.count("threads").unwrap_or(1);
        case.size("file_size").unwrap_or(0).saturating_mul(threads)
    }

    fn one_cpu(&self, case: &CaseSpec) -> bool {
        case.one_thread()
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let threads = case.count("threads")? as usize;
        Ok(Box::new(self.trial(case, ctx, thread_cpus(threads))?))
    }
}

impl Seq {
    /// The trial of `case` with its threads on `cpus` (None: placed by the
    /// scheduler).
    fn trial(
        &self,
        case: &CaseSpec,
        ctx: &Context,
        cpus: Option<Vec<usize>>,
    ) -> Result<SeqTrial, BenchError> {
        let threads = case.count("threads")? as usize;
        let file_size = case.size("file_size")?;
        let record = case.size("record")?;
        let total = self.disk_bytes(case);
        let target = Target::open(ctx, case, "seq", total)?;
        let mut notes = vec![
            target.note(),
            format!(
                "write and rewrite include fsync before close (IOzone -e); read and re-read follow at \
                 once, as in IOzone, so they are served from the page cache unless {} exceeds memory",
                size_text(total)
            ),
        ];
        if ctx.mem_available_bytes.is_some_and(|m| total > m) {
            notes.push("the files exceed the memory available: reads reach the device".into());
        }
        Ok(SeqTrial {
            target,
            threads,
            file_size,
            blocks: {
                let first = Block::new(record as usize, ctx.seed);
                (0..threads as u64).map(|i| first.for_writer(i)).collect()
            },
            rep: 0,
            notes,
            cpus,
            pins_refused: 0,
        })
    }
}

fn rate(name: &'static str) -> MetricSpec {
    MetricSpec {
        name,
        unit: Unit::MegabytesPerSec,
        direction: Direction::HigherIsBetter,
    }
}

struct SeqTrial {
    target: Target,
    threads: usize,
    file_size: u64,
    /// One block per thread, each stamped by its own writer.
    blocks: Vec<Block>,
    rep: u64,
    notes: Vec<String>,
    /// Each thread's CPU, when there are at least as many usable CPUs as
    /// threads ([`thread_cpus`]).
    cpus: Option<Vec<usize>>,
    /// Threads, over every repetition, whose CPU was asked and could not
    /// be set: they ran where the scheduler put them.
    pins_refused: u64,
}

/// One CPU for each of `threads` threads (the first usable ones), when
/// there are enough and more than one thread. A thread woken at the
/// barrier before an operation may otherwise be queued behind its waker
/// on the waker's CPU until the scheduler moves it, and starts its timed
/// operation that much later: on the Xeon VM (2 vCPUs, 2026-11-29) the two
/// threads' cached reads of 256 MiB each spanned up to 12 % more than the
/// slower thread's own read, and the aggregate read 0.91 of fio's, whose
/// jobs do not meet at a barrier.
fn thread_cpus(threads: usize) -> Option<Vec<usize>> {
    let allowed = affinity::allowed_cpus().ok()?;
    (threads > 1 && allowed.len() >= threads).then(|| allowed[..threads].to_vec())
}

/// When one thread started and ended each operation.
type Spans = [(Duration, Duration); 4];

impl Trial for SeqTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        self.rep += 1;
        let paths: Vec<_> = (0..self.threads)
            .map(|i| self.target.file(&format!("seq-{}-{i}", self.rep)))
            .collect();
        let mut files = Vec::with_capacity(self.threads);
        for p in &paths {
            files.push(create_new(p, 0).map_err(|e| failed("creating", p, e))?);
        }
        let barrier = Barrier::new(self.threads);
        let start = Start::default();
        let size = self.file_size;
        let refused_pins = AtomicU64::new(0);
        let outcomes: Vec<std::io::Result<Spans>> = std::thread::scope(|s| {
            let refused_pins = &refused_pins;
            let (start, barrier) = (&start, &barrier);
            let mut handles = Vec::with_capacity(files.len());
            let mut refused = None;
            for (i, (f, block)) in files.into_iter().zip(self.blocks.iter_mut()).enumerate() {
                let cpu = self.cpus.as_ref().and_then(|c| c.get(i).copied());
                let spawned = std::thread::Builder::new()
                    .name("io-seq".into())
                    .spawn_scoped(s, move || {
                        // unpinned where the mask cannot be set: measured as
                        // placed, and counted
                        let _pinned = cpu.and_then(|c| {
                            let held = affinity::Pinned::to(c).ok();
                            if held.is_none() {
                                refused_pins.fetch_add(1, Ordering::Relaxed);
                            }
                            held
                        });
                        worker(f, start, barrier, clock, block, size)
                    });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        refused = Some(e);
                        break;
                    }
                }
            }
            start.open(refused.is_none());
            let mut out: Vec<std::io::Result<Spans>> = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .expect("invariant: an io.seq worker does not panic")
                })
                .collect();
            out.extend(refused.map(|e| {
                Err(std::io::Error::other(format!(
                    "cannot start thread {} of {}: {e}",
                    out.len() + 1,
                    self.threads
                )))
            }));
            out
        });
        self.pins_refused += refused_pins.into_inner();
        for p in &paths {
            std::fs::remove_file(p).map_err(|e| failed("removing", p, e))?;
        }
        let spans: Vec<Spans> = outcomes
            .into_iter()
            .collect::<std::io::Result<_>>()
            .map_err(|e| BenchError::Failed(format!("io.seq: {e}")))?;
        Ok(rates(&spans, self.file_size))
    }

    fn details(&mut self) -> Option<Value> {
        let mut d = self.target.details();
        if let Value::Object(m) = &mut d {
            m.insert("thread_cpus".into(), serde_json::json!(self.cpus));
            if self.cpus.is_some() {
                m.insert("thread_pins_refused".into(), self.pins_refused.into());
            }
        }
        Some(d)
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

/// Whether every worker thread of a repetition was started. Workers wait
/// for it before their first barrier: when a thread cannot be started (a
/// process limit), the started ones return instead of waiting for ever at
/// a barrier that thread would never reach.
#[derive(Default)]
struct Start {
    all_started: Mutex<Option<bool>>,
    decided: Condvar,
}

impl Start {
    fn open(&self, all_started: bool) {
        *self.all_started.lock().unwrap_or_else(|e| e.into_inner()) = Some(all_started);
        self.decided.notify_all();
    }

    fn wait(&self) -> bool {
        let mut s = self.all_started.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match *s {
                Some(all) => return all,
                None => s = self.decided.wait(s).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

/// One thread's part: each operation after the others are ready. A thread
/// whose operation fails still meets every barrier, so none waits forever.
fn worker(
    mut f: File,
    start: &Start,
    barrier: &Barrier,
    clock: &Clock,
    block: &mut Block,
    size: u64,
) -> std::io::Result<Spans> {
    if !start.wait() {
        return Err(std::io::Error::other(
            "another thread of the repetition could not be started",
        ));
    }
    let mut spans: Spans = Default::default();
    let mut buf = Block::new(block.bytes().len(), 0);
    let mut error = None;
    for (i, span) in spans.iter_mut().enumerate() {
        barrier.wait();
        if error.is_some() {
            continue;
        }
        let t0 = clock.now();
        match one_op(&mut f, i, &mut *block, &mut buf, size) {
            Ok(()) => *span = (t0, clock.now()),
            Err(e) => error = Some(e),
        }
    }
    if let Some(e) = error {
        return Err(e);
    }
    check_first_record(&f, block, size)?;
    Ok(spans)
}

/// Write and rewrite end with fsync; reads must return the whole file.
fn one_op(
    f: &mut File,
    op: usize,
    block: &mut Block,
    buf: &mut Block,
    size: u64,
) -> std::io::Result<()> {
    f.seek(SeekFrom::Start(0))?;
    if op < 2 {
        write_blocks(f, block, size)?;
        return f.sync_all();
    }
    let n = read_blocks(f, buf)?;
    if n != size {
        return Err(std::io::Error::other(format!(
            "read {n} bytes of a {size}-byte file"
        )));
    }
    Ok(())
}

/// The file starts with what was written (checked after timing).
fn check_first_record(f: &File, block: &Block, size: u64) -> std::io::Result<()> {
    let n = (block.bytes().len() as u64).min(size) as usize;
    let mut head = vec![0u8; n];
    f.read_exact_at(&mut head, 0)?;
    if !block.written_as(&head) {
        return Err(std::io::Error::other(
            "the file does not hold what was written",
        ));
    }
    Ok(())
}

/// Aggregate per operation (all bytes over first start to last end), then
/// the slowest and fastest thread of each.
fn rates(spans: &[Spans], file_size: u64) -> Vec<f64> {
    let mut aggregate = Vec::with_capacity(4);
    let mut extremes = Vec::with_capacity(8);
    for op in 0..OPS.len() {
        let first = spans.iter().map(|s| s[op].0).min().unwrap_or_default();
        let last = spans.iter().map(|s| s[op].1).max().unwrap_or_default();
        let total = file_size * spans.len() as u64;
        aggregate.push(mb_per_sec(total, last.saturating_sub(first).as_secs_f64()));
        let each: Vec<f64> = spans
            .iter()
            .map(|s| mb_per_sec(file_size, s[op].1.saturating_sub(s[op].0).as_secs_f64()))
            .collect();
        extremes.push(each.iter().copied().fold(f64::INFINITY, f64::min));
        extremes.push(each.iter().copied().fold(0.0, f64::max));
    }
    aggregate.extend(extremes);
    aggregate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    fn case_for(threads: usize) -> CaseSpec {
        let mut plan = TestEnv::plan(Suite::Quick, 2);
        plan.threads = Some(vec![threads]);
        Seq.cases(&plan).remove(0)
    }

    #[test]
    fn threads_get_a_cpu_each_only_when_there_are_enough() {
        let allowed = affinity::allowed_cpus().unwrap();
        assert_eq!(thread_cpus(1), None);
        assert_eq!(thread_cpus(allowed.len() + 1), None);
        if allowed.len() >= 2 {
            assert_eq!(thread_cpus(2), Some(allowed[..2].to_vec()));
        }
    }

    #[test]
    fn a_cpu_that_cannot_be_set_is_counted_and_the_threads_still_measure() {
        let env = TestEnv::real(0.01);
        let case = case_for(2);
        let allowed = affinity::allowed_cpus().unwrap();
        // the first usable CPU holds; one past the largest CPU set is refused
        let cpus = vec![allowed[0], libc::CPU_SETSIZE as usize];
        let mut t = Seq.trial(&case, &env.ctx(), Some(cpus.clone())).unwrap();
        for _ in 0..2 {
            let v = t.once(&env.clock).unwrap();
            assert!(v.iter().all(|x| x.is_finite() && *x > 0.0), "{v:?}");
        }
        let d = t.details().unwrap();
        assert_eq!(d["thread_cpus"], serde_json::json!(cpus));
        assert_eq!(d["thread_pins_refused"], 2);
        // unpinned threads report no refusal
        let mut t = Seq.trial(&case, &env.ctx(), None).unwrap();
        t.once(&env.clock).unwrap();
        let d = t.details().unwrap();
        assert!(d["thread_cpus"].is_null() && d.get("thread_pins_refused").is_none());
    }

    #[test]
    fn aggregate_spans_from_first_start_to_last_end() {
        let ms = Duration::from_millis;
        let a: Spans = [(ms(0), ms(100)); 4];
        let b: Spans = [(ms(50), ms(250)); 4];
        let r = rates(&[a, b], 1_000_000);
        // 2 MB in 250 ms; threads at 10 and 5 MB/s
        assert!((r[0] - 8.0).abs() < 1e-9, "{r:?}");
        assert!(
            (r[4] - 5.0).abs() < 1e-9 && (r[5] - 10.0).abs() < 1e-9,
            "{r:?}"
        );
        assert_eq!(
            r.len(),
            Seq.cases(&TestEnv::plan(Suite::Quick, 1))[0].metrics.len()
        );
    }

    #[test]
    fn a_repetition_writes_and_reads_every_byte_and_leaves_nothing() {
        let env = TestEnv::real(0.01);
        let case = case_for(2);
        let mut t = Seq.prepare(&case, &env.ctx()).unwrap();
        let v = t.once(&env.clock).unwrap();
        assert!(v.iter().all(|x| x.is_finite() && *x > 0.0), "{v:?}");
        assert!(t.notes().iter().any(|n| n.contains("fsync before close")));
        let base = &env.dirs[0].path;
        // the scratch directory is empty between repetitions ...
        let scratch: Vec<_> = std::fs::read_dir(base).unwrap().flatten().collect();
        assert_eq!(scratch.len(), 1);
        assert_eq!(std::fs::read_dir(scratch[0].path()).unwrap().count(), 0);
        // ... and gone with the trial
        drop(t);
        assert_eq!(std::fs::read_dir(base).unwrap().count(), 0);
    }

    #[test]
    fn the_worker_reads_back_what_it_wrote() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        let mut block = Block::new(64 << 10, 3);
        let clock = Clock::real();
        let start = Start::default();
        start.open(true);
        let spans = worker(
            create_new(&path, 0).unwrap(),
            &start,
            &Barrier::new(1),
            &clock,
            &mut block,
            200_704,
        )
        .unwrap();
        assert!(spans.iter().all(|(a, b)| b >= a));
        assert!(super::super::holds_blocks(&path, &block, 200_704).unwrap());
    }

    #[test]
    fn a_worker_whose_sibling_was_not_started_returns_instead_of_waiting() {
        let tmp = tempfile::tempdir().unwrap();
        let f = create_new(&tmp.path().join("f"), 0).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let lone = std::thread::spawn(move || {
            let start = Start::default();
            // a barrier for two that the missing sibling would never reach
            let barrier = Barrier::new(2);
            std::thread::scope(|s| {
                let (st, b) = (&start, &barrier);
                let w = s.spawn(move || {
                    worker(f, st, b, &Clock::real(), &mut Block::new(4096, 1), 4096)
                });
                start.open(false);
                tx.send(w.join().unwrap().is_err()).unwrap();
            });
        });
        let failed = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the worker waited at the barrier");
        assert!(failed);
        lone.join().unwrap();
    }

    #[test]
    fn a_directory_without_room_for_the_files_skips_the_case() {
        let env = TestEnv::real(0.01);
        let mut plan = TestEnv::plan(Suite::Quick, 2);
        plan.threads = Some(vec![2]);
        plan.options = plan.options.with("file_size", 1u64 << 50); // 1 PiB per thread
        let case = Seq.cases(&plan).remove(0);
        match Seq.prepare(&case, &env.ctx()) {
            Err(BenchError::Unsupported(why)) => {
                assert!(why.contains("free") && why.contains("--file-size"), "{why}")
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("2 PiB fitted"),
        }
        assert_eq!(std::fs::read_dir(&env.dirs[0].path).unwrap().count(), 0);
    }
}
