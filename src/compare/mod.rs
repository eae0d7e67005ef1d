//! Comparison of environments: per case and metric, the ratio of medians
//! other/baseline with a bootstrap 95 % CI, the seeds' variation
//! (base − other)/base × 100, a two-sided Mann-Whitney U test with
//! Benjamini-Hochberg control over all comparisons, and a verdict —
//! faster, slower or tie — oriented by each metric's direction.
//!
//! Environments are groups of runs (one label, or files given with
//! `--base`/`--other`). With three or more runs on each side the samples are
//! the runs' medians, so drift between runs counts as noise; with fewer the
//! repetitions of all runs are pooled and the comparison is labelled
//! "within-run only", with a wider default threshold. Reads only `results`
//! types; rendering is in `report::compare`.

use crate::results::{CaseResult, CaseStatus, ResultFile, RunStatus};
use crate::stats::hypothesis::{benjamini_hochberg, mann_whitney_p, ratio_of_medians_ci};
use crate::stats::median_of_sorted;
use crate::units::{Direction, Unit};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// Runs per environment from which run-level medians are used.
pub const BETWEEN_RUN_MIN_RUNS: usize = 3;
/// Default minimum effect with run-level medians (2 %).
pub const DEFAULT_THRESHOLD: f64 = 0.02;
/// Default minimum effect when only within-run samples are available (5 %):
/// drift between runs was measured at 10-65 % on shared machines.
pub const WITHIN_RUN_THRESHOLD: f64 = 0.05;
/// False discovery rate controlled by Benjamini-Hochberg.
pub const FDR: f64 = 0.05;
/// Bootstrap resamples for a ratio's interval.
const RESAMPLES: usize = 2000;

/// Why environments cannot be compared.
#[derive(Debug, Error)]
pub enum CompareError {
    /// Fewer than two environments.
    #[error("need at least two environments to compare; {0}")]
    OneEnvironment(String),
    /// Nothing in common.
    #[error("no case is common to {0} and {1}: they ran different benchmarks")]
    NoCommonCases(String, String),
}

/// One environment: a label and its runs.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Its name in reports.
    pub label: String,
    /// Its result files.
    pub runs: Vec<ResultFile>,
}

/// Outcome of one comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Better than the baseline beyond the threshold, significantly.
    Faster,
    /// Worse than the baseline beyond the threshold, significantly.
    Slower,
    /// No difference the statistics can support.
    Tie,
}

/// One metric of one case, one environment against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct MetricComparison {
    /// The environment compared with the baseline.
    pub environment: String,
    /// Case key.
    pub key: String,
    /// Family (`cpu`, `mem`, `os` ...).
    pub family: String,
    /// Metric name.
    pub metric: String,
    /// Unit of the medians.
    pub unit: Unit,
    /// Whether higher is better.
    pub direction: Direction,
    /// Whether this is the case's headline metric (used in summaries).
    pub primary: bool,
    /// Baseline median.
    pub base_median: f64,
    /// Other environment's median.
    pub other_median: f64,
    /// other / base.
    pub ratio: f64,
    /// 95 % bootstrap interval of the ratio.
    pub ratio_ci: (f64, f64),
    /// (base − other) / base × 100, the seeds' convention: positive means a smaller value in OTHER.
    pub variation_pct: f64,
    /// Two-sided Mann-Whitney p-value.
    pub p_value: f64,
    /// Benjamini-Hochberg adjusted p-value.
    pub p_adjusted: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Sample counts (base, other) and what a sample is.
    pub basis: String,
}

impl MetricComparison {
    /// How many times faster OTHER is (ratio oriented so > 1 is better).
    pub fn speedup(&self) -> f64 {
        match self.direction {
            Direction::HigherIsBetter => self.ratio,
            Direction::LowerIsBetter => 1.0 / self.ratio,
        }
    }
}

/// Per family (and `overall`), one environment: geometric mean speed-up of
/// headline metrics and verdict counts.
#[derive(Debug, Clone, Serialize)]
pub struct FamilySummary {
    /// Family or `overall`.
    pub family: String,
    /// Environment against the baseline.
    pub environment: String,
    /// Geometric mean of speed-ups (> 1: OTHER faster).
    pub geomean_speedup: f64,
    /// Headline metrics judged faster.
    pub faster: usize,
    /// ... slower.
    pub slower: usize,
    /// ... tie.
    pub tie: usize,
}

/// An environment as compared.
#[derive(Debug, Clone, Serialize)]
pub struct EnvSummary {
    /// Label.
    pub label: String,
    /// Run ids.
    pub runs: Vec<String>,
}

/// A fingerprint field across environments.
#[derive(Debug, Clone, Serialize)]
pub struct FingerprintRow {
    /// Field name.
    pub field: String,
    /// Value per environment (first run's), baseline first.
    pub values: Vec<String>,
    /// Whether any differs from the baseline's.
    pub differs: bool,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Baseline label.
    pub baseline: String,
    /// Every environment, baseline first.
    pub environments: Vec<EnvSummary>,
    /// Whether verdicts rest on run-level medians (enough runs on every side).
    pub between_run: bool,
    /// Minimum effect, a fraction.
    pub threshold: f64,
    /// False discovery rate.
    pub fdr: f64,
    /// Bootstrap seed.
    pub seed: u64,
    /// Every metric comparison.
    pub metrics: Vec<MetricComparison>,
    /// Per family and overall.
    pub families: Vec<FamilySummary>,
    /// (environment, case key) present on one side only.
    pub unmatched: Vec<(String, String)>,
    /// Fingerprints side by side.
    pub fingerprint: Vec<FingerprintRow>,
    /// Problems the reader must know (different hardware, anomalies, too few runs).
    pub warnings: Vec<String>,
    /// Plain-language summary per family.
    pub recommendations: Vec<String>,
}

/// Options of a comparison.
#[derive(Debug, Clone)]
pub struct Options {
    /// Minimum effect; None picks the default for the number of runs.
    pub threshold: Option<f64>,
    /// Bootstrap seed.
    pub seed: u64,
}

/// FNV-1a of the strings: a per-comparison bootstrap seed that does not
/// depend on the order of comparisons.
fn seed_for(seed: u64, parts: &[&str]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

fn ok_case<'a>(run: &'a ResultFile, key: &str) -> Option<&'a CaseResult> {
    run.cases
        .iter()
        .find(|c| c.key == key && c.status == CaseStatus::Ok)
}

fn ok_keys(env: &Environment) -> BTreeSet<String> {
    env.runs
        .iter()
        .flat_map(|r| {
            r.cases
                .iter()
                .filter(|c| c.status == CaseStatus::Ok)
                .map(|c| c.key.clone())
        })
        .collect()
}

/// The samples of `metric` of `key` in `env`: run medians or pooled repetitions.
fn samples(env: &Environment, key: &str, metric: &str, between_run: bool) -> Vec<f64> {
    let metrics = env
        .runs
        .iter()
        .filter_map(|r| ok_case(r, key))
        .filter_map(|c| c.metrics.iter().find(|m| m.name == metric));
    if between_run {
        metrics
            .filter_map(|m| m.summary.as_ref().map(|s| s.median))
            .collect()
    } else {
        metrics.flat_map(|m| m.samples.iter().copied()).collect()
    }
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    median_of_sorted(&v)
}

/// Compares every environment after the first with the first.
///
/// # Errors
/// [`CompareError`] with fewer than two environments or no common case.
pub fn compare(envs: &[Environment], opts: &Options) -> Result<Comparison, CompareError> {
    let [base, others @ ..] = envs else {
        return Err(CompareError::OneEnvironment("none given".into()));
    };
    if others.is_empty() {
        return Err(CompareError::OneEnvironment(format!(
            "every run is labelled '{}'; label runs per environment (run --label) or use --base/--other",
            base.label
        )));
    }
    let between_run = envs.iter().all(|e| e.runs.len() >= BETWEEN_RUN_MIN_RUNS);
    let threshold = opts.threshold.unwrap_or(if between_run {
        DEFAULT_THRESHOLD
    } else {
        WITHIN_RUN_THRESHOLD
    });
    let base_keys = ok_keys(base);
    let mut metrics = Vec::new();
    let mut unmatched = Vec::new();
    for other in others {
        let other_keys = ok_keys(other);
        let common: Vec<&String> = base_keys.intersection(&other_keys).collect();
        if common.is_empty() {
            return Err(CompareError::NoCommonCases(
                base.label.clone(),
                other.label.clone(),
            ));
        }
        unmatched.extend(
            base_keys
                .difference(&other_keys)
                .map(|k| (base.label.clone(), k.clone())),
        );
        unmatched.extend(
            other_keys
                .difference(&base_keys)
                .map(|k| (other.label.clone(), k.clone())),
        );
        for key in common {
            let Some(case) = base.runs.iter().find_map(|r| ok_case(r, key)) else {
                continue;
            };
            for (i, m) in case.metrics.iter().enumerate() {
                let (b, o) = (
                    samples(base, key, &m.name, between_run),
                    samples(other, key, &m.name, between_run),
                );
                if b.is_empty() || o.is_empty() || median(&b) == 0.0 {
                    continue;
                }
                let (ratio, lo, hi) = ratio_of_medians_ci(
                    &b,
                    &o,
                    seed_for(opts.seed, &[&other.label, key, &m.name]),
                    RESAMPLES,
                );
                let (bm, om) = (median(&b), median(&o));
                metrics.push(MetricComparison {
                    environment: other.label.clone(),
                    key: key.clone(),
                    family: case.bench.split('.').next().unwrap_or("").to_string(),
                    metric: m.name.clone(),
                    unit: m.unit,
                    direction: m.direction,
                    primary: i == 0,
                    base_median: bm,
                    other_median: om,
                    ratio,
                    ratio_ci: (lo, hi),
                    variation_pct: (bm - om) / bm * 100.0,
                    p_value: mann_whitney_p(&b, &o),
                    p_adjusted: 1.0,
                    verdict: Verdict::Tie,
                    basis: format!(
                        "{} vs {} {}",
                        b.len(),
                        o.len(),
                        if between_run {
                            "run medians"
                        } else {
                            "repetitions (within-run only)"
                        }
                    ),
                });
            }
        }
    }
    let adjusted = benjamini_hochberg(&metrics.iter().map(|m| m.p_value).collect::<Vec<_>>());
    for (m, p) in metrics.iter_mut().zip(adjusted) {
        m.p_adjusted = p;
        m.verdict = verdict(m, threshold);
    }
    let families = summarize_families(&metrics);
    let mut cmp = Comparison {
        baseline: base.label.clone(),
        environments: envs
            .iter()
            .map(|e| EnvSummary {
                label: e.label.clone(),
                runs: e.runs.iter().map(|r| r.run_id.clone()).collect(),
            })
            .collect(),
        between_run,
        threshold,
        fdr: FDR,
        seed: opts.seed,
        recommendations: Vec::new(),
        fingerprint: fingerprint_rows(envs),
        warnings: warnings(envs, between_run),
        metrics,
        families,
        unmatched,
    };
    cmp.recommendations = recommendations(&cmp);
    Ok(cmp)
}

/// Faster or slower only when the rank test is significant after FDR
/// control and the whole CI of the speed-up lies beyond the threshold band.
fn verdict(m: &MetricComparison, threshold: f64) -> Verdict {
    let (lo, hi) = match m.direction {
        Direction::HigherIsBetter => m.ratio_ci,
        Direction::LowerIsBetter => (1.0 / m.ratio_ci.1, 1.0 / m.ratio_ci.0),
    };
    if m.p_adjusted >= FDR {
        Verdict::Tie
    } else if lo > 1.0 + threshold {
        Verdict::Faster
    } else if hi < 1.0 - threshold {
        Verdict::Slower
    } else {
        Verdict::Tie
    }
}

fn summarize_families(metrics: &[MetricComparison]) -> Vec<FamilySummary> {
    let mut groups: Vec<(String, String)> = metrics
        .iter()
        .map(|m| (m.environment.clone(), m.family.clone()))
        .collect();
    groups.sort();
    groups.dedup();
    let envs: BTreeSet<String> = metrics.iter().map(|m| m.environment.clone()).collect();
    groups.extend(envs.into_iter().map(|e| (e, "overall".to_string())));
    groups
        .into_iter()
        .map(|(env, family)| {
            let chosen: Vec<&MetricComparison> = metrics
                .iter()
                .filter(|m| {
                    m.primary && m.environment == env && (family == "overall" || m.family == family)
                })
                .collect();
            let logs: Vec<f64> = chosen
                .iter()
                .map(|m| m.speedup())
                .filter(|s| *s > 0.0 && s.is_finite())
                .map(f64::ln)
                .collect();
            let count = |v: Verdict| chosen.iter().filter(|m| m.verdict == v).count();
            FamilySummary {
                geomean_speedup: if logs.is_empty() {
                    f64::NAN
                } else {
                    (logs.iter().sum::<f64>() / logs.len() as f64).exp()
                },
                faster: count(Verdict::Faster),
                slower: count(Verdict::Slower),
                tie: count(Verdict::Tie),
                family,
                environment: env,
            }
        })
        .collect()
}

fn fingerprint_rows(envs: &[Environment]) -> Vec<FingerprintRow> {
    type Field = (&'static str, fn(&ResultFile) -> String);
    let fields: [Field; 11] = [
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

fn warnings(envs: &[Environment], between_run: bool) -> Vec<String> {
    let mut w = Vec::new();
    let base = &envs[0].runs[0].fingerprint;
    for e in &envs[1..] {
        let f = &e.runs[0].fingerprint;
        if f.cpu.model != base.cpu.model || f.cpu.logical_cpus != base.cpu.logical_cpus {
            w.push(format!("{} runs on different CPUs than {}: differences may be the hardware's, not the environment's", e.label, envs[0].label));
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
    for e in envs {
        for r in &e.runs {
            if !seen.insert(r.run_id.clone()) {
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
    let fewest = envs.iter().map(|e| e.runs.len()).min().unwrap_or(0);
    if between_run && fewest < 5 {
        w.push(format!(
            "with {fewest} runs in an environment the rank test on run medians cannot reach p < 0.05: \
             every verdict will be a tie; make 5 or more runs per environment for a firm verdict"
        ));
    }
    if !between_run {
        w.push(format!(
            "within-run only: drift between runs not measured. Make at least {BETWEEN_RUN_MIN_RUNS} runs per environment \
             (5 for the rank test to reach p < 0.05 on run medians), alternating environments where you can"
        ));
    }
    w
}

/// Result details that say how a case was measured: when they differ
/// between environments (a fallback helper, fewer processes allowed by a
/// limit), the figures are not like for like.
const METHOD_DETAILS: &[&str] = &["method", "program", "processes", "threads"];

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

/// Family hints: what a slower family means for work.
fn hint(family: &str) -> &'static str {
    match family {
        "cpu" => "CPU-bound work (compilers, numerics) will feel it",
        "mem" => "memory-bound work (large arrays, databases) will feel it",
        "io" => "keep file-heavy work on the faster side's filesystem",
        "os" => "process- and syscall-heavy work (shell scripts, builds, git) will feel it",
        "net" => "network services on loopback will feel it",
        _ => "",
    }
}

fn recommendations(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for f in c.families.iter().filter(|f| f.family != "overall") {
        let total = f.faster + f.slower + f.tie;
        let pct = (f.geomean_speedup - 1.0).abs() * 100.0;
        let line = if f.slower > 0 && f.slower >= f.faster {
            format!(
                "{}: {} is slower than {} in {} of {total} case(s) (geometric mean {:.0} % slower); {}.",
                f.family, f.environment, c.baseline, f.slower, (1.0 - f.geomean_speedup) * 100.0, hint(&f.family)
            )
        } else if f.faster > 0 {
            format!(
                "{}: {} is faster than {} in {} of {total} case(s) (geometric mean {pct:.0} % {}).",
                f.family,
                f.environment,
                c.baseline,
                f.faster,
                if f.geomean_speedup >= 1.0 {
                    "faster"
                } else {
                    "slower"
                }
            )
        } else {
            format!(
                "{}: no difference beyond ±{:.0} % between {} and {} could be shown in {total} case(s).",
                f.family,
                c.threshold * 100.0,
                f.environment,
                c.baseline
            )
        };
        out.push(line);
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{RepPolicy, RunConfig, Suite};
    use crate::results::{MetricResult, SCHEMA_VERSION};
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
                mem_bandwidth_gbs: None,
            },
            fingerprint: fp,
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
                })
                .collect(),
            derived: vec![],
            anomalies: vec![],
            notes: vec![],
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

    fn env(label: &str, runs: Vec<ResultFile>) -> Environment {
        Environment {
            label: label.into(),
            runs,
        }
    }

    const OPTS: Options = Options {
        threshold: None,
        seed: 42,
    };

    #[test]
    fn a_to_a_comparison_is_overwhelmingly_tie() {
        let mut rng = Rng::new(5);
        let keys: Vec<String> = (0..40).map(|i| format!("os.case{i}")).collect();
        let mk = |rng: &mut Rng| -> Vec<(&str, &str, Direction, Vec<f64>)> {
            keys.iter()
                .map(|k| {
                    (
                        k.as_str(),
                        "rate",
                        Direction::HigherIsBetter,
                        draws(rng, 10, 100.0, 0.1),
                    )
                })
                .collect()
        };
        let (a, b) = (mk(&mut rng), mk(&mut rng));
        let c = compare(
            &[
                env("A", vec![run("A", "a1", &a)]),
                env("B", vec![run("B", "b1", &b)]),
            ],
            &OPTS,
        )
        .unwrap();
        let decided = c
            .metrics
            .iter()
            .filter(|m| m.verdict != Verdict::Tie)
            .count();
        // FDR control at 5 % plus the 5 % band: at most 5 % false verdicts
        assert!(
            decided * 20 <= c.metrics.len(),
            "{decided} of {} decided",
            c.metrics.len()
        );
        assert!(!c.between_run && c.warnings.iter().any(|w| w.contains("within-run only")));
    }

    #[test]
    fn a_clear_difference_gets_a_verdict_oriented_by_direction() {
        let mut rng = Rng::new(9);
        let base = run(
            "native",
            "n1",
            &[
                (
                    "cpu.x",
                    "rate",
                    Direction::HigherIsBetter,
                    draws(&mut rng, 12, 100.0, 0.02),
                ),
                (
                    "os.y",
                    "latency",
                    Direction::LowerIsBetter,
                    draws(&mut rng, 12, 100.0, 0.02),
                ),
            ],
        );
        let other = run(
            "wsl1",
            "w1",
            &[
                (
                    "cpu.x",
                    "rate",
                    Direction::HigherIsBetter,
                    draws(&mut rng, 12, 70.0, 0.02),
                ),
                (
                    "os.y",
                    "latency",
                    Direction::LowerIsBetter,
                    draws(&mut rng, 12, 4000.0, 0.02),
                ),
            ],
        );
        let c = compare(
            &[env("native", vec![base]), env("wsl1", vec![other])],
            &OPTS,
        )
        .unwrap();
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
        assert!(c
            .recommendations
            .iter()
            .any(|r| r.starts_with("os: wsl1 is slower")));
    }

    #[test]
    fn three_runs_per_side_use_run_medians() {
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
        let c = compare(&[env("A", a), env("B", b)], &OPTS).unwrap();
        assert!(c.between_run);
        assert_eq!(c.threshold, DEFAULT_THRESHOLD);
        assert_eq!(c.metrics[0].basis, "5 vs 5 run medians");
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
    fn a_run_compared_with_itself_is_warned_about() {
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
        let c = compare(&[env("A", vec![a.clone()]), env("B", vec![a])], &OPTS).unwrap();
        assert!(c.warnings.iter().any(|w| w.contains("appears twice")));
        assert_eq!(c.metrics[0].verdict, Verdict::Tie);
    }

    #[test]
    fn a_case_measured_differently_is_warned_about() {
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
        let same = compare(
            &[
                env("A", vec![mk("A", "a1", "tiny", 100)]),
                env("B", vec![mk("B", "b1", "tiny", 100)]),
            ],
            &OPTS,
        )
        .unwrap();
        assert!(
            !same
                .warnings
                .iter()
                .any(|w| w.contains("measured differently")),
            "{:?}",
            same.warnings
        );
        let differ = compare(
            &[
                env("A", vec![mk("A", "a1", "tiny", 100)]),
                env("B", vec![mk("B", "b1", "envbench", 60)]),
            ],
            &OPTS,
        )
        .unwrap();
        let w: Vec<&String> = differ
            .warnings
            .iter()
            .filter(|w| w.contains("measured differently"))
            .collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w.iter()
                .any(|w| w.contains(r#"method: A "tiny"; B "envbench""#)
                    || w.contains(r#"method: B "envbench"; A "tiny""#)),
            "{w:?}"
        );
        assert!(
            w.iter().any(|w| w.contains("processes: A 100; B 60")),
            "{w:?}"
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
}
