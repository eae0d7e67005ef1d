//! Percentile bootstrap confidence interval of the median, seeded.
//!
//! The median is the statistic envbench reports and compares; its sampling
//! distribution has no simple closed form for the skewed, multi-modal timings
//! that benchmarks produce, so it is resampled. The seed is explicit and is
//! stored in the result file, so the same samples and seed give the same CI.
//! See: B. Efron and R. Tibshirani, "An Introduction to the Bootstrap",
//! Chapman & Hall, 1993, ch. 13 (percentile interval).

use super::percentile_of_sorted;
use super::rng::Rng;

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
/// Cost: O(n log n + resamples · n): each resample is counted ([`Ranked`]).
/// `xs` must be non-empty and free of NaN (see [`super::Sample`]).
pub(crate) fn median_ci(xs: &[f64], seed: u64, resamples: usize) -> (f64, f64) {
    let n = xs.len();
    if n > EXACT_ABOVE {
        return median_ci_exact(xs);
    }
    let mut rng = Rng::new(seed);
    let mut medians = Vec::with_capacity(resamples);
    let ranked = Ranked::new(xs);
    let mut counts = Vec::new();
    for _ in 0..resamples.max(1) {
        medians.push(ranked.resampled_median(&mut counts, |n| rng.below(n)));
    }
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    (
        percentile_of_sorted(&medians, tail),
        percentile_of_sorted(&medians, 1.0 - tail),
    )
}

/// A sample made ready for drawing resamples of its median: its values in
/// ascending order, and where each value (in the sample's own order) sits
/// among them. A resample is then counted, not sorted: each draw adds one
/// to its value's place, and the median is read off the running count, in
/// O(n) rather than O(n log n). It is the median a sorted copy of the same
/// draws gives, bit for bit: the same values, averaged the same way.
pub(crate) struct Ranked {
    sorted: Vec<f64>,
    place: Vec<usize>,
}

impl Ranked {
    /// Ranks `xs` (non-empty, free of NaN).
    pub(crate) fn new(xs: &[f64]) -> Ranked {
        let mut order: Vec<usize> = (0..xs.len()).collect();
        order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
        let mut place = vec![0; xs.len()];
        for (at, &i) in order.iter().enumerate() {
            place[i] = at;
        }
        Ranked {
            sorted: order.iter().map(|&i| xs[i]).collect(),
            place,
        }
    }

    /// The median of one resample of as many values as the sample has:
    /// `draw(n)` gives the index (below n, in the sample's own order) of
    /// each draw in turn. `counts` is scratch space, reused between calls.
    pub(crate) fn resampled_median(
        &self,
        counts: &mut Vec<u32>,
        mut draw: impl FnMut(usize) -> usize,
    ) -> f64 {
        let n = self.sorted.len();
        counts.clear();
        counts.resize(n, 0);
        for _ in 0..n {
            counts[self.place[draw(n)]] += 1;
        }
        // the middle draw (n odd) or the two middle ones, 0-based
        let (low, high) = ((n - 1) / 2, n / 2);
        let mut seen = 0;
        let mut below = None;
        for (at, &c) in counts.iter().enumerate() {
            seen += c as usize;
            if below.is_none() && seen > low {
                below = Some(self.sorted[at]);
            }
            if seen > high {
                let above = self.sorted[at];
                return match below {
                    Some(b) if n.is_multiple_of(2) => (b + above) / 2.0,
                    _ => above,
                };
            }
        }
        unreachable!("n draws fill n places")
    }
}

/// Sample sizes above which the interval comes from the resampled
/// median's distribution itself rather than from drawn resamples: 2000
/// resamples of 100 000 values took 2 s per metric, so `show` of a file of
/// 20 such metrics took 40 s. At these sizes the two agree within the
/// Monte-Carlo error of the drawn ones (a rank or two; tested below).
pub const EXACT_ABOVE: usize = 1000;

/// The percentile-bootstrap interval of the median with infinitely many
/// resamples, in O(n log n). A resample's median is at most the k-th
/// smallest value exactly when at least m of its n draws fall among the
/// k smallest, a binomial event with p = k/n (m = (n+1)/2; for even n the
/// two middle order statistics are averaged). Its tail is taken as normal
/// with a continuity correction, which at n > 1000 and p near 1/2 is
/// within a rank of the exact one.
fn median_ci_exact(xs: &[f64]) -> (f64, f64) {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    // the smallest rank k (1-based) whose P(resample's m-th draw ≤ x_(k)) ≥ q
    let rank = |m: usize, q: f64| -> usize {
        let tail = |k: usize| {
            let nf = n as f64;
            let p = k as f64 / nf;
            let sd = (nf * p * (1.0 - p)).sqrt();
            if sd == 0.0 {
                return if nf * p >= m as f64 { 1.0 } else { 0.0 };
            }
            1.0 - super::dist::normal_cdf((m as f64 - 0.5 - nf * p) / sd)
        };
        let (mut lo, mut hi) = (1, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if tail(mid) >= q {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    };
    let at = |q: f64| {
        if n % 2 == 1 {
            sorted[rank(n.div_ceil(2), q) - 1]
        } else {
            (sorted[rank(n / 2, q) - 1] + sorted[rank(n / 2 + 1, q) - 1]) / 2.0
        }
    };
    let tail = (1.0 - CONFIDENCE) / 2.0;
    (at(tail), at(1.0 - tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::median_of_sorted;

    #[test]
    fn a_counted_resample_has_the_median_of_the_sorted_draws() {
        let mut rng = Rng::new(5);
        for n in 1..12 {
            // ties included: values from a handful
            let xs: Vec<f64> = (0..n).map(|_| rng.below(4) as f64 * 1.5).collect();
            let ranked = Ranked::new(&xs);
            let mut counts = Vec::new();
            for seed in 0..50 {
                let (mut a, mut b) = (Rng::new(seed), Rng::new(seed));
                let counted = ranked.resampled_median(&mut counts, |k| a.below(k));
                let mut drawn: Vec<f64> = (0..n).map(|_| xs[b.below(n)]).collect();
                drawn.sort_by(f64::total_cmp);
                assert_eq!(
                    counted.to_bits(),
                    median_of_sorted(&drawn).to_bits(),
                    "{xs:?}"
                );
            }
        }
    }

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
    fn large_samples_get_the_interval_drawn_resamples_approach() {
        // skewed data just above the threshold, odd and even sizes: the
        // closed form's ends sit within a few ranks of 4 000 drawn
        // resamples' (whose own error is about one rank)
        for n in [EXACT_ABOVE + 1, EXACT_ABOVE + 2, 2501] {
            let mut rng = Rng::new(n as u64);
            let xs: Vec<f64> = (0..n).map(|_| (rng.unit_f64() * 3.0).exp()).collect();
            let mut sorted = xs.clone();
            sorted.sort_by(f64::total_cmp);
            let rank = |v: f64| sorted.partition_point(|&x| x < v) as f64;
            let exact = median_ci_exact(&xs);
            // 4 000 drawn resamples, the slow way on purpose
            let mut drawn_rng = Rng::new(7);
            let mut medians: Vec<f64> = (0..4_000)
                .map(|_| {
                    let mut b: Vec<f64> = (0..n).map(|_| xs[drawn_rng.below(n)]).collect();
                    b.sort_by(f64::total_cmp);
                    median_of_sorted(&b)
                })
                .collect();
            medians.sort_by(f64::total_cmp);
            let drawn = (
                percentile_of_sorted(&medians, 0.025),
                percentile_of_sorted(&medians, 0.975),
            );
            let sd_ranks = (n as f64).sqrt() / 2.0;
            for (e, d) in [(exact.0, drawn.0), (exact.1, drawn.1)] {
                assert!(
                    (rank(e) - rank(d)).abs() <= 4.0,
                    "n={n}: exact {exact:?} drawn {drawn:?} ({} against {} of {n}; sd {sd_ranks:.0} ranks)",
                    rank(e),
                    rank(d)
                );
            }
            // and about 1.96 sd of ranks either side of the middle
            let half = (rank(exact.1) - rank(exact.0)) / 2.0;
            assert!((half / sd_ranks - 1.96).abs() < 0.1, "n={n}: {half} ranks");
            assert_eq!(median_ci(&xs, 1, DEFAULT_RESAMPLES), exact);
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
