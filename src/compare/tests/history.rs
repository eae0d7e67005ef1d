//! A side with one run borrows the spread between runs from earlier runs
//! of its label (the history), unless those disagree among themselves far
//! beyond their own intervals: one label given to two environments.

use super::{env, run_rounds, OPTS};
use crate::compare::*;
use crate::stats::levels::{tests::synth, RunSpread};
use crate::stats::rng::Rng;

/// One run of `label` (`id`) of two cases around `center` ns, 12 rounds
/// of 2 repetitions in workers, 3 % between rounds, the run `drift` (sd
/// of ln) away.
fn one_run(rng: &mut Rng, label: &str, id: &str, center: f64, drift: f64) -> ResultFile {
    let at = center * (drift * crate::stats::levels::normal(rng)).exp();
    let cases: Vec<(String, Direction, Vec<Vec<f64>>)> = (0..2)
        .map(|i| {
            let mut data = synth(rng, at, (1, 12, 2), (0.0, 0.03, 0.01));
            (
                format!("os.case{i}"),
                Direction::LowerIsBetter,
                data.remove(0),
            )
        })
        .collect();
    let mut f = run_rounds(label, id, &cases);
    f.config.workers = true;
    f
}

/// Plain A against B traced (140x slower) with one run each; A's history
/// holds 6 plain runs, B's 6 plain and 3 traced (the label reused).
fn reused(rng: &mut Rng) -> [Environment; 2] {
    let mut a = env("A", vec![one_run(rng, "A", "a", 100.0, 0.05)]);
    let mut b = env("B", vec![one_run(rng, "B", "b", 14_000.0, 0.05)]);
    a.earlier = (0..6)
        .map(|i| one_run(rng, "A", &format!("a{i}"), 100.0, 0.05))
        .collect();
    b.earlier = (0..9)
        .map(|i| {
            let center = if i < 6 { 100.0 } else { 14_000.0 };
            one_run(rng, "B", &format!("b{i}"), center, 0.05)
        })
        .collect();
    [a, b]
}

#[test]
fn earlier_runs_of_two_environments_under_one_label_are_not_the_spread_between_runs() {
    for seed in 0..20 {
        let mut rng = Rng::new(seed);
        let envs = reused(&mut rng);
        let c = compare(&envs, &Options { seed, ..OPTS }).unwrap();
        for m in c.metrics.iter().filter(|m| m.primary) {
            // before: B's history spread made the 140x interval 5e-6 .. 8
            assert_eq!(m.verdict, Verdict::Slower, "seed {seed}: {:?}", m.ratio_ci);
            assert!(matches!(m.basis.run_spread.0, RunSpread::History { .. }));
            assert!(matches!(m.basis.run_spread.1, RunSpread::Workers { .. }));
        }
        assert_eq!(c.split_history, vec![("B".to_string(), 2)]);
        let advice = crate::report::comparison::conclude::advice(&c);
        assert!(
            advice[0].starts_with("the earlier runs of B disagree among themselves"),
            "{advice:?}"
        );
    }
}

#[test]
fn earlier_runs_that_drift_are_the_spread_between_runs() {
    // 6 earlier runs drifting 10 % (more than this project's VMs showed)
    // are never taken for two environments, over 200 seeds
    for seed in 0..200 {
        let mut rng = Rng::new(seed);
        let mut a = env("A", vec![one_run(&mut rng, "A", "a", 100.0, 0.10)]);
        a.earlier = (0..6)
            .map(|i| one_run(&mut rng, "A", &format!("a{i}"), 100.0, 0.10))
            .collect();
        let b = env("B", vec![one_run(&mut rng, "B", "b", 100.0, 0.10)]);
        let c = compare(&[a, b], &Options { seed, ..OPTS }).unwrap();
        assert!(c.split_history.is_empty(), "seed {seed}");
        assert!(c
            .metrics
            .iter()
            .all(|m| matches!(m.basis.run_spread.0, RunSpread::History { runs: 6, .. })));
    }
}
