//! `mem.stream`: STREAM's Copy, Scale, Add and Triad (seed 000: Triad
//! 28 672 MB/s native against 27 072 MB/s in WSL 2 at one thread).
//!
//! As STREAM: three f64 arrays, of a fixed size per suite (see
//! [`suite_elems`]) or the user's `--stream-elems`, checked against STREAM's
//! rule "each array at least 4× the last-level cache" with a note on the
//! case when it is not met; each thread owns one contiguous block of
//! every array (OpenMP's static schedule) and touches it first; a
//! repetition initialises a = 1, b = 2, c = 0 and runs the four kernels
//! (built for AVX2 where the CPU has it, as C STREAM built `-march=native`
//! would be: [`Isa`]) NTIMES = 10 times (5 in the quick suite:
//! [`suite_ntimes`]) with a barrier around each kernel; the first iteration
//! is discarded; rate = bytes moved / best time, in MB/s (10⁶ B/s), with
//! Copy and Scale moving 16 bytes per element and Add and Triad 24. The
//! arrays are then checked against the values the same recurrence gives,
//! with STREAM's relative error limit; a failed check makes the case invalid.
//! See: J. McCalpin, `stream.c` (checkSTREAMresults), www.cs.virginia.edu/stream.

use super::super::reference::{Arg, Cpus, Pick, Prog, Read, Reference, Side, Tool};
use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::measure::pages::{thp_mode, PageBuf, PagePolicy};
use crate::results::ids;
use crate::results::params::key;
use crate::results::{CaseResult, Derived};
use crate::stats::band::Band;
use crate::units::{Direction, Unit};
use crate::view::{Lines, Scale, View, ViewKind, YValue};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod trial;
pub use trial::*;

/// The instruction set the kernels are built for, chosen once from the
/// CPU: AVX2 where it has it, else the target's baseline. On the Intel
/// Xeon VM (2026-11-29) the baseline (SSE2) kernels read 12.6-12.8 GB/s of
/// Triad at one thread, as C STREAM built `-O3` does, and the AVX2 ones
/// 13.1-13.3, as its `-O3 -march=native` build (13.0-13.5); AVX-512 gave
/// no more (13.1-13.5). Not AVX-512: on a Zen 4 guest the C build using
/// its 512-bit stores was 10 % slower than the generic one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// The target's baseline (SSE2 on x86-64).
    Baseline,
    /// AVX2: 256-bit vectors.
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Isa {
    /// The best this CPU runs.
    pub fn here() -> Isa {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Isa::Avx2;
        }
        Isa::Baseline
    }

    /// `baseline` or `avx2`, as the case's details name it.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Baseline => "baseline",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => "avx2",
        }
    }
}

/// Iterations per repetition; the first is discarded (STREAM's NTIMES).
pub const NTIMES: usize = 10;
/// Iterations per repetition in the quick suite: the best of 4 after the
/// first, within STREAM's rule (NTIMES at least 2). At ten, mem.stream's
/// two quick cases took 6.3 s of a 45 s quick run natively and 7.4 s of
/// 59 s inside gVisor on the Intel Xeon VM (2026-11-29), every round at
/// the suite's floor of three; the iterations were 1.0 s of a 1.4 s round
/// at one thread. The case key says `ntimes=5`, so a quick figure is never
/// matched with one over ten.
pub const QUICK_NTIMES: usize = 5;
/// STREAM's scalar.
pub const SCALAR: f64 = 3.0;
/// STREAM's floor on the array length.
pub const MIN_ELEMS: usize = 10_000_000;
/// STREAM's limit on the average relative error of an array (double precision).
pub const EPSILON: f64 = 1e-13;

/// The four kernels, in STREAM's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// c = a
    Copy,
    /// b = q·c
    Scale,
    /// c = a + b
    Add,
    /// a = b + q·c
    Triad,
}

impl Kernel {
    /// STREAM's order.
    pub const ALL: [Kernel; 4] = [Kernel::Copy, Kernel::Scale, Kernel::Add, Kernel::Triad];

    /// `copy`, `scale`, `add`, `triad`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kernel::Copy => "copy",
            Kernel::Scale => "scale",
            Kernel::Add => "add",
            Kernel::Triad => "triad",
        }
    }

    /// Bytes STREAM counts per element: two arrays for Copy and Scale, three for Add and Triad.
    pub(crate) fn bytes_per_elem(self) -> usize {
        match self {
            Kernel::Copy | Kernel::Scale => 16,
            Kernel::Add | Kernel::Triad => 24,
        }
    }

    /// One pass of the kernel, built for `isa`.
    fn run(self, isa: Isa, a: &mut [f64], b: &mut [f64], c: &mut [f64]) {
        match isa {
            Isa::Baseline => self.plain(a, b, c),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa::Avx2` is only chosen where the CPU has AVX2
            // ([`Isa::here`]).
            Isa::Avx2 => unsafe { self.avx2(a, b, c) },
        }
    }

    /// The kernel as the compiler vectorises it for AVX2 (256-bit).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2(self, a: &mut [f64], b: &mut [f64], c: &mut [f64]) {
        self.plain(a, b, c)
    }

    /// The kernel for the target's baseline instruction set (SSE2 on
    /// x86-64), inlined into each instruction set's build of it.
    #[inline(always)]
    fn plain(self, a: &mut [f64], b: &mut [f64], c: &mut [f64]) {
        match self {
            Kernel::Copy => c.iter_mut().zip(a.iter()).for_each(|(c, a)| *c = *a),
            Kernel::Scale => b
                .iter_mut()
                .zip(c.iter())
                .for_each(|(b, c)| *b = SCALAR * *c),
            Kernel::Add => c
                .iter_mut()
                .zip(a.iter().zip(b.iter()))
                .for_each(|(c, (a, b))| *c = *a + *b),
            Kernel::Triad => a
                .iter_mut()
                .zip(b.iter().zip(c.iter()))
                .for_each(|(a, (b, c))| *a = *b + SCALAR * *c),
        }
    }
}

/// Elements per array in the quick suite: 2^24 (128 MiB per array, 384 MiB
/// in all). It is above STREAM's floor of 10 million elements and meets the
/// 4× rule for last-level caches up to 32 MiB (most desktop CPUs, one Zen
/// CCD, this project's EPYC guest); a repetition moves 13.4 GB, about
/// 0.7 s at 20 GB/s, so the quick suite keeps its minute.
pub const QUICK_ELEMS: usize = 1 << 24;
/// Elements per array in the standard and full suites: 2^26 (512 MiB per
/// array, 1.5 GiB in all), which meets the 4× rule for last-level caches up
/// to 128 MiB (server CPUs short of the largest); a repetition moves about
/// 54 GB, 3 s at 20 GB/s. A larger cache (a 260 MiB Xeon L3) gets a note,
/// and `--stream-elems` for a run that meets the rule there.
pub const STANDARD_ELEMS: usize = 1 << 26;

/// Elements per array for `suite`. Fixed, never derived from the cache the
/// environment reports: a VM and its host can report different caches, and
/// the size is part of the case key that `compare` matches on.
pub(crate) fn suite_elems(suite: Suite) -> usize {
    match suite {
        Suite::Quick => QUICK_ELEMS,
        Suite::Standard | Suite::Full => STANDARD_ELEMS,
    }
}

/// Iterations per repetition for `suite`.
pub(crate) fn suite_ntimes(suite: Suite) -> usize {
    match suite {
        Suite::Quick => QUICK_NTIMES,
        Suite::Standard | Suite::Full => NTIMES,
    }
}

/// The note for a case whose arrays break STREAM's sizing rules (each
/// array at least 4× the last-level cache, at least [`MIN_ELEMS`]
/// elements), or None when they hold.
pub(crate) fn size_note(elems: usize, llc_bytes: Option<u64>) -> Option<String> {
    let bytes = elems as u64 * 8;
    let mut broken = Vec::new();
    match llc_bytes {
        Some(llc) if bytes < 4 * llc => broken.push(format!(
            "each array ({} MiB) is smaller than 4x the {} MiB last-level cache, so part of the traffic may be served by the cache (--stream-elems {} meets the rule)",
            bytes >> 20,
            llc >> 20,
            (4 * llc).div_ceil(8)
        )),
        Some(_) => {}
        None => broken.push("the last-level cache size is unknown: the 4x rule is not checked".into()),
    }
    if elems < MIN_ELEMS {
        broken.push(format!(
            "{elems} elements is below STREAM's floor of {MIN_ELEMS}"
        ));
    }
    (!broken.is_empty()).then(|| format!("STREAM sizing: {}", broken.join("; ")))
}

/// Contiguous blocks of `len` for `threads` threads, sizes differing by at most one.
pub(crate) fn blocks(len: usize, threads: usize) -> Vec<Range<usize>> {
    let (q, r) = (len / threads, len % threads);
    let mut start = 0;
    (0..threads)
        .map(|k| {
            let end = start + q + usize::from(k < r);
            let range = start..end;
            start = end;
            range
        })
        .collect()
}

fn split<'a>(mut s: &'a mut [f64], ranges: &[Range<usize>]) -> Vec<&'a mut [f64]> {
    ranges
        .iter()
        .map(|r| {
            let (head, tail) = std::mem::take(&mut s).split_at_mut(r.len());
            s = tail;
            head
        })
        .collect()
}

/// The values every element of a, b, c holds after `ntimes` iterations.
pub(crate) fn expected_values(ntimes: usize) -> (f64, f64, f64) {
    let (mut a, mut b, mut c) = (1.0, 2.0, 0.0);
    for _ in 0..ntimes {
        c = a;
        b = SCALAR * c;
        c = a + b;
        a = b + SCALAR * c;
    }
    (a, b, c)
}

/// Sums of |x − expected| over a block of each array.
fn error_sums(a: &[f64], b: &[f64], c: &[f64], exp: (f64, f64, f64)) -> [f64; 3] {
    let sum = |xs: &[f64], e: f64| xs.iter().map(|x| (x - e).abs()).sum::<f64>();
    [sum(a, exp.0), sum(b, exp.1), sum(c, exp.2)]
}

/// STREAM's check: the average absolute error of each array, relative to
/// its expected value, must be below [`EPSILON`].
///
/// # Errors
/// Names the first array that fails and its relative error.
pub(crate) fn check(error_sums: [f64; 3], len: usize, exp: (f64, f64, f64)) -> Result<(), String> {
    for (name, sum, e) in [
        ("a", error_sums[0], exp.0),
        ("b", error_sums[1], exp.1),
        ("c", error_sums[2], exp.2),
    ] {
        let rel = sum / len as f64 / e.abs();
        // NaN (a destroyed array) fails too.
        if rel.is_nan() || rel > EPSILON {
            return Err(format!("STREAM validation failed: array {name} average relative error {rel:.3e} > {EPSILON:e}"));
        }
    }
    Ok(())
}

/// The parameter naming the iterations, where they are not STREAM's ten.
const NTIMES_KEY: &str = "ntimes";

/// The `mem.stream` bench.
#[derive(Debug)]
pub struct Stream;

/// The case of `elems` elements per array on `threads` threads, over
/// `ntimes` iterations; STREAM's ten leave the key as it always was.
fn case(elems: usize, threads: usize, ntimes: usize) -> CaseSpec {
    let mut metrics = Vec::new();
    // Triad first: it drives early stopping and is the figure STREAM studies quote.
    for k in [Kernel::Triad, Kernel::Copy, Kernel::Scale, Kernel::Add] {
        metrics.push(MetricSpec {
            name: rate_name(k),
            unit: Unit::MegabytesPerSec,
            direction: Direction::HigherIsBetter,
        });
    }
    for k in Kernel::ALL {
        for i in 0..3 {
            metrics.push(MetricSpec {
                name: time_name(k, i),
                unit: Unit::Seconds,
                direction: Direction::LowerIsBetter,
            });
        }
    }
    let mut params = BTreeMap::from([
        ("array_elems".to_string(), Value::from(elems)),
        (key::THREADS.to_string(), Value::from(threads)),
    ]);
    if ntimes != NTIMES {
        params.insert(NTIMES_KEY.to_string(), Value::from(ntimes));
    }
    CaseSpec {
        bench: Stream.id().into(),
        params,
        metrics,
    }
}

fn rate_name(k: Kernel) -> &'static str {
    match k {
        Kernel::Copy => "copy_rate",
        Kernel::Scale => "scale_rate",
        Kernel::Add => "add_rate",
        Kernel::Triad => "triad_rate",
    }
}

/// `<kernel>_time_avg|min|max` for i = 0, 1, 2.
fn time_name(k: Kernel, i: usize) -> &'static str {
    const NAMES: [[&str; 3]; 4] = [
        ["copy_time_avg", "copy_time_min", "copy_time_max"],
        ["scale_time_avg", "scale_time_min", "scale_time_max"],
        ["add_time_avg", "add_time_min", "add_time_max"],
        ["triad_time_avg", "triad_time_min", "triad_time_max"],
    ];
    NAMES[k as usize][i]
}

/// C STREAM's builds, each with OpenMP. None is best everywhere:
/// `-march=native` was 10 % slower than the generic build on a Zen 4 guest
/// (AVX-512 stores); on a Xeon at one thread, in one alternation, it read
/// 12.5-13.1 GB/s, unrolled 13.2-13.5, envbench's AVX2 kernels 13.1-13.4
/// (docs/log/fidelity.md, 2026-11-29, midday). The quick case names its
/// iterations (`ntimes`, 5 against STREAM's 10), which the tool is given.
const C_BUILDS: [&[&str]; 3] = [
    &["-O3", "-march=native", "-funroll-loops", "-fopenmp"],
    &["-O3", "-fopenmp"],
    &["-O3", "-funroll-loops", "-fopenmp"],
];

impl Bench for Stream {
    /// Triad against a C STREAM compiled here, at the same array size,
    /// iterations and threads, held to ±3 %: every build that compiles is
    /// measured each round and the row holds each round of envbench to
    /// the one with the highest median over the other rounds
    /// ([`Pick::Highest`]).
    fn references(&self) -> Vec<Reference> {
        let tools: Vec<Tool> = C_BUILDS
            .iter()
            .zip([
                "C STREAM, -O3 -march=native -funroll-loops",
                "C STREAM, -O3",
                "C STREAM, -O3 -funroll-loops",
            ])
            .map(|(&flags, name)| Tool {
                name,
                program: Prog::C {
                    name: "mem/reference.c",
                    source: include_str!("../reference.c"),
                    flags,
                },
                args: &[
                    Arg::Param {
                        prefix: "",
                        key: "array_elems",
                    },
                    Arg::Param {
                        prefix: "",
                        key: "ntimes",
                    },
                ],
                env: &[
                    (
                        "OMP_NUM_THREADS",
                        Arg::Param {
                            prefix: "",
                            key: key::THREADS,
                        },
                    ),
                    ("OMP_PROC_BIND", Arg::Text("false")),
                ],
                on: Cpus::Any,
                read: Read::Number,
                processes: 1,
                input: None,
                check: None,
                on_dir: None,
                beside: None,
            })
            .collect();
        [&[(key::THREADS, "1")], &[(key::THREADS, "2")]]
            .into_iter()
            .map(|params| Reference {
                params,
                metric: "triad_rate",
                band: Some(Band::new(0.97, 1.03)),
                tools: tools.clone(),
                pick: Pick::Highest,
                envbench: Side::AS_PLANNED,
                information_if: None,
            })
            .collect()
    }

    /// Its three arrays of f64.
    fn memory_bytes(&self, case: &CaseSpec) -> u64 {
        3 * 8 * case.count("array_elems").unwrap_or(0)
    }

    fn id(&self) -> &'static str {
        ids::MEM_STREAM
    }
    fn topic(&self) -> &'static str {
        "memory bandwidth"
    }
    fn summary(&self) -> &'static str {
        "STREAM Copy/Scale/Add/Triad, arrays >= 4x last-level cache, best of 10 iterations (5 in quick); MB/s (10^6 B/s), validated"
    }
    fn reproduces(&self) -> &'static str {
        "seed 000 (STREAM Triad 1-16 threads, WSL 2 vs native)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let elems = plan
            .options
            .u64(super::STREAM_ELEMS)
            .map_or(suite_elems(plan.suite), |n| n as usize);
        let ntimes = suite_ntimes(plan.suite);
        plan.thread_counts()
            .into_iter()
            .map(|t| case(elems, t, ntimes))
            .collect()
    }
    fn views(&self) -> Vec<View> {
        let by_threads = |title, metric, y_label| View {
            title,
            kind: ViewKind::Lines(Lines {
                metric,
                y_label,
                y: YValue::Metric,
                y_scale: Scale::Linear,
                x: "threads",
                x_label: "threads",
                x_scale: Scale::Linear,
                by: &["array_elems"],
            }),
        };
        vec![
            by_threads("Triad by threads", "triad_rate", "Triad rate"),
            by_threads("Copy by threads", "copy_rate", "Copy rate"),
        ]
    }

    fn one_cpu(&self, case: &CaseSpec) -> bool {
        case.one_thread()
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let (Ok(elems), Ok(threads)) =
            (case.count_usize("array_elems"), case.count_usize("threads"))
        else {
            return Err(BenchError::Failed(format!(
                "{}: bad parameters",
                case.key()
            )));
        };
        ctx.require_memory(self.memory_bytes(case))
            .map_err(|e| match e {
                BenchError::Unsupported(why) => {
                    BenchError::Unsupported(format!("{why}; a smaller --stream-elems fits"))
                }
                other => other,
            })?;
        let ntimes = match case.params.get(NTIMES_KEY) {
            None => NTIMES,
            Some(_) => case.count_usize(NTIMES_KEY)?,
        };
        if ntimes < 2 {
            return Err(BenchError::Failed(format!(
                "{}: ntimes={ntimes}, but STREAM discards its first iteration and needs at least 2",
                case.key()
            )));
        }
        let mut trial = StreamTrial::new(elems, threads)?;
        trial.ntimes = ntimes;
        let llc = crate::probe::cpu::live_llc_bytes();
        trial.llc_bytes = llc;
        trial.notes.extend(size_note(elems, llc));
        Ok(Box::new(trial))
    }
    fn needs_warmup(&self) -> bool {
        false // each repetition touches its arrays untimed and discards its first iteration
    }
    fn derive(&self, cases: &[&CaseResult]) -> Vec<Derived> {
        derive_scalability(cases)
    }
}

/// Scalability rate(n)/rate(1) per kernel from median best rates.
fn derive_scalability(cases: &[&CaseResult]) -> Vec<Derived> {
    let threads = |c: &CaseResult| c.params.get("threads").and_then(Value::as_u64);
    let median = |c: &CaseResult, name: &str| {
        c.metrics
            .iter()
            .find(|m| m.name == name)
            .and_then(|m| m.summary.as_ref())
            .map(|s| s.median)
    };
    let Some(one) = cases.iter().find(|c| threads(c) == Some(1)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in cases {
        for k in Kernel::ALL {
            let name = rate_name(k);
            if let (Some(r1), Some(rn)) = (median(one, name), median(c, name)) {
                out.push(Derived {
                    key: c.key.clone(),
                    name: format!("{}_scalability", k.name()),
                    unit: Unit::Ratio,
                    value: rn / r1,
                    note: format!(
                        "median {name} with {} threads / with 1 thread",
                        threads(c).unwrap_or(0)
                    ),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    /// Each declared build of the C reference compiles and reads a small
    /// run, given its case's size, iterations and threads (or says that no
    /// compiler is here).
    #[test]
    fn the_c_references_builds_read_a_small_run_of_the_planned_case() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = crate::bench::reference::Workshop::new(base.path()).unwrap();
        let mut case = Stream.cases(&TestEnv::plan(Suite::Quick, 1))[0]
            .params
            .clone();
        case.insert("array_elems".into(), Value::from(100_000));
        let references = Stream.references();
        assert_eq!(references.len(), 2);
        for tool in &references[0].tools {
            match shop.ready(tool, &case) {
                Ok(ready) => {
                    // a figure read (MB/s, finite and positive), not a speed
                    let read = ready.measure();
                    assert!(read.is_ok(), "{}: {read:?}", ready.name());
                }
                Err(e) => assert!(e.contains("no C compiler"), "{}: {e}", tool.name),
            }
        }
    }

    #[test]
    fn a_clean_run_passes_validation_for_one_and_several_threads_in_every_instruction_set() {
        let mut sets = vec![Isa::Baseline];
        if Isa::here() != Isa::Baseline {
            sets.push(Isa::here());
        }
        for (threads, isa) in [1, 3]
            .into_iter()
            .flat_map(|t| sets.iter().map(move |&i| (t, i)))
        {
            let mut t = StreamTrial::new(10_001, threads).unwrap();
            t.isa = isa;
            let (times, errors) = t.run(&Clock::real(), false);
            assert_eq!(times.len(), NTIMES);
            check(errors, 10_001, expected_values(NTIMES)).unwrap();
            let (ea, eb, ec) = expected_values(NTIMES);
            let (a, b, c) = t.abc();
            assert!(
                a.iter().all(|&x| x == ea)
                    && b.iter().all(|&x| x == eb)
                    && c.iter().all(|&x| x == ec)
            );
        }
    }

    #[test]
    fn a_quick_case_runs_its_five_iterations_and_validates_them() {
        let env = TestEnv::real(0.001);
        let plan = TestEnv::plan(Suite::Quick, 2);
        let options = plan
            .options
            .clone()
            .with(super::super::STREAM_ELEMS, 10_001);
        let plan = plan.with_options(options);
        let case = &Stream.cases(&plan)[1];
        assert_eq!(
            case.key(),
            "mem.stream[array_elems=10001,ntimes=5,threads=2]"
        );
        let mut t = Stream.prepare(case, &env.ctx()).unwrap();
        let v = t.once(&env.clock).unwrap();
        crate::engine::runner::check_values(case, &v).unwrap();
        assert_eq!(t.details().unwrap()["ntimes"], 5);
        // a repetition of five differs from one of ten: the check that
        // passed used the values five iterations give
        assert_ne!(expected_values(5), expected_values(NTIMES));
        let mut trial = StreamTrial::new(1000, 1).unwrap();
        trial.ntimes = 5;
        let (times, errors) = trial.run(&Clock::real(), false);
        assert_eq!(times.len(), 5);
        check(errors, 1000, expected_values(5)).unwrap();
        assert!(trial.abc().0.iter().all(|&x| x == expected_values(5).0));
        // a key that asks for fewer than two iterations is refused
        let mut one = case.clone();
        one.params.insert(NTIMES_KEY.into(), Value::from(1));
        let err = Stream.prepare(&one, &env.ctx()).err().unwrap();
        assert!(err.to_string().contains("at least 2"), "{err}");
    }

    #[test]
    fn no_thread_passes_the_spin_barrier_before_all_arrive() {
        // more threads than this machine's CPUs: waiters must yield
        const THREADS: usize = 5;
        const ROUNDS: usize = 300;
        let barrier = SpinBarrier::new(THREADS);
        let arrivals = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| {
                    for round in 0..ROUNDS {
                        arrivals.fetch_add(1, Ordering::SeqCst);
                        barrier.wait();
                        // everyone has arrived for this round, nobody for the next
                        let seen = arrivals.load(Ordering::SeqCst);
                        assert!(seen >= (round + 1) * THREADS, "{seen} in round {round}");
                        barrier.wait();
                        assert!(arrivals.load(Ordering::SeqCst) <= (round + 2) * THREADS);
                    }
                });
            }
        });
        assert_eq!(arrivals.into_inner(), THREADS * ROUNDS);
    }

    #[test]
    fn the_arrays_lie_as_glibc_lays_page_aligned_ones_a_highest_8_kib_apart() {
        // a length that is no whole number of pages: each array still
        // starts on a page, its length rounded up to one plus 8 KiB past
        // the one below it
        let n = 10_001;
        let mut t = StreamTrial::new(n, 2).unwrap();
        let (a, b, c) = t.abc();
        assert_eq!((a.len(), b.len(), c.len()), (n, n, n));
        let at = |x: &[f64]| x.as_ptr() as usize;
        let step = (n * 8).next_multiple_of(4096) + 8192;
        assert_eq!((at(a) - at(b), at(b) - at(c)), (step, step));
        assert!([at(a), at(b), at(c)].iter().all(|p| p % 4096 == 0));
        let (_, errors) = t.run(&Clock::real(), false);
        check(errors, n, expected_values(NTIMES)).unwrap();
    }

    #[test]
    fn validation_catches_a_corrupted_array() {
        let mut t = StreamTrial::new(1000, 2).unwrap();
        let (_, errors) = t.run(&Clock::real(), true);
        let err = check(errors, 1000, expected_values(NTIMES)).unwrap_err();
        assert!(err.contains("array a"), "{err}");
    }

    #[test]
    fn suite_sizes_meet_the_cache_rule_for_common_caches() {
        // 32 MiB (a Zen 4 EPYC guest) in quick, 128 MiB in standard and full
        assert_eq!(size_note(suite_elems(Suite::Quick), Some(32 << 20)), None);
        for suite in [Suite::Standard, Suite::Full] {
            assert_eq!(size_note(suite_elems(suite), Some(128 << 20)), None);
        }
    }

    #[test]
    fn a_large_cache_is_noted_with_the_size_that_meets_the_rule() {
        // a 260 MiB Xeon L3: 4x = 1040 MiB = 136 314 880 doubles
        let note = size_note(STANDARD_ELEMS, Some(260 << 20)).unwrap();
        assert!(note.contains("smaller than 4x the 260 MiB"), "{note}");
        assert!(note.contains("--stream-elems 136314880"), "{note}");
        let note = size_note(1000, None).unwrap();
        assert!(note.contains("unknown") && note.contains("floor"), "{note}");
    }

    #[test]
    fn blocks_cover_the_range_without_overlap() {
        let b = blocks(10, 3);
        assert_eq!(b, vec![0..4, 4..7, 7..10]);
        assert_eq!(blocks(2, 4).iter().map(|r| r.len()).sum::<usize>(), 2);
    }

    #[test]
    fn bytes_are_counted_per_kernel() {
        // one iteration pair with known times: 1 ms everywhere
        let times = vec![[0.002; 4], [0.001; 4]];
        let f = figures(&times, 1_000_000);
        assert_eq!(f[0], 24.0e6 / 1e6 / 0.001); // triad: 24 B/elem
        assert_eq!(f[1], 16.0e6 / 1e6 / 0.001); // copy: 16 B/elem
        assert_eq!(f[2], 16_000.0); // scale
        assert_eq!(f[3], 24_000.0); // add
        assert_eq!(f.len(), 4 + 12);
    }

    #[test]
    fn expected_values_follow_streams_recurrence() {
        // one iteration: c = 1, b = 3, c = 4, a = 3 + 12 = 15
        assert_eq!(expected_values(1), (15.0, 3.0, 4.0));
    }

    #[test]
    fn cases_use_the_suite_size_or_the_users_and_thread_counts() {
        let keys =
            |plan: &Plan| -> Vec<String> { Stream.cases(plan).iter().map(CaseSpec::key).collect() };
        assert_eq!(
            keys(&TestEnv::plan(Suite::Quick, 2)),
            vec![
                "mem.stream[array_elems=16777216,ntimes=5,threads=1]",
                "mem.stream[array_elems=16777216,ntimes=5,threads=2]"
            ]
        );
        assert_eq!(
            keys(&TestEnv::plan(Suite::Standard, 1)),
            vec!["mem.stream[array_elems=67108864,threads=1]"]
        );
        let plan = TestEnv::plan(Suite::Standard, 1);
        let options = plan.options.clone().with(super::super::STREAM_ELEMS, 1000);
        let mine = plan.with_options(options);
        assert_eq!(keys(&mine), vec!["mem.stream[array_elems=1000,threads=1]"]);
    }
}
