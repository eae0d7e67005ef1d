//! The normal and Student t distributions: CDFs and quantiles, for intervals
//! and p-values from few top-level units (3 runs per side give 4 degrees of
//! freedom, where the normal quantile 1.96 would be far too narrow).
//! The t CDF goes through the regularised incomplete beta function
//! (continued fraction, Lentz's method; Press et al., Numerical Recipes,
//! 2nd ed., §6.4); quantiles by bisection.

use super::hypothesis::erfc;

/// Degrees of freedom above which the t distribution is taken as normal.
const NORMAL_DF: f64 = 1e4;

/// Standard normal CDF.
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // reflection
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |s, (i, c)| s + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// Continued fraction of the incomplete beta function.
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Regularised incomplete beta I_x(a, b), 0 ≤ x ≤ 1.
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// CDF of Student's t with `df` degrees of freedom (df > 0; ∞ or very
/// large is the normal).
pub(crate) fn t_cdf(x: f64, df: f64) -> f64 {
    if df.is_nan() || df >= NORMAL_DF {
        return normal_cdf(x);
    }
    if x.is_infinite() {
        return if x > 0.0 { 1.0 } else { 0.0 };
    }
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + x * x));
    if x >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The `p`-quantile of Student's t with `df` degrees of freedom (0 < p < 1),
/// by bisection to 1e-10.
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    let (mut lo, mut hi) = (-1.0, 1.0);
    while t_cdf(lo, df) > p && lo > -1e12 {
        lo *= 2.0;
    }
    while t_cdf(hi, df) < p && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-10 * mid.abs().max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// CDF of the F distribution with (`d1`, `d2`) degrees of freedom at
/// `x` ≥ 0: I_{d1·x/(d1·x + d2)}(d1/2, d2/2).
pub(crate) fn f_cdf(x: f64, d1: f64, d2: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if !x.is_finite() {
        return 1.0;
    }
    inc_beta(d1 / 2.0, d2 / 2.0, d1 * x / (d1 * x + d2))
}

/// The `p`-quantile of the F distribution with (`d1`, `d2`) degrees of
/// freedom (0 < p < 1), by bisection.
pub(crate) fn f_quantile(p: f64, d1: f64, d2: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    while f_cdf(hi, d1, d2) < p && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f_cdf(mid, d1, d2) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-10 * mid.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The `p`-quantile of the standard normal.
pub(crate) fn normal_quantile(p: f64) -> f64 {
    t_quantile(p, f64::INFINITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        // two-sided 95 %: 12.706 (1), 4.303 (2), 2.776 (4), 2.228 (10), 1.960 (∞)
        for (df, want) in [
            (1.0, 12.706_205),
            (2.0, 4.302_653),
            (4.0, 2.776_445),
            (10.0, 2.228_139),
            (f64::INFINITY, 1.959_964),
        ] {
            let got = t_quantile(0.975, df);
            assert!(close(got, want, 1e-4), "df {df}: {got} vs {want}");
        }
        assert!(close(t_quantile(0.025, 4.0), -2.776_445, 1e-4));
        assert!(close(t_quantile(0.995, 3.0), 5.840_909, 1e-4));
    }

    #[test]
    fn t_cdf_is_symmetric_and_tends_to_the_normal() {
        assert!(close(t_cdf(0.0, 3.0), 0.5, 1e-12));
        assert!(close(t_cdf(1.5, 7.0) + t_cdf(-1.5, 7.0), 1.0, 1e-12));
        assert!(close(t_cdf(1.96, 1e6), normal_cdf(1.96), 1e-5));
        assert!(close(normal_cdf(1.959_964), 0.975, 1e-6));
        // non-integer degrees of freedom (Welch): between its neighbours
        let q = t_quantile(0.975, 4.5);
        assert!(q < t_quantile(0.975, 4.0) && q > t_quantile(0.975, 5.0));
    }

    #[test]
    fn f_quantiles_match_published_tables() {
        // upper 5 % points (Fisher and Yates; any F table)
        assert!(close(f_quantile(0.95, 2.0, 20.0), 3.4928, 1e-3));
        assert!(close(f_quantile(0.95, 4.0, 10.0), 3.4780, 1e-3));
        // upper 25 % point of F(2, ∞) = χ²₂/2: -ln(0.25)
        assert!(close(f_quantile(0.75, 2.0, 1e7), 4f64.ln(), 1e-3));
        assert!(close(f_cdf(f_quantile(0.3, 3.0, 7.0), 3.0, 7.0), 0.3, 1e-9));
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        assert!(close(ln_gamma(1.0), 0.0, 1e-12));
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-12
        ));
    }
}
