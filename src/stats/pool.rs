//! Pooling estimates of several cases into one: a random-effects mean
//! (DerSimonian and Laird, 1986), as meta-analyses pool studies whose true
//! effects may differ.

/// The random-effects mean of `estimates`, each `(value, variance)`, its
/// standard error, and the variance between the true effects beyond the
/// estimates' own (τ²). Each estimate weighs 1 / (its variance + τ²): where
/// the estimates agree within their variances τ² is 0 and the precise ones
/// count most; where they differ by nature the weights even out towards
/// the plain mean and the error widens with them. None without estimates
/// or with a variance that is not positive and finite.
pub(crate) fn random_effects(estimates: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    if estimates.is_empty()
        || estimates
            .iter()
            .any(|&(y, v)| !y.is_finite() || !v.is_finite() || v <= 0.0)
    {
        return None;
    }
    let mean_of = |weight: &dyn Fn(f64) -> f64| {
        let (mut sw, mut swy, mut sww) = (0.0, 0.0, 0.0);
        for &(y, v) in estimates {
            let w = weight(v);
            sw += w;
            swy += w * y;
            sww += w * w;
        }
        (swy / sw, sw, sww)
    };
    let (fixed, sw, sww) = mean_of(&|v| 1.0 / v);
    let q: f64 = estimates
        .iter()
        .map(|&(y, v)| (y - fixed).powi(2) / v)
        .sum();
    let c = sw - sww / sw;
    let between = if c > 0.0 {
        ((q - (estimates.len() - 1) as f64) / c).max(0.0)
    } else {
        0.0
    };
    let (mean, sw, _) = mean_of(&|v| 1.0 / (v + between));
    Some((mean, 1.0 / sw.sqrt(), between))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn agreeing_estimates_pool_as_a_precision_weighted_mean() {
        // one estimate: itself
        let (m, se, tau2) = random_effects(&[(0.5, 0.04)]).unwrap();
        assert!(close(m, 0.5) && close(se, 0.2) && close(tau2, 0.0));
        // two of equal variance that agree within it: Q = 0.5 < 1, τ² = 0
        let (m, se, tau2) = random_effects(&[(0.0, 1.0), (1.0, 1.0)]).unwrap();
        assert!(close(m, 0.5) && close(se, 0.5f64.sqrt()) && close(tau2, 0.0));
    }

    #[test]
    fn estimates_that_differ_beyond_their_variances_widen_the_error() {
        // Q = 20, C = 10: τ² = 1.9, each weighs 1 / 2
        let (m, se, tau2) = random_effects(&[(0.0, 0.1), (2.0, 0.1)]).unwrap();
        assert!(close(m, 1.0) && close(se, 1.0) && close(tau2, 1.9));
        // unequal variances: worked by hand (w = 100, 25, 4; Q = 50.27;
        // C = 46.51; τ² = 1.04033), the precise estimate no longer dominates
        let (m, se, tau2) = random_effects(&[(0.0, 0.01), (1.0, 0.04), (3.0, 0.25)]).unwrap();
        assert!((tau2 - 1.040_333_333).abs() < 1e-6, "{tau2}");
        assert!((m - 1.225_395_094).abs() < 1e-6, "{m}");
        assert!((se - 0.613_980_969).abs() < 1e-6, "{se}");
    }

    #[test]
    fn no_estimate_or_a_bad_variance_pools_to_nothing() {
        assert_eq!(random_effects(&[]), None);
        assert_eq!(random_effects(&[(1.0, 0.0)]), None);
        assert_eq!(random_effects(&[(1.0, f64::NAN)]), None);
    }
}
