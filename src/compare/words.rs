//! Words that follow the numbers: fingerprints side by side, warnings,
//! per-family recommendations and advice on how many more runs would
//! resolve what is unclear.

use super::{Environment, FingerprintRow};
use crate::results::{ResultFile, RunStatus};
use crate::stats::levels::UNMEASURED_RUN_SD;
use std::collections::{BTreeMap, BTreeSet};

/// A speed-up in words: "2.0x faster", "1325x slower", "3 % slower".
pub fn describe_speedup(s: f64) -> String {
    if !s.is_finite() || s <= 0.0 {
        return "not comparable".into();
    }
    if s >= 1.5 {
        format!("{} faster", factor(s))
    } else if s <= 1.0 / 1.5 {
        format!("{} slower", factor(1.0 / s))
    } else {
        let pct = (s - 1.0).abs() * 100.0;
        let word = if s >= 1.0 { "faster" } else { "slower" };
        if pct < 10.0 {
            format!("{pct:.1} % {word}")
        } else {
            format!("{pct:.0} % {word}")
        }
    }
}

fn factor(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}x")
    } else {
        format!("{x:.1}x")
    }
}

pub(super) fn fingerprint_rows(envs: &[Environment]) -> Vec<FingerprintRow> {
    type Field = (&'static str, fn(&ResultFile) -> String);
    let fields: [Field; 12] = [
        ("virtualization", |r| r.fingerprint.virtualization.summary()),
        ("kernel", |r| {
            r.fingerprint.os.kernel_release.clone().unwrap_or_default()
        }),
        ("distro", |r| {
            r.fingerprint.os.distro.clone().unwrap_or_default()
        }),
        ("cpu model", |r| {
            r.fingerprint.cpu.model.clone().unwrap_or_default()
        }),
        ("logical CPUs", |r| {
            r.fingerprint.cpu.logical_cpus.to_string()
        }),
        ("usable CPUs", |r| {
            r.fingerprint
                .cpu
                .usable_cpus
                .map_or(String::new(), |c| c.to_string())
        }),
        ("CPU idle", |r| idle_text(&r.fingerprint.cpu)),
        ("memory", |r| {
            r.fingerprint
                .memory
                .total_bytes
                .map_or("unknown".into(), |b| {
                    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
                })
        }),
        ("cgroup limits", |r| {
            let c = &r.fingerprint.cgroup;
            format!(
                "cpu {} / mem {}",
                c.cpu_quota_cpus.map_or("none".into(), |q| q.to_string()),
                c.memory_limit_bytes
                    .map_or("none".into(), |m| format!("{} MiB", m >> 20))
            )
        }),
        ("clock source", |r| {
            r.fingerprint.clock.source.clone().unwrap_or_default()
        }),
        ("filesystems", |r| {
            r.fingerprint
                .dirs
                .iter()
                .map(|d| d.fs_type.clone().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(", ")
        }),
        ("suite", |r| r.config.suite.name().to_string()),
    ];
    fields
        .iter()
        .map(|(name, get)| {
            let values: Vec<String> = envs
                .iter()
                .map(|e| e.runs.first().map(get).unwrap_or_default())
                .collect();
            let differs = values.iter().any(|v| *v != values[0]);
            FingerprintRow {
                field: name.to_string(),
                values,
                differs,
            }
        })
        .collect()
}

/// `driver / governor` of cpuidle, empty when neither is known.
fn idle_text(c: &crate::probe::cpu::CpuInfo) -> String {
    match (&c.idle_driver, &c.idle_governor) {
        (None, None) => String::new(),
        (d, g) => format!(
            "{} / {}",
            d.as_deref().unwrap_or("?"),
            g.as_deref().unwrap_or("?")
        ),
    }
}

/// What a reader must know before trusting the comparison of `envs`:
/// other hardware, idle drivers, memory, runs given twice, incomplete or
/// anomalous runs, methods that differ, and where a single run's spread
/// came from. With `by_dir` the environments are directories of the same
/// runs (`compare --dirs`), so a run counts as given twice only within
/// one of them.
pub(super) fn warnings(envs: &[Environment], between_run: bool, by_dir: bool) -> Vec<String> {
    let mut w = Vec::new();
    let base = &envs[0].runs[0].fingerprint;
    for e in &envs[1..] {
        let f = &e.runs[0].fingerprint;
        // a model that one side cannot see (gVisor hides it) is no evidence
        // of other hardware; the fingerprint rows show it side by side
        let models_differ = matches!((&f.cpu.model, &base.cpu.model), (Some(a), Some(b)) if a != b);
        if models_differ || f.cpu.logical_cpus != base.cpu.logical_cpus {
            w.push(format!("{} runs on different CPUs than {}: differences may be the hardware's, not the environment's", e.label, envs[0].label));
        }
        let (idle, base_idle) = (idle_text(&f.cpu), idle_text(&base.cpu));
        if !idle.is_empty() && !base_idle.is_empty() && idle != base_idle {
            w.push(format!(
                "{} idles its CPUs with {idle}, {} with {base_idle}: waking an idle CPU costs \
                 what these make it cost, so cases that hand work between CPUs (cpus=split) \
                 differ by that too",
                e.label, envs[0].label
            ));
        }
        let (a, b) = (
            f.memory.total_bytes.unwrap_or(0) as f64,
            base.memory.total_bytes.unwrap_or(0) as f64,
        );
        if b > 0.0 && (a - b).abs() / b > 0.1 {
            w.push(format!(
                "{} sees {:.1} GiB of memory, {} sees {:.1} GiB (a VM or WSL 2 gets a share)",
                e.label,
                a / 1073741824.0,
                envs[0].label,
                b / 1073741824.0
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, e) in envs.iter().enumerate() {
        for r in &e.runs {
            // by directory, each environment holds its own cases of the same runs
            let scope = if by_dir { i } else { 0 };
            if !seen.insert((scope, r.run_id.clone())) {
                w.push(format!(
                    "run {} appears twice: comparing a run with itself says nothing",
                    r.run_id
                ));
            }
            if r.status != RunStatus::Complete {
                w.push(
                    format!(
                        "run {} of {} is {:?}, not complete",
                        r.run_id, e.label, r.status
                    )
                    .to_lowercase(),
                );
            }
            let n = r.anomalies.len() + r.cases.iter().map(|c| c.anomalies.len()).sum::<usize>();
            if n > 0 {
                let noun = if n == 1 { "anomaly" } else { "anomalies" };
                w.push(format!(
                    "run {} of {} has {n} {noun}; see `envbench show`",
                    r.run_id, e.label
                ));
            }
        }
    }
    w.extend(method_warnings(envs));
    if !between_run {
        w.push(single_run_warning(envs));
    }
    w
}

/// What a comparison with a single-run side rests on for the spread
/// between runs: earlier runs on the machine, the worker processes of its
/// rounds, or the assumed spread.
fn single_run_warning(envs: &[Environment]) -> String {
    let single: Vec<&Environment> = envs.iter().filter(|e| e.runs.len() == 1).collect();
    let earlier = single.iter().map(|e| e.earlier.len()).min().unwrap_or(0);
    let workers = single.iter().all(|e| e.runs[0].config.workers);
    let how = if earlier >= 2 {
        format!(
            "it is taken from {earlier} or more earlier runs on the same machine (the history), \
             where they hold the case, and from the worker processes of its rounds"
        )
    } else if workers {
        "it is taken from the spread between its rounds, each measured in a fresh worker \
         process at another moment of the run; what changes only between runs (a reboot, \
         another hour) is not in it"
            .to_string()
    } else {
        format!(
            "each such side is given an assumed spread of {:.0} % between runs, so only large \
             effects can be called",
            UNMEASURED_RUN_SD * 100.0
        )
    };
    format!(
        "an environment has a single run: the spread between runs is not measured by runs; {how}; \
         3 runs per environment, alternated (A B A B A B), measure it"
    )
}

/// Result details that say how a case was measured: when they differ
/// between environments (a fallback helper, fewer processes allowed by a
/// limit, transparent huge pages off on one side, affinity that could not
/// be set), the figures are not like for like.
const METHOD_DETAILS: &[&str] = &[
    "method",
    "program",
    "processes",
    "threads",
    "thp_mode",
    "page_request",
    "placement",
];

/// One warning per case whose [`METHOD_DETAILS`] differ between runs.
fn method_warnings(envs: &[Environment]) -> Vec<String> {
    // (case key, detail) -> value -> environments that recorded it
    let mut seen: BTreeMap<(&str, &str), BTreeMap<String, BTreeSet<&str>>> = BTreeMap::new();
    for e in envs {
        for r in &e.runs {
            for c in &r.cases {
                let Some(details) = c.details.as_ref() else {
                    continue;
                };
                for &k in METHOD_DETAILS {
                    if let Some(v) = details.get(k).filter(|v| !v.is_null()) {
                        // strings quoted, numbers as they are
                        let v = v
                            .as_str()
                            .map_or_else(|| v.to_string(), |s| format!("{s:?}"));
                        seen.entry((c.key.as_str(), k))
                            .or_default()
                            .entry(v)
                            .or_default()
                            .insert(e.label.as_str());
                    }
                }
            }
        }
    }
    seen.into_iter()
        .filter(|(_, values)| values.len() > 1)
        .map(|((case, detail), values)| {
            let said: Vec<String> = values
                .into_iter()
                .map(|(v, labels)| {
                    format!("{} {v}", labels.into_iter().collect::<Vec<_>>().join(", "))
                })
                .collect();
            format!(
                "{case} was measured differently ({detail}: {}): its figures are not like for like",
                said.join("; ")
            )
        })
        .collect()
}

/// Why `key` is suspect, one line per flag and run of `envs` (validity
/// flags stored in the result files); empty when no run flags it.
pub(super) fn suspect_lines(envs: &[&Environment], key: &str) -> Vec<String> {
    envs.iter()
        .flat_map(|e| {
            e.runs.iter().flat_map(move |r| {
                r.cases
                    .iter()
                    .filter(move |c| c.key == key)
                    .flat_map(|c| &c.suspect)
                    .map(move |s| format!("{} ({}): {}: {}", e.label, r.run_id, s.kind, s.message))
            })
        })
        .collect()
}

/// One warning per suspect case and environment, and one per run-level
/// flag (a governor other than `performance`).
pub(super) fn suspect_warnings(
    envs: &[Environment],
    metrics: &[super::MetricComparison],
    exclude: bool,
) -> Vec<String> {
    let fate = if exclude {
        "left out of the geometric means (--exclude-suspect)"
    } else {
        "counted in the geometric means; --exclude-suspect leaves it out"
    };
    let mut w: Vec<String> = metrics
        .iter()
        .filter(|m| m.primary && !m.suspect.is_empty())
        .map(|m| {
            format!(
                "suspect (! in the tables): {} against {}, {fate}: {}",
                m.key,
                m.environment,
                m.suspect.join("; ")
            )
        })
        .collect();
    let mut seen = BTreeSet::new();
    for e in envs {
        for r in &e.runs {
            for s in &r.suspect {
                if seen.insert((e.label.as_str(), s.kind.as_str(), s.message.as_str())) {
                    w.push(format!("{} ({}): {}", e.label, r.run_id, s.message));
                }
            }
        }
    }
    w
}
