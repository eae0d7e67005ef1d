//! What a reader must know before trusting a comparison, found as facts:
//! other hardware, idle drivers or memory, runs given twice, incomplete or
//! anomalous runs, methods that differ, where a single run's spread came
//! from, suspect cases and run flags, and the metrics left out. Each is a
//! [`Notice`] with its evidence; `report::comparison::warning` words them.

use super::{Environment, MetricComparison};
use crate::probe::cpu::CpuInfo;
use crate::results::params::detail;
use crate::results::{CaseStatus, RunStatus, IMPORTED};
use crate::stats::levels::UNMEASURED_RUN_SD;
use crate::units::{Direction, Unit};
use crate::validity::suspect_kind::FlagKind;
use std::collections::{BTreeMap, BTreeSet};

/// Memory sizes further apart than this share of the baseline's are
/// named: a VM or WSL 2 gets a share of the host's.
pub const MEMORY_DIFFERS: f64 = 0.1;

/// One suspect flag of a validity guardrail, as a result file keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct SuspectFlag {
    /// The label of the environment whose run raised it.
    pub environment: String,
    /// That run's id.
    pub run_id: String,
    /// Its kind (`steal`, `governor` ...).
    pub kind: FlagKind,
    /// What was seen, as the run wrote it.
    pub message: String,
}

/// cpuidle's driver and governor in a fingerprint (`intel_idle`, `menu`).
#[derive(Debug, Clone, PartialEq)]
pub struct IdleStates {
    /// The driver, when known.
    pub driver: Option<String>,
    /// The governor, when known.
    pub governor: Option<String>,
}

impl IdleStates {
    /// The idle states of `cpu`.
    pub(crate) fn of(cpu: &CpuInfo) -> IdleStates {
        IdleStates {
            driver: cpu.idle_driver.clone(),
            governor: cpu.idle_governor.clone(),
        }
    }

    /// Whether either is known.
    pub(crate) fn known(&self) -> bool {
        self.driver.is_some() || self.governor.is_some()
    }
}

/// Where the spread between runs of a side with a single run comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SingleRunSpread {
    /// Earlier runs on the same machine (the history): at least `runs`
    /// for every such side, and the worker processes of its rounds.
    History {
        /// The fewest earlier runs a single-run side has.
        runs: usize,
    },
    /// The spread between its rounds, each in a fresh worker process.
    Workers,
    /// Nothing measured it: an assumed spread (sd of ln).
    Assumed {
        /// The spread assumed.
        sd: f64,
    },
}

/// A metric whose unit or direction is not the same in every run.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Case key.
    pub key: String,
    /// Metric name.
    pub metric: String,
    /// The units and directions seen, ordered by unit symbol.
    pub units: Vec<(Unit, Direction)>,
}

/// A value a method detail was recorded with, and the environments that
/// recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The value as the result files hold it; `null` where a measured
    /// case left the detail out (not recorded).
    pub value: serde_json::Value,
    /// The environments' labels, in order.
    pub environments: Vec<String>,
}

/// A metric of a case, named in a notice.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRef {
    /// Case key.
    pub key: String,
    /// Metric name.
    pub metric: String,
}

/// A directory on an ext3 or ext4 without a journal ([`Notice::NoJournal`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NoJournal {
    /// The environment whose cases ran there.
    pub environment: String,
    /// The `--dir`'s name.
    pub dir: String,
    /// Its file system (`ext4`).
    pub fs_type: String,
}

/// One thing a reader must know before trusting the comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// An environment runs on another CPU model or count than the
    /// baseline: differences may be the hardware's.
    DifferentCpus {
        /// The environment.
        environment: String,
        /// The baseline's label.
        baseline: String,
    },
    /// Its CPUs idle with another cpuidle driver or governor: waking an
    /// idle CPU costs differently.
    IdleDiffers {
        /// The environment.
        environment: String,
        /// Its idle states.
        idle: IdleStates,
        /// The baseline's label.
        baseline: String,
        /// The baseline's idle states.
        baseline_idle: IdleStates,
    },
    /// It sees more than [`MEMORY_DIFFERS`] more or less memory.
    MemoryDiffers {
        /// The environment.
        environment: String,
        /// Its memory, bytes (0: unknown).
        bytes: u64,
        /// The baseline's label.
        baseline: String,
        /// The baseline's memory, bytes.
        baseline_bytes: u64,
    },
    /// A run given twice: compared with itself it says nothing.
    RunTwice {
        /// The run.
        run_id: String,
    },
    /// A run that did not complete.
    Incomplete {
        /// The run.
        run_id: String,
        /// Its environment.
        environment: String,
        /// How it ended.
        status: RunStatus,
    },
    /// A run with anomalies (its own and its cases').
    Anomalies {
        /// The run.
        run_id: String,
        /// Its environment.
        environment: String,
        /// How many.
        count: usize,
    },
    /// A case measured differently on the sides: one of
    /// [`detail::METHOD`] has more than one value.
    MeasuredDifferently {
        /// Case key.
        case: String,
        /// The detail (`method`, `processes` ...).
        detail: String,
        /// Each value recorded, with the environments that recorded it.
        values: Vec<Recorded>,
    },
    /// A side has a single run; its spread between runs comes from here.
    SingleRun(SingleRunSpread),
    /// A headline metric of a case flagged suspect in a run of either side.
    SuspectCase {
        /// Case key.
        key: String,
        /// The environment compared with the baseline.
        environment: String,
        /// The flags, per run of either side.
        flags: Vec<SuspectFlag>,
    },
    /// A flag of a whole run (a governor other than `performance`); one
    /// notice per flag of every run, repeats included.
    RunSuspect(SuspectFlag),
    /// Metrics given no verdict because a method's assumption failed:
    /// they are in [`super::Comparison::not_comparable`].
    NotComparable,
    /// Metrics not compared: their unit or direction differs between runs.
    Mismatched(Vec<Mismatch>),
    /// Metrics whose values differ beyond what a double holds as a ratio.
    BeyondDouble(Vec<MetricRef>),
    /// Headline metrics with zero or negative values: no ratio.
    NonPositive(Vec<MetricRef>),
    /// The runs compared were made with other suites or other versions of
    /// envbench: their cases' sizes, repetitions or methods may differ.
    SettingsDiffer {
        /// What differs.
        setting: Setting,
        /// Each value with the labels of the environments whose runs have it.
        values: Vec<(String, Vec<String>)>,
    },
    /// Directories the cases ran in that are an ext3 or ext4 keeping no
    /// journal: a new file there skips every inode deleted in the minute
    /// before (ext4's `recently_deleted`), so files created after others
    /// were deleted take longer, by how many were and when.
    NoJournal(Vec<NoJournal>),
    /// A run of an environment, or of the baseline, that was not paired
    /// round by round with a run of the other ([`super::pairing`]), though
    /// some run of the two was measured interleaved.
    Unpaired {
        /// The environment compared with the baseline.
        environment: String,
        /// The baseline's label.
        baseline: String,
        /// The run, its side and why.
        left: super::pairing::LeftOut,
        /// Whether no run paired at all, so that the two are compared as
        /// separate runs; else this one is left out of the paired
        /// comparison of the runs that paired.
        apart: bool,
    },
}

/// A setting that should be the same in every run compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `--suite`.
    Suite,
    /// envbench's version.
    Version,
}

/// One notice per [`Setting`] whose value differs between the runs of
/// `envs`, each value with the environments that used it.
fn settings(envs: &[Environment]) -> Vec<Notice> {
    let mut out = Vec::new();
    for setting in [Setting::Suite, Setting::Version] {
        let mut values: Vec<(String, Vec<String>)> = Vec::new();
        for e in envs {
            for r in &e.runs {
                let v = match setting {
                    Setting::Suite => r.config.suite.name().to_string(),
                    Setting::Version => r.envbench_version.clone(),
                };
                match values.iter_mut().find(|(x, _)| *x == v) {
                    Some((_, labels)) if labels.contains(&e.label) => {}
                    Some((_, labels)) => labels.push(e.label.clone()),
                    None => values.push((v, vec![e.label.clone()])),
                }
            }
        }
        if values.len() > 1 {
            out.push(Notice::SettingsDiffer { setting, values });
        }
    }
    out
}

/// The suspect flags of one kind over every case of every run compared.
#[derive(Debug, Clone, PartialEq)]
pub struct SuspectTally {
    /// The kind.
    pub kind: FlagKind,
    /// Per environment, in the order of their first flag: its label and
    /// the keys of its flagged cases.
    pub cases: Vec<(String, Vec<String>)>,
    /// The largest measure among the flags that have one.
    pub most: Option<f64>,
}

/// What a reader must know about the environments themselves: other
/// hardware, idle drivers, memory, runs given twice, incomplete or
/// anomalous runs, methods that differ, and where a single run's spread
/// comes from. With `by_dir` the environments are directories of the same
/// runs (`compare --by-dir`), so a run counts as given twice only within one
/// of them.
pub(super) fn setup(envs: &[Environment], between_run: bool, by_dir: bool) -> Vec<Notice> {
    let mut out = Vec::new();
    let (base, base_fp) = (&envs[0].label, &envs[0].runs[0].fingerprint);
    for e in &envs[1..] {
        let f = &e.runs[0].fingerprint;
        // a model that one side cannot see (gVisor hides it) is no evidence
        // of other hardware; the fingerprint rows show it side by side
        let models_differ =
            matches!((&f.cpu.model, &base_fp.cpu.model), (Some(a), Some(b)) if a != b);
        if models_differ || f.cpu.logical_cpus != base_fp.cpu.logical_cpus {
            out.push(Notice::DifferentCpus {
                environment: e.label.clone(),
                baseline: base.clone(),
            });
        }
        let (idle, baseline_idle) = (IdleStates::of(&f.cpu), IdleStates::of(&base_fp.cpu));
        if idle.known() && baseline_idle.known() && idle != baseline_idle {
            out.push(Notice::IdleDiffers {
                environment: e.label.clone(),
                idle,
                baseline: base.clone(),
                baseline_idle,
            });
        }
        let (bytes, baseline_bytes) = (
            f.memory.total_bytes.unwrap_or(0),
            base_fp.memory.total_bytes.unwrap_or(0),
        );
        let (a, b) = (bytes as f64, baseline_bytes as f64);
        if b > 0.0 && (a - b).abs() / b > MEMORY_DIFFERS {
            out.push(Notice::MemoryDiffers {
                environment: e.label.clone(),
                bytes,
                baseline: base.clone(),
                baseline_bytes,
            });
        }
    }
    out.extend(settings(envs));
    out.extend(runs(envs, by_dir));
    out.extend(measured_differently(envs));
    out.extend(no_journal(envs));
    if !between_run {
        out.push(Notice::SingleRun(single_run(envs)));
    }
    out
}

/// The directories of each environment whose cases ran on an ext3 or ext4
/// without a journal, as the cases' details describe them, each once;
/// none: no notice.
fn no_journal(envs: &[Environment]) -> Option<Notice> {
    let mut dirs: Vec<NoJournal> = Vec::new();
    for e in envs {
        for c in e.runs.iter().flat_map(|r| &r.cases) {
            let Some(info) = c.dir_info().filter(|d| d.journal == Some(false)) else {
                continue;
            };
            let dir = c.dir_name();
            if !dirs
                .iter()
                .any(|d| d.environment == e.label && d.dir == dir)
            {
                dirs.push(NoJournal {
                    environment: e.label.clone(),
                    dir,
                    fs_type: info.fs_type.unwrap_or_else(|| "ext4".into()),
                });
            }
        }
    }
    (!dirs.is_empty()).then_some(Notice::NoJournal(dirs))
}

/// Runs given twice, incomplete, or with anomalies.
fn runs(envs: &[Environment], by_dir: bool) -> Vec<Notice> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, e) in envs.iter().enumerate() {
        for r in &e.runs {
            // by directory, each environment holds its own cases of the same runs
            let scope = if by_dir { i } else { 0 };
            if !seen.insert((scope, r.run_id.clone())) {
                out.push(Notice::RunTwice {
                    run_id: r.run_id.clone(),
                });
            }
            if r.status != RunStatus::Complete {
                out.push(Notice::Incomplete {
                    run_id: r.run_id.clone(),
                    environment: e.label.clone(),
                    status: r.status,
                });
            }
            let count =
                r.anomalies.len() + r.cases.iter().map(|c| c.anomalies.len()).sum::<usize>();
            if count > 0 {
                out.push(Notice::Anomalies {
                    run_id: r.run_id.clone(),
                    environment: e.label.clone(),
                    count,
                });
            }
        }
    }
    out
}

/// What a comparison with a single-run side rests on for the spread
/// between runs: earlier runs on the machine, the worker processes of its
/// rounds, or the assumed spread.
fn single_run(envs: &[Environment]) -> SingleRunSpread {
    let single: Vec<&Environment> = envs.iter().filter(|e| e.runs.len() == 1).collect();
    let earlier = single.iter().map(|e| e.earlier.len()).min().unwrap_or(0);
    if earlier >= 2 {
        SingleRunSpread::History { runs: earlier }
    } else if single.iter().all(|e| e.runs[0].config.workers) {
        SingleRunSpread::Workers
    } else {
        SingleRunSpread::Assumed {
            sd: UNMEASURED_RUN_SD,
        }
    }
}

/// One notice per case and detail of [`detail::METHOD`] whose values
/// differ between runs, by case key and detail. A measured case that
/// leaves out a detail another environment's same case records (a result
/// of an older envbench, from before the detail was kept, or a case
/// measured without it) counts as a value of its own, `null`: "not
/// recorded". A detail recorded as `null` (unknown where it ran), and one
/// an imported case leaves out, are left out.
fn measured_differently(envs: &[Environment]) -> Vec<Notice> {
    // (case key, detail) -> value (as JSON text) -> (value, environments that recorded it)
    type Seen<'a> =
        BTreeMap<(&'a str, &'a str), BTreeMap<String, (serde_json::Value, BTreeSet<&'a str>)>>;
    let mut seen: Seen = BTreeMap::new();
    // (case key, detail) -> environments whose measured case left it out
    let mut left_out: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for e in envs {
        let measured = e
            .runs
            .iter()
            .flat_map(|r| &r.cases)
            .filter(|c| c.status == CaseStatus::Ok);
        for c in measured {
            for &k in detail::METHOD {
                match c.method_detail(k) {
                    // an imported case (another tool's output) records none
                    None if c.stop_reason == IMPORTED => {}
                    None => {
                        left_out
                            .entry((c.key.as_str(), k))
                            .or_default()
                            .insert(e.label.as_str());
                    }
                    Some(v) if v.is_null() => {}
                    Some(v) => {
                        seen.entry((c.key.as_str(), k))
                            .or_default()
                            .entry(v.to_string())
                            .or_insert((v.clone(), BTreeSet::new()))
                            .1
                            .insert(e.label.as_str());
                    }
                }
            }
        }
    }
    for (at, labels) in left_out {
        if let Some(values) = seen.get_mut(&at) {
            values.insert("null".into(), (serde_json::Value::Null, labels));
        }
    }
    seen.into_iter()
        .filter(|(_, values)| values.len() > 1)
        .map(|((case, detail), values)| Notice::MeasuredDifferently {
            case: case.to_string(),
            detail: detail.to_string(),
            values: values
                .into_values()
                .map(|(value, labels)| Recorded {
                    value,
                    environments: labels.into_iter().map(String::from).collect(),
                })
                .collect(),
        })
        .collect()
}

/// Keeps of each [`Notice::MeasuredDifferently`] the values of the
/// `baseline` and of the environments where the case's headline metric
/// has a verdict, and leaves out a notice with fewer than two values left:
/// a case with no verdict in an environment (not comparable there: its
/// method's assumption failed) is left out of the comparison and named
/// once, with why. On a native/gVisor pair (Zen 5 VM, 2026-11-30) io.dd's
/// O_DIRECT write was both "not comparable" (O_DIRECT not honoured in
/// gVisor) and "measured differently" (its buffer asked for a huge page
/// natively, not there): two warnings for a case the comparison does not
/// show.
pub(super) fn drop_unjudged_differences(
    notices: &mut Vec<Notice>,
    baseline: &str,
    metrics: &[MetricComparison],
) {
    notices.retain_mut(|n| {
        let Notice::MeasuredDifferently { case, values, .. } = n else {
            return true;
        };
        let judged: BTreeSet<&str> = metrics
            .iter()
            .filter(|m| m.primary && &m.key == case)
            .map(|m| m.environment.as_str())
            .collect();
        if judged.is_empty() {
            return false;
        }
        for r in values.iter_mut() {
            r.environments
                .retain(|e| e == baseline || judged.contains(e.as_str()));
        }
        values.retain(|r| !r.environments.is_empty());
        values.len() > 1
    });
}

/// Every suspect flag of case `key` in the runs of `envs` (validity flags
/// stored in the result files); empty when no run flags it.
pub(super) fn case_flags(envs: &[&Environment], key: &str) -> Vec<SuspectFlag> {
    envs.iter()
        .flat_map(|e| {
            e.runs.iter().flat_map(move |r| {
                r.cases
                    .iter()
                    .filter(move |c| c.key == key)
                    .flat_map(|c| &c.suspect)
                    .map(move |s| SuspectFlag {
                        environment: e.label.clone(),
                        run_id: r.run_id.clone(),
                        kind: FlagKind::of(&s.kind),
                        message: s.message.clone(),
                    })
            })
        })
        .collect()
}

/// One notice per suspect headline metric, then one per flag of a whole
/// run (a governor other than `performance`).
pub(super) fn suspects(envs: &[Environment], metrics: &[MetricComparison]) -> Vec<Notice> {
    let mut out: Vec<Notice> = metrics
        .iter()
        .filter(|m| m.primary && !m.suspect.is_empty())
        .map(|m| Notice::SuspectCase {
            key: m.key.clone(),
            environment: m.environment.clone(),
            flags: m.suspect.clone(),
        })
        .collect();
    for e in envs {
        for r in &e.runs {
            out.extend(r.suspect.iter().map(|s| {
                Notice::RunSuspect(SuspectFlag {
                    environment: e.label.clone(),
                    run_id: r.run_id.clone(),
                    kind: FlagKind::of(&s.kind),
                    message: s.message.clone(),
                })
            }));
        }
    }
    out
}

/// The flags of every case of every run of `envs`, by kind (in the
/// kinds' name order): which cases of which environment, and the largest
/// measure.
pub(super) fn tallies(envs: &[Environment]) -> Vec<SuspectTally> {
    let mut kinds: BTreeMap<&str, SuspectTally> = BTreeMap::new();
    for e in envs {
        for case in e.runs.iter().flat_map(|r| &r.cases) {
            for s in &case.suspect {
                let t = kinds
                    .entry(s.kind.as_str())
                    .or_insert_with(|| SuspectTally {
                        kind: FlagKind::of(&s.kind),
                        cases: Vec::new(),
                        most: None,
                    });
                let at = match t.cases.iter().position(|(l, _)| *l == e.label) {
                    Some(i) => i,
                    None => {
                        t.cases.push((e.label.clone(), Vec::new()));
                        t.cases.len() - 1
                    }
                };
                if !t.cases[at].1.contains(&case.key) {
                    t.cases[at].1.push(case.key.clone());
                }
                if let Some(v) = s.value {
                    t.most = Some(t.most.map_or(v, |m| m.max(v)));
                }
            }
        }
    }
    kinds.into_values().collect()
}
