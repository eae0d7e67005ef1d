//! `compare --by-dir` on a run whose two directories ran each case in
//! turns, on seeded hosts that move between rounds: both error rates and
//! the width of A/A intervals, at 1 and 3 runs, paired as the rule pairs
//! (the rounds both directories ran, four or more: `per_metric`'s
//! `DIR_PAIRED_ROUNDS`) against the same files compared apart.

use super::{run_rounds, OPTS};
use crate::compare::*;
use crate::stats::levels::{normal, tests::synth};
use crate::stats::rng::Rng;

/// The shape of a seeded by-dir run.
#[derive(Clone, Copy)]
struct Shape {
    /// The host's move between one pass and the next (log sd), shared
    /// by a case's two directories within a pass.
    host: f64,
    /// Runs.
    runs: usize,
    /// Passes; `local` runs each case in every one.
    rounds: usize,
    /// `share` runs a case in every `every`-th pass and the last, as a
    /// dear case does.
    every: usize,
    /// `local` skips the last pass (a round that failed there), so that
    /// the rounds both ran are fewer than either ran.
    local_skips_last: bool,
}

/// `shape.runs` runs of `metrics` cases, each in directories `local` and
/// `share`, the two directories of a case one right after the other in
/// every pass that ran both (which first drawn per pass); `share`
/// `effect` times `local`. The host moves 5 % between runs (as in
/// `interleaved::pair`) and `shape.host` between passes, each move shared
/// by a case's two directories; each directory adds ±4 % of its own per
/// round and ±2 % per repetition (3 a round).
fn dir_runs(rng: &mut Rng, shape: Shape, metrics: usize, effect: f64) -> Vec<ResultFile> {
    let share_ran = |r: usize| r.is_multiple_of(shape.every) || r + 1 == shape.rounds;
    let local_ran = |r: usize| !(shape.local_skips_last && r + 1 == shape.rounds);
    (0..shape.runs)
        .map(|run| {
            let run_drift = 0.05 * normal(rng);
            let mut cases = Vec::new();
            let mut rounds_of = Vec::new();
            let mut orders = vec![Vec::new(); shape.rounds];
            for i in 0..metrics {
                let host: Vec<f64> = (0..shape.rounds)
                    .map(|_| (run_drift + shape.host * normal(rng)).exp())
                    .collect();
                let keys = ["local", "share"].map(|d| format!("os.case{i}[dir={d}]"));
                for (r, order) in orders.iter_mut().enumerate() {
                    let mut pair = Vec::new();
                    if local_ran(r) {
                        pair.push(keys[0].clone());
                    }
                    if share_ran(r) {
                        pair.insert(
                            usize::from(rng.unit_f64() < 0.5) * pair.len(),
                            keys[1].clone(),
                        );
                    }
                    order.extend(pair);
                }
                for (d, key) in keys.iter().enumerate() {
                    let center = 100.0 * if d == 1 { effect } else { 1.0 };
                    let data = synth(rng, center, (1, shape.rounds, 3), (0.0, 0.04, 0.02));
                    let (numbers, rounds): (Vec<u32>, Vec<Vec<f64>>) = data[0]
                        .iter()
                        .zip(&host)
                        .enumerate()
                        .filter(|(r, _)| if d == 0 { local_ran(*r) } else { share_ran(*r) })
                        .map(|(r, (reps, h))| (r as u32, reps.iter().map(|v| v * h).collect()))
                        .unzip();
                    rounds_of.push(numbers);
                    cases.push((key.clone(), Direction::LowerIsBetter, rounds));
                }
            }
            let mut file = run_rounds("run", &format!("run{run}"), &cases);
            for (case, numbers) in file.cases.iter_mut().zip(&rounds_of) {
                case.sample_rounds = numbers.iter().flat_map(|&n| [n; 3]).collect();
            }
            file.config.workers = true;
            file.rounds = Some(crate::results::Rounds {
                planned: shape.rounds as u32,
                started: shape.rounds as u32,
                seed: 1,
                orders,
                interleave: None,
            });
            file
        })
        .collect()
}

/// Over 20 seeded comparisons: the share of headline metrics called
/// faster or slower, the share found slower, the median 95 % half-width
/// in %, and whether every metric was compared round by round.
struct Score {
    called: f64,
    found: f64,
    width: f64,
    paired: bool,
}

fn score(shape: Shape, effect: f64, apart: bool) -> Score {
    let (mut called, mut found, mut total, mut widths) = (0, 0, 0, vec![]);
    let mut paired = true;
    for seed in 0..20 {
        let mut rng = Rng::new(83_000 + seed);
        let mut files = dir_runs(&mut rng, shape, 8, effect);
        if apart {
            // no order recorded: not in turns, compared as separate runs
            files.iter_mut().for_each(|f| f.rounds = None);
        }
        let envs = super::super::group::by_dir(files);
        assert_eq!(envs[0].label, "local");
        let c = compare_as(&envs, &Options { seed, ..OPTS }, true).unwrap();
        for m in c.metrics.iter().filter(|m| m.primary) {
            paired &= m.basis.run_spread.0.is_paired();
            called += usize::from(matches!(m.verdict, Verdict::Faster | Verdict::Slower));
            found += usize::from(m.verdict == Verdict::Slower);
            total += 1;
            widths.push(m.equivalence_bound * 100.0);
        }
    }
    widths.sort_by(f64::total_cmp);
    Score {
        called: called as f64 / total as f64,
        found: found as f64 / total as f64,
        width: widths[widths.len() / 2],
        paired,
    }
}

#[test]
fn directories_in_turns_pair_from_four_common_rounds_and_hold_both_error_rates() {
    // (rounds, every): both directories in every pass, and a dear share in
    // some passes only (quick's 12 passes: every 4th and every 6th)
    let plans = [(3, 1), (4, 1), (6, 1), (12, 1), (12, 4), (12, 6)];
    for host in [0.0, 0.10] {
        for runs in [1, 2, 3] {
            for (rounds, every) in plans {
                let shape = Shape {
                    host,
                    runs,
                    rounds,
                    every,
                    local_skips_last: false,
                };
                let common = (0..rounds)
                    .filter(|r| r.is_multiple_of(every) || r + 1 == rounds)
                    .count();
                let [aa, fx, aa_apart, fx_apart] =
                    [(1.0, false), (1.25, false), (1.0, true), (1.25, true)]
                        .map(|(effect, apart)| score(shape, effect, apart));
                eprintln!(
                    "host ±{:.0} %, {runs} run(s), {common} of {rounds} rounds in both: \
                     {} A/A called {:.3} within ±{:.1} %, 1.25x found {:.3}; \
                     apart: A/A called {:.3} within ±{:.1} %, 1.25x found {:.3}",
                    host * 100.0,
                    if aa.paired { "paired" } else { "apart" },
                    aa.called,
                    aa.width,
                    fx.found,
                    aa_apart.called,
                    aa_apart.width,
                    fx_apart.found,
                );
                let tag = format!("host {host}, {runs}x{rounds}/{every}");
                assert_eq!(aa.paired, runs * common >= 4, "{tag}");
                assert!(!aa_apart.paired, "{tag}");
                assert!(aa.called <= 0.05, "{tag}: {}", aa.called);
                if aa.paired {
                    // pairing finds what apart finds, and says "the
                    // same" more narrowly
                    assert!(fx.found >= fx_apart.found - 0.02, "{tag}");
                    // and finds it at every number of runs (two runs
                    // found it 0.71-0.79 of the time while their rounds
                    // were pooled by a test at 25 %)
                    assert!(fx.found >= 0.85, "{tag}: {}", fx.found);
                    assert!(aa.width <= aa_apart.width, "{tag}");
                }
            }
        }
    }
}

#[test]
fn the_basis_counts_the_rounds_both_directories_ran() {
    // share runs passes 0, 3, 6, 9 and 11 of 12, local every pass but the
    // last: four rounds in both, which the basis counts (the advice reads it)
    // (not local's 11 or share's 5)
    let shape = Shape {
        host: 0.1,
        runs: 1,
        rounds: 12,
        every: 3,
        local_skips_last: true,
    };
    let mut rng = Rng::new(83_100);
    let envs = super::super::group::by_dir(dir_runs(&mut rng, shape, 4, 1.0));
    let c = compare_as(&envs, &OPTS, true).unwrap();
    assert_eq!(c.metrics.iter().filter(|m| m.primary).count(), 4);
    for m in c.metrics.iter().filter(|m| m.primary) {
        assert!(m.basis.run_spread.0.is_paired(), "{}", m.key);
        assert_eq!(m.basis.rounds_per_run, (4.0, 4.0), "{}", m.key);
        let text = crate::report::words::basis_text(&m.basis);
        assert_eq!(text, "1 interleaved run, 4 rounds paired", "{}", m.key);
    }
}

#[test]
fn the_directories_places_in_each_round_are_read_from_its_order() {
    let shape = Shape {
        host: 0.0,
        runs: 1,
        rounds: 8,
        every: 1,
        local_skips_last: false,
    };
    let files = dir_runs(&mut Rng::new(5), shape, 2, 1.0);
    let orders = files[0].rounds.as_ref().unwrap().orders.clone();
    let envs = super::super::group::by_dir(files);
    let (local, share) = (&envs[0].runs[0], &envs[1].runs[0]);
    let key = &local.cases[1].key;
    let firsts = super::super::pairing::base_first((local, share), key, Some(("local", "share")));
    assert_eq!(firsts.len(), 8);
    let mut both = [false, false];
    for (r, order) in orders.iter().enumerate() {
        let at = |d: &str| {
            order
                .iter()
                .position(|k| *k == format!("os.case1[dir={d}]"))
        };
        let first = at("local").unwrap() < at("share").unwrap();
        assert_eq!(firsts[&(r as u32)], first, "round {r}");
        both[usize::from(first)] = true;
    }
    // the draw put each first somewhere: the test tells the two apart
    assert_eq!(both, [true, true]);
}
