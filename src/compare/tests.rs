use super::*;
use crate::config::{RepPolicy, RunConfig, Suite};
use crate::results::{CaseResult, CaseStatus, MetricResult, RunStatus, SCHEMA_VERSION};
use crate::stats::rng::Rng;
use crate::stats::Sample;
use std::collections::BTreeMap;
use std::path::Path;

mod by_dir;
mod history;
pub(crate) mod interleaved;
pub(crate) mod notices;
mod rates;

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
            precision: None,
            alternate: Default::default(),
        },
        fingerprint: fp,
        rounds: None,
        cases: cases
            .iter()
            .map(|(key, metric, direction, samples)| CaseResult {
                key: key.to_string(),
                bench: key.split('[').next().unwrap().to_string(),
                params: params_of(key),
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
                    // compare reads the samples; the summary's interval
                    // (most of the statistical tests' time at 2 000
                    // resamples) is drawn from 50
                    summary: Sample::new(samples.clone())
                        .ok()
                        .map(|s| crate::stats::summarize_resampled(&s, 1, 50)),
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

/// The parameters a case key writes, as a bench would have put them in
/// its case (a whole number as a number).
fn params_of(key: &str) -> BTreeMap<String, serde_json::Value> {
    let inside = key
        .split_once('[')
        .map_or("", |(_, r)| r.trim_end_matches(']'));
    inside
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| {
            let value = v
                .parse::<u64>()
                .map_or_else(|_| serde_json::Value::from(v), serde_json::Value::from);
            (k.to_string(), value)
        })
        .collect()
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
    prices: &[],
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

#[test]
fn the_advice_counts_the_runs_a_case_missing_from_some_files_had() {
    // three runs a side; one case is missing from the last run of each
    let mut rng = Rng::new(1);
    let mut envs = synthetic(&mut rng, 3, 3, 4, &|_| 1.0);
    for e in &mut envs {
        e.runs[2].cases.retain(|c| c.key != "os.case2");
    }
    let c = compare(&envs, &OPTS).unwrap();
    let short = c
        .metrics
        .iter()
        .find(|m| m.primary && m.key == "os.case2")
        .unwrap();
    assert_eq!(
        (short.verdict, short.basis.runs),
        (Verdict::Unclear, (2, 2))
    );
    let needed = short.runs_needed.unwrap();
    // the others unclear need fewer runs than it lacks
    let others = c
        .metrics
        .iter()
        .filter(|m| m.primary && m.key != "os.case2" && m.verdict == Verdict::Unclear)
        .filter_map(|m| m.runs_needed)
        .filter(|&n| n <= MOST_RUNS_ADVISED)
        .max()
        .unwrap_or(0);
    assert!(others < needed, "{others} {needed}");
    // it had 2 runs, not the files' 3: it lacks needed - 2 (counting from
    // the files' 3, one run fewer would have been advised)
    let Some(Advice::Runs {
        settle: Some(more), ..
    }) = c.advice
    else {
        panic!("{:?}", c.advice)
    };
    assert_eq!(
        (more.more, more.total),
        (needed - 2, needed.max(3 + needed - 2))
    );
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

/// compare/ reads the benches' parameters and details, the layers' names
/// and the transfers only through `results::params` and
/// `probe::virt::layer_name`: none of their strings is written in its
/// code (tests excepted; serde's own field names are compare's).
#[test]
fn compare_names_no_key_of_another_room() {
    use crate::probe::virt::layer_name;
    use crate::results::params::{detail, key, IoOp, HUGE, SAME, SMALL, SPLIT};
    let mut words: Vec<&str> = vec![
        key::CPUS,
        key::THREADS,
        key::PROCESSES,
        key::PAGES,
        key::SIZE_KIB,
        key::OP,
        key::DIR,
        detail::NAME,
        detail::FILESYSTEM,
        detail::FS_TYPE,
        SAME,
        SPLIT,
        HUGE,
        SMALL,
        layer_name::GVISOR,
        layer_name::WSL1,
        layer_name::WSL2,
        layer_name::PODMAN,
        layer_name::DOCKER,
    ];
    words.extend(detail::METHOD);
    words.extend(IoOp::ALL.map(IoOp::name));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compare");
    let mut files = vec![root.clone()];
    let mut found = Vec::new();
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.extension().is_none_or(|e| e != "rs")
            || name == "tests.rs"
            || p.parent().unwrap().ends_with("tests")
        {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") || line.contains("serde(") {
                continue;
            }
            for w in &words {
                if line.contains(&format!("\"{w}\"")) {
                    found.push(format!("{}:{}: \"{w}\"", p.display(), n + 1));
                }
            }
        }
    }
    assert!(files.is_empty());
    assert!(found.is_empty(), "{found:#?}");
}
