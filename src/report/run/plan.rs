//! `envbench run --plan`: what a run would measure, how often and for how
//! long at most, and what it needs on disk; nothing is measured.

use crate::bench::{Bench, CaseSpec};
use crate::config::RunConfig;
use crate::engine::select::DirNeed;
use crate::report::{render_text, Table};
use crate::units::{format_duration, size_text};
use std::time::Duration;

/// `run --plan`: every case with its rounds, repetitions and budget, the
/// suite's total and the time its rounds keep to (`limit`, seconds), the
/// note on the budget when it was shared out, and per directory the most
/// its cases hold at once (fixtures kept for the run included) with the
/// free space.
pub(crate) fn render(
    config: &RunConfig,
    cases: &[(&'static dyn Bench, CaseSpec)],
    dirs: &[DirNeed],
    note: Option<&str>,
    limit: Option<f64>,
) -> String {
    let rounds = config.reps.rounds.max(1);
    let r = &config.reps;
    let mut t = Table::new(&["case", ">rounds", ">reps", ">budget s"]);
    for (_, c) in cases {
        t.rows.push(vec![
            c.key(),
            rounds.to_string(),
            format!("{}..{}", r.reps_min, r.reps_max),
            format!("{:.2}", r.budget_secs),
        ]);
    }
    let mut out = render_text(&t);
    out += &format!(
        "\n{} case(s), up to {rounds} round(s) each (a case's own count set by what its first round cost), suite {}: case budgets add up to {}; preparing cases (allocating, forking, calibrating) and minimum repetitions that outlast a budget come on top.\n",
        cases.len(),
        config.suite.name(),
        format_duration(Duration::from_secs_f64(
            r.budget_secs * cases.len() as f64
        )),
    );
    if let Some(l) = limit {
        out += &format!(
            "The rounds end within {}: a run that would end later (starting processes is dear under gVisor) gives the cases with the most rounds fewer, each keeping {}.\n",
            format_duration(Duration::from_secs_f64(l)),
            crate::engine::schedule::MIN_ROUNDS.min(rounds)
        );
    }
    if let Some(n) = note {
        out += &format!("{n}\n");
    }
    for d in dirs {
        let free = match d.free_bytes {
            Some(f) => format!("{} free", size_text(f)),
            None => "free space unknown".into(),
        };
        let kept = if d.kept_bytes > 0 {
            format!(
                ", {} of it kept for the run (trees and file sets the rounds share)",
                size_text(d.kept_bytes)
            )
        } else {
            String::new()
        };
        out += &format!(
            "{} ({}): the cases hold at most {} at once{kept} ({free}); a case without room for its own and a margin is skipped\n",
            d.name,
            d.path.display(),
            size_text(d.most_bytes),
        );
    }
    out
}
