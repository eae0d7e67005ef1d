//! Where a case's spread comes from, over A/A result files: the figures
//! `envbench __spread` prints (bench/'s reading of how runs, rounds and
//! repetitions vary, and of what the guest read around each round).
//!
//! Everything is on the log scale; a standard deviation `s` is shown as
//! the percentage `100 (eˢ − 1)`.

use super::dist::t_quantile;
pub(crate) use super::levels::median;
use super::levels::{mean_of, variance, Components, Levels};

/// One case's levels over separate runs of one environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Separate {
    /// Variance between runs, between rounds of a run and between
    /// repetitions of a round (the method of moments, as `compare`'s).
    pub components: Components,
    /// Variance of the runs' estimates (each the mean over its rounds of
    /// their medians): what decides a comparison's interval.
    pub estimates: Option<f64>,
    /// Rounds per run (mean).
    pub rounds: f64,
    /// Repetitions per round (mean).
    pub reps: f64,
}

impl Separate {
    /// The levels of `levels`.
    pub fn of(levels: &Levels) -> Separate {
        Separate {
            components: levels.components(),
            estimates: variance(&levels.run_estimates()),
            rounds: levels.rounds_per_run(),
            reps: levels.reps_per_round(),
        }
    }
}

/// The 95 % half-width, in %, of a comparison of 3 runs a side whose run
/// estimates vary by `var` (ln² units): t(0.975, 4) · √(2 var / 3). From
/// the between-run component alone it is the floor that no number of
/// rounds inside a run goes below.
pub fn half_width_3x3(var: f64) -> f64 {
    100.0 * (t_quantile(0.975, 4.0) * (2.0 * var.max(0.0) / 3.0).sqrt()).exp_m1()
}

/// A standard deviation of ln(value) as a percentage.
pub fn sd_pct(sd: f64) -> f64 {
    100.0 * sd.exp_m1()
}

/// One case's spread over interleaved A/A runs: each run's rounds of both
/// environments, by round number, as (median, repetitions) of ln(value).
#[derive(Debug, Clone, PartialEq)]
pub struct Paired {
    /// Spread of repetitions inside a round (SD, pooled as the mean of
    /// each round's population variance).
    pub within: f64,
    /// Spread of the first environment's round medians over all runs (SD).
    pub between: f64,
    /// `between`'s share of between + within variance.
    pub share: f64,
    /// Spread of the difference of the two round medians of a pass, per
    /// side (SD/√2): what interleaving by round leaves.
    pub paired: f64,
    /// Spearman's correlation of the two sides' round medians (1: the
    /// drift the rounds shared cancels); None under 4 pairs or no spread.
    pub corr: Option<f64>,
}

/// A round of one side: its median and its repetitions, ln(value).
pub type Round<'a> = (f64, &'a [f64]);

/// One side's rounds in one run, by round number.
pub type Side<'a> = Vec<(u32, Round<'a>)>;

impl Paired {
    /// The spread of runs given as pairs of sides, each side its rounds
    /// by number; None under three rounds of the first side or three
    /// rounds measured on both.
    pub fn of(runs: &[(Side<'_>, Side<'_>)]) -> Option<Paired> {
        let mut within = Vec::new();
        let (mut meds_a, mut pa, mut pb) = (Vec::new(), Vec::new(), Vec::new());
        for (a, b) in runs {
            for (_, (_, reps)) in a.iter().chain(b) {
                if reps.len() > 1 {
                    within.push(population_variance(reps));
                }
            }
            meds_a.extend(a.iter().map(|(_, (m, _))| *m));
            for (r, (ma, _)) in a {
                if let Some((_, (mb, _))) = b.iter().find(|(rb, _)| rb == r) {
                    pa.push(*ma);
                    pb.push(*mb);
                }
            }
        }
        if meds_a.len() < 3 || pa.len() < 3 {
            return None;
        }
        let within = if within.is_empty() {
            0.0
        } else {
            (within.iter().sum::<f64>() / within.len() as f64).sqrt()
        };
        let between = variance(&meds_a)?.sqrt();
        let total = between.powi(2) + within.powi(2);
        let diffs: Vec<f64> = pa.iter().zip(&pb).map(|(a, b)| a - b).collect();
        Some(Paired {
            within,
            between,
            share: if total > 0.0 {
                between.powi(2) / total
            } else {
                0.0
            },
            paired: variance(&diffs)?.sqrt() / std::f64::consts::SQRT_2,
            corr: spearman(&pa, &pb),
        })
    }
}

/// Spearman's rank correlation (ties take their mean rank); None under
/// four points or where either side does not vary.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 4 {
        return None;
    }
    let (rx, ry) = (ranks(x), ranks(y));
    let (mx, my) = (mean(&rx), mean(&ry));
    let num: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let den = (rx.iter().map(|a| (a - mx).powi(2)).sum::<f64>()
        * ry.iter().map(|b| (b - my).powi(2)).sum::<f64>())
    .sqrt();
    (den > 0.0).then(|| num / den)
}

/// Each value's rank from 0, ties given their mean rank.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut out = vec![0.0; v.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        for &k in &order[i..=j] {
            out[k] = (i + j) as f64 / 2.0;
        }
        i = j + 1;
    }
    out
}

fn mean(xs: &[f64]) -> f64 {
    mean_of(xs.iter().copied())
}

fn population_variance(xs: &[f64]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64
}

/// Each round's deviation from the median of its side's rounds (ln):
/// what [`Covariate::of`] ranks a reading against.
pub fn deviations(medians: &[f64]) -> Vec<f64> {
    if medians.is_empty() {
        return Vec::new();
    }
    let m = median(medians);
    medians.iter().map(|x| x - m).collect()
}

/// How a reading taken around each round ranks with the rounds'
/// deviations from their median (ln), pooled.
#[derive(Debug, Clone, PartialEq)]
pub struct Covariate {
    /// Rounds read.
    pub rounds: usize,
    /// Spearman's rho with the deviation.
    pub rho: Option<f64>,
    /// Spearman's rho with the deviation's size.
    pub rho_size: Option<f64>,
    /// For a reading mostly 0, the rounds where it was above 0 against
    /// those where it was 0; None where either set is empty.
    pub on_off: Option<OnOff>,
}

/// A reading that is mostly 0: how far the rounds where it was above 0
/// deviate, against the rounds where it was 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnOff {
    /// Rounds where the reading was above 0.
    pub on: usize,
    /// Their median |deviation| (ln).
    pub on_deviation: f64,
    /// Rounds where it was 0.
    pub off: usize,
    /// Their median |deviation| (ln).
    pub off_deviation: f64,
}

impl Covariate {
    /// From each round's (reading, deviation); `on_off`: split the
    /// rounds where the reading was above 0 from those where it was 0.
    pub fn of(xs: &[(f64, f64)], on_off: bool) -> Covariate {
        let (x, dev): (Vec<f64>, Vec<f64>) = xs.iter().copied().unzip();
        let size: Vec<f64> = dev.iter().map(|d| d.abs()).collect();
        let split = |on: bool| -> Vec<f64> {
            xs.iter()
                .filter(|p| (p.0 > 0.0) == on)
                .map(|p| p.1.abs())
                .collect()
        };
        let (on, off) = (split(true), split(false));
        Covariate {
            rounds: xs.len(),
            rho: spearman(&x, &dev),
            rho_size: spearman(&x, &size),
            on_off: (on_off && !on.is_empty() && !off.is_empty()).then(|| OnOff {
                on: on.len(),
                on_deviation: median(&on),
                off: off.len(),
                off_deviation: median(&off),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::levels::normal;
    use crate::stats::rng::Rng;

    #[test]
    fn deviations_from_the_median_round() {
        assert_eq!(deviations(&[0.0, 0.5, 0.25]), [-0.25, 0.25, 0.0]);
        assert_eq!(deviations(&[]), Vec::<f64>::new());
    }

    #[test]
    fn spearman_of_known_orders() {
        assert_eq!(
            spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]),
            Some(1.0)
        );
        assert_eq!(
            spearman(&[1.0, 2.0, 3.0, 4.0], &[4.0, 3.0, 2.0, 1.0]),
            Some(-1.0)
        );
        // one swap of four: 1 - 6·2/(4·15) = 0.8
        let r = spearman(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap();
        assert!((r - 0.8).abs() < 1e-12, "{r}");
        // ties take their mean rank
        assert_eq!(ranks(&[5.0, 1.0, 5.0, 2.0]), vec![2.5, 0.0, 2.5, 1.0]);
        assert_eq!(spearman(&[1.0, 1.0, 1.0, 1.0], &[1.0, 2.0, 3.0, 4.0]), None);
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), None);
    }

    #[test]
    fn the_half_width_of_three_runs_a_side() {
        // t(0.975, 4) = 2.776; a 5 % SD between runs: 2.776 · √(2/3) · 0.05
        let hw = half_width_3x3(0.05f64.powi(2));
        assert!((hw - 100.0 * (2.776_445 * (2.0f64 / 3.0).sqrt() * 0.05).exp_m1()).abs() < 1e-3);
        assert_eq!(half_width_3x3(0.0), 0.0);
        assert!((sd_pct(0.1) - 10.517).abs() < 1e-3);
    }

    /// Seeded runs whose levels are known: between runs 5 %, between
    /// rounds 3 %, between repetitions 1 %; 12 runs of 6 rounds of 5.
    #[test]
    fn separate_recovers_seeded_levels() {
        let mut rng = Rng::new(20_261_206);
        let (sr, sq, sk) = (0.05, 0.03, 0.01);
        let (mut runs_sd, mut rounds_sd, mut reps_sd) = (vec![], vec![], vec![]);
        for _ in 0..200 {
            let runs: Vec<Vec<Vec<f64>>> = (0..12)
                .map(|_| {
                    let run = sr * normal(&mut rng);
                    (0..6)
                        .map(|_| {
                            let round = run + sq * normal(&mut rng);
                            (0..5)
                                .map(|_| (round + sk * normal(&mut rng)).exp())
                                .collect()
                        })
                        .collect()
                })
                .collect();
            let s = Separate::of(&Levels::from_raw(&runs).unwrap());
            runs_sd.push(s.components.runs.unwrap().sqrt());
            rounds_sd.push(s.components.rounds.unwrap().sqrt());
            reps_sd.push(s.components.repetitions.unwrap().sqrt());
            assert_eq!((s.rounds, s.reps), (6.0, 5.0));
        }
        for (got, want) in [
            (median(&runs_sd), sr),
            (median(&rounds_sd), sq),
            (median(&reps_sd), sk),
        ] {
            assert!((got / want - 1.0).abs() < 0.08, "{got} against {want}");
        }
    }

    fn view(r: &[(u32, (f64, Vec<f64>))]) -> Side<'_> {
        r.iter()
            .map(|(i, (m, v))| (*i, (*m, v.as_slice())))
            .collect()
    }

    /// Interleaved rounds that share a drift: the pair's difference
    /// cancels it and the sides' medians correlate; without a shared
    /// drift they do not.
    #[test]
    fn paired_sees_a_shared_drift_cancel() {
        let mut rng = Rng::new(7);
        let mut side = |drift: &[f64], own: f64| -> Vec<Vec<f64>> {
            drift
                .iter()
                .map(|d| (0..5).map(|_| d + own * normal(&mut rng)).collect())
                .collect()
        };
        let drift: Vec<f64> = (0..24).map(|i| 0.2 * (i as f64 / 3.0).sin()).collect();
        let (a, b) = (side(&drift, 0.01), side(&drift, 0.01));
        let still = vec![0.0; 24];
        let (c, d) = (side(&drift, 0.01), side(&still, 0.01));
        let rounds = |s: &[Vec<f64>]| -> Vec<(u32, (f64, Vec<f64>))> {
            s.iter()
                .enumerate()
                .map(|(i, r)| (i as u32, (median(r), r.clone())))
                .collect()
        };
        let (ra, rb, rc, rd) = (rounds(&a), rounds(&b), rounds(&c), rounds(&d));
        let shared = Paired::of(&[(view(&ra), view(&rb))]).unwrap();
        assert!(shared.corr.unwrap() > 0.9, "{shared:?}");
        assert!(shared.paired < shared.between / 5.0, "{shared:?}");
        assert!(shared.share > 0.9, "{shared:?}");
        assert!((shared.within - 0.009).abs() < 0.003, "{shared:?}");
        let apart = Paired::of(&[(view(&rc), view(&rd))]).unwrap();
        assert!(apart.corr.unwrap().abs() < 0.5, "{apart:?}");
        assert!(apart.paired > shared.paired * 5.0, "{apart:?}");
        // under three pairs: nothing to say
        assert_eq!(Paired::of(&[(view(&ra[..2]), view(&rb[..2]))]), None);
    }
}
