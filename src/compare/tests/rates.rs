//! Both error rates at the sizes envbench produces: A/A comparisons call
//! at most 5 % of headline metrics, and known effects are found with one
//! run and with three runs per side.

use super::{one_metric, outcomes, synthetic, OPTS};
use crate::compare::*;
use crate::stats::rng::Rng;

#[test]
fn a_to_a_false_verdicts_stay_under_five_percent_at_envbench_sizes() {
    for (runs, rounds) in [(1, 3), (3, 1), (3, 3), (1, 1)] {
        let (mut called, mut total) = (0, 0);
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let envs = synthetic(&mut rng, runs, rounds, 10, &|_| 1.0);
            let c = compare(&envs, &Options { seed, ..OPTS }).unwrap();
            let v = outcomes(&c);
            called += v
                .iter()
                .filter(|v| matches!(v, Verdict::Faster | Verdict::Slower))
                .count();
            total += v.len();
        }
        let rate = called as f64 / total as f64;
        assert!(rate <= 0.05, "{runs} run(s) x {rounds} round(s): {rate}");
    }
}

#[test]
fn two_fold_effects_are_found_every_time() {
    for (runs, rounds) in [(1, 3), (3, 1)] {
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            // half the metrics 2x faster, half 2x slower; none drifting 20 %
            let envs = synthetic(&mut rng, runs, rounds, 9, &|i| {
                if i < 5 {
                    2.0
                } else {
                    0.5
                }
            });
            let c = compare(&envs, &Options { seed, ..OPTS }).unwrap();
            for m in c.metrics.iter().filter(|m| m.key != "os.case0") {
                let i: usize = m.key["os.case".len()..].parse().unwrap();
                let want = if i < 5 {
                    Verdict::Faster
                } else {
                    Verdict::Slower
                };
                assert_eq!(
                    m.verdict, want,
                    "{runs}x{rounds} seed {seed} {}: {:?}",
                    m.key, m.ratio_ci
                );
            }
        }
    }
}

#[test]
fn a_few_large_effects_among_many_nulls_are_still_found() {
    // one run per side, 20 headline metrics, two of them 2x: the false
    // coverage adjustment widens their intervals, and they still clear the band
    for seed in 0..50 {
        let mut rng = Rng::new(seed);
        let envs = synthetic(&mut rng, 1, 3, 20, &|i| {
            if i == 3 || i == 4 {
                2.0
            } else {
                1.0
            }
        });
        let c = compare(&envs, &Options { seed, ..OPTS }).unwrap();
        let get = |k: &str| c.metrics.iter().find(|m| m.key == k).unwrap();
        assert_eq!(get("os.case3").verdict, Verdict::Faster, "seed {seed}");
        assert_eq!(get("os.case4").verdict, Verdict::Faster, "seed {seed}");
        let adjusted = get("os.case3").confidence_adjusted.unwrap();
        assert!(adjusted > 0.95 && adjusted < 1.0, "{adjusted}");
    }
}

#[test]
fn a_five_percent_effect_with_one_percent_noise_is_found_with_three_runs() {
    use crate::stats::levels::tests::synth;
    let mut found = 0;
    for seed in 0..200 {
        let mut rng = Rng::new(seed);
        let mk = |rng: &mut Rng, label: &str, center: f64| {
            one_metric(label, synth(rng, center, (3, 3, 5), (0.0, 0.0, 0.01)))
        };
        let envs = [mk(&mut rng, "A", 100.0), mk(&mut rng, "B", 105.0)];
        let c = compare(&envs, &Options { seed, ..OPTS }).unwrap();
        found += usize::from(c.metrics[0].verdict == Verdict::Faster);
    }
    assert!(found >= 196, "{found} of 200");
}

#[test]
fn every_verdict_agrees_with_the_interval_it_rests_on() {
    // A/A comparisons of many metrics: a metric whose 95 % interval lies
    // beyond the band without being selected is unclear, and carries the
    // widened interval that says so; selected ones are judged by theirs
    let (mut rested_unclear, mut rested_called) = (0, 0);
    for seed in 0..100 {
        let mut rng = Rng::new(seed);
        let envs = synthetic(&mut rng, 1, 3, 20, &|i| if i == 3 { 1.3 } else { 1.0 });
        let c = compare(&envs, &Options { seed, ..OPTS }).unwrap();
        for m in &c.metrics {
            let plain = crate::compare::verdict::classify(m.speedup_ci(), OPTS.threshold);
            let (lo, hi) = m.verdict_ci();
            assert_eq!(
                crate::compare::verdict::classify((lo, hi), OPTS.threshold),
                m.verdict,
                "seed {seed} {}: plain {:?} wide {:?}",
                m.key,
                m.speedup_ci(),
                m.ratio_ci_adjusted
            );
            // "within", printed beside the verdict, is the reach of the
            // interval the verdict reads, not of the narrower 95 % one
            let reach = (1.0 / lo).max(hi) - 1.0;
            assert!(
                (m.verdict_bound() - reach).abs() <= 1e-9 * reach.max(1.0),
                "seed {seed} {}: within {} for {lo}..{hi}",
                m.key,
                m.verdict_bound()
            );
            assert!(m.verdict_bound() >= m.equivalence_bound - 1e-12);
            if m.ratio_ci_adjusted.is_some() {
                assert!(m.primary);
                assert!(lo <= m.speedup_ci().0 && hi >= m.speedup_ci().1);
                assert!(m.verdict_bound() > m.equivalence_bound, "{}", m.key);
                match m.verdict {
                    Verdict::Unclear => rested_unclear += 1,
                    _ => rested_called += 1,
                }
            } else if m.primary {
                // the 95 % interval decided: inside the band, or across an edge
                assert!(
                    matches!(plain, Verdict::Tie | Verdict::Unclear),
                    "{plain:?}"
                );
            }
        }
    }
    // both kinds occur, so the checks above were made
    assert!(
        rested_unclear > 0 && rested_called > 0,
        "{rested_unclear} {rested_called}"
    );
}
