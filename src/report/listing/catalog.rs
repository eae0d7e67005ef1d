//! `envbench list`: every benchmark, its cases per suite, metrics, units and
//! the study it reproduces.

use crate::bench::{Plan, ALL};
use crate::config::Suite;
use crate::terminal::{wrap, TEXT_WIDTH};
use crate::units::size_text;
use crate::units::Direction;
use serde::Serialize;

/// Where a wrapped line of an entry goes on.
const INDENT: &str = "              ";

/// One benchmark in the catalog.
#[derive(Debug, Serialize)]
pub struct Listed {
    /// `family.name`.
    pub id: String,
    /// What it measures.
    pub summary: &'static str,
    /// Seed study or reference tool it reproduces.
    pub reproduces: &'static str,
    /// `name (unit, higher/lower is better)` for each metric.
    pub metrics: Vec<String>,
    /// Case keys per suite (quick, standard, full).
    pub cases: Vec<(String, Vec<String>)>,
    /// Per suite, the most one case holds at once in each `--dir`
    /// (bytes); empty for benchmarks that write nothing.
    pub disk_bytes: Vec<(String, u64)>,
}

/// The catalog for a machine like `plan` (its CPU count decides thread lists).
pub(crate) fn catalog(plan: &Plan) -> Vec<Listed> {
    ALL.iter()
        .map(|b| {
            let mut disk_bytes = Vec::new();
            let cases: Vec<(String, Vec<String>)> = Suite::ALL
                .iter()
                .map(|&suite| {
                    let p = Plan {
                        suite,
                        ..plan.clone()
                    };
                    let cases = b.cases(&p);
                    let most = cases.iter().map(|c| b.disk_bytes(c)).max().unwrap_or(0);
                    if most > 0 {
                        disk_bytes.push((suite.name().to_string(), most));
                    }
                    (
                        suite.name().to_string(),
                        cases.iter().map(|c| c.key()).collect(),
                    )
                })
                .collect();
            let metrics = metrics_of(*b, plan);
            Listed {
                id: b.id().into(),
                summary: b.summary(),
                reproduces: b.reproduces(),
                metrics,
                cases,
                disk_bytes,
            }
        })
        .collect()
}

/// `name (unit, higher/lower is better)` for every metric any case of
/// `b` reports in any suite, the headlines (each case's first) first,
/// marked so.
fn metrics_of(b: &dyn crate::bench::Bench, plan: &Plan) -> Vec<String> {
    let cases: Vec<crate::bench::CaseSpec> = Suite::ALL
        .iter()
        .flat_map(|&suite| {
            b.cases(&Plan {
                suite,
                ..plan.clone()
            })
        })
        .collect();
    let mut headlines: Vec<&crate::bench::MetricSpec> = Vec::new();
    let mut rest: Vec<&crate::bench::MetricSpec> = Vec::new();
    for c in &cases {
        for (i, m) in c.metrics.iter().enumerate() {
            let seen = |v: &[&crate::bench::MetricSpec]| v.iter().any(|x| x.name == m.name);
            if i == 0 && !seen(&headlines) {
                rest.retain(|x| x.name != m.name);
                headlines.push(m);
            } else if !seen(&headlines) && !seen(&rest) {
                rest.push(m);
            }
        }
    }
    let words = |m: &crate::bench::MetricSpec, headline: bool| {
        let dir = match m.direction {
            Direction::HigherIsBetter => "higher is better",
            Direction::LowerIsBetter => "lower is better",
        };
        let head = if headline { "; headline" } else { "" };
        format!("{} ({}, {dir}{head})", m.name, m.unit.symbol())
    };
    headlines
        .into_iter()
        .map(|m| words(m, true))
        .chain(rest.into_iter().map(|m| words(m, false)))
        .collect()
}

/// The catalog as text, wrapped at [`TEXT_WIDTH`].
pub(crate) fn render(plan: &Plan) -> String {
    let mut out = String::new();
    let entries = catalog(plan);
    for e in &entries {
        let metrics = if e.metrics.is_empty() {
            "(none: no case in any suite)".to_string()
        } else {
            e.metrics.join(", ")
        };
        out += &format!("{}\n", e.id);
        out += &wrap(e.summary, TEXT_WIDTH, "  ", "  ");
        out += &wrap(e.reproduces, TEXT_WIDTH, "  reproduces: ", INDENT);
        out += &wrap(&metrics, TEXT_WIDTH, "  metrics:    ", INDENT);
        for (suite, keys) in &e.cases {
            let keys = if keys.is_empty() {
                "(none in this suite)".to_string()
            } else {
                keys.join(" ")
            };
            out += &wrap(&keys, TEXT_WIDTH, &format!("  {suite:<10}  "), INDENT);
        }
        if !e.disk_bytes.is_empty() {
            let per: Vec<String> = e
                .disk_bytes
                .iter()
                .map(|(suite, b)| format!("{suite} {}", size_text(*b)))
                .collect();
            out += &wrap(
                &format!("{} at most at once in each --dir", per.join(", ")),
                TEXT_WIDTH,
                "  disk        ",
                INDENT,
            );
        }
        out += "\n";
    }
    // cases run one at a time and remove their files, but for the trees
    // and file sets some keep for their later rounds: a suite needs those
    // and the rest of its largest case in each directory
    let per: Vec<String> = Suite::ALL
        .iter()
        .filter_map(|&suite| {
            let p = Plan {
                suite,
                ..plan.clone()
            };
            let cases: Vec<_> = ALL
                .iter()
                .flat_map(|&b| b.cases(&p).into_iter().map(move |c| (b, c)))
                .collect();
            let (most, _) = crate::engine::select::held_at_once(cases.iter());
            (most > 0).then(|| format!("{} {}", suite.name(), size_text(most)))
        })
        .collect();
    if !per.is_empty() {
        out += &wrap(
            &format!(
                "free space each --dir needs: what its cases hold at once ({}: the largest case's \
                 files and the trees and file sets cases keep for the run) plus a margin of 10 % \
                 (at least 64 MiB)",
                per.join(", ")
            ),
            TEXT_WIDTH,
            "",
            "  ",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    #[test]
    fn list_says_what_each_suite_holds_on_disk_per_directory() {
        let plan = TestEnv::plan(Suite::Quick, 2);
        let entries = catalog(&plan);
        let writers: Vec<&Listed> = entries
            .iter()
            .filter(|e| !e.disk_bytes.is_empty())
            .collect();
        assert!(!writers.is_empty());
        for e in &writers {
            let sizes: Vec<u64> = e.disk_bytes.iter().map(|(_, b)| *b).collect();
            // a size for each suite that has cases (a bench may leave one out)
            let suites = e.cases.iter().filter(|(_, k)| !k.is_empty()).count();
            assert_eq!(e.disk_bytes.len(), suites, "{}", e.id);
            assert!(suites >= 2, "{}", e.id);
            assert!(
                sizes.windows(2).all(|w| w[0] <= w[1]),
                "{}: {sizes:?}",
                e.id
            );
        }
        // the cpu family writes nothing
        assert!(entries
            .iter()
            .filter(|e| e.id.starts_with("cpu."))
            .all(|e| e.disk_bytes.is_empty()));
        let text = render(&plan);
        assert!(text.contains("at most at once in each --dir"), "{text}");
        assert!(text.contains("free space each --dir needs"), "{text}");
    }

    /// docs/benchmarks.md shows a whole quick run (tests/fixtures/docs/quick.json)
    /// as today's quick suite: its cases must be the ones today's binary
    /// plans on the machine it was recorded on, in the same order, so that
    /// a case added, renamed or resized makes the example be recorded again.
    #[test]
    fn the_docs_example_run_holds_today_s_quick_suite() {
        let file: crate::results::ResultFile =
            serde_json::from_str(include_str!("../../../tests/fixtures/docs/quick.json")).unwrap();
        assert_eq!(file.config.suite, Suite::Quick);
        assert!(file.config.only.is_empty(), "the example is a whole suite");
        let plan = Plan::from_fingerprint(
            Suite::Quick,
            &file.fingerprint,
            file.config.threads.clone(),
            file.config.dirs.clone(),
        )
        .with_options(file.config.options.clone());
        let today: Vec<String> = catalog(&plan)
            .into_iter()
            .flat_map(|e| {
                let (_, keys) = e
                    .cases
                    .into_iter()
                    .find(|(s, _)| s == Suite::Quick.name())
                    .unwrap();
                keys
            })
            .collect();
        let recorded: Vec<&str> = file.cases.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            recorded, today,
            "record the docs example again (docs/benchmarks.md)"
        );
    }
}
