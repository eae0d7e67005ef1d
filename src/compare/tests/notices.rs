//! The notices of a comparison: units that differ, runs given twice,
//! idle states, methods, suspect flags and failed assumptions, each found
//! with its evidence. The scenarios serve the report's wording tests too.

use super::{env, run, OPTS};
use crate::compare::*;
use crate::results::MetricResult;
use crate::units::{Direction, Unit};

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
    // `compare --by-dir`: one run, its cases in two directories, each an environment
    let case = |v: f64| {
        [(
            "io.x",
            "rate",
            Direction::HigherIsBetter,
            vec![v, v * 1.01, v * 0.99],
        )]
    };
    let (a, b) = (run("a", "same", &case(1.0)), run("b", "same", &case(2.0)));
    let c = compare_as(&[env("a", vec![a.clone()]), env("b", vec![b])], &OPTS, true).unwrap();
    assert!(!twice(&c), "{:?}", c.notices);
    // twice in one directory's environment is still one run counted twice
    let c = compare_as(
        &[env("a", vec![a.clone(), a.clone()]), env("b", vec![a])],
        &OPTS,
        true,
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

/// A result from before a method detail was kept (cpu.lu's `method`
/// came with its look-ahead) against one that records it: the older side
/// is "not recorded", a value of its own. A case that did not run (skipped,
/// no details) and a detail recorded as null say nothing.
#[test]
fn a_method_detail_left_out_by_an_older_result_is_noticed() {
    use crate::results::CaseStatus;
    // a second case measured on both sides, so that a comparison stands
    // when the first did not run on one
    let mk = |label: &str, details: Option<serde_json::Value>, status: CaseStatus| {
        let mut r = run(
            label,
            &format!("{label}1"),
            &[
                (
                    "cpu.lu[n=2000,threads=2]",
                    "gflops",
                    Direction::HigherIsBetter,
                    vec![90.0, 91.0, 92.0],
                ),
                (
                    "os.syscall[call=getppid]",
                    "latency",
                    Direction::LowerIsBetter,
                    vec![70.0, 71.0, 72.0],
                ),
            ],
        );
        r.cases[0].details = details;
        r.cases[0].status = status;
        r
    };
    let new = || Some(serde_json::json!({ "method": "look-ahead", "thp_mode": null }));
    let older = Some(serde_json::json!({ "worst_scaled_residual": 0.01 }));
    let differently_if = |a: Option<serde_json::Value>,
                          b: Option<serde_json::Value>,
                          st: CaseStatus,
                          imported: bool| {
        let mut other = mk("B", b, st);
        if imported {
            other.cases[0].stop_reason = crate::results::IMPORTED.into();
        }
        let envs = [
            env("A", vec![mk("A", a, CaseStatus::Ok)]),
            env("B", vec![other]),
        ];
        let c = compare(&envs, &OPTS).unwrap();
        c.notices
            .into_iter()
            .filter(|n| matches!(n, Notice::MeasuredDifferently { .. }))
            .collect::<Vec<_>>()
    };
    let differently = |a, b, st| differently_if(a, b, st, false);
    let want = Notice::MeasuredDifferently {
        case: "cpu.lu[n=2000,threads=2]".into(),
        detail: "method".into(),
        values: vec![
            Recorded {
                value: "look-ahead".into(),
                environments: vec!["A".into()],
            },
            Recorded {
                value: serde_json::Value::Null,
                environments: vec!["B".into()],
            },
        ],
    };
    assert_eq!(
        differently(new(), older.clone(), CaseStatus::Ok),
        vec![want.clone()]
    );
    // no details at all: not recorded either
    assert_eq!(differently(new(), None, CaseStatus::Ok), vec![want]);
    // both record it alike; thp_mode null on both says nothing
    assert!(differently(new(), new(), CaseStatus::Ok).is_empty());
    // the older side's case did not run: nothing to say
    assert!(differently(new(), older, CaseStatus::Skipped).is_empty());
    // another tool's output, imported, records no method: nothing to say
    let imported = Some(serde_json::json!({ "imported_from": ["stream.txt"] }));
    assert!(differently_if(new(), imported, CaseStatus::Ok, true).is_empty());
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
        kind: crate::validity::suspect_kind::FlagKind::of("steal"),
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
            kind: crate::validity::suspect_kind::FlagKind::of("steal"),
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

/// A case measured differently on the sides (its buffer asked for a huge
/// page in A only) is warned of once: where it has no verdict, as "not
/// comparable"; where it has one, as "measured differently".
#[test]
fn a_case_without_a_verdict_is_not_also_measured_differently() {
    let differently = |base_held: bool, other_held: bool| {
        let mut envs = cold_read(base_held, other_held);
        let huge = serde_json::json!({ "page_request": "madvise(MADV_HUGEPAGE)" });
        envs[0].runs[0].cases[0].details = Some(huge);
        envs[1].runs[0].cases[0].details = Some(serde_json::json!({ "pages": "small" }));
        let c = compare(&envs, &OPTS).unwrap();
        let n = c
            .notices
            .iter()
            .filter(|n| matches!(n, Notice::MeasuredDifferently { case, .. } if case == COLD_READ))
            .count();
        (n, c.not_comparable.len())
    };
    // held on both sides: a verdict, and the difference is said
    assert_eq!(differently(true, true), (1, 0));
    // failed on either side: no verdict, named once
    assert_eq!(differently(true, false), (0, 1));
    assert_eq!(differently(false, true), (0, 1));

    // a third environment C, whose cold read held, beside B's that did
    // not: the notice stays where C differs from A, naming A and C alone
    let with_c = |c_details: serde_json::Value| {
        let [a, b] = cold_read(true, false);
        let mut c = b.runs[0].clone();
        c.run_id = "c1".into();
        c.cases[0].assumptions[0].held = true;
        c.cases[0].details = Some(c_details);
        let mut envs = [a, b, env("C", vec![c])];
        envs[0].runs[0].cases[0].details =
            Some(serde_json::json!({ "page_request": "madvise(MADV_HUGEPAGE)" }));
        envs[1].runs[0].cases[0].details = Some(serde_json::json!({ "pages": "small" }));
        let c = compare(&envs, &OPTS).unwrap();
        c.notices
            .into_iter()
            .filter_map(|n| match n {
                Notice::MeasuredDifferently { case, values, .. } if case == COLD_READ => Some(
                    values
                        .into_iter()
                        .map(|r| r.environments.join(","))
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let huge = serde_json::json!({ "page_request": "madvise(MADV_HUGEPAGE)" });
    assert!(with_c(huge).is_empty());
    let small = serde_json::json!({ "pages": "small" });
    assert_eq!(with_c(small), vec![vec!["A".to_string(), "C".to_string()]]);
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

#[test]
fn runs_of_other_suites_or_versions_are_noticed_and_shown_by_default() {
    let case = [(
        "os.x",
        "time",
        Direction::LowerIsBetter,
        vec![1.0, 1.01, 0.99],
    )];
    let (a, mut b) = (run("a", "a1", &case), run("b", "b1", &case));
    let same = compare(
        &[env("a", vec![a.clone()]), env("b", vec![b.clone()])],
        &OPTS,
    )
    .unwrap();
    assert!(!same
        .notices
        .iter()
        .any(|n| matches!(n, Notice::SettingsDiffer { .. })));
    b.config.suite = crate::config::Suite::Standard;
    b.envbench_version = "0.0.9".into();
    let c = compare(&[env("a", vec![a]), env("b", vec![b])], &OPTS).unwrap();
    let differ: Vec<Setting> = c
        .notices
        .iter()
        .filter_map(|n| match n {
            Notice::SettingsDiffer { setting, values } => {
                assert_eq!(values.len(), 2, "{values:?}");
                Some(*setting)
            }
            _ => None,
        })
        .collect();
    assert_eq!(differ, [Setting::Suite, Setting::Version]);
    let lines = crate::report::comparison::warning::lines(&c).join("\n");
    assert!(
        lines.contains("other suites, quick (a), standard (b)"),
        "{lines}"
    );
    assert!(lines.contains("other versions of envbench"), "{lines}");
}

/// io.meta on `dir1` in A and B, B's an ext4 `journal` says of (None:
/// not said, as older files).
pub(crate) fn journals(journal: Option<bool>) -> [Environment; 2] {
    let mk = |label: &str, id: &str, journal: Option<bool>| {
        let mut r = run(
            label,
            id,
            &[
                (
                    "io.meta[dir=dir1,files=500]",
                    "creates_per_sec",
                    Direction::HigherIsBetter,
                    vec![3000.0, 3100.0, 2900.0],
                ),
                (
                    "io.meta[dir=dir1,files=5000]",
                    "creates_per_sec",
                    Direction::HigherIsBetter,
                    vec![3000.0, 3100.0, 2900.0],
                ),
            ],
        );
        for c in &mut r.cases {
            let mut fs = serde_json::json!({"path": "/srv/x", "fs_type": "ext4"});
            if let Some(j) = journal {
                fs["journal"] = j.into();
            }
            c.details = Some(serde_json::json!({"dir": {"name": "dir1", "filesystem": fs}}));
        }
        r
    };
    [
        env("A", vec![mk("A", "a1", Some(true))]),
        env("B", vec![mk("B", "b1", journal), mk("B", "b2", journal)]),
    ]
}

#[test]
fn a_directory_on_an_ext4_without_a_journal_is_noticed_once() {
    let no_journal = |c: &Comparison| -> Vec<Notice> {
        c.notices
            .iter()
            .filter(|n| matches!(n, Notice::NoJournal(_)))
            .cloned()
            .collect()
    };
    let c = compare(&journals(Some(false)), &OPTS).unwrap();
    // once for B's dir1, over its two cases and two runs; A keeps one
    assert_eq!(
        no_journal(&c),
        vec![Notice::NoJournal(vec![crate::compare::NoJournal {
            environment: "B".into(),
            dir: "dir1".into(),
            fs_type: "ext4".into(),
        }])]
    );
    for quiet in [Some(true), None] {
        let c = compare(&journals(quiet), &OPTS).unwrap();
        assert!(no_journal(&c).is_empty(), "{quiet:?}: {:?}", c.notices);
    }
}
