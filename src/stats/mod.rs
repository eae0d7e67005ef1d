//! Statistics over repetitions: pure functions of `&[f64]`, no I/O, no clock.
//!
//! [`Sample`] enforces what every statistic here needs (at least two finite
//! points); [`summarize`] computes the [`Summary`] stored beside the raw
//! samples in every result file.

pub mod band;
pub mod bootstrap;
pub mod dist;
pub mod hypothesis;
pub mod levels;
pub mod outliers;
pub mod par;
pub mod pool;
pub mod rng;
pub mod spread;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why a set of values cannot be summarised.
#[derive(Debug, Error, PartialEq)]
pub enum StatsError {
    /// Fewer than two points: no spread, no interval.
    #[error("need at least 2 samples, got {0}")]
    TooFew(usize),
    /// A NaN or infinite value (a benchmark bug or a broken timer).
    #[error("sample {index} is not a finite number ({value})")]
    NotFinite {
        /// Position of the bad value.
        index: usize,
        /// The value itself.
        value: f64,
    },
}

/// At least two finite values: the repetitions of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample(Vec<f64>);

impl Sample {
    /// Checks the invariants.
    ///
    /// # Errors
    /// [`StatsError::TooFew`] for fewer than 2 values, [`StatsError::NotFinite`]
    /// for NaN or ±∞.
    pub fn new(values: Vec<f64>) -> Result<Sample, StatsError> {
        if values.len() < 2 {
            return Err(StatsError::TooFew(values.len()));
        }
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(StatsError::NotFinite { index, value });
        }
        Ok(Sample(values))
    }

    /// The values, in measurement order.
    pub(crate) fn values(&self) -> &[f64] {
        &self.0
    }
}

/// Summary of one metric's repetitions. Every value is in the metric's unit,
/// except `cv` (a fraction) and `n`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of repetitions.
    pub n: usize,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (mean of the two middle values for even n).
    pub median: f64,
    /// Sample standard deviation (n − 1 denominator).
    pub stddev: f64,
    /// Coefficient of variation, stddev / mean (0 when the mean is 0).
    pub cv: f64,
    /// 95th percentile, linear interpolation between closest ranks.
    pub p95: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// Lower end of the 95 % bootstrap interval of the median.
    pub median_ci_low: f64,
    /// Upper end of the 95 % bootstrap interval of the median.
    pub median_ci_high: f64,
    /// Indices (into the raw samples) flagged by the modified z-score rule.
    pub outliers: Vec<usize>,
}

impl Summary {
    /// Half the width of the median's interval relative to the median; ∞ when
    /// the median is 0. The runner stops repeating once this is small enough.
    pub(crate) fn median_ci_relative_halfwidth(&self) -> f64 {
        if self.median == 0.0 {
            return f64::INFINITY;
        }
        (self.median_ci_high - self.median_ci_low) / 2.0 / self.median.abs()
    }
}

/// The summary of `samples`, or None where [`Sample::new`] refuses them
/// (fewer than two values, a NaN): what a result file stores beside its
/// raw samples.
pub(crate) fn summary_of(samples: &[f64], seed: u64) -> Option<Summary> {
    Sample::new(samples.to_vec())
        .ok()
        .map(|s| summarize(&s, seed))
}

/// Summarises a sample; `seed` fixes the bootstrap so the result reproduces.
/// Cost: dominated by the bootstrap, O(2000 · n log n).
pub(crate) fn summarize(sample: &Sample, seed: u64) -> Summary {
    summarize_resampled(sample, seed, bootstrap::DEFAULT_RESAMPLES)
}

/// [`summarize`] with the median's interval from `resamples` bootstrap
/// resamples: fewer for synthetic files whose summaries only the
/// coefficient of variation is read from (`compare` reads the samples).
pub(crate) fn summarize_resampled(sample: &Sample, seed: u64, resamples: usize) -> Summary {
    let xs = sample.values();
    let n = xs.len();
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    // scaled by the largest magnitude, so values near f64::MAX (1e308)
    // neither overflow the sum nor the squares
    let scale = xs
        .iter()
        .fold(0.0f64, |a, x| a.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    let mean_scaled = xs.iter().map(|x| x / scale).sum::<f64>() / n as f64;
    let mean = mean_scaled * scale;
    let var_scaled = xs
        .iter()
        .map(|x| (x / scale - mean_scaled).powi(2))
        .sum::<f64>()
        / (n - 1) as f64;
    let stddev = var_scaled.sqrt() * scale;
    let median = median_of_sorted(&sorted);
    let mut deviations: Vec<f64> = xs.iter().map(|x| (x - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mad = median_of_sorted(&deviations);
    let (median_ci_low, median_ci_high) = bootstrap::median_ci(xs, seed, resamples);
    Summary {
        n,
        min: sorted[0],
        max: sorted[n - 1],
        mean,
        median,
        stddev,
        cv: if mean != 0.0 {
            stddev / mean.abs()
        } else {
            0.0
        },
        p95: percentile_of_sorted(&sorted, 0.95),
        mad,
        median_ci_low,
        median_ci_high,
        outliers: outliers::flag_outliers(xs, median, mad),
    }
}

/// Median of an ascending, non-empty slice.
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of an ascending, non-empty slice, linear
/// interpolation between closest ranks (Hyndman & Fan type 7, numpy's default).
pub(crate) fn percentile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn values_near_the_largest_double_keep_a_finite_spread() {
        let s = summarize(&Sample::new(vec![1e308, 1.5e308, 1.2e308]).unwrap(), 1);
        assert!(
            s.mean.is_finite() && s.stddev.is_finite() && s.cv.is_finite(),
            "{s:?}"
        );
        assert!(
            (s.mean / 1.233_333_333_333_333_3e308 - 1.0).abs() < 1e-12,
            "{}",
            s.mean
        );
        assert!((s.cv - 0.204_05).abs() < 1e-4, "{}", s.cv);
    }

    #[test]
    fn rejects_a_single_sample() {
        assert_eq!(Sample::new(vec![1.0]), Err(StatsError::TooFew(1)));
    }

    #[test]
    fn rejects_nan_sample() {
        assert!(matches!(
            Sample::new(vec![1.0, f64::NAN]),
            Err(StatsError::NotFinite { index: 1, .. })
        ));
    }

    #[test]
    fn summarizes_known_values() {
        // 2 4 4 4 5 5 7 9: mean 5, sample stddev sqrt(32/7), median 4.5.
        let s = Sample::new(vec![2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        let sum = summarize(&s, 1);
        assert_eq!(sum.n, 8);
        assert_eq!((sum.min, sum.max), (2.0, 9.0));
        assert!(close(sum.mean, 5.0));
        assert!(close(sum.median, 4.5));
        assert!(close(sum.stddev, (32.0f64 / 7.0).sqrt()));
        assert!(close(sum.cv, (32.0f64 / 7.0).sqrt() / 5.0));
        // deviations from 4.5: 2.5 .5 .5 .5 .5 .5 2.5 4.5 → MAD 0.5
        assert!(close(sum.mad, 0.5));
        // p95: position 0.95 * 7 = 6.65 → 7 + 0.65 * (9 - 7)
        assert!(close(sum.p95, 8.3));
        assert!(sum.median_ci_low <= sum.median && sum.median <= sum.median_ci_high);
    }

    #[test]
    fn odd_count_median_is_the_middle_value() {
        assert_eq!(median_of_sorted(&[1.0, 3.0, 10.0]), 3.0);
    }

    #[test]
    fn percentile_endpoints_are_min_and_max() {
        let xs = [1.0, 2.0, 3.0];
        assert_eq!(percentile_of_sorted(&xs, 0.0), 1.0);
        assert_eq!(percentile_of_sorted(&xs, 1.0), 3.0);
        assert_eq!(percentile_of_sorted(&xs, 0.5), 2.0);
    }

    #[test]
    fn same_seed_gives_same_summary() {
        let s = Sample::new(vec![1.0, 5.0, 2.0, 8.0, 3.0, 3.5]).unwrap();
        assert_eq!(summarize(&s, 42), summarize(&s, 42));
    }

    #[test]
    fn relative_halfwidth_of_constant_data_is_zero() {
        let s = Sample::new(vec![4.0; 5]).unwrap();
        assert_eq!(summarize(&s, 0).median_ci_relative_halfwidth(), 0.0);
    }
}
