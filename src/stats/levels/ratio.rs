//! The log-ratio of two sides measured apart: each side's spread from
//! its own levels (or pooled with the other's where they agree), a
//! hierarchical bootstrap of the difference, and its degrees of freedom.

use super::*;

/// The log-ratio of two sides with its bootstrap spread and degrees of freedom.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRatio {
    /// ln(other) − ln(base), the sides' estimates.
    pub point: f64,
    /// Point minus the 2.5 % quantile of the (corrected) replicates, ≥ 0.
    pub low_dev: f64,
    /// The 97.5 % quantile minus the point, ≥ 0.
    pub high_dev: f64,
    /// Welch–Satterthwaite degrees of freedom (∞ when only the assumed
    /// between-run spread varies).
    pub df: f64,
    /// Top level of (base, other).
    pub top: (Level, Level),
    /// Where each side's between-run spread came from, (base, other).
    pub spread: (RunSpread, RunSpread),
    /// Paired rounds of two or more runs whose variance was not pooled with
    /// their rounds' (they differ beyond them, by the test of
    /// [`paired_log_ratio`]): the interval rests on the runs alone, with
    /// their n − 1 degrees of freedom. False where the runs were pooled
    /// with their rounds, and for sides compared apart.
    pub runs_differ: bool,
    /// Paired rounds whose place in the round was taken out
    /// ([`Levels::paired_in_turns`]), at a degree of freedom of the
    /// rounds: the plan spends it too. False for sides compared apart.
    pub placed: bool,
}

impl LogRatio {
    /// Whether a side got the assumed between-run spread.
    pub(crate) fn assumed_run_spread(&self) -> bool {
        matches!(self.spread.0, RunSpread::Assumed { .. })
            || matches!(self.spread.1, RunSpread::Assumed { .. })
    }
}

impl LogRatio {
    /// The interval of the log-ratio at `confidence` (e.g. 0.95): the
    /// bootstrap half-widths scaled by t(df) / z.
    pub(crate) fn interval(&self, confidence: f64) -> (f64, f64) {
        let f = t_quantile(0.5 + confidence / 2.0, self.df) / normal_quantile(0.975);
        (
            self.point - self.low_dev * f,
            self.point + self.high_dev * f,
        )
    }

    /// Two-sided p-value of "the log-ratio lies within [down, up]" (a
    /// minimum-effect test): below α exactly when the (1 − α) interval lies
    /// wholly above `up` or wholly below `down`.
    pub(crate) fn p_beyond(&self, down: f64, up: f64) -> f64 {
        let z = normal_quantile(0.975);
        let one_sided = |excess: f64, dev: f64| {
            if excess <= 0.0 {
                1.0
            } else if dev == 0.0 {
                0.0
            } else {
                1.0 - t_cdf(excess / (dev / z), self.df)
            }
        };
        let p = one_sided(self.point - up, self.low_dev)
            .min(one_sided(down - self.point, self.high_dev));
        (2.0 * p).min(1.0)
    }
}

/// The log-ratio other/base with its hierarchical-bootstrap spread. Each
/// side's replicates are scaled to the variance of its estimate
/// ([`Levels::estimate_variance`]); a side with one run gets the variance
/// its [`RunSpread`] adds (as a normal draw per replicate); the degrees of
/// freedom follow Welch–Satterthwaite over all of them.
pub(crate) fn log_ratio(
    base: (&Levels, RunSpread),
    other: (&Levels, RunSpread),
    seed: u64,
    resamples: usize,
) -> LogRatio {
    log_ratio_pooling(base, other, seed, resamples, Some(SIDES_POOL_TEST_LEVEL))
}

/// [`log_ratio`] with the sides' variances pooled by a test at `level`
/// ([`pool_sides`]), or never (None: Welch, as before pooling existed).
pub(crate) fn log_ratio_pooling(
    (base, base_spread): (&Levels, RunSpread),
    (other, other_spread): (&Levels, RunSpread),
    seed: u64,
    resamples: usize,
    level: Option<f64>,
) -> LogRatio {
    let resamples = resamples.max(2);
    let mut rng = Rng::new(seed);
    // a side with two or more runs measured its spread itself
    let spread = |l: &Levels, s: RunSpread| {
        if l.runs() >= 2 {
            RunSpread::Measured
        } else {
            s
        }
    };
    let (sb, so) = (spread(base, base_spread), spread(other, other_spread));
    let (vb, vo, pooled_df) = pool_sides(
        (base, base.estimate_variance()),
        (other, other.estimate_variance()),
        level,
    );
    let (ab, ao) = (sb.added(), so.added());
    let db = base.deviations(vb.0, &mut rng, resamples);
    let dobs = other.deviations(vo.0, &mut rng, resamples);
    let (pb, po) = (ab.0.sqrt(), ao.0.sqrt());
    let mut reps: Vec<f64> = db
        .iter()
        .zip(&dobs)
        .map(|(b, o)| o + po * normal(&mut rng) - b - pb * normal(&mut rng))
        .collect();
    reps.sort_by(f64::total_cmp);
    LogRatio {
        point: other.estimate() - base.estimate(),
        low_dev: (-percentile_of_sorted(&reps, 0.025)).max(0.0),
        high_dev: percentile_of_sorted(&reps, 0.975).max(0.0),
        df: pooled_df.unwrap_or_else(|| satterthwaite(&[vb, vo, ab, ao])),
        top: (base.top(), other.top()),
        spread: (sb, so),
        runs_differ: false,
        placed: false,
    }
}

/// The two sides' estimate variances, pooled when both sides have the
/// same number of runs, two or more, and an F test at `level` (two-sided;
/// None: never) does not tell their per-run variances apart: each side
/// then gets the pooled per-run variance over its runs, and the difference
/// the degrees of freedom of both (Some), each side's variance weighted by
/// its degrees of freedom. With as many runs on each side and as many
/// degrees of freedom the standard error is unchanged (the pooled t test
/// is robust to unequal spreads at equal sizes, which is why unequal sizes
/// are not pooled); a side whose runs were pooled with their rounds weighs
/// more, as its variance is known better. The degrees of freedom are those
/// of the pooled two-sample t test (4 at
/// 3 + 3 runs, more where rounds were pooled with their runs) instead of
/// Welch's, which fall towards 2 when three runs per side happen to spread
/// unequally. Sides whose spreads differ beyond the test keep their own
/// variances (None: Welch).
fn pool_sides(
    (base, vb): (&Levels, (f64, f64)),
    (other, vo): (&Levels, (f64, f64)),
    level: Option<f64>,
) -> ((f64, f64), (f64, f64), Option<f64>) {
    let Some(level) = level else {
        return (vb, vo, None);
    };
    let (nb, no) = (base.runs() as f64, other.runs() as f64);
    let measured = |n: f64, v: (f64, f64)| n >= 2.0 && v.0 > 0.0 && v.1.is_finite() && v.1 >= 1.0;
    if nb != no || !measured(nb, vb) || !measured(no, vo) {
        return (vb, vo, None);
    }
    let (ub, uo) = (vb.0 * nb, vo.0 * no);
    let tail = 1.0 - level / 2.0;
    if ub / uo > f_quantile(tail, vb.1, vo.1) || uo / ub > f_quantile(tail, vo.1, vb.1) {
        return (vb, vo, None);
    }
    let df = vb.1 + vo.1;
    let pooled = (vb.1 * ub + vo.1 * uo) / df;
    ((pooled / nb, df), (pooled / no, df), Some(df))
}

/// Welch–Satterthwaite degrees of freedom of a sum of variances, each with
/// its own (∞: known); at least 1, ∞ when nothing varies.
fn satterthwaite(parts: &[(f64, f64)]) -> f64 {
    let total: f64 = parts.iter().map(|p| p.0).sum();
    let denominator: f64 = parts
        .iter()
        .filter(|p| p.1.is_finite() && p.1 >= 1.0)
        .map(|p| p.0 * p.0 / p.1)
        .sum();
    if denominator > 0.0 {
        (total * total / denominator).max(1.0)
    } else {
        f64::INFINITY
    }
}
