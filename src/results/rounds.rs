//! A run's rounds in the result file: its passes over the case list, the
//! environments it measured in turns, and each case's rounds.

use super::CaseStatus;
use serde::{Deserialize, Serialize};

/// The rounds of a run: passes over the case list, each in a new shuffle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rounds {
    /// Rounds planned.
    pub planned: u32,
    /// Rounds started (fewer when interrupted).
    pub started: u32,
    /// Seed of the shuffles.
    pub seed: u64,
    /// Case keys in the order each round ran them.
    pub orders: Vec<Vec<String>>,
    /// The run measured several environments interleaved (`run --in`),
    /// one result file each: what ties this file to the others and how
    /// their case rounds alternated. Absent from a run of one environment
    /// (and from files written before interleaving).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<Interleave>,
}

/// How the files of one interleaved run (`run --in A --in B ...`) belong
/// together. Each case round ran once in every environment, one after the
/// other, in an order drawn for the case and turned each round; so round `r` of a
/// case in one file and round `r` of that case in another were measured
/// side by side, and their `sample_times_secs` count from the same start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interleave {
    /// The interleaved run's id, the same in each of its files (each file
    /// keeps a `run_id` of its own): `<UTC start>-<host>-<6 random hex digits>`.
    pub id: String,
    /// Every environment of the run, in the order `--in` named them.
    pub environments: Vec<InterleavedEnv>,
    /// This file's environment, an index into `environments` (its name is
    /// the file's label).
    pub index: u32,
    /// Per round, per case in that round's order (`orders`): the indices
    /// of the environments in the order they measured that case round,
    /// drawn with the rounds' `seed`. An environment in which the case no
    /// longer runs (skipped, failed) is passed over when its turn comes.
    pub env_orders: Vec<Vec<Vec<u32>>>,
}

/// An environment of an interleaved run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterleavedEnv {
    /// `--in NAME`, the label of its result file.
    pub name: String,
    /// The command prefix its workers started through, word by word
    /// (empty: none, the host as it is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefix: Vec<String>,
    /// envbench's path inside it (`--in-binary`); absent: the run's own
    /// binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// The `run_id` of its result file; absent from files written before
    /// it was recorded. `compare` pairs only files whose run ids are the
    /// ones their run listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Times the run entered it through its prefix (its resident
    /// launcher's starts: 1, more when the launcher died and was started
    /// again); absent for an environment without a prefix, and in older
    /// files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<u32>,
}

/// One round of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRound {
    /// Round number, from 0.
    pub round: u32,
    /// Start, ISO 8601 UTC.
    pub started_utc: String,
    /// Monotonic duration of the round's part of the case (prepare included), seconds.
    pub duration_secs: f64,
    /// Warm-up repetitions run and discarded in this round.
    pub warmup_reps: u32,
    /// Repetitions measured in this round.
    pub reps: u32,
    /// Why this round's repetitions stopped.
    pub stop_reason: String,
    /// Outcome of this round (a later round can fail where an earlier one worked).
    pub status: CaseStatus,
    /// The PID of the worker process that measured it, as its environment
    /// numbers it (a fresh process every round); absent when measured in
    /// envbench's own process, and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_pid: Option<u32>,
    /// Seconds the run waited, once the worker was ready, for the
    /// environment's own processes to be quiet before it measured (a
    /// resident launcher's environment); absent where it did not wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_secs: Option<f64>,
    /// Seconds of `duration_secs` spent on work done once per environment,
    /// not on repetitions (counting a command's system calls in its first
    /// round); absent where there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub once_secs: Option<f64>,
    /// Seconds the round waited, between its repetitions, while the other
    /// environments of an interleaved run measured theirs (alternated at
    /// the repetition, `run --alternate rep`), not part of
    /// `duration_secs`; absent where its repetitions ran back to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_secs: Option<f64>,
}
