//! `cpu.int` and `cpu.float`: single-thread integer and floating-point
//! loops in the spirit of Dhrystone and Whetstone (UnixBench's first two
//! tests, which seed 004 ran under WSL 1 and WSL 2 and found equal: user-mode
//! CPU work does not care about the environment, which makes these the
//! control group of a comparison).
//!
//! They are not Dhrystone or Whetstone and report loops per second, not
//! DMIPS or MWIPS. Every loop folds its results into a checksum that is
//! returned through `black_box` (so the compiler cannot drop the work) and
//! checked against the checksum of the same loop count from preparation (so
//! a wrong result is caught, never timed).

use super::super::{calibrate, Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::price::{Cost, Op, Price};
use crate::units::{Direction, Unit};
use std::collections::BTreeMap;
use std::hint::black_box;

/// Dhrystone's two 30-character strings, compared every loop.
const STR_1: &[u8; 30] = b"DHRYSTONE PROGRAM, 1'ST STRING";
const STR_2: &[u8; 30] = b"DHRYSTONE PROGRAM, 2'ND STRING";

/// Integer, string, branch and array work, `loops` times; the checksum.
pub(crate) fn int_loops(loops: u64) -> u64 {
    let mut sum: u64 = 0;
    let mut buf = [0u8; 30];
    let mut arr1 = [0i64; 50];
    let mut arr2 = [[0i64; 50]; 50];
    let mut int_glob: i64 = 0;
    for i in 0..loops {
        let i = black_box(i);
        // integer arithmetic with a division, as Dhrystone's Proc_7/Proc_8
        let a = (i % 7) as i64 + 3;
        let b = a * 5 - (i & 15) as i64;
        let c = b / a + b % a;
        // branches on data
        int_glob = match i % 4 {
            0 => int_glob + c,
            1 if c > 4 => int_glob - a,
            1 => int_glob ^ b,
            2 => int_glob.wrapping_mul(3) >> 1,
            _ => int_glob + 1,
        };
        // string copy and compare (Dhrystone's strcpy/strcmp)
        buf.copy_from_slice(STR_1);
        let pos = (i % 30) as usize;
        buf[pos] = b'A' + (i % 26) as u8;
        let order = buf.as_slice().cmp(STR_2.as_slice()) as i64;
        // array accesses (Dhrystone's Proc_8)
        let k = (i % 48) as usize;
        arr1[k] = c;
        arr1[k + 1] = arr1[k] + order;
        arr2[k][k + 1] = arr2[k][k + 1].wrapping_add(arr1[k + 1]);
        arr2[k + 2][k] = arr1[k] ^ int_glob;
        sum = sum
            .wrapping_mul(31)
            .wrapping_add((arr2[k][k + 1] ^ arr2[k + 2][k]) as u64);
    }
    sum
}

/// Iterations of the floating-point loop run from the same starting
/// values: a loop's cost must not depend on how many loops a repetition
/// runs. Whetstone's values stay near where they start over its short
/// module loops, and within 1 000 iterations x moves from 0.5 to 0.47;
/// run on, they drift towards 0 over hundreds of thousands of iterations
/// (x is 0.003 at 100 000, 10^-7 at 300 000), where sin, cos and atan
/// take other paths. Run as one stretch, the loop's rate depended on the
/// count a repetition was calibrated to: 13 % apart between quick's and
/// standard's repetitions (docs/benchmarks.md, "Case keys and sizes per
/// suite"), so a slower environment read slower still, and a noisy
/// calibration moved the figure.
pub const FLOAT_BLOCK: u64 = 1_000;

/// Whetstone's modules 1 (simple identifiers), 7 (trigonometry) and 11
/// (standard functions), `loops` times, in blocks of [`FLOAT_BLOCK`] from
/// the same starting values; the checksum.
pub(crate) fn float_loops(loops: u64) -> f64 {
    let mut sum = 0.0;
    let mut left = loops;
    while left > 0 {
        let n = left.min(FLOAT_BLOCK);
        sum += float_block(n);
        left -= n;
    }
    sum
}

/// `loops` iterations of [`float_loops`]'s body from its starting values.
fn float_block(loops: u64) -> f64 {
    let t = 0.499975;
    let t1 = 0.50025;
    let t2 = 2.0;
    let (mut x1, mut x2, mut x3, mut x4) = (1.0f64, -1.0f64, -1.0f64, -1.0f64);
    let (mut x, mut y, mut z) = (0.5f64, 0.5f64, 0.75f64);
    let mut sum = 0.0;
    for _ in 0..loops {
        x1 = (x1 + x2 + x3 - x4) * t;
        x2 = (x1 + x2 - x3 + x4) * t;
        x3 = (x1 - x2 + x3 + x4) * t;
        x4 = (-x1 + x2 + x3 + x4) * t;
        x = t * (t2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        y = t * (t2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        z = (z.ln() / t1).exp().sqrt();
        sum += x1 + x2 + x3 + x4 + x + y + z;
        black_box(&mut z);
    }
    sum
}

fn spec(bench: &str) -> CaseSpec {
    CaseSpec {
        bench: bench.into(),
        params: BTreeMap::new(),
        metrics: vec![MetricSpec {
            name: "loops_per_sec",
            unit: Unit::OpsPerSec,
            direction: Direction::HigherIsBetter,
        }],
    }
}

/// The `cpu.int` bench.
#[derive(Debug)]
pub struct IntLoop;

/// The `cpu.float` bench.
#[derive(Debug)]
pub struct FloatLoop;

impl Bench for IntLoop {
    fn id(&self) -> &'static str {
        ids::CPU_INT
    }
    fn prices(&self) -> &'static [Price] {
        // a workload's computation is taken to slow as integer loops do
        &[Price {
            op: Op::Compute,
            metric: "loops_per_sec",
            params: &[],
            on_dir: false,
            cost: Cost::PerSecond,
            names: 0,
        }]
    }
    fn topic(&self) -> &'static str {
        "integer loops"
    }
    fn summary(&self) -> &'static str {
        "Dhrystone-style integer, string, branch and array loop, one thread; loops/s"
    }
    fn reproduces(&self) -> &'static str {
        "seed 004 (UnixBench Dhrystone 2, WSL 1 vs WSL 2)"
    }
    fn cases(&self, _plan: &Plan) -> Vec<CaseSpec> {
        vec![spec(ids::CPU_INT)]
    }
    fn one_cpu(&self, _case: &CaseSpec) -> bool {
        true
    }

    fn prepare(&self, _case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let loops = calibrate(ctx, |n| {
            black_box(int_loops(n));
            Ok(())
        })?;
        Ok(Box::new(LoopTrial {
            loops,
            expected: Checksum::Int(int_loops(loops)),
        }))
    }
}

impl Bench for FloatLoop {
    fn id(&self) -> &'static str {
        ids::CPU_FLOAT
    }
    fn topic(&self) -> &'static str {
        "floating-point loops"
    }
    fn summary(&self) -> &'static str {
        "Whetstone-style floating-point loop (arithmetic, sin/cos/atan, exp/ln/sqrt), one thread; loops/s"
    }
    fn reproduces(&self) -> &'static str {
        "seed 004 (UnixBench Whetstone, WSL 1 vs WSL 2)"
    }
    fn cases(&self, _plan: &Plan) -> Vec<CaseSpec> {
        // the block is in the key: results of the loop run as one stretch
        // (recorded until 2026-12-07, key `cpu.float`) never match these
        let mut case = spec(ids::CPU_FLOAT);
        case.params.insert("block".into(), FLOAT_BLOCK.into());
        vec![case]
    }
    fn one_cpu(&self, _case: &CaseSpec) -> bool {
        true
    }

    fn prepare(&self, _case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let loops = calibrate(ctx, |n| {
            black_box(float_loops(n));
            Ok(())
        })?;
        Ok(Box::new(LoopTrial {
            loops,
            expected: Checksum::Float(float_loops(loops).to_bits()),
        }))
    }
}

/// The checksum a loop count must produce.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Checksum {
    Int(u64),
    Float(u64),
}

impl Checksum {
    fn compute(self, loops: u64) -> Checksum {
        match self {
            Checksum::Int(_) => Checksum::Int(int_loops(black_box(loops))),
            Checksum::Float(_) => Checksum::Float(float_loops(black_box(loops)).to_bits()),
        }
    }
}

struct LoopTrial {
    loops: u64,
    expected: Checksum,
}

impl Trial for LoopTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t0 = clock.now();
        let got = black_box(self.expected.compute(self.loops));
        let secs = clock.now().saturating_sub(t0).as_secs_f64();
        if got != self.expected {
            return Err(BenchError::Invalid(format!(
                "checksum {got:?} differs from {:?} for the same {} loops (a computation error)",
                self.expected, self.loops
            )));
        }
        Ok(vec![self.loops as f64 / secs])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_checksum_is_stable() {
        // Golden value: changing the workload changes what results mean, so
        // it must be a deliberate, versioned change.
        assert_eq!(int_loops(1000), int_loops(1000));
        assert_eq!(int_loops(1000), INT_GOLDEN_1000);
        assert_ne!(int_loops(1000), int_loops(1001));
    }

    #[test]
    fn float_checksum_is_stable_and_finite() {
        let v = float_loops(1000);
        assert!(v.is_finite());
        assert!(
            (v - FLOAT_GOLDEN_1000).abs() < 1e-9 * FLOAT_GOLDEN_1000.abs(),
            "{v}"
        );
    }

    #[test]
    fn float_loops_repeat_one_block_so_each_loop_does_the_same_work() {
        // every block starts from the same values: two blocks sum to
        // twice one, exactly, and a part block is the block's beginning
        let one = float_loops(FLOAT_BLOCK);
        assert_eq!(
            float_loops(2 * FLOAT_BLOCK).to_bits(),
            (one + one).to_bits()
        );
        let part = float_loops(FLOAT_BLOCK + 10);
        assert_eq!(part.to_bits(), (one + float_loops(10)).to_bits());
        // as one stretch the values would have moved on: the second
        // thousand differs from the first
        assert_ne!(float_block(2 * FLOAT_BLOCK) - float_block(FLOAT_BLOCK), one);
    }

    #[test]
    fn a_wrong_checksum_makes_the_case_invalid() {
        let mut t = LoopTrial {
            loops: 100,
            expected: Checksum::Int(int_loops(100) ^ 1),
        };
        assert!(matches!(
            t.once(&Clock::real()),
            Err(BenchError::Invalid(_))
        ));
        let mut t = LoopTrial {
            loops: 100,
            expected: Checksum::Float(float_loops(100).to_bits()),
        };
        assert!(t.once(&Clock::real()).unwrap()[0] > 0.0);
    }

    const INT_GOLDEN_1000: u64 = 634_484_019_451_565_075;
    const FLOAT_GOLDEN_1000: f64 = -568.630_388_327_556_4;
}
