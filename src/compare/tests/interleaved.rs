//! Files of one interleaved run (`run --in`) are compared round by round:
//! the drift their rounds shared cancels, both error rates hold at 1 and
//! 3 interleaved runs, and files that do not pair are compared as before.

use super::{env, run_rounds, OPTS};
use crate::compare::pairing::Unpaired;
use crate::compare::*;
use crate::results::{CaseStatus, Interleave, InterleavedEnv, Rounds};
use crate::stats::levels::{tests::synth, RunSpread};
use crate::stats::rng::Rng;

/// Marks `file` as environment `index` of the interleaved run `id` of A and B.
fn interleave(mut file: ResultFile, id: &str, index: u32) -> ResultFile {
    let rounds = file.cases[0]
        .sample_rounds
        .iter()
        .max()
        .map_or(0, |r| r + 1);
    // every case ran in every round, in both environments
    let keys: Vec<String> = file.cases.iter().map(|c| c.key.clone()).collect();
    for c in &mut file.cases {
        c.rounds = (0..rounds)
            .map(|round| crate::results::CaseRound {
                round,
                started_utc: String::new(),
                duration_secs: 0.0,
                warmup_reps: 0,
                reps: c.sample_rounds.iter().filter(|&&s| s == round).count() as u32,
                stop_reason: "budget".into(),
                status: CaseStatus::Ok,
                worker_pid: None,
                settle_secs: None,
                once_secs: None,
                waited_secs: None,
            })
            .collect();
    }
    file.rounds = Some(Rounds {
        planned: rounds,
        started: rounds,
        seed: 1,
        orders: vec![keys.clone(); rounds as usize],
        interleave: Some(Interleave {
            id: id.into(),
            environments: ["A", "B"]
                .map(|name| InterleavedEnv {
                    name: name.into(),
                    prefix: vec![],
                    binary: None,
                    run_id: None,
                    launches: None,
                })
                .to_vec(),
            index,
            env_orders: vec![vec![vec![0, 1]; keys.len()]; rounds as usize],
        }),
    });
    file.config.workers = true;
    file
}

/// A and B measured in `runs` interleaved runs of `rounds` rounds (3
/// repetitions each) of `metrics` cases, B `effect(i)` times A on case i;
/// the host drifts over each run (the second half of its passes `step`
/// times slower for everything) and moves 5 % between runs.
pub(crate) fn pair(
    rng: &mut Rng,
    runs: usize,
    rounds: usize,
    metrics: usize,
    step: f64,
    effect: &dyn Fn(usize) -> f64,
) -> [Environment; 2] {
    let mut files: [Vec<ResultFile>; 2] = [vec![], vec![]];
    for r in 0..runs {
        let run_drift = (0.05 * crate::stats::levels::normal(rng)).exp();
        let host = |round: usize| run_drift * if round >= rounds / 2 { step } else { 1.0 };
        for (side, files) in files.iter_mut().enumerate() {
            let label = ["A", "B"][side];
            let cases: Vec<(String, Direction, Vec<Vec<f64>>)> = (0..metrics)
                .map(|i| {
                    let e = if side == 1 { effect(i) } else { 1.0 };
                    let mut data = synth(rng, 100.0 * e, (1, rounds, 3), (0.0, 0.04, 0.02));
                    for (round, reps) in data[0].iter_mut().enumerate() {
                        reps.iter_mut().for_each(|v| *v /= host(round));
                    }
                    (
                        format!("os.case{i}"),
                        Direction::LowerIsBetter,
                        data.remove(0),
                    )
                })
                .collect();
            let file = run_rounds(label, &format!("{label}{r}"), &cases);
            files.push(interleave(file, &format!("i{r}"), side as u32));
        }
    }
    let [a, b] = files;
    [env("A", a), env("B", b)]
}

/// The same files with their interleave block removed: separate runs.
pub(crate) fn apart(envs: &[Environment; 2]) -> [Environment; 2] {
    envs.clone().map(|mut e| {
        e.runs.iter_mut().for_each(|r| r.rounds = None);
        e
    })
}

/// Over `seeds` comparisons made by `make(seed)`: the share of headline
/// metrics called faster or slower, and the median 95 % half-width in %.
fn score(seeds: u64, make: impl Fn(&mut Rng) -> [Environment; 2], sep: bool) -> (f64, f64) {
    let (mut called, mut total, mut widths) = (0, 0, vec![]);
    for seed in 0..seeds {
        let mut rng = Rng::new(61_000 + seed);
        let mut envs = make(&mut rng);
        if sep {
            envs = apart(&envs);
        }
        let c = compare(&envs, &Options { seed, ..OPTS }).unwrap();
        assert_eq!(c.interleaved(), !sep);
        for m in c.metrics.iter().filter(|m| m.primary) {
            assert_eq!(m.basis.run_spread.0.is_paired(), !sep);
            called += usize::from(matches!(m.verdict, Verdict::Faster | Verdict::Slower));
            total += 1;
            widths.push(m.equivalence_bound * 100.0);
        }
    }
    widths.sort_by(f64::total_cmp);
    (called as f64 / total as f64, widths[widths.len() / 2])
}

#[test]
fn a_to_a_interleaved_cancels_the_drift_and_calls_nothing() {
    // the host 25 % slower for the second half of each run
    for (runs, rounds) in [(1, 12), (1, 16), (3, 12)] {
        let make = |rng: &mut Rng| pair(rng, runs, rounds, 10, 1.25, &|_| 1.0);
        let (called, width) = score(40, make, false);
        let (called_apart, width_apart) = score(40, make, true);
        eprintln!(
            "A/A {runs} run(s) x {rounds} rounds: called {called:.3} interleaved, \
             {called_apart:.3} apart; within ±{width:.1} % against ±{width_apart:.1} %"
        );
        assert!(called <= 0.05, "{runs}x{rounds}: {called}");
        assert!(
            width < width_apart / 2.0,
            "{runs}x{rounds}: {width} {width_apart}"
        );
    }
}

#[test]
fn effects_of_one_and_a_half_are_found_with_one_interleaved_run() {
    for (runs, rounds) in [(1, 12), (3, 12)] {
        for seed in 0..40 {
            let mut rng = Rng::new(seed);
            let envs = pair(&mut rng, runs, rounds, 8, 1.25, &|i| {
                if i % 2 == 0 {
                    1.5
                } else {
                    1.0 / 1.5
                }
            });
            let c = compare(&envs, &Options { seed, ..OPTS }).unwrap();
            for m in c.metrics.iter().filter(|m| m.primary) {
                let i: usize = m.key["os.case".len()..].parse().unwrap();
                // lower is better: 1.5x the time is slower
                let want = if i.is_multiple_of(2) {
                    Verdict::Slower
                } else {
                    Verdict::Faster
                };
                assert_eq!(m.verdict, want, "{runs}x{rounds} seed {seed} {}", m.key);
            }
        }
    }
}

#[test]
fn only_files_of_the_same_interleaved_runs_are_paired() {
    let mut rng = Rng::new(3);
    let [a, b] = pair(&mut rng, 2, 12, 2, 1.0, &|_| 1.0);
    // paired one to one, whatever the order the files were given in
    let mut reversed = b.clone();
    reversed.runs.reverse();
    let c = compare(&[a.clone(), reversed], &OPTS).unwrap();
    assert!(c.interleaved() && c.environments[1].interleaved);
    assert!(!c.environments[0].interleaved);
    // a run of B from another interleaved run: the runs that pair are
    // compared round by round, the other two are left out, each with why
    let mut other_run = b.clone();
    if let Some(i) = other_run.runs[1]
        .rounds
        .as_mut()
        .unwrap()
        .interleave
        .as_mut()
    {
        i.id = "elsewhere".into();
    }
    let c = compare(&[a.clone(), other_run], &OPTS).unwrap();
    assert!(c.interleaved());
    let left: Vec<(&str, &Unpaired)> = c
        .notices
        .iter()
        .filter_map(|n| match n {
            Notice::Unpaired { left, apart, .. } => {
                assert!(!apart, "one pair is left");
                Some((left.run_id.as_str(), &left.why))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        left,
        [("B1", &Unpaired::NoPartner), ("A1", &Unpaired::NoPartner)]
    );
    // a run more on one side: it is left out, the others pair
    let fewer = env("A", a.runs[..1].to_vec());
    let c = compare(&[fewer, b.clone()], &OPTS).unwrap();
    assert!(c.interleaved());
    assert_eq!(
        c.notices
            .iter()
            .filter(|n| matches!(n, Notice::Unpaired { .. }))
            .count(),
        1
    );
    // no run pairs: compared as separate runs, and said so
    let mut apart = b.clone();
    for r in &mut apart.runs {
        r.rounds.as_mut().unwrap().interleave.as_mut().unwrap().id = "elsewhere".into();
    }
    let c = compare(&[a.clone(), apart], &OPTS).unwrap();
    assert!(!c.interleaved());
    assert!(c
        .metrics
        .iter()
        .all(|m| m.basis.run_spread.0 == RunSpread::Measured));
    assert!(c
        .notices
        .iter()
        .any(|n| matches!(n, Notice::Unpaired { apart: true, .. })));
}

#[test]
fn a_case_whose_rounds_do_not_pair_is_compared_as_separate_runs() {
    let mut rng = Rng::new(3);
    // one round in one file: that case as separate runs, the others round
    // by round
    let [a1, mut b1] = pair(&mut rng, 1, 12, 2, 1.0, &|_| 1.0);
    let case = &mut b1.runs[0].cases[1];
    let keep = case.sample_rounds.iter().filter(|&&r| r == 5).count();
    let first = case.sample_rounds.iter().position(|&r| r == 5).unwrap();
    case.sample_rounds = vec![5; keep];
    case.metrics[0].samples = case.metrics[0].samples[first..first + keep].to_vec();
    // the rounds it ran say so too (the others were cut short, say)
    case.rounds.retain(|r| r.round == 5);
    let c = compare(&[a1, b1], &OPTS).unwrap();
    let spread = |k: &str| {
        c.metrics
            .iter()
            .find(|m| m.key == k)
            .unwrap()
            .basis
            .run_spread
            .0
    };
    assert!(spread("os.case0").is_paired());
    assert!(matches!(spread("os.case1"), RunSpread::Workers { .. }));
    assert!(
        c.interleaved(),
        "the files are still of one interleaved run"
    );
    // compare --by-dir holds the same runs on both sides: each paired
    // with itself, round by round, whether or not it was interleaved
    let [a2, _] = pair(&mut rng, 1, 12, 2, 1.0, &|_| 1.0);
    let c = compare_as(&[a2.clone(), env("B", a2.runs.clone())], &OPTS, true).unwrap();
    assert!(c.interleaved());
    // a run in one directory only has no partner
    let mut lone = a2.runs[0].clone();
    lone.run_id = "lone".into();
    let mut b = a2.runs.clone();
    b.push(lone);
    let c = compare_as(&[a2.clone(), env("B", b)], &OPTS, true).unwrap();
    assert!(c.interleaved());
    assert!(
        c.notices
            .iter()
            .any(|n| matches!(n, Notice::Unpaired { left, .. } if left.run_id == "lone")),
        "{:?}",
        c.notices
    );
}

#[test]
fn a_run_is_in_turns_where_each_case_ran_in_both_directories_one_after_the_other() {
    let mut rng = Rng::new(5);
    let [a, _] = pair(&mut rng, 1, 2, 2, 1.0, &|_| 1.0);
    // the run as compare --by-dir splits it: its cases without their dir
    let mut run = a.runs[0].clone();
    for (c, (bench, param)) in run
        .cases
        .iter_mut()
        .zip([("io.meta", ("files", 500)), ("io.seq", ("threads", 1))])
    {
        c.bench = bench.into();
        c.params = [(param.0.to_string(), serde_json::json!(param.1))].into();
        c.key = crate::results::case_key(&c.bench, &c.params);
    }
    let keys = |o: &[&str]| o.iter().map(|k| k.to_string()).collect::<Vec<_>>();
    let with = |orders: Vec<Vec<String>>| {
        let mut r = run.clone();
        r.rounds.as_mut().unwrap().orders = orders;
        crate::compare::pairing::in_turns(&r, "local", "share")
    };
    let turns = keys(&[
        "cpu.int",
        "io.meta[dir=share,files=500]",
        "io.meta[dir=local,files=500]",
        "io.seq[dir=local,threads=1]",
        "io.seq[dir=share,threads=1]",
    ]);
    // a pass without one directory's case is in turns too
    let one = keys(&[
        "io.meta[dir=local,files=500]",
        "cpu.int",
        "io.seq[dir=local,threads=1]",
    ]);
    assert!(with(vec![turns.clone(), one]));
    // apart by another case: not in turns
    let apart = keys(&[
        "io.meta[dir=local,files=500]",
        "cpu.int",
        "io.meta[dir=share,files=500]",
    ]);
    assert!(!with(vec![turns, apart]));
    // a directory named as a prefix of another is not mistaken for it
    let prefix = keys(&[
        "io.meta[dir=local2,files=500]",
        "cpu.int",
        "io.meta[dir=share,files=500]",
    ]);
    assert!(with(vec![prefix]));
    // no orders recorded: not in turns
    assert!(!with(Vec::new()));
    run.rounds = None;
    assert!(!crate::compare::pairing::in_turns(&run, "local", "share"));
}

/// `envs` (from [`pair`]) with the environments taking turns going first
/// (A in even rounds, B in odd) and the one going first `first` times as
/// fast (its times divided by it); with `told`, the files' environment
/// orders say so, else they say A went first every round.
fn in_turns(envs: &[Environment; 2], first: f64, told: bool) -> [Environment; 2] {
    envs.clone().map(|mut e| {
        for file in &mut e.runs {
            let index = file
                .rounds
                .as_ref()
                .unwrap()
                .interleave
                .as_ref()
                .unwrap()
                .index;
            for case in &mut file.cases {
                let rounds = case.sample_rounds.clone();
                for (v, r) in case.metrics[0].samples.iter_mut().zip(rounds) {
                    if (r % 2 == 1) == (index == 1) {
                        *v /= first;
                    }
                }
            }
            let il = file.rounds.as_mut().unwrap().interleave.as_mut().unwrap();
            for (r, round) in il.env_orders.iter_mut().enumerate() {
                for order in round.iter_mut() {
                    *order = if told && r % 2 == 1 {
                        vec![1, 0]
                    } else {
                        vec![0, 1]
                    };
                }
            }
        }
        e
    })
}

#[test]
fn the_place_in_the_round_told_by_the_files_is_taken_out() {
    // going first reads 1.18x (io.random in a run that compares did)
    for runs in [1, 3] {
        let (mut told_w, mut untold_w, mut called) = (vec![], vec![], 0);
        for seed in 0..20 {
            let mut rng = Rng::new(seed);
            let envs = pair(&mut rng, runs, 12, 4, 1.0, &|_| 1.0);
            for (told, widths) in [(true, &mut told_w), (false, &mut untold_w)] {
                let c = compare(&in_turns(&envs, 1.18, told), &Options { seed, ..OPTS }).unwrap();
                for m in c.metrics.iter().filter(|m| m.primary) {
                    called += usize::from(matches!(m.verdict, Verdict::Faster | Verdict::Slower));
                    widths.push(m.equivalence_bound);
                }
            }
        }
        let median = |w: &mut Vec<f64>| {
            w.sort_by(f64::total_cmp);
            w[w.len() / 2]
        };
        let (told, untold) = (median(&mut told_w), median(&mut untold_w));
        eprintln!(
            "{runs} run(s): ±{:.1} % told, ±{:.1} % not",
            told * 100.0,
            untold * 100.0
        );
        assert_eq!(called, 0, "{runs}");
        assert!(told < 0.5 * untold, "{runs}: {told} {untold}");
    }
}

#[test]
fn the_places_are_read_for_two_environments_only() {
    let mut rng = Rng::new(4);
    let [a, b] = in_turns(&pair(&mut rng, 1, 12, 1, 1.0, &|_| 1.0), 1.0, true);
    let (fa, fb) = (&a.runs[0], &b.runs[0]);
    let firsts = crate::compare::pairing::base_first((fa, fb), "os.case0", None);
    let want: std::collections::BTreeMap<u32, bool> = (0..12).map(|r| (r, r % 2 == 0)).collect();
    assert_eq!(firsts, want);
    // B against A: the other way round
    let back = crate::compare::pairing::base_first((fb, fa), "os.case0", None);
    assert!(back.iter().all(|(r, &f)| f != want[r]) && back.len() == 12);
    // a third environment: a rotated order puts one before another in two
    // rounds of three, and first against second is not the place
    let third = |f: &ResultFile| {
        let mut f = f.clone();
        let il = f.rounds.as_mut().unwrap().interleave.as_mut().unwrap();
        il.environments.push(il.environments[0].clone());
        f
    };
    let firsts = crate::compare::pairing::base_first((&third(fa), &third(fb)), "os.case0", None);
    assert!(firsts.is_empty());
}

#[test]
fn the_advice_on_an_unclear_interleaved_case_plans_with_the_place_its_interval_took_out() {
    // one interleaved run of a dear case's six rounds, going first 1.18x:
    // told, the interval takes the place out (one degree of freedom
    // spent), and so must the runs it advises; not told, it does not
    let (mut unclear, mut apart) = (0, 0);
    for seed in 0..30 {
        let mut rng = Rng::new(seed);
        let envs = pair(&mut rng, 1, 6, 4, 1.0, &|_| 1.05);
        for told in [true, false] {
            let c = compare(&in_turns(&envs, 1.18, told), &Options { seed, ..OPTS }).unwrap();
            for m in c.metrics.iter().filter(|m| m.primary) {
                if m.verdict != Verdict::Unclear {
                    continue;
                }
                unclear += 1;
                let margin = (m.ratio.ln().abs() - (1.0 + OPTS.threshold).ln()).abs();
                let rounds = m.basis.rounds_per_run.0.min(m.basis.rounds_per_run.1);
                assert_eq!(rounds, 6.0);
                let plan = |placed| {
                    m.variance.components.interleaved_runs_needed(
                        rounds,
                        margin,
                        MAX_ADVISED_RUNS,
                        (false, placed),
                    )
                };
                assert_eq!(m.runs_needed, plan(told), "seed {seed}, told {told}");
                apart += usize::from(plan(true) != plan(false));
            }
        }
    }
    eprintln!("{unclear} unclear, {apart} of them advised differently by the place");
    assert!(
        unclear >= 20 && apart >= 3,
        "{unclear} unclear, {apart} apart"
    );
}
