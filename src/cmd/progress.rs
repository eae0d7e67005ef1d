//! Progress of a run on stderr: one line per case, rewritten in place on a
//! terminal, with an estimate of the time left. Before a case has run, its
//! round is expected to take its budget share plus 15 ms of preparation;
//! once it has run, its later rounds are expected to take what its last
//! round took, so the estimate sharpens after the first round.

use crate::engine::runner::Progress;
use crate::results::CaseStatus;
use crate::units::format_duration;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Writes progress lines to stderr unless quiet.
#[derive(Debug)]
pub struct Reporter {
    enabled: bool,
    tty: bool,
    /// Expected time of one round of each case.
    expected: Vec<Duration>,
    /// When `--precision`'s added rounds must end: while they run, the
    /// time left is the time to it (they stop adding passes that would
    /// not fit), not the current pass's.
    until: Option<Instant>,
}

/// What a case is expected to cost per round before it has run, beyond its
/// budget share: starting its worker and preparing it. A quick run on the
/// 2-vCPU AMD EPYC VM spent 3.9 s of its 60.6 s outside its 365 case
/// rounds, about 11 ms a round (a guess of 200 ms announced 2 m 33 s for
/// that one-minute run).
const PREPARE_GUESS: Duration = Duration::from_millis(15);

impl Reporter {
    /// A reporter for `cases` cases whose first rounds each have
    /// `round_budget`.
    pub fn new(quiet: bool, cases: usize, round_budget: Duration) -> Reporter {
        Reporter {
            enabled: !quiet,
            tty: std::io::stderr().is_terminal(),
            expected: vec![round_budget + PREPARE_GUESS; cases],
            until: None,
        }
    }

    /// From now on the run ends by `until` (`--precision`'s added rounds).
    pub(crate) fn end_by(&mut self, until: Instant) {
        self.until = Some(until);
    }

    /// Case `case` took `took` in its latest round: expect as much of the next.
    pub(crate) fn learn(&mut self, case: usize, took: Duration) {
        if let Some(e) = self.expected.get_mut(case) {
            *e = took;
        }
    }

    /// Case `case` will not run again (skipped, failed).
    pub(crate) fn forget(&mut self, case: usize) {
        self.learn(case, Duration::ZERO);
    }

    /// Time left: what the current cases (one, or those taking turns) are
    /// expected to take beyond `elapsed`, the rest of the current pass
    /// (`rest`, the cases after them), and each case's rounds in later
    /// passes (`later`).
    pub(crate) fn left(
        &self,
        current: &[usize],
        elapsed: Duration,
        rest: &[usize],
        later: &[u32],
    ) -> Duration {
        if let Some(until) = self.until {
            return until.saturating_duration_since(Instant::now());
        }
        // saturating: an estimate is never worth a panic
        let sum = |it: &mut dyn Iterator<Item = Duration>| {
            it.fold(Duration::ZERO, |a, b| a.saturating_add(b))
        };
        let now = sum(&mut current
            .iter()
            .filter_map(|&i| self.expected.get(i).copied()))
        .saturating_sub(elapsed);
        now.saturating_add(sum(&mut rest
            .iter()
            .filter(|i| !current.contains(i))
            .filter_map(|&i| self.expected.get(i).copied())))
            .saturating_add(sum(&mut self
                .expected
                .iter()
                .zip(later)
                .map(|(e, &n)| e.saturating_mul(n))))
    }

    /// Prints a warning even under `--quiet`: something the person must
    /// know (the run was not recorded) is not progress.
    pub(crate) fn warning(&self, text: &str) {
        self.clear();
        eprintln!("warning: {text}");
    }

    /// Prints a line of its own (warnings, the output path).
    pub(crate) fn message(&self, text: &str) {
        if self.enabled {
            self.clear();
            eprintln!("{text}");
        }
    }

    fn clear(&self) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
    }

    /// A repetition of case round `index` (0-based) of `total` finished.
    pub(crate) fn rep(
        &self,
        (index, total): (usize, usize),
        key: &str,
        reps_max: u32,
        p: Progress,
        left: Duration,
    ) {
        if self.enabled && self.tty {
            eprint!(
                "\r\x1b[K[{}/{}] {key}  rep {}/{reps_max}  {:.1} s  (~{} left)",
                index + 1,
                total,
                p.reps_done,
                p.elapsed.as_secs_f64(),
                format_duration(left)
            );
            let _ = std::io::stderr().flush();
        }
    }

    /// Case round `index` (0-based) of `total` ended.
    pub(crate) fn case_done(
        &self,
        (index, total): (usize, usize),
        key: &str,
        status: CaseStatus,
        detail: &str,
        elapsed: Duration,
        left: Duration,
    ) {
        if !self.enabled {
            return;
        }
        self.clear();
        let word = match status {
            CaseStatus::Ok => "ok",
            CaseStatus::Skipped => "skipped",
            CaseStatus::Invalid => "INVALID",
            CaseStatus::Failed => "FAILED",
            CaseStatus::Interrupted => "interrupted",
        };
        eprintln!(
            "[{}/{}] {key}: {word} {detail} ({:.1} s, ~{} left)",
            index + 1,
            total,
            elapsed.as_secs_f64(),
            format_duration(left)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_of_time_left_learns_from_each_round() {
        let secs = Duration::from_secs;
        let mut r = Reporter::new(true, 3, secs(2));
        // nothing run: each case's round is its budget plus the preparation guess
        assert_eq!(
            r.left(&[0], secs(0), &[1, 2], &[1, 1, 1]),
            Duration::from_millis(6 * 2015)
        );
        r.learn(0, secs(1));
        r.learn(1, secs(5));
        r.forget(2);
        // case 1 half done in the last round: 2.5 s of it left
        assert_eq!(
            r.left(&[1], Duration::from_millis(2500), &[], &[0, 0, 0]),
            Duration::from_millis(2500)
        );
        // one more whole round: 1 + 5 + 0
        assert_eq!(
            r.left(&[0], secs(1), &[1, 2], &[1, 1, 1]),
            secs(5) + secs(6)
        );
        // a dear case with fewer rounds later counts only those
        assert_eq!(r.left(&[0], secs(1), &[], &[0, 2, 0]), secs(10));
        // cases 0 and 1 in turns, 4 s into their shared round: 1 + 5 - 4,
        // and case 1 is not counted again among those still to come
        assert_eq!(r.left(&[0, 1], secs(4), &[1, 2], &[0, 0, 0]), secs(2));
        // --precision's added rounds: the time to their end, whatever the pass
        r.end_by(Instant::now() + secs(100));
        let left = r.left(&[0], secs(1), &[1, 2], &[0, 2, 0]);
        assert!(left <= secs(100) && left > secs(90), "{left:?}");
    }
}
