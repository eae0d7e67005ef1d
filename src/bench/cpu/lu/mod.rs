//! `cpu.lu`: dense LU factorisation with partial pivoting and solve of
//! Ax = b, the Linpack/HPL measurement (seed 000's SA-HPL runs at n = 2000,
//! 4000, 8000 with 1-16 threads; seed 002's classic n = 100 Linpack).
//!
//! On one thread the factorisation and solve are faer's recursive LU; on
//! more, a blocked LU with a look-ahead of one panel ([`lookahead`]), HPL's
//! schedule, built from faer's kernels. Both run in a rayon pool of exactly
//! the case's thread count. The matrix is seeded random in [-0.5, 0.5) like
//! HPL's, generated and copied outside the timed region, and every solve is
//! checked with HPL's scaled residual; a failed check makes the case invalid.
//! See: HPL `testing/ptest/HPL_pdtest.c` for the residual and the flop count.

use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::{CaseResult, Derived};
use crate::stats::rng::Rng;
use crate::units::{Direction, Unit};
use crate::view::{Grid, GridRows, Lines, Scale, View, ViewKind, YValue};
use dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::{factor, solve};
use faer::{Mat, Par};
use lookahead::Blocked;
use serde_json::Value;
use std::collections::BTreeMap;

mod hpcc;
pub mod lookahead;

/// HPL's acceptance threshold for the scaled residual.
pub const RESIDUAL_THRESHOLD: f64 = 16.0;

/// The classic Linpack size (seed 002 ran Linpack 100 in 2001).
const CLASSIC_N: usize = 100;

/// The `cpu.lu` bench.
#[derive(Debug)]
pub struct Lu;

/// Floating-point operations HPL counts for one solve of size n.
pub(crate) fn flops(n: usize) -> f64 {
    let n = n as f64;
    2.0 / 3.0 * n * n * n + 2.0 * n * n
}

fn sizes(suite: Suite) -> &'static [usize] {
    match suite {
        Suite::Quick => &[1000],
        Suite::Standard => &[2000, 4000],
        Suite::Full => &[2000, 4000, 8000],
    }
}

fn case(n: usize, threads: usize) -> CaseSpec {
    CaseSpec {
        bench: Lu.id().into(),
        params: BTreeMap::from([
            ("n".to_string(), Value::from(n)),
            ("threads".to_string(), Value::from(threads)),
        ]),
        metrics: vec![
            MetricSpec {
                name: "gflops",
                unit: Unit::Gflops,
                direction: Direction::HigherIsBetter,
            },
            MetricSpec {
                name: "time",
                unit: Unit::Seconds,
                direction: Direction::LowerIsBetter,
            },
        ],
    }
}

impl Bench for Lu {
    /// A kept pristine and a working copy, b and x, of f64.
    fn memory_bytes(&self, case: &CaseSpec) -> u64 {
        let n = case.count("n").unwrap_or(0);
        (2 * n * n + 4 * n) * 8
    }

    fn id(&self) -> &'static str {
        ids::CPU_LU
    }
    fn topic(&self) -> &'static str {
        "LU factorisation"
    }
    fn summary(&self) -> &'static str {
        "dense LU with partial pivoting + solve of Ax=b (faer; from 2 threads HPL's look-ahead), GFLOPS = (2/3 n^3 + 2 n^2)/t; HPL residual check"
    }
    fn reproduces(&self) -> &'static str {
        "seed 000 (SA-HPL n=2000/4000/8000, 1-16 threads), seed 002 (Linpack n=100)"
    }
    /// hpcc's HPL on OpenBLAS at the same n and threads, held to ±15 %
    /// ([`hpcc`]).
    fn references(&self) -> Vec<crate::bench::reference::Reference> {
        hpcc::references()
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let mut cases = Vec::new();
        if plan.suite == Suite::Full {
            cases.push(case(CLASSIC_N, 1));
        }
        for &n in sizes(plan.suite) {
            for t in plan.thread_counts() {
                cases.push(case(n, t));
            }
        }
        cases
    }
    fn views(&self) -> Vec<View> {
        let by_threads = |title, y_label, y| View {
            title,
            kind: ViewKind::Lines(Lines {
                metric: "gflops",
                y_label,
                y,
                y_scale: Scale::Linear,
                x: "threads",
                x_label: "threads",
                x_scale: Scale::Linear,
                by: &["n"],
            }),
        };
        vec![
            by_threads("GFLOPS by threads", "rate", YValue::Metric),
            by_threads(
                "speed-up T1/Tn by threads",
                "speed-up over 1 thread",
                YValue::SpeedupOverX(1.0),
            ),
            View {
                title: "GFLOPS against the baseline by matrix order and threads",
                kind: ViewKind::Grid(Grid {
                    rows: GridRows::Param {
                        name: "n",
                        metric: Some("gflops"),
                    },
                    columns: "threads",
                }),
            },
        ]
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let (n, threads) = (case.count_usize("n")?, case.count_usize("threads")?);
        ctx.require_memory(self.memory_bytes(case))?;
        let (a, b) = random_system(n, ctx.seed ^ n as u64);
        Ok(Box::new(LuTrial::new(a, b, threads)?))
    }
    fn derive(&self, cases: &[&CaseResult]) -> Vec<Derived> {
        derive_scaling(cases)
    }
}

/// A seeded random n×n matrix and n-vector with entries in [-0.5, 0.5).
pub(crate) fn random_system(n: usize, seed: u64) -> (Mat<f64>, Mat<f64>) {
    let mut rng = Rng::new(seed);
    let values: Vec<f64> = (0..n * n + n).map(|_| rng.unit_f64() - 0.5).collect();
    let a = Mat::from_fn(n, n, |i, j| values[j * n + i]);
    let b = Mat::from_fn(n, 1, |i, _| values[n * n + i]);
    (a, b)
}

/// How the system is factored, with the workspace each way needs.
enum Solver {
    /// faer's recursive LU, on one thread: nothing to overlap there, and
    /// faster than the blocked LU (about 50 against 46 GFLOPS at n = 4000).
    Recursive {
        perm: Vec<usize>,
        perm_inv: Vec<usize>,
        scratch: MemBuffer,
    },
    /// The look-ahead LU, from two threads on.
    LookAhead(Blocked),
}

/// One prepared system, solved again every repetition.
pub struct LuTrial {
    a: Mat<f64>,
    b: Mat<f64>,
    work: Mat<f64>,
    x: Mat<f64>,
    threads: usize,
    pool: rayon::ThreadPool,
    solver: Solver,
    a_norm_inf: f64,
    b_norm_inf: f64,
    worst_residual: f64,
}

impl LuTrial {
    /// Prepares the solve of `a`·x = `b` on exactly `threads` threads.
    ///
    /// # Errors
    /// [`BenchError::Failed`] if the thread pool cannot be created.
    pub fn new(a: Mat<f64>, b: Mat<f64>, threads: usize) -> Result<LuTrial, BenchError> {
        let n = a.nrows();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("envbench-lu-{i}"))
            .build()
            .map_err(|e| BenchError::Failed(format!("cannot start {threads} threads: {e}")))?;
        let solver = if threads > 1 {
            Solver::LookAhead(Blocked::new(n, lookahead::BLOCK))
        } else {
            Solver::Recursive {
                perm: vec![0; n],
                perm_inv: vec![0; n],
                scratch: MemBuffer::new(
                    factor::lu_in_place_scratch::<usize, f64>(n, n, Par::Seq, Default::default())
                        .or(solve::solve_in_place_scratch::<usize, f64>(n, 1, Par::Seq)),
                ),
            }
        };
        let a_norm_inf = (0..n)
            .map(|i| (0..n).map(|j| a[(i, j)].abs()).sum::<f64>())
            .fold(0.0, f64::max);
        let b_norm_inf = b.col_as_slice(0).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        Ok(LuTrial {
            work: Mat::zeros(n, n),
            x: Mat::zeros(n, 1),
            a,
            b,
            threads,
            pool,
            solver,
            a_norm_inf,
            b_norm_inf,
            worst_residual: 0.0,
        })
    }

    /// Factorises the working copy and solves for x, on the pool.
    fn factor_and_solve(&mut self) {
        let LuTrial {
            work,
            x,
            solver,
            pool,
            threads,
            ..
        } = self;
        let threads = *threads;
        pool.install(|| match solver {
            Solver::LookAhead(blocked) => {
                blocked.factor(work.as_mut(), threads);
                blocked.solve(work.as_ref(), x.as_mut(), Par::rayon(threads));
            }
            Solver::Recursive {
                perm,
                perm_inv,
                scratch,
            } => {
                let (_, row_perm) = factor::lu_in_place(
                    work.as_mut(),
                    perm,
                    perm_inv,
                    Par::Seq,
                    MemStack::new(scratch),
                    Default::default(),
                );
                solve::solve_in_place(
                    work.as_ref(),
                    work.as_ref(),
                    row_perm,
                    x.as_mut(),
                    Par::Seq,
                    MemStack::new(scratch),
                );
            }
        });
    }

    /// How the factorisation runs, for the result's details.
    fn method(&self) -> String {
        match &self.solver {
            Solver::LookAhead(b) => format!("blocked, look-ahead of one panel, nb = {}", b.width()),
            Solver::Recursive { .. } => "recursive (faer)".into(),
        }
    }

    /// HPL's scaled residual ‖Ax−b‖∞ / (ε·(‖A‖∞·‖x‖∞ + ‖b‖∞)·n) of the current x.
    pub(crate) fn scaled_residual(&self) -> f64 {
        let n = self.a.nrows();
        let mut r: Vec<f64> = self.b.col_as_slice(0).iter().map(|v| -v).collect();
        let x = self.x.col_as_slice(0);
        for (j, &xj) in x.iter().enumerate() {
            for (ri, aij) in r.iter_mut().zip(self.a.col_as_slice(j)) {
                *ri += aij * xj;
            }
        }
        let r_inf = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let x_inf = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let denom = f64::EPSILON * (self.a_norm_inf * x_inf + self.b_norm_inf) * n as f64;
        if x.iter().any(|v| !v.is_finite()) {
            return f64::INFINITY;
        }
        r_inf / denom
    }
}

impl Trial for LuTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        self.work.copy_from(&self.a);
        self.x.copy_from(&self.b);
        let t0 = clock.now();
        self.factor_and_solve();
        let secs = clock.now().saturating_sub(t0).as_secs_f64();
        let residual = self.scaled_residual();
        self.worst_residual = self.worst_residual.max(residual);
        // NaN (a singular matrix) fails this check too.
        if residual.is_nan() || residual >= RESIDUAL_THRESHOLD {
            return Err(BenchError::Invalid(format!(
                "HPL scaled residual {residual:.3e} is not below {RESIDUAL_THRESHOLD} (singular or ill-conditioned matrix, or a computation error)"
            )));
        }
        Ok(vec![flops(self.a.nrows()) / secs / 1e9, secs])
    }

    fn details(&mut self) -> Option<Value> {
        Some(serde_json::json!({
            "worst_scaled_residual": self.worst_residual,
            "residual_threshold": RESIDUAL_THRESHOLD,
            "method": self.method(),
            "kernels": kernels(),
        }))
    }
}

/// The vector instructions of the matrix products that do most of LU's
/// work at the sizes measured: faer 0.24 (its `linalg::matmul`) calls
/// private-gemm-x86's AVX-512 kernels where the CPU has avx512f, its AVX2
/// ones where it has avx2 and fma, and its portable gemm otherwise.
/// Recorded because the same CPU model shows AVX-512 to one guest and not
/// to another, and LU's figure follows: on the AMD Zen 5 VM (2026-11-30)
/// one thread's cpu.lu read about 86 GFLOPS, above the 65.6 that one
/// core's AVX2 FMAs reach there at most.
fn kernels() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "avx512";
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return "avx2+fma";
        }
    }
    "portable"
}

/// Speed-up T1/Tn and parallel efficiency speed-up/n for every size with a
/// one-thread case, from median times.
fn derive_scaling(cases: &[&CaseResult]) -> Vec<Derived> {
    let median_time = |c: &CaseResult| {
        c.metrics
            .iter()
            .find(|m| m.name == "time")
            .and_then(|m| m.summary.as_ref())
            .map(|s| s.median)
    };
    let p = |c: &CaseResult, k: &str| c.params.get(k).and_then(Value::as_u64);
    let mut out = Vec::new();
    for c in cases {
        let (Some(n), Some(t), Some(tn)) = (p(c, "n"), p(c, "threads"), median_time(c)) else {
            continue;
        };
        let Some(t1) = cases
            .iter()
            .find(|o| p(o, "n") == Some(n) && p(o, "threads") == Some(1))
            .and_then(|o| median_time(o))
        else {
            continue;
        };
        let speedup = t1 / tn;
        let note = format!("median time with 1 thread / median time with {t} threads, n = {n}");
        out.push(Derived {
            key: c.key.clone(),
            name: "speedup".into(),
            unit: Unit::Ratio,
            value: speedup,
            note: note.clone(),
        });
        out.push(Derived {
            key: c.key.clone(),
            name: "parallel_efficiency".into(),
            unit: Unit::Ratio,
            value: speedup / t as f64,
            note: format!("speedup / threads; {note}"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{Bench, TestEnv};

    fn solve(n: usize, threads: usize, seed: u64) -> LuTrial {
        let (a, b) = random_system(n, seed);
        let mut t = LuTrial::new(a, b, threads).unwrap();
        t.once(&Clock::real()).unwrap();
        t
    }

    #[test]
    fn residual_is_below_the_hpl_threshold_for_several_sizes_and_threads() {
        // 400 and 500 on two threads run the look-ahead over 3 panels of 192
        for (n, threads, seed) in [
            (50, 1, 1),
            (200, 2, 2),
            (333, 1, 3),
            (400, 2, 4),
            (500, 2, 5),
        ] {
            let mut t = solve(n, threads, seed);
            let r = t.scaled_residual();
            assert!(r < RESIDUAL_THRESHOLD, "n={n} threads={threads}: {r}");
            // a second solve reuses the workspace
            t.once(&Clock::real()).unwrap();
            let r = t.scaled_residual();
            assert!(
                r < RESIDUAL_THRESHOLD,
                "again, n={n} threads={threads}: {r}"
            );
        }
    }

    #[test]
    fn the_details_name_the_kernels_this_cpu_runs() {
        let mut t = solve(50, 1, 1);
        let d = t.details().unwrap();
        let k = d["kernels"].as_str().unwrap();
        assert_eq!(k, kernels());
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            k == "avx512",
            std::arch::is_x86_feature_detected!("avx512f"),
            "{k}"
        );
        #[cfg(not(target_arch = "x86_64"))]
        assert_eq!(k, "portable");
    }

    #[test]
    fn the_solution_satisfies_a_known_system() {
        // A = [[4, 3], [6, 3]], b = [10, 12] → x = [1, 2]
        let a = Mat::from_fn(2, 2, |i, j| [[4.0, 3.0], [6.0, 3.0]][i][j]);
        let b = Mat::from_fn(2, 1, |i, _| [10.0, 12.0][i]);
        let mut t = LuTrial::new(a, b, 1).unwrap();
        t.once(&Clock::real()).unwrap();
        assert!((t.x[(0, 0)] - 1.0).abs() < 1e-12 && (t.x[(1, 0)] - 2.0).abs() < 1e-12);
    }

    #[test]
    fn singular_matrix_is_invalid_not_a_number() {
        let n = 40;
        let (mut a, b) = random_system(n, 9);
        for i in 0..n {
            a[(i, 7)] = 0.0; // a zero column: exactly singular
        }
        for threads in [1, 2] {
            let mut t = LuTrial::new(a.clone(), b.clone(), threads).unwrap();
            assert!(
                matches!(t.once(&Clock::real()), Err(BenchError::Invalid(_))),
                "{threads} threads"
            );
        }
    }

    #[test]
    fn a_matrix_singular_in_a_later_panel_is_invalid_on_two_threads() {
        // a zero column 300: the second panel of 192 meets an exactly zero pivot
        let n = 420;
        let (mut a, b) = random_system(n, 10);
        for i in 0..n {
            a[(i, 300)] = 0.0;
        }
        let mut t = LuTrial::new(a, b, 2).unwrap();
        assert_eq!(t.method(), "blocked, look-ahead of one panel, nb = 192");
        assert!(matches!(
            t.once(&Clock::real()),
            Err(BenchError::Invalid(_))
        ));
    }

    #[test]
    fn same_seed_gives_the_same_matrix() {
        assert_eq!(random_system(5, 3).0, random_system(5, 3).0);
        assert_ne!(random_system(5, 3).0, random_system(5, 4).0);
    }

    #[test]
    fn flop_count_follows_hpl() {
        assert_eq!(flops(3), 2.0 / 3.0 * 27.0 + 18.0);
    }

    #[test]
    fn cases_cover_sizes_and_threads_per_suite() {
        let keys = |s| {
            Lu.cases(&TestEnv::plan(s, 2))
                .iter()
                .map(CaseSpec::key)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(Suite::Quick),
            vec!["cpu.lu[n=1000,threads=1]", "cpu.lu[n=1000,threads=2]"]
        );
        let full = keys(Suite::Full);
        assert_eq!(full[0], "cpu.lu[n=100,threads=1]");
        assert!(full.contains(&"cpu.lu[n=8000,threads=2]".to_string()));
    }

    #[test]
    fn too_large_a_matrix_is_skipped_with_the_reason() {
        let env = TestEnv::fake();
        let mut ctx = env.ctx();
        ctx.mem_available_bytes = Some(1 << 20);
        match Lu.prepare(&case(1000, 1), &ctx) {
            Err(BenchError::Unsupported(r)) => assert!(r.contains("MiB"), "{r}"),
            other => panic!("expected a skip, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn speedup_and_efficiency_come_from_median_times() {
        use crate::results::{CaseStatus, MetricResult};
        use crate::stats::{summarize, Sample};
        let result = |threads: u64, time: f64| CaseResult {
            key: format!("cpu.lu[n=10,threads={threads}]"),
            bench: "cpu.lu".into(),
            params: BTreeMap::from([
                ("n".into(), Value::from(10)),
                ("threads".into(), Value::from(threads)),
            ]),
            status: CaseStatus::Ok,
            reason: None,
            warmup_reps: 0,
            stop_reason: "max_reps".into(),
            started_utc: String::new(),
            duration_secs: 0.0,
            rounds: vec![],
            sample_rounds: vec![],
            sample_times_secs: vec![],
            metrics: vec![MetricResult {
                name: "time".into(),
                unit: Unit::Seconds,
                direction: Direction::LowerIsBetter,
                samples: vec![time, time],
                summary: Some(summarize(&Sample::new(vec![time, time]).unwrap(), 1)),
            }],
            anomalies: vec![],
            notes: vec![],
            details: None,
            telemetry: None,
            suspect: vec![],
            signals: vec![],
            assumptions: vec![],
        };
        let (one, two) = (result(1, 4.0), result(2, 2.5));
        let d = derive_scaling(&[&one, &two]);
        let get = |key: &str, name: &str| {
            d.iter()
                .find(|x| x.key == key && x.name == name)
                .unwrap()
                .value
        };
        assert_eq!(get("cpu.lu[n=10,threads=2]", "speedup"), 1.6);
        assert_eq!(get("cpu.lu[n=10,threads=2]", "parallel_efficiency"), 0.8);
        assert_eq!(get("cpu.lu[n=10,threads=1]", "speedup"), 1.0);
    }
}
