//! Rounds of two environments measured side by side (`run --in`) against
//! the same environments measured in separate runs, on seeded synthetic
//! data whose host drifts within and between runs: both error rates and
//! the A/A interval's half-width, at 1 and 3 runs, at the quick and the
//! standard suite's shape.

use super::*;

/// A host that drifts: each run starts `slow` away (sd of ln) and walks
/// `walk` per pass over the cases; each case round in a fresh worker has
/// `process` and `moment` of its own, each repetition `rep`.
#[derive(Debug, Clone, Copy)]
struct Host {
    slow: f64,
    walk: f64,
    process: f64,
    moment: f64,
    rep: f64,
}

/// An hour of this project's 2-vCPU VMs as issue 25 saw it: runs 5 %
/// apart, the host moving 2 % per pass, rounds 6 % and repetitions 4 %.
const DRIFTING_HOUR: Host = Host {
    slow: 0.05,
    walk: 0.02,
    process: 0.03,
    moment: 0.06,
    rep: 0.04,
};

/// A quiet hour: little drift, rounds and repetitions as usual.
const QUIET_HOUR: Host = Host {
    slow: 0.01,
    walk: 0.002,
    process: 0.02,
    moment: 0.04,
    rep: 0.03,
};

/// The suites' shapes per case: rounds, and repetitions per round.
const QUICK: (usize, usize) = (12, 2);
const STANDARD: (usize, usize) = (16, 3);

/// The host's path over one run's passes: where it starts and each step.
fn path(rng: &mut Rng, h: Host, rounds: usize) -> Vec<f64> {
    let mut at = h.slow * normal(rng);
    (0..rounds)
        .map(|_| {
            at += h.walk * normal(rng);
            at
        })
        .collect()
}

/// One side's round on the host at `drift`: `reps` values around `center`.
fn round(rng: &mut Rng, center: f64, drift: f64, h: Host, reps: usize) -> Vec<f64> {
    let at = drift + h.process * normal(rng) + h.moment * normal(rng);
    (0..reps)
        .map(|_| center * (at + h.rep * normal(rng)).exp())
        .collect()
}

/// `runs` interleaved runs: each pass's drift falls on both sides' round.
fn interleaved(
    rng: &mut Rng,
    effect: f64,
    runs: usize,
    (rounds, reps): (usize, usize),
    h: Host,
) -> Levels {
    let runs: Vec<Vec<(Vec<f64>, Vec<f64>)>> = (0..runs)
        .map(|_| {
            path(rng, h, rounds)
                .into_iter()
                .map(|d| {
                    let base = round(rng, 100.0, d, h, reps);
                    (base, round(rng, 100.0 * effect, d, h, reps))
                })
                .collect()
        })
        .collect();
    Levels::paired(&runs).unwrap()
}

/// `runs` separate runs of one side, each on its own stretch of the host.
fn separate(
    rng: &mut Rng,
    center: f64,
    runs: usize,
    (rounds, reps): (usize, usize),
    h: Host,
) -> Levels {
    let runs: Vec<Vec<Vec<f64>>> = (0..runs)
        .map(|_| {
            path(rng, h, rounds)
                .into_iter()
                .map(|d| round(rng, center, d, h, reps))
                .collect()
        })
        .collect();
    levels(&runs)
}

/// Over `seeds` comparisons: (share called beyond ±2 %, median half-width
/// in %) interleaved, and the same separate (one-run sides with their
/// workers' spread and the residual added, as compare does).
fn both(
    h: Host,
    runs: usize,
    shape: (usize, usize),
    effect: f64,
    seeds: u64,
) -> ((f64, f64), (f64, f64)) {
    let paired = score(seeds, |seed| {
        let mut rng = Rng::new(41_000 + seed);
        paired_log_ratio(&interleaved(&mut rng, effect, runs, shape, h), seed, 400)
    });
    let spread = RunSpread::Workers {
        residual: WORKER_RESIDUAL_SD,
    };
    let apart = score(seeds, |seed| {
        let mut rng = Rng::new(43_000 + seed);
        let a = separate(&mut rng, 100.0, runs, shape, h);
        let b = separate(&mut rng, 100.0 * effect, runs, shape, h);
        log_ratio((&a, spread), (&b, spread), seed, 400)
    });
    (paired, apart)
}

#[test]
fn interleaved_rounds_cancel_the_drift_and_keep_both_error_rates() {
    for (hour, h) in [("drifting", DRIFTING_HOUR), ("quiet", QUIET_HOUR)] {
        for (suite, shape) in [("quick", QUICK), ("standard", STANDARD)] {
            for runs in [1, 3] {
                let ((false_in, width_in), (false_apart, width_apart)) =
                    both(h, runs, shape, 1.0, 400);
                let found: Vec<f64> = [1.5, 1.0 / 1.5]
                    .into_iter()
                    .map(|e| both(h, runs, shape, e, 200).0 .0)
                    .collect();
                eprintln!(
                    "{hour} {suite} {runs} run(s): A/A called {false_in:.3} interleaved, \
                     {false_apart:.3} apart; half-width ±{width_in:.1} % against \
                     ±{width_apart:.1} %; 1.5x found {found:?}"
                );
                // the first error: a difference called where there is none
                assert!(false_in <= 0.05, "{hour} {suite} {runs}: {false_in}");
                // the second: a 1.5x difference missed, either way
                assert!(
                    found.iter().all(|&f| f == 1.0),
                    "{hour} {suite} {runs}: {found:?}"
                );
                // the third (precision): narrower than separate runs (how
                // narrow on a real host: bench/pairs.sh --pairs iaa)
                assert!(width_in < width_apart, "{hour} {suite} {runs}");
            }
        }
    }
}

/// A host whose speed jumps rather than drifts. Another tenant switches
/// on and off: it costs `cost` (ln) while on and flips with probability
/// `flip` between one round and the next, so A's round and B's in one
/// pass may see different states (envbench __noisy's stand-in: a load on
/// one CPU switching every 0.5-3 s, against rounds of about a second).
/// Or a round now and then is hit: `spike_share` of them slowed by
/// `spike` (ln).
#[derive(Debug, Clone, Copy)]
struct Jumps {
    flip: f64,
    cost: f64,
    spike_share: f64,
    spike: f64,
}

/// A neighbour that takes 30 % while on, flipping at 3 rounds in 10.
const SWITCHING: Jumps = Jumps {
    flip: 0.3,
    cost: 0.26,
    spike_share: 0.0,
    spike: 0.0,
};

/// One round in 20 slowed 1.5x.
const SPIKES: Jumps = Jumps {
    flip: 0.0,
    cost: 0.0,
    spike_share: 0.05,
    spike: 0.4,
};

/// The jumping host's state as rounds follow one another.
struct Timeline {
    on: bool,
    j: Jumps,
}

impl Timeline {
    fn new(rng: &mut Rng, j: Jumps) -> Timeline {
        Timeline {
            on: j.flip > 0.0 && rng.below(2) == 1,
            j,
        }
    }

    /// The next round's slowdown (ln).
    fn next(&mut self, rng: &mut Rng) -> f64 {
        if rng.unit_f64() < self.j.flip {
            self.on = !self.on;
        }
        let spike = if rng.unit_f64() < self.j.spike_share {
            self.j.spike
        } else {
            0.0
        };
        (if self.on { self.j.cost } else { 0.0 }) + spike
    }
}

/// [`interleaved`] on a quiet host that jumps: each pass runs A's round
/// and B's in a drawn order, each on the host as it is by then; or, with
/// `fine`, alternated at the repetition (not built: issue 83), so that
/// both rounds of a pass straddle the same moments and share the host's
/// states alike.
fn interleaved_jumping(
    rng: &mut Rng,
    effect: f64,
    runs: usize,
    (rounds, reps): (usize, usize),
    j: Jumps,
    fine: bool,
) -> Levels {
    let h = QUIET_HOUR;
    let runs: Vec<Vec<(Vec<f64>, Vec<f64>)>> = (0..runs)
        .map(|_| {
            let mut t = Timeline::new(rng, j);
            path(rng, h, rounds)
                .into_iter()
                .map(|d| {
                    let a_first = rng.below(2) == 0;
                    let (first, second) = (t.next(rng), t.next(rng));
                    let (at_a, at_b) = if fine {
                        let both = (first + second) / 2.0;
                        (both, both)
                    } else if a_first {
                        (first, second)
                    } else {
                        (second, first)
                    };
                    let base = round(rng, 100.0, d + at_a, h, reps);
                    (base, round(rng, 100.0 * effect, d + at_b, h, reps))
                })
                .collect()
        })
        .collect();
    Levels::paired(&runs).unwrap()
}

/// [`separate`] on a quiet host that jumps.
fn separate_jumping(
    rng: &mut Rng,
    center: f64,
    runs: usize,
    (rounds, reps): (usize, usize),
    j: Jumps,
) -> Levels {
    let h = QUIET_HOUR;
    let runs: Vec<Vec<Vec<f64>>> = (0..runs)
        .map(|_| {
            let mut t = Timeline::new(rng, j);
            path(rng, h, rounds)
                .into_iter()
                .map(|d| {
                    let jump = t.next(rng);
                    round(rng, center, d + jump, h, reps)
                })
                .collect()
        })
        .collect();
    levels(&runs)
}

/// [`both`] on a jumping host, and interleaved at the repetition.
fn both_jumping(
    j: Jumps,
    runs: usize,
    shape: (usize, usize),
    effect: f64,
    seeds: u64,
) -> ((f64, f64), (f64, f64), (f64, f64)) {
    let paired = |fine: bool| {
        score(seeds, |seed| {
            let mut rng = Rng::new(47_000 + seed);
            let diffs = interleaved_jumping(&mut rng, effect, runs, shape, j, fine);
            paired_log_ratio(&diffs, seed, 400)
        })
    };
    let spread = RunSpread::Workers {
        residual: WORKER_RESIDUAL_SD,
    };
    let apart = score(seeds, |seed| {
        let mut rng = Rng::new(53_000 + seed);
        let a = separate_jumping(&mut rng, 100.0, runs, shape, j);
        let b = separate_jumping(&mut rng, 100.0 * effect, runs, shape, j);
        log_ratio((&a, spread), (&b, spread), seed, 400)
    });
    (paired(false), apart, paired(true))
}

/// Issue 83's noisy hosts: one that switches between two states within
/// seconds and one with spikes. Where A's round and B's fall on different
/// states, interleaving cannot cancel the jump; the intervals must still
/// hold (the first error at most 5 %) and a 1.5x difference still be found
/// (the second), and the half-widths (the third) are printed for the
/// record (docs/log/precision.md), beside what alternating the sides at
/// the repetition would give.
#[test]
fn a_host_that_switches_or_spikes_keeps_both_error_rates() {
    for (host, j) in [("switching", SWITCHING), ("spikes", SPIKES)] {
        for (suite, shape) in [("quick", QUICK), ("standard", STANDARD)] {
            for runs in [1, 3] {
                let ((false_in, width_in), (false_apart, width_apart), (false_fine, width_fine)) =
                    both_jumping(j, runs, shape, 1.0, 300);
                let found: Vec<(f64, f64)> = [1.5, 1.0 / 1.5]
                    .into_iter()
                    .map(|e| {
                        let ((f_in, _), (f_apart, _), _) = both_jumping(j, runs, shape, e, 100);
                        (f_in, f_apart)
                    })
                    .collect();
                eprintln!(
                    "{host} {suite} {runs} run(s): A/A called {false_in:.3} interleaved, \
                     {false_apart:.3} apart; half-width ±{width_in:.1} % against \
                     ±{width_apart:.1} %; 1.5x found (interleaved, apart) {found:?}; \
                     at the repetition: A/A called {false_fine:.3}, ±{width_fine:.1} %"
                );
                assert!(false_fine <= 0.05, "{host} {suite} {runs}: {false_fine}");
                assert!(false_in <= 0.05, "{host} {suite} {runs}: {false_in}");
                assert!(false_apart <= 0.05, "{host} {suite} {runs}: {false_apart}");
                assert!(
                    found.iter().all(|&(i, _)| i >= 0.95),
                    "{host} {suite} {runs}: {found:?}"
                );
            }
        }
    }
}

#[test]
fn paired_rounds_are_the_differences_of_round_medians() {
    let d = Levels::paired(&[vec![
        (vec![100.0, 90.0, 110.0], vec![200.0]),
        (vec![], vec![50.0]),
        (vec![100.0], vec![50.0]),
    ]])
    .unwrap();
    assert_eq!(d.runs(), 1);
    assert_eq!(d.top(), Level::Rounds);
    // ln 2 and ln 0.5: the round with an empty side is left out
    let units = d.top_units();
    assert_eq!(units.len(), 2);
    assert!((units[0] - 2f64.ln()).abs() < 1e-12 && (units[1] - 0.5f64.ln()).abs() < 1e-12);
    assert!(d.estimate().abs() < 1e-12);
    assert_eq!(Levels::paired(&[vec![(vec![1.0], vec![0.0])]]), None);
    assert_eq!(Levels::paired(&[vec![(vec![], vec![1.0])]]), None);
    // an A/A pair measured twice alike: a zero-width interval at 1
    let same = Levels::paired(&[vec![(vec![5.0], vec![5.0]), (vec![7.0], vec![7.0])]]).unwrap();
    let r = paired_log_ratio(&same, 1, 100);
    assert_eq!((r.point, r.interval(0.95)), (0.0, (0.0, 0.0)));
    assert_eq!(r.spread, (RunSpread::Paired, RunSpread::Paired));
    // the differences' own spread: 40 rounds of ±10 % give
    // t(39) x sd / sqrt(40) either way
    let rounds: Vec<(Vec<f64>, Vec<f64>)> = (0..40)
        .map(|i| {
            (
                vec![100.0],
                vec![if i % 2 == 0 { 110.0 } else { 100.0 / 1.1 }],
            )
        })
        .collect();
    let apart = Levels::paired(&[rounds]).unwrap();
    let (lo, hi) = paired_log_ratio(&apart, 1, 4000).interval(0.95);
    let sd = variance(&apart.top_units()).unwrap().sqrt();
    let want = crate::stats::dist::t_quantile(0.975, 39.0) * sd / 40f64.sqrt();
    assert!(
        (hi - want).abs() < 0.1 * want && (lo + want).abs() < 0.1 * want,
        "{lo} {hi} {want}"
    );
}

#[test]
fn the_cookbook_for_interleaved_runs_counts_the_rounds() {
    // differences that spread 10 % between rounds, nothing between runs:
    // 12 rounds a run give ±6.4 % with one run (t(11)), so a margin of
    // 5 % needs two, 2 % needs 9 and 1 % more than 10
    let c = Components {
        runs: None,
        rounds: Some(0.01),
        repetitions: None,
    };
    assert_eq!(
        c.interleaved_runs_needed(12.0, 0.07, 10, (false, false)),
        Some(1)
    );
    assert_eq!(
        c.interleaved_runs_needed(12.0, 0.05, 10, (false, false)),
        Some(2)
    );
    assert_eq!(
        c.interleaved_runs_needed(12.0, 0.02, 10, (false, false)),
        Some(9)
    );
    assert_eq!(
        c.interleaved_runs_needed(12.0, 0.01, 10, (false, false)),
        None
    );
    // runs that differ beyond their rounds count with n - 1 degrees of
    // freedom: t(1) · √(V₁/2) = ±31.5 % at two, ±4.4 % at five; pooled
    // with their rounds, t(23) gives ±4.3 % at two
    let runs = Components {
        runs: Some(0.0004),
        ..c
    };
    assert_eq!(
        runs.interleaved_runs_needed(12.0, 0.05, 10, (true, false)),
        Some(5)
    );
    assert_eq!(
        runs.interleaved_runs_needed(12.0, 0.05, 10, (false, false)),
        Some(2)
    );
    // runs that differ are never planned as one run, however wide the margin
    assert_eq!(
        runs.interleaved_runs_needed(12.0, 0.5, 10, (true, false)),
        Some(2)
    );
}

/// The advice plans as the interval is made: at the runs measured, the
/// half-width it plans with ([`Components::interleaved_half_width`], the
/// runs' degrees of freedom where the interval's [`LogRatio::runs_differ`])
/// is the interval's within 25 % in 99 % of
/// null two-run pairs or more. Planned by the moment estimate instead
/// (the runs' n − 1 whenever σ²runs > 0), it was t(1) = 12.7 against the
/// interval's t(23) in about a quarter of them.
#[test]
fn the_advice_plans_with_the_intervals_degrees_of_freedom() {
    for (name, h) in [("drifting", DRIFTING_HOUR), ("quiet", QUIET_HOUR)] {
        let (mut off, mut off_before, mut differ, seeds) = (0, 0, 0, 400);
        for seed in 0..seeds {
            let mut rng = Rng::new(83_000 + seed);
            let d = interleaved(&mut rng, 1.0, 2, QUICK, h);
            let lr = paired_log_ratio(&d, seed, 2000);
            let (lo, hi) = lr.interval(0.95);
            let shown = (hi - lo) / 2.0;
            let c = d.components();
            let r = d.rounds_per_run();
            let planned = c.interleaved_half_width(2, r, (lr.runs_differ, lr.placed));
            let before = c.interleaved_half_width(2, r, (c.runs.is_some_and(|v| v > 0.0), false));
            let apart = |p: Option<f64>| (p.unwrap() / shown).ln().abs() > 1.25f64.ln();
            differ += usize::from(lr.runs_differ);
            off += usize::from(apart(planned));
            off_before += usize::from(apart(before));
        }
        let (off, before) = (off as f64 / seeds as f64, off_before as f64 / seeds as f64);
        eprintln!(
            "{name}: planned beyond 25 % of the interval {off:.3}, by the moments {before:.3}; \
             runs told apart in {differ} of {seeds}"
        );
        assert!(off <= 0.01, "{name}: {off}");
        // both plans were met: runs told apart by the test, and pooled
        assert!(
            (1..seeds as usize / 2).contains(&differ),
            "{name}: {differ}"
        );
        assert!(
            before >= 0.1,
            "{name}: the moments' rule agreed already ({before})"
        );
    }
}

/// `runs` interleaved runs as [`interleaved`] makes them, each run adding
/// `own` (sd of ln) to `other` alone: a run that treats the two sides
/// differently, which no pairing cancels.
fn interleaved_own(
    rng: &mut Rng,
    effect: f64,
    runs: usize,
    (rounds, reps): (usize, usize),
    h: Host,
    own: f64,
) -> Levels {
    let runs: Vec<Vec<(Vec<f64>, Vec<f64>)>> = (0..runs)
        .map(|_| {
            let off = (own * normal(rng)).exp();
            path(rng, h, rounds)
                .into_iter()
                .map(|d| {
                    let base = round(rng, 100.0, d, h, reps);
                    let other = round(rng, 100.0 * effect, d, h, reps);
                    (base, other.into_iter().map(|v| v * off).collect())
                })
                .collect()
        })
        .collect();
    Levels::paired(&runs).unwrap()
}

/// Over `seeds` quick-shaped interleaved comparisons with runs pooled by a
/// test at `level`: (A/A called beyond ±2 %, its median half-width in %,
/// 1.15x found slower).
fn pooled_at(h: Host, runs: usize, own: f64, level: f64, seeds: u64) -> (f64, f64, f64) {
    use super::super::paired::paired_log_ratio_at;
    let (called, width) = score(seeds, |seed| {
        let mut rng = Rng::new(61_000 + seed);
        let l = interleaved_own(&mut rng, 1.0, runs, QUICK, h, own);
        paired_log_ratio_at(&l, seed, 200, level)
    });
    let band = 1.02f64.ln();
    let found = (0..seeds)
        .filter(|&seed| {
            let mut rng = Rng::new(67_000 + seed);
            let l = interleaved_own(&mut rng, 1.15, runs, QUICK, h, own);
            paired_log_ratio_at(&l, seed, 200, level).interval(0.95).0 > band
        })
        .count();
    (called, width, found as f64 / seeds as f64)
}

/// Two interleaved runs must find nearly what one finds: pooling their
/// paired rounds by a test at 25 % gave a quarter of them the runs' single
/// degree of freedom (t = 12.7), so that a 1.15x effect was found 0.74 of
/// the time at two runs against 0.95-1.00 at one. At
/// [`PAIRED_POOL_TEST_LEVEL`] (5 %), two and three runs find it within 7
/// points of one run (the pair in twenty whose runs differ by chance
/// beyond the test still gets t(1); quiet, two runs: 0.943 against 1.000),
/// and at least as often as at 25 %, with A/A at most 5 % called and
/// intervals no wider; and where each run treats the sides differently by
/// ±4 % (which one run cannot see), two runs call A/A less often than one
/// run does.
#[test]
fn two_interleaved_runs_find_nearly_what_one_finds() {
    for (hour, h) in [("drifting", DRIFTING_HOUR), ("quiet", QUIET_HOUR)] {
        let one = pooled_at(h, 1, 0.0, PAIRED_POOL_TEST_LEVEL, 400);
        let one_own = pooled_at(h, 1, 0.04, PAIRED_POOL_TEST_LEVEL, 400);
        for runs in [2, 3] {
            let before = pooled_at(h, runs, 0.0, POOL_TEST_LEVEL, 400);
            let after = pooled_at(h, runs, 0.0, PAIRED_POOL_TEST_LEVEL, 400);
            let own = pooled_at(h, runs, 0.04, PAIRED_POOL_TEST_LEVEL, 400);
            let own_before = pooled_at(h, runs, 0.04, POOL_TEST_LEVEL, 400);
            eprintln!(
                "{hour} quick, {runs} runs: A/A called {:.3} -> {:.3}, ±{:.1} % -> ±{:.1} %, \
                 1.15x found {:.3} -> {:.3} (one run: {:.3}, ±{:.1} %); runs ±4 % on one side: \
                 A/A called {:.3} -> {:.3} (one run: {:.3})",
                before.0,
                after.0,
                before.1,
                after.1,
                before.2,
                after.2,
                one.2,
                one.1,
                own_before.0,
                own.0,
                one_own.0,
            );
            assert!(after.0 <= 0.05, "{hour} {runs}: {after:?}");
            assert!(after.1 <= before.1, "{hour} {runs}: {after:?} {before:?}");
            assert!(after.2 >= before.2, "{hour} {runs}: {after:?} {before:?}");
            assert!(after.2 >= one.2 - 0.07, "{hour} {runs}: {after:?} {one:?}");
            assert!(own.0 < one_own.0, "{hour} {runs}: {own:?} {one_own:?}");
        }
    }
}

mod place;
