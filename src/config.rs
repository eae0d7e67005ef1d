//! Run configuration: plain data, documented, free of CLI types. The CLI
//! builds a [`RunConfig`] from a [`Suite`]'s defaults plus the user's flags.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A named battery size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Suite {
    /// About a minute on two cores: small sizes, few repetitions.
    Quick,
    /// About ten minutes on two cores.
    Standard,
    /// The seeds' own protocol: their sizes, thread counts and ten repetitions.
    Full,
}

impl Suite {
    /// Every suite, smallest first.
    pub const ALL: [Suite; 3] = [Suite::Quick, Suite::Standard, Suite::Full];

    /// `quick`, `standard`, `full`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Suite::Quick => "quick",
            Suite::Standard => "standard",
            Suite::Full => "full",
        }
    }

    /// Seconds of case budgets the suite shares among its cases, so that
    /// it keeps its time on any machine (more CPUs mean more thread
    /// counts, more families mean more cases): quick stays under a minute
    /// and standard under ten on two cores, with room for preparing cases
    /// and starting worker processes, and for the few dear cases whose
    /// three rounds of one repetition each outrun their share
    /// (os.multiprog with 32 processes: 10 s): quick's 45 cases took
    /// 60-63 s on the 2-vCPU AMD EPYC VM with 54 s and with 48 s of
    /// budgets.
    /// None for full, which follows the seeds' protocol however long.
    pub(crate) fn target_secs(self) -> Option<f64> {
        match self {
            Suite::Quick => Some(42.0),
            Suite::Standard => Some(480.0),
            Suite::Full => None,
        }
    }

    /// Seconds the whole loop of rounds should end within, for each
    /// environment: the suite's promise on any machine (quick under a
    /// minute, standard under ten), less the fingerprint and the idle
    /// check before the loop (2.3 s under gVisor) and what the last passes
    /// may overrun (the loop kept to 55 s ended at 55.9 and 58.4 s under
    /// gVisor on the project's Zen 4 VM). Where starting processes is
    /// dear (gVisor's ptrace platform: 22 ms a worker against 3 ms
    /// natively) the rounds the budgets pay for outrun it, and the cases
    /// with the most rounds give some up ([`crate::engine`]'s schedule).
    /// None for full.
    pub(crate) fn limit_secs(self) -> Option<f64> {
        match self {
            Suite::Quick => Some(53.0),
            Suite::Standard => Some(570.0),
            Suite::Full => None,
        }
    }

    /// The smallest budget a case is given when the suite's time is
    /// shared out: below it a case's rounds could not each finish a repetition.
    pub(crate) fn min_budget_secs(self) -> f64 {
        match self {
            Suite::Quick => 0.6,
            Suite::Standard => 3.0,
            Suite::Full => 30.0,
        }
    }
}

/// Repetition policy: how many, how long, when to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepPolicy {
    /// Repetitions run first and discarded (caches, page faults, frequency ramp).
    pub warmup: u32,
    /// Repetitions always measured (at least 2).
    pub reps_min: u32,
    /// Repetitions never exceeded.
    pub reps_max: u32,
    /// Time after which no repetition beyond `reps_min` starts, per case, seconds.
    pub budget_secs: f64,
    /// Stop early once the 95 % CI of the median is within ± this fraction of it.
    pub ci_target: f64,
    /// How long one repetition of a self-calibrating benchmark should take, seconds.
    pub rep_target_secs: f64,
    /// Passes over the whole case list, each in a new seeded shuffle with
    /// every case prepared afresh. The repetitions and the budget above are
    /// per case over all rounds: rounds divide them, they do not multiply
    /// the time. 1 in files written before rounds existed.
    #[serde(default = "one")]
    pub rounds: u32,
}

fn one() -> u32 {
    1
}

impl RepPolicy {
    /// The suite's defaults.
    pub fn for_suite(suite: Suite) -> RepPolicy {
        match suite {
            Suite::Quick => RepPolicy {
                warmup: 1,
                reps_min: 3,
                reps_max: 40,
                budget_secs: 2.0,
                ci_target: 0.05,
                rep_target_secs: 0.02,
                rounds: 12,
            },
            Suite::Standard => RepPolicy {
                warmup: 1,
                reps_min: 5,
                reps_max: 60,
                budget_secs: 10.0,
                ci_target: 0.02,
                rep_target_secs: 0.1,
                rounds: 16,
            },
            Suite::Full => RepPolicy {
                warmup: 2,
                reps_min: 10,
                reps_max: 50,
                budget_secs: 60.0,
                ci_target: 0.01,
                rep_target_secs: 0.25,
                rounds: 5,
            },
        }
    }

    /// The policy of round `round` (from 0): the minimum, maximum and
    /// budget shared out among the rounds so that the shares add up to the
    /// whole (earlier rounds take the remainder; at least one repetition
    /// per round); the warm-up and the CI target as they are.
    pub(crate) fn per_round(&self, round: u32) -> RepPolicy {
        let r = self.rounds.max(1);
        let share = |total: u32| (total / r + u32::from(round % r < total % r)).max(1);
        RepPolicy {
            reps_min: share(self.reps_min),
            reps_max: share(self.reps_max).max(share(self.reps_min)),
            budget_secs: self.budget_secs / f64::from(r),
            rounds: 1,
            ..self.clone()
        }
    }

    /// The budget as a duration.
    pub(crate) fn budget(&self) -> Duration {
        Duration::from_secs_f64(self.budget_secs)
    }

    /// The per-repetition target as a duration.
    pub(crate) fn rep_target(&self) -> Duration {
        Duration::from_secs_f64(self.rep_target_secs)
    }
}

/// Everything `envbench run` needs, after validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The battery size.
    pub suite: Suite,
    /// Repetition policy (suite defaults with user overrides).
    pub reps: RepPolicy,
    /// Benchmark patterns (`os`, `os.syscall`, `cpu.*`); empty means all.
    pub only: Vec<String>,
    /// Target directories for file benchmarks (each gets a fresh
    /// subdirectory), under their names. The file keeps their paths alone
    /// ([`NamedDir::paths`]); the names are in the case keys.
    #[serde(with = "dir_paths")]
    pub dirs: Vec<NamedDir>,
    /// Environment label, e.g. `native`, `wsl2`.
    pub label: String,
    /// Where the result file goes.
    pub output: PathBuf,
    /// Seed of every random choice (bootstrap, benchmark inputs).
    pub seed: u64,
    /// Thread counts to use instead of 1, 2, 4 ... logical CPUs.
    pub threads: Option<Vec<usize>>,
    /// Fake clock for tests: timings are synthetic.
    pub fake_clock: bool,
    /// The options benchmark families declare, as given (`--stream-elems`
    /// as `stream_elems`, `--mem-bandwidth` as `mem_bandwidth_gbs`): kept
    /// beside the other fields of the configuration, absent when not given.
    #[serde(flatten)]
    pub options: FamilyOptions,
    /// `--wait-idle`: how long to wait, seconds, for other processes to
    /// quieten before measuring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_idle_secs: Option<f64>,
    /// `--require-idle`: refuse to measure on a busy machine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_idle: bool,
    /// Each case round measured in a fresh worker process of envbench, so
    /// that the rounds of one run sample what differs between processes
    /// (false in files written before workers, and with `--workers off`).
    #[serde(default)]
    pub workers: bool,
    /// `--precision`: after the planned rounds of an interleaved run, more
    /// rounds of the cases whose comparison is still wider than asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// `--alternate`: how an interleaved run alternates its environments
    /// (by round in files written before the option).
    #[serde(default)]
    pub alternate: Alternate,
}

/// How an interleaved run alternates its environments within a case round
/// (`run --alternate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Alternate {
    /// Each environment measures the case's whole round in turn.
    #[default]
    Round,
    /// The environments' workers, prepared together, measure one
    /// repetition each in turn ([`crate::engine::talk::turns`]), where the
    /// case's memory allows two at once.
    Rep,
}

/// What `run --precision` asks of an interleaved run: each case's headline
/// comparison of every environment against the first, its 95 % interval no
/// wider than ± `half_width`, within `extra_secs` of more rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Precision {
    /// The half-width asked, a fraction (0.03: ±3 %).
    pub half_width: f64,
    /// Seconds the added rounds may take in all; None: twice what the
    /// planned rounds took (`--precision-time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_secs: Option<f64>,
}

/// A target directory and the name it has in case keys (`--dir NAME=PATH`):
/// the name, never the path, enters a key, so `/home/me/work` in one
/// environment and `/mnt/c/work` in another compare as the same case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedDir {
    /// `dir1`, `ext4`, `winshare` ...: `[A-Za-z0-9_-]+`, unique in a run.
    pub name: String,
    /// The directory.
    pub path: PathBuf,
}

impl NamedDir {
    /// The directories `given`, each under its name or, given none, under
    /// `dirN` for its position N (from 1).
    ///
    /// # Errors
    /// A name given to two directories, with both paths.
    pub(crate) fn name_all(
        given: impl IntoIterator<Item = (Option<String>, PathBuf)>,
    ) -> Result<Vec<NamedDir>, String> {
        let named: Vec<NamedDir> = given
            .into_iter()
            .enumerate()
            .map(|(i, (name, path))| NamedDir {
                name: name.unwrap_or_else(|| NamedDir::default_name(i)),
                path,
            })
            .collect();
        for (i, d) in named.iter().enumerate() {
            if let Some(first) = named[..i].iter().find(|e| e.name == d.name) {
                return Err(format!(
                    "the name '{}' is given to both {} and {}",
                    d.name,
                    first.path.display(),
                    d.path.display()
                ));
            }
        }
        Ok(named)
    }

    /// `paths`, each named by its position: `dir1`, `dir2` ...
    pub fn by_position(paths: impl IntoIterator<Item = PathBuf>) -> Vec<NamedDir> {
        paths
            .into_iter()
            .enumerate()
            .map(|(i, path)| NamedDir {
                name: NamedDir::default_name(i),
                path,
            })
            .collect()
    }

    /// The name of the directory at `position` (from 0) when it is given
    /// none.
    fn default_name(position: usize) -> String {
        format!("dir{}", position + 1)
    }

    /// The paths of `dirs`, in order.
    pub(crate) fn paths(dirs: &[NamedDir]) -> Vec<PathBuf> {
        dirs.iter().map(|d| d.path.clone()).collect()
    }
}

/// [`RunConfig::dirs`] in a result file: the paths alone, as files have
/// always kept them; read back, each is named by its position.
mod dir_paths {
    use super::NamedDir;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::path::PathBuf;

    pub(crate) fn serialize<S: Serializer>(dirs: &[NamedDir], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(dirs.iter().map(|d| &d.path))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<NamedDir>, D::Error> {
        Vec::<PathBuf>::deserialize(d).map(NamedDir::by_position)
    }
}

/// Values of the options benchmark families declare
/// ([`crate::bench::Family::options`]), by key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FamilyOptions(pub BTreeMap<String, Value>);

impl FamilyOptions {
    /// A whole number given under `key`.
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.0.get(key).and_then(Value::as_u64)
    }

    /// A number given under `key`.
    pub(crate) fn f64(&self, key: &str) -> Option<f64> {
        self.0.get(key).and_then(Value::as_f64)
    }

    /// A text given under `key`.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    /// The options with `key` set to `value`.
    pub(crate) fn with(mut self, key: &str, value: impl Into<Value>) -> FamilyOptions {
        self.0.insert(key.to_string(), value.into());
        self
    }
}

/// Whether this process is envbench's own binary: set by its `main`, so
/// that a binary under another file name still starts and counts with
/// itself; unset in a test harness that links the library.
static IS_ENVBENCH: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks this process as envbench's own binary (its `main`, first).
pub fn this_is_envbench() {
    IS_ENVBENCH.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether [`this_is_envbench`] was called in this process.
pub(crate) fn is_envbench() -> bool {
    IS_ENVBENCH.load(std::sync::atomic::Ordering::Relaxed)
}

/// The seed a comparison or an import uses when the user gives none;
/// fixed, so reports reproduce.
pub const DEFAULT_SEED: u64 = 0x5EED_0000_E7B0;

/// The seed of a run given none: drawn anew for every run (from the clock
/// and the process id) and stored in its result, so that the orders a run
/// draws differ from run to run and what a place in an order costs spreads
/// over runs, not into each alike; `--seed` repeats a run's orders and
/// inputs.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // one SplitMix64 step spreads the two over every bit
    crate::stats::rng::Rng::new(nanos ^ (u64::from(std::process::id()) << 32)).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_file_keeps_the_paths_of_the_target_directories() {
        let dirs = NamedDir::name_all([
            (Some("ext4".to_string()), PathBuf::from("/a")),
            (None, PathBuf::from("/b")),
        ])
        .unwrap();
        assert_eq!(dirs[1].name, "dir2");
        let config = RunConfig {
            suite: Suite::Quick,
            reps: RepPolicy::for_suite(Suite::Quick),
            only: Vec::new(),
            dirs,
            label: "l".into(),
            output: PathBuf::from("o.json"),
            seed: DEFAULT_SEED,
            threads: None,
            fake_clock: false,
            options: FamilyOptions::default(),
            wait_idle_secs: None,
            require_idle: false,
            workers: true,
            precision: None,
            alternate: Alternate::Round,
        };
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["dirs"], serde_json::json!(["/a", "/b"]));
        let back: RunConfig = serde_json::from_value(json).unwrap();
        let names: Vec<&str> = back.dirs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["dir1", "dir2"]);
        assert_eq!(NamedDir::paths(&back.dirs), NamedDir::paths(&config.dirs));
    }

    #[test]
    fn dirs_get_positional_default_names_and_must_not_share_one() {
        let (a, b) = (PathBuf::from("/a"), PathBuf::from("/b"));
        let named = NamedDir::name_all([(Some("ext4".into()), a.clone()), (None, b.clone())]);
        let names: Vec<String> = named.unwrap().into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["ext4", "dir2"]);
        assert_eq!(NamedDir::by_position([a.clone()])[0].name, "dir1");
        let err = NamedDir::name_all([(None, a), (Some("dir1".into()), b)]).unwrap_err();
        assert_eq!(err, "the name 'dir1' is given to both /a and /b");
    }

    #[test]
    fn rounds_divide_repetitions_and_budget() {
        let q = RepPolicy::for_suite(Suite::Quick);
        let r = q.per_round(0);
        assert_eq!((r.reps_min, r.reps_max, r.rounds), (1, 4, 1));
        assert!((r.budget_secs * f64::from(q.rounds) - q.budget_secs).abs() < 1e-12);
        // shares add up to the whole: 40 = 4 x 4 + 8 x 3
        let maxes: Vec<u32> = (0..q.rounds).map(|i| q.per_round(i).reps_max).collect();
        assert_eq!(maxes.iter().sum::<u32>(), 40);
        assert_eq!(&maxes[..5], &[4, 4, 4, 4, 3]);
        let exact = RepPolicy {
            reps_min: 4,
            reps_max: 4,
            rounds: 3,
            ..q.clone()
        };
        let mins: u32 = (0..3).map(|i| exact.per_round(i).reps_min).sum();
        assert_eq!(mins, 4);
        let one = RepPolicy {
            rounds: 1,
            ..q.clone()
        };
        assert_eq!(one.per_round(0), one);
        let full = RepPolicy::for_suite(Suite::Full).per_round(0);
        assert_eq!((full.reps_min, full.reps_max), (2, 10));
    }
}
