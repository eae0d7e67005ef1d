//! Percentile bootstrap confidence interval of the median, seeded.
//!
//! The median is the statistic envbench reports and compares; its sampling
//! distribution has no simple closed form for the skewed, multi-modal timings
//! that benchmarks produce, so it is resampled. The seed is explicit and is
//! stored in the result file, so the same samples and seed give the same CI.
//! See: B. Efron and R. Tibshirani, "An Introduction to the Bootstrap",
//! Chapman & Hall, 1993, ch. 13 (percentile interval).

use super::rng::Rng;
use super::{median_of_sorted, percentile_of_sorted};

/// Resamples drawn for one interval: ±0.5 % Monte-Carlo error on the 2.5 %
/// tail at this count is far below benchmark noise, and it costs < 1 ms for
/// 50 samples.
pub const DEFAULT_RESAMPLES: usize = 2000;

/// Two-sided confidence level of every interval envbench reports.
pub const CONFIDENCE: f64 = 0.95;

/// The `CONFIDENCE` percentile-bootstrap interval `(low, high)` of the median
/// of `xs`, from `resamples` resamples seeded by `seed`.
///
/// Invariant: `min(xs) <= low <= high <= max(xs)`, because every resampled
/// median lies between the extremes of the data.
/// Cost: O(resamples · n log n).
/// `xs` must be non-empty and free of NaN (see [`super::Sample`]).
pub fn median_ci(xs: &[f64], seed: u64, resamples: usize) -> (f64, f64) {
    let n = xs.len();
    let mut rng = Rng::new(seed);
    let mut medians = Vec::with_capacity(resamples);
    let mut buf = vec![0.0; n];
    for _ in 0..resamples.max(1) {
        for slot in buf.iter_mut() {
            *slot = xs[rng.below(n)];
        }
        buf.sort_by(f64::total_cmp);
        medians.push(median_of_sorted(&buf));
    }
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    (
        percentile_of_sorted(&medians, tail),
        percentile_of_sorted(&medians, 1.0 - tail),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_gives_same_interval() {
        let xs = [5.0, 7.0, 6.0, 9.0, 5.5, 6.5, 8.0];
        assert_eq!(median_ci(&xs, 11, 500), median_ci(&xs, 11, 500));
    }

    #[test]
    fn interval_lies_within_the_data_for_many_seeds() {
        let mut rng = Rng::new(99);
        for seed in 0..50 {
            let n = 2 + rng.below(30);
            let xs: Vec<f64> = (0..n).map(|_| rng.unit_f64() * 100.0 - 20.0).collect();
            let (lo, hi) = median_ci(&xs, seed, 200);
            let min = xs.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(min <= lo && lo <= hi && hi <= max, "{min} {lo} {hi} {max}");
        }
    }

    #[test]
    fn constant_data_gives_a_zero_width_interval() {
        assert_eq!(median_ci(&[3.0; 8], 1, 100), (3.0, 3.0));
    }

    #[test]
    fn interval_contains_the_median_of_symmetric_data() {
        let xs: Vec<f64> = (1..=41).map(f64::from).collect();
        let (lo, hi) = median_ci(&xs, 5, DEFAULT_RESAMPLES);
        assert!(lo < 21.0 && 21.0 < hi, "{lo} {hi}");
        assert!(hi - lo < 20.0);
    }
}
