use super::*;
use crate::config::{RepPolicy, RunConfig, Suite};
use crate::results::{CaseResult, CaseStatus, MetricResult, RunStatus, SCHEMA_VERSION};
use crate::stats::rng::Rng;
use crate::stats::{summarize, Sample};
use std::collections::BTreeMap;
use std::path::Path;

/// A synthetic run: each case is (key, metric, direction, samples).
pub(crate) fn run(
    label: &str,
    id: &str,
    cases: &[(&str, &str, Direction, Vec<f64>)],
) -> ResultFile {
    let fp = crate::probe::probe_fixture(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/probe/firecracker"),
    );
    ResultFile {
        schema_version: SCHEMA_VERSION,
        envbench_version: "0.1.0".into(),
        run_id: id.into(),
        label: label.into(),
        status: RunStatus::Complete,
        started_utc: "2026-11-22T10:00:00Z".into(),
        ended_utc: Some("2026-11-22T10:01:00Z".into()),
        config: RunConfig {
            suite: Suite::Quick,
            reps: RepPolicy::for_suite(Suite::Quick),
            only: vec![],
            dirs: vec![],
            label: label.into(),
            output: "x.json".into(),
            seed: 1,
            threads: None,
            fake_clock: false,
            options: Default::default(),
            wait_idle_secs: None,
            require_idle: false,
            workers: false,
        },
        fingerprint: fp,
        rounds: None,
        cases: cases
            .iter()
            .map(|(key, metric, direction, samples)| CaseResult {
                key: key.to_string(),
                bench: key.split('[').next().unwrap().to_string(),
                params: BTreeMap::new(),
                status: CaseStatus::Ok,
                reason: None,
                warmup_reps: 1,
                stop_reason: "max_reps".into(),
                started_utc: String::new(),
                duration_secs: 1.0,
                rounds: vec![],
                sample_rounds: vec![],
                sample_times_secs: vec![],
                metrics: vec![MetricResult {
                    name: metric.to_string(),
                    unit: if *direction == Direction::HigherIsBetter {
                        Unit::OpsPerSec
                    } else {
                        Unit::Nanoseconds
                    },
                    direction: *direction,
                    summary: Sample::new(samples.clone()).ok().map(|s| summarize(&s, 1)),
                    samples: samples.clone(),
                }],
                anomalies: vec![],
                notes: vec![],
                details: None,
                telemetry: None,
                suspect: vec![],
                signals: vec![],
                assumptions: vec![],
            })
            .collect(),
        derived: vec![],
        anomalies: vec![],
        notes: vec![],
        canary: None,
        suspect: vec![],
    }
}

/// `n` draws around `center` with ±`spread` relative noise (sum of uniforms).
pub(crate) fn draws(rng: &mut Rng, n: usize, center: f64, spread: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            center * (1.0 + spread * ((0..4).map(|_| rng.unit_f64()).sum::<f64>() / 2.0 - 1.0))
        })
        .collect()
}

pub(crate) fn env(label: &str, runs: Vec<ResultFile>) -> Environment {
    Environment::new(label, runs)
}

/// The options of these tests: suspect cases left out of the means.
pub(crate) const OPTS: Options = Options {
    threshold: DEFAULT_THRESHOLD,
    seed: 42,
    exclude_suspect: true,
};

#[test]
fn a_to_a_comparison_rarely_calls_a_difference() {
    // 3 runs per side of 40 cases with 10 % noise between repetitions and
    // 3 % between runs: at most 5 % called faster or slower, and some shown equal
    let mut rng = Rng::new(5);
    let keys: Vec<String> = (0..40).map(|i| format!("os.case{i}")).collect();
    let side = |rng: &mut Rng, label: &str| -> Vec<ResultFile> {
        (0..3)
            .map(|r| {
                let cases: Vec<(&str, &str, Direction, Vec<f64>)> = keys
                    .iter()
                    .map(|k| {
                        let center = 100.0 * (1.0 + 0.03 * (rng.unit_f64() - 0.5) * 3.4);
                        (
                            k.as_str(),
                            "rate",
                            Direction::HigherIsBetter,
                            draws(rng, 10, center, 0.1),
                        )
                    })
                    .collect();
                run(label, &format!("{label}{r}"), &cases)
            })
            .collect()
    };
    let (a, b) = (side(&mut rng, "A"), side(&mut rng, "B"));
    let c = compare(&[env("A", a), env("B", b)], &OPTS).unwrap();
    let decided = c
        .metrics
        .iter()
        .filter(|m| matches!(m.verdict, Verdict::Faster | Verdict::Slower))
        .count();
    assert!(
        decided * 20 <= c.metrics.len(),
        "{decided} of {} decided",
        c.metrics.len()
    );
    assert!(c.between_run);
    // one run per side: nothing decided, and the warning says why
    let one = compare(
        &[
            env("A", vec![side(&mut rng, "A").remove(0)]),
            env("B", vec![side(&mut rng, "B").remove(0)]),
        ],
        &OPTS,
    )
    .unwrap();
    assert!(!one.between_run);
    assert!(one
        .notices
        .iter()
        .any(|n| matches!(n, Notice::SingleRun(SingleRunSpread::Assumed { .. }))));
}

/// native against wsl1: a rate 30 % lower (`cpu.x`) and a latency 40
/// times longer (`os.y`).
pub(crate) fn clear_difference() -> [Environment; 2] {
    let mut rng = Rng::new(9);
    // a rate (higher is better) and a latency (lower is better)
    let mut side = |label: &str, rate: f64, latency: f64| {
        run(
            label,
            &format!("{label}1"),
            &[
                (
                    "cpu.x",
                    "rate",
                    Direction::HigherIsBetter,
                    draws(&mut rng, 12, rate, 0.02),
                ),
                (
                    "os.y",
                    "latency",
                    Direction::LowerIsBetter,
                    draws(&mut rng, 12, latency, 0.02),
                ),
            ],
        )
    };
    let base = side("native", 100.0, 100.0);
    let other = side("wsl1", 70.0, 4000.0);
    [env("native", vec![base]), env("wsl1", vec![other])]
}

#[test]
fn a_clear_difference_gets_a_verdict_oriented_by_direction() {
    let c = compare(&clear_difference(), &OPTS).unwrap();
    let get = |k: &str| c.metrics.iter().find(|m| m.key == k).unwrap();
    assert_eq!(get("cpu.x").verdict, Verdict::Slower);
    assert!(
        (get("cpu.x").variation_pct - 30.0).abs() < 3.0,
        "{}",
        get("cpu.x").variation_pct
    );
    assert_eq!(
        get("os.y").verdict,
        Verdict::Slower,
        "a 40x latency is slower"
    );
    let overall = c.families.iter().find(|f| f.family == "overall").unwrap();
    assert_eq!((overall.slower, overall.faster), (2, 0));
    let os = c.families.iter().find(|f| f.family == "os").unwrap();
    let g = &os.groups;
    assert_eq!(
        (g.slower.len(), g.faster.len(), g.same, g.unclear),
        (1, 0, 0, 0)
    );
    assert_eq!(g.slower[0].key, "os.y");
    assert!((g.slower[0].factor - 40.0).abs() < 2.0, "{g:?}");
}

/// Five runs a side of one rate, B 20 % higher.
pub(crate) fn five_runs() -> [Environment; 2] {
    let mut rng = Rng::new(3);
    let runs = |label: &str, center: f64, rng: &mut Rng| -> Vec<ResultFile> {
        (0..5)
            .map(|i| {
                run(
                    label,
                    &format!("{label}{i}"),
                    &[(
                        "mem.s",
                        "rate",
                        Direction::HigherIsBetter,
                        draws(rng, 5, center, 0.02),
                    )],
                )
            })
            .collect()
    };
    let (a, b) = (runs("A", 100.0, &mut rng), runs("B", 120.0, &mut rng));
    [env("A", a), env("B", b)]
}

#[test]
fn three_runs_per_side_use_run_medians() {
    let c = compare(&five_runs(), &OPTS).unwrap();
    assert!(c.between_run);
    assert_eq!(c.threshold, DEFAULT_THRESHOLD);
    assert_eq!(c.metrics[0].basis.runs, (5, 5));
    assert_eq!(c.metrics[0].basis.top, (Level::Runs, Level::Runs));
    assert!(!c.metrics[0].basis.assumed_run_spread);
    assert_eq!(c.metrics[0].verdict, Verdict::Faster);
}

#[test]
fn unmatched_cases_are_listed_and_nothing_in_common_is_an_error() {
    let a = run(
        "A",
        "a",
        &[
            ("cpu.x", "rate", Direction::HigherIsBetter, vec![1.0, 2.0]),
            (
                "cpu.only_a",
                "rate",
                Direction::HigherIsBetter,
                vec![1.0, 2.0],
            ),
        ],
    );
    let b = run(
        "B",
        "b",
        &[("cpu.x", "rate", Direction::HigherIsBetter, vec![1.0, 2.0])],
    );
    let c = compare(&[env("A", vec![a.clone()]), env("B", vec![b])], &OPTS).unwrap();
    assert_eq!(
        c.unmatched,
        vec![("A".to_string(), "cpu.only_a".to_string())]
    );
    let d = run(
        "D",
        "d",
        &[("io.z", "rate", Direction::HigherIsBetter, vec![1.0, 2.0])],
    );
    assert!(matches!(
        compare(&[env("A", vec![a.clone()]), env("D", vec![d])], &OPTS),
        Err(CompareError::NoCommonCases(..))
    ));
    assert!(matches!(
        compare(&[env("A", vec![a])], &OPTS),
        Err(CompareError::OneEnvironment(_))
    ));
}

/// The same latencies of `os.call`, written in seconds on B's side.
pub(crate) fn seconds_on_one_side() -> [Environment; 2] {
    let samples = vec![95.0, 96.0, 94.0, 95.5];
    let a = run(
        "A",
        "a",
        &[
            (
                "os.call",
                "latency",
                Direction::LowerIsBetter,
                samples.clone(),
            ),
            (
                "os.other",
                "latency",
                Direction::LowerIsBetter,
                samples.clone(),
            ),
        ],
    );
    let mut b = run(
        "B",
        "b",
        &[
            (
                "os.call",
                "latency",
                Direction::LowerIsBetter,
                samples.iter().map(|v| v * 1e-9).collect(),
            ),
            (
                "os.other",
                "latency",
                Direction::LowerIsBetter,
                samples.clone(),
            ),
        ],
    );
    b.cases[0].metrics[0].unit = Unit::Seconds;
    [env("A", vec![a]), env("B", vec![b])]
}

#[test]
fn a_metric_whose_unit_differs_between_runs_is_not_compared() {
    // no billion-fold "difference", a notice instead
    let c = compare(&seconds_on_one_side(), &OPTS).unwrap();
    assert!(
        c.metrics.iter().all(|m| m.key != "os.call"),
        "{:?}",
        c.metrics
    );
    assert_eq!(c.metrics.len(), 1);
    let mismatched: Vec<&Vec<Mismatch>> = c
        .notices
        .iter()
        .filter_map(|n| match n {
            Notice::Mismatched(v) => Some(v),
            _ => None,
        })
        .collect();
    assert_eq!(
        mismatched,
        vec![&vec![Mismatch {
            key: "os.call".into(),
            metric: "latency".into(),
            units: vec![
                (Unit::Nanoseconds, Direction::LowerIsBetter),
                (Unit::Seconds, Direction::LowerIsBetter)
            ],
        }]]
    );
}

/// One run, `same`, given as environment A and as B.
pub(crate) fn one_run_twice() -> [Environment; 2] {
    let a = run(
        "A",
        "same",
        &[(
            "cpu.x",
            "rate",
            Direction::HigherIsBetter,
            vec![1.0, 2.0, 3.0],
        )],
    );
    [env("A", vec![a.clone()]), env("B", vec![a])]
}

#[test]
fn a_run_compared_with_itself_is_noticed() {
    let c = compare(&one_run_twice(), &OPTS).unwrap();
    assert!(twice(&c));
    assert_eq!(c.metrics[0].verdict, Verdict::Unclear);
}

/// Whether `c` notices a run given twice.
fn twice(c: &Comparison) -> bool {
    c.notices
        .iter()
        .any(|n| matches!(n, Notice::RunTwice { run_id } if run_id == "same"))
}

#[test]
fn a_run_split_by_directory_is_in_each_environment_without_a_notice() {
    // `compare --dirs`: one run, its cases in two directories, each an environment
    let case = |v: f64| {
        [(
            "io.x",
            "rate",
            Direction::HigherIsBetter,
            vec![v, v * 1.01, v * 0.99],
        )]
    };
    let (a, b) = (run("a", "same", &case(1.0)), run("b", "same", &case(2.0)));
    let c = compare_dirs(&[env("a", vec![a.clone()]), env("b", vec![b])], &OPTS).unwrap();
    assert!(!twice(&c), "{:?}", c.notices);
    // twice in one directory's environment is still one run counted twice
    let c = compare_dirs(
        &[env("a", vec![a.clone(), a.clone()]), env("b", vec![a])],
        &OPTS,
    )
    .unwrap();
    assert!(twice(&c));
}

/// A and B on the same machine; B's CPUs idle with intel_idle / menu
/// when `differ`, else both with the fixture's haltpoll / haltpoll.
pub(crate) fn idle_drivers(differ: bool) -> [Environment; 2] {
    let case = |id| {
        run(
            "A",
            id,
            &[(
                "os.x",
                "rate",
                Direction::HigherIsBetter,
                vec![1.0, 2.0, 3.0],
            )],
        )
    };
    let (a, mut b) = (case("a"), case("b"));
    if differ {
        b.fingerprint.cpu.idle_driver = Some("intel_idle".into());
        b.fingerprint.cpu.idle_governor = Some("menu".into());
    }
    [env("A", vec![a]), env("B", vec![b])]
}

#[test]
fn different_cpu_idle_drivers_are_noticed() {
    let idle = |c: &Comparison| -> Vec<Notice> {
        c.notices
            .iter()
            .filter(|n| matches!(n, Notice::IdleDiffers { .. }))
            .cloned()
            .collect()
    };
    // the fixture is the Xeon guest's: haltpoll / haltpoll
    let same = compare(&idle_drivers(false), &OPTS).unwrap();
    assert!(idle(&same).is_empty(), "{:?}", same.notices);
    let c = compare(&idle_drivers(true), &OPTS).unwrap();
    let states = |d: &str, g: &str| IdleStates {
        driver: Some(d.into()),
        governor: Some(g.into()),
    };
    assert_eq!(
        idle(&c),
        vec![Notice::IdleDiffers {
            environment: "B".into(),
            idle: states("intel_idle", "menu"),
            baseline: "A".into(),
            baseline_idle: states("haltpoll", "haltpoll"),
        }]
    );
}

/// os.fork measured by `tiny` with 100 processes in A, and in B by
/// `method` with `processes`.
pub(crate) fn fork_methods(method: &str, processes: u64) -> [Environment; 2] {
    let mk = |label: &str, id: &str, method: &str, processes: u64| {
        let mut r = run(
            label,
            id,
            &[(
                "os.fork[n=100]",
                "time_per_process",
                Direction::LowerIsBetter,
                vec![1.0, 2.0, 3.0],
            )],
        );
        r.cases[0].details = Some(serde_json::json!({
            "method": method, "processes": processes, "limited": null
        }));
        r
    };
    [
        env("A", vec![mk("A", "a1", "tiny", 100)]),
        env("B", vec![mk("B", "b1", method, processes)]),
    ]
}

#[test]
fn a_case_measured_differently_is_noticed() {
    let differently = |c: &Comparison| -> Vec<Notice> {
        c.notices
            .iter()
            .filter(|n| matches!(n, Notice::MeasuredDifferently { .. }))
            .cloned()
            .collect()
    };
    let same = compare(&fork_methods("tiny", 100), &OPTS).unwrap();
    assert!(differently(&same).is_empty(), "{:?}", same.notices);
    let c = compare(&fork_methods("envbench", 60), &OPTS).unwrap();
    let notice =
        |detail: &str, values: [(serde_json::Value, &str); 2]| Notice::MeasuredDifferently {
            case: "os.fork[n=100]".into(),
            detail: detail.into(),
            values: values
                .into_iter()
                .map(|(value, label)| Recorded {
                    value,
                    environments: vec![label.into()],
                })
                .collect(),
        };
    assert_eq!(
        differently(&c),
        vec![
            notice("method", [("envbench".into(), "B"), ("tiny".into(), "A")]),
            notice("processes", [(100.into(), "A"), (60.into(), "B")]),
        ]
    );
}

#[test]
fn same_seed_gives_the_same_comparison() {
    let mut rng = Rng::new(1);
    let a = run(
        "A",
        "a",
        &[(
            "cpu.x",
            "rate",
            Direction::HigherIsBetter,
            draws(&mut rng, 8, 10.0, 0.1),
        )],
    );
    let b = run(
        "B",
        "b",
        &[(
            "cpu.x",
            "rate",
            Direction::HigherIsBetter,
            draws(&mut rng, 8, 11.0, 0.1),
        )],
    );
    let envs = [env("A", vec![a]), env("B", vec![b])];
    let (x, y) = (
        compare(&envs, &OPTS).unwrap(),
        compare(&envs, &OPTS).unwrap(),
    );
    assert_eq!(x.metrics[0].ratio_ci, y.metrics[0].ratio_ci);
}

/// A synthetic run whose cases have rounds: (key, direction, rounds of samples).
pub(crate) fn run_rounds(
    label: &str,
    id: &str,
    cases: &[(String, Direction, Vec<Vec<f64>>)],
) -> ResultFile {
    let flat: Vec<(&str, &str, Direction, Vec<f64>)> = cases
        .iter()
        .map(|(k, d, rounds)| (k.as_str(), "value", *d, rounds.concat()))
        .collect();
    let mut r = run(label, id, &flat);
    for (case, (_, _, rounds)) in r.cases.iter_mut().zip(cases) {
        case.sample_rounds = rounds
            .iter()
            .enumerate()
            .flat_map(|(i, round)| std::iter::repeat_n(i as u32, round.len()))
            .collect();
    }
    r
}

/// An environment of one higher-is-better metric `cpu.x`, runs × rounds × reps.
pub(crate) fn one_metric(label: &str, data: Vec<Vec<Vec<f64>>>) -> Environment {
    let runs = data
        .into_iter()
        .enumerate()
        .map(|(r, rounds)| {
            run_rounds(
                label,
                &format!("{label}{r}"),
                &[("cpu.x".to_string(), Direction::HigherIsBetter, rounds)],
            )
        })
        .collect();
    env(label, runs)
}

/// Between-run spread of synthetic metric `i`: most metrics steady (2 %),
/// some drifting (5 %), one in ten drifting 20 % (huge pages by luck, a
/// busy neighbour), as seen between quick runs on shared VMs.
fn run_sd(i: usize) -> f64 {
    match i % 10 {
        0 => 0.20,
        1 | 2 => 0.05,
        _ => 0.02,
    }
}

/// Environments of `runs` runs × `rounds` rounds × 3 repetitions for
/// `metrics` headline metrics; metric i of OTHER is `effect(i)` times BASE
/// (in speed: a rate multiplied, a time divided).
pub(crate) fn synthetic(
    rng: &mut Rng,
    runs: usize,
    rounds: usize,
    metrics: usize,
    effect: &dyn Fn(usize) -> f64,
) -> [Environment; 2] {
    use crate::stats::levels::tests::synth;
    let side = |rng: &mut Rng, label: &str, other: bool| -> Environment {
        let per_metric: Vec<Vec<Vec<Vec<f64>>>> = (0..metrics)
            .map(|i| {
                let dir_higher = i % 2 == 0;
                let e = if other { effect(i) } else { 1.0 };
                let center = if dir_higher { 100.0 * e } else { 100.0 / e };
                synth(rng, center, (runs, rounds, 3), (run_sd(i), 0.03, 0.01))
            })
            .collect();
        let files = (0..runs)
            .map(|r| {
                let cases: Vec<(String, Direction, Vec<Vec<f64>>)> = per_metric
                    .iter()
                    .enumerate()
                    .map(|(i, data)| {
                        let d = if i % 2 == 0 {
                            Direction::HigherIsBetter
                        } else {
                            Direction::LowerIsBetter
                        };
                        (format!("os.case{i}"), d, data[r].clone())
                    })
                    .collect();
                run_rounds(label, &format!("{label}{r}"), &cases)
            })
            .collect();
        env(label, files)
    };
    [side(rng, "A", false), side(rng, "B", true)]
}

fn outcomes(c: &Comparison) -> Vec<Verdict> {
    c.metrics
        .iter()
        .filter(|m| m.primary)
        .map(|m| m.verdict)
        .collect()
}

#[test]
fn a_to_a_false_verdicts_stay_under_five_percent_at_envbench_sizes() {
    for (runs, rounds) in [(1, 3), (3, 1), (3, 3), (1, 1)] {
        let (mut called, mut total) = (0, 0);
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let envs = synthetic(&mut rng, runs, rounds, 10, &|_| 1.0);
            let c = compare(
                &envs,
                &Options {
                    threshold: DEFAULT_THRESHOLD,
                    seed,
                    exclude_suspect: true,
                },
            )
            .unwrap();
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
            let c = compare(
                &envs,
                &Options {
                    threshold: DEFAULT_THRESHOLD,
                    seed,
                    exclude_suspect: true,
                },
            )
            .unwrap();
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
        let c = compare(
            &envs,
            &Options {
                threshold: DEFAULT_THRESHOLD,
                seed,
                exclude_suspect: true,
            },
        )
        .unwrap();
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
        let c = compare(
            &envs,
            &Options {
                threshold: DEFAULT_THRESHOLD,
                seed,
                exclude_suspect: true,
            },
        )
        .unwrap();
        found += usize::from(c.metrics[0].verdict == Verdict::Faster);
    }
    assert!(found >= 196, "{found} of 200");
}

#[test]
fn a_thousandfold_effect_reads_as_one() {
    let mut rng = Rng::new(2);
    let envs = synthetic(&mut rng, 3, 1, 4, &|_| 0.001);
    let c = compare(&envs, &OPTS).unwrap();
    assert!(
        outcomes(&c).iter().all(|v| *v == Verdict::Slower),
        "{:?}",
        outcomes(&c)
    );
    let g = &c.families.iter().find(|f| f.family == "os").unwrap().groups;
    assert_eq!((g.slower.len(), g.same, g.unclear), (4, 0, 0), "{g:?}");
    assert!(
        g.slower.iter().all(|s| (900.0..1060.0).contains(&s.factor)),
        "{g:?}"
    );
}

#[test]
fn unclear_cases_come_with_advice() {
    // one run per side: advice is to make three
    let mut rng = Rng::new(4);
    let envs = synthetic(&mut rng, 1, 3, 4, &|_| 1.0);
    let c = compare(&envs, &OPTS).unwrap();
    assert!(outcomes(&c).iter().all(|v| *v == Verdict::Unclear));
    assert_eq!(c.advice, Some(Advice::OneRun { unclear: 4 }));
    let g = &c.families[0].groups;
    assert_eq!(g.same + g.unclear, 4, "{g:?}");
    // three noisy runs per side: the cookbook names a number of runs
    let mut rng = Rng::new(5);
    let envs = synthetic(&mut rng, 3, 3, 4, &|_| 1.0);
    let c = compare(&envs, &OPTS).unwrap();
    let unclear: Vec<&MetricComparison> = c
        .metrics
        .iter()
        .filter(|m| m.verdict == Verdict::Unclear)
        .collect();
    assert!(!unclear.is_empty());
    assert!(
        matches!(
            c.advice,
            Some(Advice::Runs {
                settle: Some(_),
                ..
            })
        ),
        "{:?}",
        c.advice
    );
    assert!(unclear[0].variance.shares.is_some());
}

/// Three steady runs a side of one rate, A and B alike.
pub(crate) fn steady() -> [Environment; 2] {
    use crate::stats::levels::tests::synth;
    let mut rng = Rng::new(8);
    let mk = |rng: &mut Rng, label: &str| {
        one_metric(label, synth(rng, 100.0, (3, 3, 5), (0.001, 0.001, 0.002)))
    };
    [mk(&mut rng, "A"), mk(&mut rng, "B")]
}

#[test]
fn steady_equal_environments_are_a_tie() {
    let c = compare(&steady(), &OPTS).unwrap();
    // its interval lies a little above 1 (a 0.2 % difference, inside the
    // band): a tie all the same, and the family says so
    assert!(c.metrics[0].ratio_ci.0 > 1.0, "{:?}", c.metrics[0].ratio_ci);
    assert_eq!(
        c.metrics[0].verdict,
        Verdict::Tie,
        "{:?}",
        c.metrics[0].ratio_ci
    );
    let g = &c.families[0].groups;
    assert_eq!(g.same, 1);
    assert!(g.same_bound < 0.01, "{g:?}");
    assert!(c.advice.is_none());
}

/// os.a twice as fast in OTHER but measured under steal time (a suspect
/// flag), os.b alike.
pub(crate) fn steal_on_one_case() -> [Environment; 2] {
    let lower = Direction::LowerIsBetter;
    let base = run(
        "base",
        "b1",
        &[
            ("os.a", "latency", lower, vec![100.0, 101.0, 99.0, 100.5]),
            ("os.b", "latency", lower, vec![100.0, 101.0, 99.0, 100.5]),
        ],
    );
    let mut other = run(
        "other",
        "o1",
        &[
            // twice as fast, but measured under steal time
            ("os.a", "latency", lower, vec![50.0, 50.5, 49.5, 50.2]),
            ("os.b", "latency", lower, vec![100.0, 101.0, 99.0, 100.5]),
        ],
    );
    other.cases[0].suspect.push(crate::results::Suspect {
        kind: "steal".into(),
        value: None,
        message: "the hypervisor took 9.0 % of the CPU time".into(),
    });
    [env("base", vec![base]), env("other", vec![other])]
}

#[test]
fn suspect_cases_are_marked_and_left_out_of_geometric_means_unless_included() {
    let envs = steal_on_one_case();
    let overall = |include: bool| {
        let c = compare(
            &envs,
            &Options {
                exclude_suspect: !include,
                ..OPTS
            },
        )
        .unwrap();
        let f = c
            .families
            .iter()
            .find(|f| f.family == "overall")
            .unwrap()
            .clone();
        (c, f)
    };
    let (c, f) = overall(false);
    assert!(
        (f.geomean_speedup - 1.0).abs() < 0.02,
        "{}",
        f.geomean_speedup
    );
    assert_eq!((f.suspect, f.total()), (1, 2));
    let a = c.metrics.iter().find(|m| m.key == "os.a").unwrap();
    let flag = SuspectFlag {
        environment: "other".into(),
        run_id: "o1".into(),
        kind: "steal".into(),
        message: "the hypervisor took 9.0 % of the CPU time".into(),
    };
    assert_eq!(a.suspect, vec![flag.clone()]);
    assert!(c.notices.contains(&Notice::SuspectCase {
        key: "os.a".into(),
        environment: "other".into(),
        flags: vec![flag],
    }));
    assert_eq!(
        c.suspect_kinds,
        vec![SuspectTally {
            kind: "steal".into(),
            cases: vec![("other".into(), vec!["os.a".into()])],
            most: None,
        }]
    );
    // the verdict statistics do not change
    let (ci, fi) = overall(true);
    assert!(
        (fi.geomean_speedup - 2f64.sqrt()).abs() < 0.03,
        "{}",
        fi.geomean_speedup
    );
    let ai = ci.metrics.iter().find(|m| m.key == "os.a").unwrap();
    assert_eq!((ai.verdict, ai.ratio_ci), (a.verdict, a.ratio_ci));
}

/// The key of [`cold_read`]'s case.
pub(crate) const COLD_READ: &str = "io.dd[op=read_cold]";

/// A cold read 4x faster in B than in A, whose cold read held on each side
/// as told, beside an `os.fork` case.
pub(crate) fn cold_read(base_held: bool, other_held: bool) -> [Environment; 2] {
    use crate::results::{Assumption, AssumptionKind};
    let key = COLD_READ;
    let fast = |label: &str, id: &str, center: f64, held: bool| {
        let mut r = run(
            label,
            id,
            &[
                (
                    key,
                    "throughput",
                    Direction::HigherIsBetter,
                    vec![center; 5],
                ),
                ("os.fork", "time", Direction::LowerIsBetter, vec![10.0; 5]),
            ],
        );
        r.cases[0].assumptions.push(Assumption {
            kind: AssumptionKind::ColdRead,
            held,
            evidence: "up to 100 % of the file was cached when a cold read began".into(),
            metrics: vec![],
        });
        r
    };
    [
        env("A", vec![fast("A", "a1", 2000.0, base_held)]),
        env("B", vec![fast("B", "b1", 8000.0, other_held)]),
    ]
}

#[test]
fn a_failed_assumption_on_either_side_gives_no_verdict() {
    // the cold read in B is 4x faster, but one side's cache was never emptied
    let key = COLD_READ;
    for (base_held, other_held) in [(true, false), (false, true)] {
        let c = compare(&cold_read(base_held, other_held), &OPTS).unwrap();
        assert!(c.metrics.iter().all(|m| m.key != key), "{:?}", c.metrics);
        assert!(c.metrics.iter().any(|m| m.key == "os.fork"));
        let side = if base_held { "B" } else { "A" };
        assert_eq!(c.not_comparable.len(), 1);
        let n = &c.not_comparable[0];
        assert_eq!((n.key.as_str(), n.side.as_str()), (key, side));
        assert!(n.primary);
        assert!(n.evidence.contains("up to 100 % of the file"));
        assert!(c.notices.contains(&Notice::NotComparable));
    }
    // held on both sides: compared as any case
    let c = compare(&cold_read(true, true), &OPTS).unwrap();
    assert!(c.not_comparable.is_empty());
    assert!(!c.notices.contains(&Notice::NotComparable));
    assert!(c.metrics.iter().any(|m| m.key == key));
}

/// os.fork with a secondary memory metric that B could not read.
pub(crate) fn memory_unreadable() -> [Environment; 2] {
    use crate::results::{Assumption, AssumptionKind};
    let side = |label: &str, readable: bool| {
        let mut r = run(
            label,
            label,
            &[(
                "os.fork",
                "time_per_process",
                Direction::LowerIsBetter,
                vec![10.0, 11.0, 10.5],
            )],
        );
        let c = &mut r.cases[0];
        c.metrics.push(MetricResult {
            name: "memory_per_process".into(),
            unit: crate::units::Unit::Bytes,
            direction: Direction::LowerIsBetter,
            samples: if readable {
                vec![100.0, 101.0, 102.0]
            } else {
                vec![]
            },
            summary: None,
        });
        c.assumptions.push(Assumption {
            kind: AssumptionKind::MemoryReadable,
            held: readable,
            evidence: "smaps_rollup".into(),
            metrics: vec!["memory_per_process".into()],
        });
        r
    };
    [
        env("A", vec![side("A", true)]),
        env("B", vec![side("B", false)]),
    ]
}

#[test]
fn an_unknown_secondary_metric_leaves_the_headline_compared() {
    let c = compare(&memory_unreadable(), &OPTS).unwrap();
    let names: Vec<&str> = c.metrics.iter().map(|m| m.metric.as_str()).collect();
    assert_eq!(names, vec!["time_per_process"]);
    assert_eq!(c.not_comparable.len(), 1);
    assert!(!c.not_comparable[0].primary);
}
