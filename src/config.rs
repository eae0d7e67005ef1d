//! Run configuration: plain data, documented, free of CLI types. The CLI
//! builds a [`RunConfig`] from a [`Suite`]'s defaults plus the user's flags.

use serde::{Deserialize, Serialize};
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
    pub fn name(self) -> &'static str {
        match self {
            Suite::Quick => "quick",
            Suite::Standard => "standard",
            Suite::Full => "full",
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
}

impl RepPolicy {
    /// The suite's defaults.
    pub fn for_suite(suite: Suite) -> RepPolicy {
        match suite {
            Suite::Quick => RepPolicy {
                warmup: 1,
                reps_min: 3,
                reps_max: 20,
                budget_secs: 2.0,
                ci_target: 0.05,
                rep_target_secs: 0.02,
            },
            Suite::Standard => RepPolicy {
                warmup: 1,
                reps_min: 5,
                reps_max: 30,
                budget_secs: 10.0,
                ci_target: 0.02,
                rep_target_secs: 0.1,
            },
            Suite::Full => RepPolicy {
                warmup: 2,
                reps_min: 10,
                reps_max: 50,
                budget_secs: 60.0,
                ci_target: 0.01,
                rep_target_secs: 0.25,
            },
        }
    }

    /// The budget as a duration.
    pub fn budget(&self) -> Duration {
        Duration::from_secs_f64(self.budget_secs)
    }

    /// The per-repetition target as a duration.
    pub fn rep_target(&self) -> Duration {
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
    /// Target directories for file benchmarks (each gets a fresh subdirectory).
    pub dirs: Vec<PathBuf>,
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
    /// Theoretical memory bandwidth in GB/s given by the user, for STREAM efficiency.
    #[serde(default)]
    pub mem_bandwidth_gbs: Option<f64>,
}

/// The seed used when the user gives none; fixed, so reports reproduce.
pub const DEFAULT_SEED: u64 = 0x5EED_0000_E7B0;
