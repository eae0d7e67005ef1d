//! Progress of a run on stderr: one line per case, rewritten in place on a
//! terminal, with an upper bound on the time left (the sum of remaining
//! budgets; cases that converge early finish sooner).

use crate::bench::runner::Progress;
use crate::results::CaseStatus;
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Writes progress lines to stderr unless quiet.
#[derive(Debug)]
pub struct Reporter {
    enabled: bool,
    tty: bool,
    total: usize,
    budget: Duration,
}

impl Reporter {
    /// A reporter for `total` cases of `budget` each.
    pub fn new(quiet: bool, total: usize, budget: Duration) -> Reporter {
        Reporter {
            enabled: !quiet,
            tty: std::io::stderr().is_terminal(),
            total,
            budget,
        }
    }

    /// Prints a line of its own (warnings, the output path).
    pub fn message(&self, text: &str) {
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

    fn left(&self, index: usize, elapsed: Duration) -> String {
        let remaining_cases = (self.total - index - 1) as u32;
        let left = self.budget.saturating_sub(elapsed) + self.budget * remaining_cases;
        format!("<= {} left", format_duration(left))
    }

    /// A repetition of case `index` (0-based) finished.
    pub fn rep(&self, index: usize, key: &str, reps_max: u32, p: Progress) {
        if self.enabled && self.tty {
            eprint!(
                "\r\x1b[K[{}/{}] {key}  rep {}/{reps_max}  {:.1} s  ({})",
                index + 1,
                self.total,
                p.reps_done,
                p.elapsed.as_secs_f64(),
                self.left(index, p.elapsed)
            );
            let _ = std::io::stderr().flush();
        }
    }

    /// Case `index` ended.
    pub fn case_done(
        &self,
        index: usize,
        key: &str,
        status: CaseStatus,
        detail: &str,
        elapsed: Duration,
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
            "[{}/{}] {key}: {word} {detail} ({:.1} s, {})",
            index + 1,
            self.total,
            elapsed.as_secs_f64(),
            self.left(index, self.budget)
        );
    }
}

/// `1 m 05 s`, `12 s`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{} m {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}
