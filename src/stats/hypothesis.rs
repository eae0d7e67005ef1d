//! Tests for comparing two sets of repetitions: the two-sided Mann-Whitney
//! U test, Benjamini-Hochberg false-discovery-rate control, and a seeded
//! bootstrap interval of the ratio of medians.
//! See: H. Mann and D. Whitney (1947); Y. Benjamini and Y. Hochberg,
//! "Controlling the False Discovery Rate", JRSS B 57 (1995).

use super::median_of_sorted;
use super::percentile_of_sorted;
use super::rng::Rng;

/// Complementary error function, fractional error below 1.2e-7
/// (Chebyshev fit; Press et al., Numerical Recipes, 2nd ed., §6.2).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Two-sided p-value of the Mann-Whitney U test of `a` against `b`, by the
/// normal approximation with tie correction and continuity correction.
/// 1.0 when either side is empty or every value is tied.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let mut all: Vec<(f64, usize)> = a
        .iter()
        .map(|&x| (x, 0))
        .chain(b.iter().map(|&x| (x, 1)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut rank_sum_a = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let avg_rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        rank_sum_a += all[i..=j].iter().filter(|(_, g)| *g == 0).count() as f64 * avg_rank;
        i = j + 1;
    }
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u = rank_sum_a - n1f * (n1f + 1.0) / 2.0;
    let mean = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let diff = (u - mean).abs() - 0.5; // continuity correction
    if diff <= 0.0 {
        return 1.0;
    }
    erfc(diff / var.sqrt() / std::f64::consts::SQRT_2).min(1.0)
}

/// Benjamini-Hochberg adjusted p-values (same order as `p`): reject where
/// the adjusted value is below the target false discovery rate.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![1.0; m];
    let mut running = 1.0f64;
    for (k, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (k + 1) as f64);
        adjusted[i] = running.min(1.0);
    }
    adjusted
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    median_of_sorted(xs)
}

/// Ratio of medians `other / base` and its 95 % percentile-bootstrap
/// interval, resampling each side independently; `seed` fixes the result.
/// Both sides must be non-empty with a non-zero base median.
pub fn ratio_of_medians_ci(
    base: &[f64],
    other: &[f64],
    seed: u64,
    resamples: usize,
) -> (f64, f64, f64) {
    let point = median(&mut other.to_vec()) / median(&mut base.to_vec());
    let mut rng = Rng::new(seed);
    let (mut bb, mut ob) = (vec![0.0; base.len()], vec![0.0; other.len()]);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        bb.iter_mut().for_each(|s| *s = base[rng.below(base.len())]);
        ob.iter_mut()
            .for_each(|s| *s = other[rng.below(other.len())]);
        let r = median(&mut ob) / median(&mut bb);
        if r.is_finite() {
            ratios.push(r);
        }
    }
    if ratios.is_empty() {
        return (point, point, point);
    }
    ratios.sort_by(f64::total_cmp);
    (
        point,
        percentile_of_sorted(&ratios, 0.025),
        percentile_of_sorted(&ratios, 0.975),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
        assert!(erfc(6.0) < 1e-15);
    }

    #[test]
    fn mann_whitney_separates_disjoint_samples() {
        let a: Vec<f64> = (0..10).map(f64::from).collect();
        let b: Vec<f64> = (20..30).map(f64::from).collect();
        // U = 0, n1 = n2 = 10: z = (50 - 0.5) / sqrt(175) = 3.742 → p ≈ 1.83e-4
        let p = mann_whitney_p(&a, &b);
        assert!((p - 1.83e-4).abs() < 1e-5, "{p}");
        assert_eq!(mann_whitney_p(&a, &b), mann_whitney_p(&b, &a));
    }

    #[test]
    fn mann_whitney_of_identical_samples_is_not_significant() {
        let a = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(mann_whitney_p(&a, &a), 1.0);
        assert_eq!(mann_whitney_p(&[5.0; 4], &[5.0; 6]), 1.0);
        assert_eq!(mann_whitney_p(&[], &a), 1.0);
    }

    #[test]
    fn benjamini_hochberg_matches_a_worked_example() {
        // p = .01 .04 .03 .005, m = 4 → sorted .005 .01 .03 .04 → ×4/k: .02 .02 .04 .04
        let adj = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.02, 0.04, 0.04, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
    }

    #[test]
    fn ratio_interval_contains_the_point_and_reproduces() {
        let base = [10.0, 11.0, 9.5, 10.2, 10.8];
        let other = [12.0, 12.5, 11.8, 12.2, 13.0];
        let (r, lo, hi) = ratio_of_medians_ci(&base, &other, 7, 1000);
        assert!((r - 12.2 / 10.2).abs() < 1e-12);
        assert!(lo <= r && r <= hi);
        assert_eq!(ratio_of_medians_ci(&base, &other, 7, 1000), (r, lo, hi));
    }
}
