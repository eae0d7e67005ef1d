//! What a comparison's many tests share: Benjamini-Hochberg
//! false-discovery-rate control, and the normal tail (`erfc`) behind the
//! p-values. See: Y. Benjamini and Y. Hochberg, "Controlling the False
//! Discovery Rate", JRSS B 57 (1995).

/// Complementary error function, fractional error below 1.2e-7
/// (Chebyshev fit; Press et al., Numerical Recipes, 2nd ed., §6.2).
pub(crate) fn erfc(x: f64) -> f64 {
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

/// Benjamini-Hochberg adjusted p-values (same order as `p`): reject where
/// the adjusted value is below the target false discovery rate.
pub(crate) fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
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
    fn benjamini_hochberg_matches_a_worked_example() {
        // p = .01 .04 .03 .005, m = 4 → sorted .005 .01 .03 .04 → ×4/k: .02 .02 .04 .04
        let adj = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.02, 0.04, 0.04, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
    }
}
