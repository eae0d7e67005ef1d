//! What a person can do about the unclear cases, as facts: how many are
//! unclear, how many more runs would narrow which of them to their margin, and what noise
//! limits the rest. `report::comparison::conclude` words it.

use super::{Environment, MetricComparison, Verdict};
use crate::results::ResultFile;

/// More runs per side than this are not advised: nobody makes them.
pub const MOST_RUNS_ADVISED: usize = 10;

/// Steal time above this share of the CPU time, in any repetition, is
/// named as what limits a comparison.
pub const NOISY_STEAL: f64 = 0.05;

/// Other runnable tasks per CPU above this, on average, are named as what
/// limits a comparison. On the idle Zen 5 VM (2 CPUs, 2026-11-30) whole
/// quick runs read 0.15-0.22 (an interleaved A/A pair 0.14), and 0.56-0.57
/// with one busy loop beside them: this lies between. Held out, an idle
/// interleaved A/A pair read 0.14-0.16 (not named; median half-width
/// ±2.4 %), one beside a busy loop 0.58 (named; ±3.7 %). At 0.25 before,
/// with envbench's own threads counted as others (0.26 idle), a quiet
/// machine's noise was named as other tasks.
pub const NOISY_TASKS_PER_CPU: f64 = 0.35;

/// What to do about the unclear headline metrics.
#[derive(Debug, Clone, PartialEq)]
pub enum Advice {
    /// A side has one run: runs alternated between the environments would
    /// measure the spread between runs.
    OneRun {
        /// Unclear headline metrics.
        unclear: usize,
    },
    /// Every side has runs enough to judge by their spread, or was
    /// measured interleaved with the baseline.
    Runs {
        /// Unclear headline metrics.
        unclear: usize,
        /// Whether the runs are interleaved ones (`run --in`), whose
        /// rounds were compared pair by pair.
        interleaved: bool,
        /// More runs that would settle some of them, when a few would.
        settle: Option<MoreRuns>,
        /// Those that need more than [`MOST_RUNS_ADVISED`] runs per side.
        unsettled: Option<Unsettled>,
    },
}

/// More runs per side that would settle unclear cases.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoreRuns {
    /// Runs per side to make in addition.
    pub more: usize,
    /// Runs per side in all: the most any of their plans needs, at least
    /// the fewest side's runs and `more`.
    pub total: usize,
    /// Unclear cases they would narrow to their margin (about half of
    /// which then settle).
    pub cases: usize,
}

/// Unclear cases that need more than [`MOST_RUNS_ADVISED`] runs per side,
/// and the noise that limits them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unsettled {
    /// How many.
    pub cases: usize,
    /// The largest steal share seen in any repetition, when above [`NOISY_STEAL`].
    pub steal: Option<f64>,
    /// Other runnable tasks per CPU, mean, when above [`NOISY_TASKS_PER_CPU`].
    pub tasks_per_cpu: Option<f64>,
}

/// The advice about `metrics` of `envs` (measured `interleaved` with the
/// baseline, every one); None when no headline metric is unclear.
pub(super) fn advise(
    metrics: &[MetricComparison],
    envs: &[Environment],
    interleaved: bool,
) -> Option<Advice> {
    let unclear: Vec<&MetricComparison> = metrics
        .iter()
        .filter(|m| m.primary && m.verdict == Verdict::Unclear)
        .collect();
    if unclear.is_empty() {
        return None;
    }
    let fewest = envs.iter().map(|e| e.runs.len()).min().unwrap_or(0);
    if fewest < 2 && !interleaved {
        return Some(Advice::OneRun {
            unclear: unclear.len(),
        });
    }
    let settled: Vec<(usize, usize)> = unclear
        .iter()
        .filter_map(|m| {
            let had = m.basis.runs.0.min(m.basis.runs.1);
            m.runs_needed.map(|n| (n, had))
        })
        .filter(|&(n, _)| n <= MOST_RUNS_ADVISED)
        .collect();
    let settle = more_runs(&settled, fewest);
    let rest = unclear.len() - settled.len();
    let unsettled = (rest > 0).then(|| {
        let runs: Vec<&ResultFile> = envs.iter().flat_map(|e| &e.runs).collect();
        let (steal, tasks) = noise(&runs);
        Unsettled {
            cases: rest,
            steal: (steal > NOISY_STEAL).then_some(steal),
            tasks_per_cpu: (tasks > NOISY_TASKS_PER_CPU).then_some(tasks),
        }
    });
    Some(Advice::Runs {
        unclear: unclear.len(),
        interleaved,
        settle,
        unsettled,
    })
}

/// The runs to add that would narrow every metric of `settled` to its margin, each
/// as (the runs its plan needs, the runs its interval rested on), to
/// environments whose fewest runs are `fewest`. A metric's plan counts
/// the runs it had (those that paired, for interleaved ones; a case
/// missing from a file is missing from its count), which can be fewer
/// than the files: what is added is what the most wanting metric lacks,
/// at least one run. In all: the most any plan needs, and at least what
/// the fewest side then has (a side with more runs than the fewest can
/// be the one whose plan needs the most).
fn more_runs(settled: &[(usize, usize)], fewest: usize) -> Option<MoreRuns> {
    let more = settled
        .iter()
        .map(|&(needed, had)| needed.saturating_sub(had).max(1))
        .max()?;
    let most = settled.iter().map(|&(needed, _)| needed).max()?;
    Some(MoreRuns {
        more,
        total: most.max(fewest + more),
        cases: settled.len(),
    })
}

/// The largest steal share of any case of `runs`: the CPU time stolen
/// over all CPU time across its repetitions, each weighted by its ticks.
/// A repetition shorter than a few ticks reads 0 or 100 % (one tick, and it
/// was steal's): the largest of single repetitions said "steal time up to
/// 100 %" of a quiet machine. Where the ticks were not recorded, the
/// repetitions' mean.
pub(super) fn most_steal<'a>(runs: impl IntoIterator<Item = &'a ResultFile>) -> f64 {
    runs.into_iter()
        .flat_map(|r| &r.cases)
        .filter_map(|c| c.telemetry.as_ref())
        .filter_map(case_steal)
        .fold(0.0, f64::max)
}

/// One case's steal share over its repetitions (see [`most_steal`]).
fn case_steal(t: &crate::results::Telemetry) -> Option<f64> {
    t.pooled_steal().or_else(|| {
        let shares: Vec<f64> = t.steal_share.iter().flatten().copied().collect();
        (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64)
    })
}

/// The mean number of other runnable tasks (not envbench's) per CPU of
/// the machine, over every repetition of `runs` that telemetry read; 0
/// where none. The machine's CPUs, not those the run may use: the count
/// comes from /proc/loadavg, the whole machine's, and an environment
/// pinned to one CPU of two (`taskset -c 0`) would otherwise read the same
/// tasks as twice as many competitors and be named "other processes
/// competing" beside its real cause.
pub(super) fn tasks_per_cpu<'a>(runs: impl IntoIterator<Item = &'a ResultFile>) -> f64 {
    let (mut tasks, mut n) = (0.0, 0usize);
    for r in runs {
        let cpus = r.fingerprint.cpu.logical_cpus.max(1);
        for t in r.cases.iter().filter_map(|c| c.telemetry.as_ref()) {
            for v in t.runnable_others.iter().flatten() {
                tasks += f64::from(*v) / cpus as f64;
                n += 1;
            }
        }
    }
    if n > 0 {
        tasks / n as f64
    } else {
        0.0
    }
}

/// The noise of a set of runs: the largest steal share seen in any
/// repetition, and the mean number of other runnable tasks per CPU.
fn noise(runs: &[&ResultFile]) -> (f64, f64) {
    (
        most_steal(runs.iter().copied()),
        tasks_per_cpu(runs.iter().copied()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Telemetry;

    #[test]
    fn the_runs_advised_are_what_the_most_wanting_metric_lacks() {
        // three files a side; one metric paired in all three needs 4 runs,
        // one whose case two of the files lack (1 run) needs 3: it lacks 2
        let m = more_runs(&[(4, 3), (3, 1)], 3).unwrap();
        assert_eq!((m.more, m.total, m.cases), (2, 5, 2));
        // a plan at or below the runs had still asks for one more
        let m = more_runs(&[(2, 3)], 3).unwrap();
        assert_eq!((m.more, m.total), (1, 4));
        // a side of 5 runs beside one of 3, a case of it needing 8: 3 more,
        // 8 in all (not the fewest side's 6)
        let m = more_runs(&[(8, 5)], 3).unwrap();
        assert_eq!((m.more, m.total), (3, 8));
        assert_eq!(more_runs(&[], 3), None);
    }

    #[test]
    fn a_case_s_steal_weighs_its_repetitions_by_their_ticks() {
        // one repetition of one tick, all of it steal, among long quiet ones
        let t = Telemetry {
            steal_share: vec![Some(1.0), Some(0.0), Some(0.02)],
            cpu_ticks: vec![Some(1), Some(99), Some(100)],
            ..Default::default()
        };
        let share = case_steal(&t).unwrap();
        assert!((share - 3.0 / 200.0).abs() < 1e-12, "{share}");
        // without ticks: the repetitions' mean; with nothing: none
        let bare = Telemetry {
            steal_share: vec![Some(0.2), None, Some(0.1)],
            ..Default::default()
        };
        assert!((case_steal(&bare).unwrap() - 0.15).abs() < 1e-12);
        assert_eq!(case_steal(&Telemetry::default()), None);
    }
}
