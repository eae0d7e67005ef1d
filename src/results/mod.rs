//! The result file's wire schema (version [`SCHEMA_VERSION`]): serde types
//! only. Every field is documented in `docs/results.md`; every value carries
//! its unit (in the field name or a `unit` field).

use crate::config::RunConfig;
use crate::probe::Fingerprint;
use crate::stats::Summary;
use crate::units::{Direction, Unit};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub use rounds::{CaseRound, Interleave, InterleavedEnv, Rounds};

pub mod counts;
pub mod ids;
pub mod params;
pub mod price;
mod rounds;
mod turns;
pub mod validate;

/// Version of this schema; written first, and newer files are refused.
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest schema this build reads. Version 1 files have no rounds: each
/// of their cases reads as one round.
pub const OLDEST_SCHEMA_VERSION: u32 = 1;

/// One run of envbench in one environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// envbench version that wrote the file.
    pub envbench_version: String,
    /// Unique id: `<UTC start>-<host>-<pid>`.
    pub run_id: String,
    /// Environment label given with `--label` (or derived from the virtualisation).
    pub label: String,
    /// `running` while measuring (a file left so crashed), `complete`,
    /// `interrupted` (Ctrl-C or SIGTERM) or `failed`.
    pub status: RunStatus,
    /// Start, ISO 8601 UTC.
    pub started_utc: String,
    /// End, ISO 8601 UTC; absent while running.
    pub ended_utc: Option<String>,
    /// The configuration the run used.
    pub config: RunConfig,
    /// The environment.
    pub fingerprint: Fingerprint,
    /// How the case list was passed over: rounds, seed, the order of each.
    /// Absent in version 1 files (one round in plan order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<Rounds>,
    /// Every case run so far, in plan order; each holds its samples of
    /// every round.
    pub cases: Vec<CaseResult>,
    /// Figures derived across cases from their medians (speed-up, parallel
    /// efficiency, scalability, peak FLOPS), recomputed at every save.
    #[serde(default)]
    pub derived: Vec<Derived>,
    /// Run-level problems (load at start, different clock, fake clock).
    pub anomalies: Vec<Anomaly>,
    /// Run-level remarks.
    pub notes: Vec<String>,
    /// The canary kernels measured between cases (the validity
    /// guardrails' canary); absent in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<Canary>,
    /// Run-level reasons to doubt every case (a governor other than
    /// `performance`, a machine that was not idle), recomputed at every save.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suspect: Vec<Suspect>,
}

/// The canary: a fixed CPU kernel and a fixed memory kernel, measured
/// between cases. Parallel arrays, one entry per measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Canary {
    /// When each measurement ended, seconds since the run started
    /// (monotonic clock, as `sample_times_secs`).
    pub times_secs: Vec<f64>,
    /// The CPU kernel's rate, millions of loop iterations per second.
    pub cpu_mops: Vec<f64>,
    /// The memory kernel's read bandwidth, MB/s (10^6 bytes).
    pub mem_mbs: Vec<f64>,
}

/// A reason to doubt a case's figures, in plain words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    /// `steal`, `frequency`, `high_cv`, `trend`, `canary`, `load`
    /// (cases); `governor`, `not_idle` (runs).
    pub kind: String,
    /// What was seen and why it matters.
    pub message: String,
    /// The measure that raised the flag, for summaries ("steal time above
    /// 5 % in 9 cases, up to 31 %"): the steal share, the frequency change,
    /// other runnable tasks per CPU, the CV, the drift or the canary's
    /// deviation, as fractions (tasks per CPU for load); absent for run
    /// flags and in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
}

/// What the machine did around each repetition of a case: parallel to
/// every metric's `samples` (one entry per measured repetition). A `null`
/// entry, or an absent or empty array, means unknown, never zero.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Telemetry {
    /// CPU time the hypervisor gave to others during the repetition
    /// (/proc/stat `steal`), as a share of all CPU time of all CPUs.
    #[serde(default, skip_serializing_if = "all_none")]
    pub steal_share: Vec<Option<f64>>,
    /// Idle time waiting for I/O (/proc/stat `iowait`), as a share of all CPU time.
    #[serde(default, skip_serializing_if = "all_none")]
    pub iowait_share: Vec<Option<f64>>,
    /// All CPU time of all CPUs during the repetition, in clock ticks
    /// (USER_HZ, usually 100 a second per CPU): the weight of the shares.
    #[serde(default, skip_serializing_if = "all_none")]
    pub cpu_ticks: Vec<Option<u64>>,
    /// 1-minute load average after the repetition (/proc/loadavg).
    #[serde(default, skip_serializing_if = "all_none")]
    pub load_1m: Vec<Option<f64>>,
    /// Runnable tasks besides envbench's own just before the repetition,
    /// when envbench's workers are idle: /proc/loadavg's fourth field, less
    /// the reading thread, this process's other threads in state R, its
    /// child processes' and its envbench ancestors' (files before
    /// 2026-11-30 subtract the reading thread alone).
    #[serde(default, skip_serializing_if = "all_none")]
    pub runnable_others: Vec<Option<u32>>,
    /// Mean current frequency of the usable CPUs after the repetition, MHz
    /// (cpufreq `scaling_cur_freq`; absent where cpufreq is not exposed).
    #[serde(default, skip_serializing_if = "all_none")]
    pub freq_mhz: Vec<Option<f64>>,
    /// Involuntary context switches of envbench's process during the
    /// repetition (getrusage `ru_nivcsw`): its threads were preempted.
    #[serde(default, skip_serializing_if = "all_none")]
    pub nivcsw: Vec<Option<u64>>,
    /// io.* cases: dirty page cache after the repetition, KiB (/proc/meminfo `Dirty`).
    #[serde(default, skip_serializing_if = "all_none")]
    pub dirty_kib: Vec<Option<u64>>,
    /// io.* cases: page cache under writeback after the repetition, KiB.
    #[serde(default, skip_serializing_if = "all_none")]
    pub writeback_kib: Vec<Option<u64>>,
    /// The CPU envbench's measuring thread was on as the repetition ended
    /// (sched_getcpu; a multi-threaded case's other threads may have run
    /// elsewhere; absent in files before 2026-12-07).
    #[serde(default, skip_serializing_if = "all_none")]
    pub cpu: Vec<Option<u32>>,
}

impl Telemetry {
    /// The CPU time stolen over all CPU time across the repetitions whose
    /// ticks were read, each weighted by its ticks (a repetition of one
    /// tick reads 0 or 100 % alone); None where no ticks were read.
    pub(crate) fn pooled_steal(&self) -> Option<f64> {
        let (mut stolen, mut all) = (0.0, 0.0);
        for (s, n) in self.steal_share.iter().zip(&self.cpu_ticks) {
            if let (Some(s), Some(n)) = (s, n) {
                stolen += s * *n as f64;
                all += *n as f64;
            }
        }
        (all > 0.0).then(|| stolen / all)
    }

    /// The repetitions its longest record covers.
    pub(crate) fn longest(&self) -> usize {
        [
            self.steal_share.len(),
            self.iowait_share.len(),
            self.cpu_ticks.len(),
            self.load_1m.len(),
            self.runnable_others.len(),
            self.freq_mhz.len(),
            self.nivcsw.len(),
            self.dirty_kib.len(),
            self.writeback_kib.len(),
            self.cpu.len(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }
}

fn all_none<T>(v: &[Option<T>]) -> bool {
    v.iter().all(Option::is_none)
}

/// State of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still measuring, or the process died.
    Running,
    /// Every planned case ran.
    Complete,
    /// Stopped by a signal; finished cases are kept.
    Interrupted,
    /// Stopped by an error; finished cases are kept.
    Failed,
}

/// The `stop_reason` of a case built by `envbench import` from another
/// tool's output.
pub const IMPORTED: &str = "imported";

/// State of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    /// Measured; metrics have samples and summaries.
    Ok,
    /// Cannot run in this environment; `reason` says why.
    Skipped,
    /// A validation check failed; no number is reported.
    Invalid,
    /// An error stopped it; `reason` says which.
    Failed,
    /// Stopped by a signal.
    Interrupted,
}

/// One benchmark with one set of parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// `bench[param=value,...]`, e.g. `os.syscall[call=getppid]`; matches cases across runs.
    pub key: String,
    /// Bench id, e.g. `os.syscall`.
    pub bench: String,
    /// Parameters.
    pub params: BTreeMap<String, Value>,
    /// Outcome.
    pub status: CaseStatus,
    /// Why it was skipped, invalid, failed or interrupted.
    pub reason: Option<String>,
    /// Warm-up repetitions run and discarded (all rounds).
    pub warmup_reps: u32,
    /// Why repetition stopped in the last round: `ci_target`, `max_reps`,
    /// `budget` or `aborted`.
    pub stop_reason: String,
    /// Start of the first round, ISO 8601 UTC.
    pub started_utc: String,
    /// Monotonic duration of the case, all rounds, seconds.
    pub duration_secs: f64,
    /// Each round's part of the case; empty in version 1 files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<CaseRound>,
    /// The round of each repetition, parallel to every metric's `samples`;
    /// empty in version 1 files (all round 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_rounds: Vec<u32>,
    /// When each repetition ended, seconds since the run started
    /// (monotonic clock), parallel to `samples`; empty in version 1 files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_times_secs: Vec<f64>,
    /// One entry per metric.
    pub metrics: Vec<MetricResult>,
    /// Problems seen while measuring.
    pub anomalies: Vec<Anomaly>,
    /// Remarks, e.g. a process count lowered to fit RLIMIT_NPROC.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Bench-specific extra data (e.g. a timeline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// What the machine did around each repetition; absent in files
    /// written before telemetry existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<Telemetry>,
    /// Reasons to doubt this case's figures, recomputed at every save:
    /// flags of the kinds measured to predict a worse figure
    /// (`validity::suspect::SuspectKind::shown`); `compare` marks suspect cases and
    /// leaves them out of its geometric means only with `--exclude-suspect`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suspect: Vec<Suspect>,
    /// Flags of the kinds not shown to predict a worse figure on the
    /// machines measured (a drift across rounds, the canary, a CV that
    /// never settled ...): kept as telemetry, so that `bench/suspects.py`
    /// can score them again; absent in files written before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Suspect>,
    /// What the case's method assumes of the environment, checked where it
    /// ran (a cold read follows an eviction that worked, O_DIRECT bypasses
    /// the cache, /proc shows per-process memory, a clock read is short
    /// against a repetition). `compare` gives a case none of whose
    /// headline assumptions failed a verdict; a failed one makes it "not
    /// comparable". Absent in files written before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<Assumption>,
}

/// A method's assumption, checked where it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assumption {
    /// Which assumption.
    pub kind: AssumptionKind,
    /// Whether it held in every round.
    pub held: bool,
    /// What was measured to decide it, in a sentence (the fraction of the
    /// file still cached, the cold rate against the warm one ...).
    pub evidence: String,
    /// The metrics a failure voids; empty: every metric of the case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<String>,
}

/// The assumptions envbench's methods check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssumptionKind {
    /// A cold read reads from the device: the eviction emptied the file's
    /// pages from every cache on the way (this kernel's, a sandbox's, a
    /// hypervisor host's).
    ColdRead,
    /// An O_DIRECT write bypasses the page cache.
    DirectIo,
    /// `/proc` shows per-process and system memory (smaps_rollup, meminfo).
    MemoryReadable,
    /// A clock read is short against a repetition (under 1 %).
    Clock,
    /// A kind written by a newer envbench.
    #[serde(other)]
    Other,
}

impl AssumptionKind {
    /// The assumption in a few words, for "not comparable: ..." lines.
    pub(crate) fn words(self) -> &'static str {
        match self {
            AssumptionKind::ColdRead => "the cold read was not cold",
            AssumptionKind::DirectIo => "O_DIRECT was not honoured",
            AssumptionKind::MemoryReadable => "memory per task unreadable",
            AssumptionKind::Clock => "the clock read is slow against a repetition",
            AssumptionKind::Other => "an assumption failed",
        }
    }
}

impl Assumption {
    /// Whether this failed assumption voids `metric`.
    pub(crate) fn voids(&self, metric: &str) -> bool {
        !self.held && (self.metrics.is_empty() || self.metrics.iter().any(|m| m == metric))
    }

    /// Folds a later round's check of the same kind into this one: it holds
    /// only if it held in both; the evidence of a failure wins.
    pub(crate) fn merge(&mut self, later: Assumption) {
        if self.held && !later.held {
            *self = later;
        } else if self.held == later.held && later.held {
            self.evidence = later.evidence;
        }
    }
}

/// Merges `new` assumptions into `all`, one entry per kind.
pub(crate) fn merge_assumptions(all: &mut Vec<Assumption>, new: Vec<Assumption>) {
    for a in new {
        match all.iter_mut().find(|b| b.kind == a.kind) {
            Some(b) => b.merge(a),
            None => all.push(a),
        }
    }
}

/// The repetitions of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricResult {
    /// e.g. `latency`, `rate`.
    pub name: String,
    /// Unit of every sample and summary value.
    pub unit: Unit,
    /// Whether higher is better.
    pub direction: Direction,
    /// Raw values, one per measured repetition, in order.
    pub samples: Vec<f64>,
    /// Statistics of `samples`; absent with fewer than 2 samples.
    pub summary: Option<Summary>,
}

/// A figure computed from the medians of several cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// The case it describes, e.g. `cpu.lu[n=2000,threads=2]`, or a bench id.
    pub key: String,
    /// e.g. `speedup`, `parallel_efficiency`, `peak_gflops`.
    pub name: String,
    /// Unit of `value`.
    pub unit: Unit,
    /// The figure.
    pub value: f64,
    /// How it was computed or where its inputs came from.
    pub note: String,
}

/// A problem that makes numbers suspect, with an explanation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anomaly {
    /// `wall_clock_jump`, `impossible_value`, `short_interval`, `not_idle`, `fake_clock` (older files may hold `high_load`) ...
    pub kind: String,
    /// What happened and what it means, in a sentence or two.
    pub message: String,
}

impl ResultFile {
    /// A run's file before its first case: running, no cases yet.
    pub fn new(
        run_id: String,
        config: &RunConfig,
        fingerprint: Fingerprint,
        started_utc: String,
    ) -> ResultFile {
        ResultFile {
            schema_version: SCHEMA_VERSION,
            envbench_version: env!("CARGO_PKG_VERSION").to_string(),
            run_id,
            label: config.label.clone(),
            status: RunStatus::Running,
            started_utc,
            ended_utc: None,
            config: config.clone(),
            fingerprint,
            cases: Vec::new(),
            rounds: None,
            derived: Vec::new(),
            anomalies: Vec::new(),
            notes: Vec::new(),
            canary: None,
            suspect: Vec::new(),
        }
    }
}

impl ResultFile {
    /// How far the run had got: finished (complete, interrupted or failed)
    /// before running, then more case rounds before fewer. A store keeps
    /// the state that got further: a `running` copy pushed after the
    /// complete file never replaces it.
    pub(crate) fn progress(&self) -> (bool, usize) {
        let rounds: usize = self.cases.iter().map(|c| c.rounds.len().max(1)).sum();
        (self.status != RunStatus::Running, rounds)
    }
}

impl CaseResult {
    /// The first of its method's assumptions that failed and voids
    /// `metric`: compared, the metric is "not comparable".
    pub(crate) fn failed_assumption(&self, metric: &str) -> Option<&Assumption> {
        self.assumptions.iter().find(|a| a.voids(metric))
    }

    /// The samples of `metric` split by round, in round order (one round
    /// for version 1 files). None when the case has no such metric, or
    /// none of its values could be read.
    pub(crate) fn samples_by_round(&self, metric: &str) -> Option<Vec<Vec<f64>>> {
        Some(
            self.samples_by_round_number(metric)?
                .into_values()
                .collect(),
        )
    }

    /// [`CaseResult::samples_by_round`] by round number (round 0 alone for
    /// version 1 files): how an interleaved run's files pair their rounds.
    pub(crate) fn samples_by_round_number(&self, metric: &str) -> Option<BTreeMap<u32, Vec<f64>>> {
        let m = self.metrics.iter().find(|m| m.name == metric)?;
        Some(
            self.sample_indices_by_round(metric)?
                .into_iter()
                .map(|(r, idx)| (r, idx.into_iter().map(|i| m.samples[i]).collect()))
                .collect(),
        )
    }

    /// The indices of `metric`'s samples by round number, as
    /// [`CaseResult::samples_by_round_number`] splits them: rounds not
    /// recorded one a sample (a version 1 file) make one round, 0.
    pub(crate) fn sample_indices_by_round(
        &self,
        metric: &str,
    ) -> Option<BTreeMap<u32, Vec<usize>>> {
        let m = self.metrics.iter().find(|m| m.name == metric)?;
        if m.samples.is_empty() {
            return None; // unknown here (a failed assumption says why)
        }
        let one = self.sample_rounds.len() != m.samples.len();
        let mut rounds: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for i in 0..m.samples.len() {
            let r = if one { 0 } else { self.sample_rounds[i] };
            rounds.entry(r).or_default().push(i);
        }
        Some(rounds)
    }
}

/// A case's key, `os.syscall[call=getppid]`: the bench id and the
/// parameters in order. Unique within a run, stable across runs: it is how
/// `compare` matches cases.
pub(crate) fn case_key(bench: &str, params: &BTreeMap<String, Value>) -> String {
    if params.is_empty() {
        return bench.to_string();
    }
    let params: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k}={}", param_text(v)))
        .collect();
    format!("{bench}[{}]", params.join(","))
}

/// A parameter's value as it reads in a case key: strings bare, other
/// values as JSON (`getppid`, `2`).
pub fn param_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Builds the metric results of a case from raw samples, summarising each.
pub(crate) fn metric_results(
    specs: &[crate::units::MetricSpec],
    samples: Vec<Vec<f64>>,
    seed: u64,
) -> Vec<MetricResult> {
    specs
        .iter()
        .zip(samples)
        .map(|(spec, samples)| MetricResult {
            name: spec.name.to_string(),
            unit: spec.unit,
            direction: spec.direction,
            summary: crate::stats::summary_of(&samples, seed),
            samples,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_of_one_environment_are_written_and_read_as_before() {
        let old = r#"{"planned":2,"started":2,"seed":7,"orders":[["a"],["a"]]}"#;
        let r: Rounds = serde_json::from_str(old).unwrap();
        assert_eq!(r.interleave, None);
        assert_eq!(serde_json::to_string(&r).unwrap(), old);
    }

    #[test]
    fn an_interleaved_run_s_block_round_trips_without_empty_fields() {
        let text = r#"{"planned":1,"started":1,"seed":7,"orders":[["a"]],"interleave":{"id":"i","environments":[{"name":"host"},{"name":"g","prefix":["runsc","do"]}],"index":1,"env_orders":[[[1,0]]]}}"#;
        let r: Rounds = serde_json::from_str(text).unwrap();
        let i = r.interleave.as_ref().unwrap();
        assert_eq!((i.index, i.environments[1].prefix.len()), (1, 2));
        assert_eq!(serde_json::to_string(&r).unwrap(), text);
    }
}
