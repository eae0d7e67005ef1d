//! `envbench list`: every benchmark, its cases per suite, metrics, units and
//! the study it reproduces.

use crate::bench::{Plan, ALL};
use crate::config::Suite;
use crate::units::Direction;
use serde::Serialize;

/// One benchmark in the catalog.
#[derive(Debug, Serialize)]
pub struct Entry {
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
}

/// The catalog for a machine like `plan` (its CPU count decides thread lists).
pub fn catalog(plan: &Plan) -> Vec<Entry> {
    ALL.iter()
        .map(|b| {
            let cases: Vec<(String, Vec<String>)> = Suite::ALL
                .iter()
                .map(|&suite| {
                    let p = Plan {
                        suite,
                        ..plan.clone()
                    };
                    (
                        suite.name().to_string(),
                        b.cases(&p).iter().map(|c| c.key()).collect(),
                    )
                })
                .collect();
            let metrics = b
                .cases(plan)
                .first()
                .map(|c| {
                    c.metrics
                        .iter()
                        .map(|m| {
                            let dir = match m.direction {
                                Direction::HigherIsBetter => "higher is better",
                                Direction::LowerIsBetter => "lower is better",
                            };
                            format!("{} ({}, {dir})", m.name, m.unit.symbol())
                        })
                        .collect()
                })
                .unwrap_or_default();
            Entry {
                id: b.id(),
                summary: b.summary(),
                reproduces: b.reproduces(),
                metrics,
                cases,
            }
        })
        .collect()
}

/// The catalog as text.
pub fn render(plan: &Plan) -> String {
    let mut out = String::new();
    for e in catalog(plan) {
        out += &format!(
            "{}\n  {}\n  reproduces: {}\n  metrics:    {}\n",
            e.id,
            e.summary,
            e.reproduces,
            e.metrics.join(", ")
        );
        for (suite, keys) in &e.cases {
            out += &format!("  {suite:<10}  {}\n", keys.join("  "));
        }
        out += "\n";
    }
    out
}
