//! JSON: the whole comparison as `compare` computed it (every metric, its
//! interval, variance shares), with the report's words (fingerprints side
//! by side, warnings, conclusions, advice), for scripts. The document's
//! keys and their order are its contract: [`Doc`] lists them.

use super::{Export, Exporter};
use crate::compare::diagnose::Diagnosis;
use crate::compare::{EnvSummary, FamilySummary, MetricComparison, NotComparable};
use crate::report::comparison::Report;
use crate::report::comparison::{conclude, warning};
use crate::report::fingerprint::{self, FingerprintRow};
use serde::Serialize;

/// `compare --json FILE`.
#[derive(Debug)]
pub struct Json;

impl Exporter for Json {
    fn export(&self, r: &Report) -> Export {
        Export::Document(document(r))
    }
}

/// The document, pretty-printed, with a final line break.
pub fn document(r: &Report) -> String {
    serde_json::to_string_pretty(&Doc::new(r)).expect("invariant: comparisons serialise") + "\n"
}

/// The JSON document, its fields in their order.
#[derive(Serialize)]
struct Doc<'a> {
    baseline: &'a str,
    environments: &'a [EnvSummary],
    between_run: bool,
    assumed_run_sd: f64,
    threshold: f64,
    fdr: f64,
    seed: u64,
    metrics: Vec<MetricDoc<'a>>,
    families: &'a [FamilySummary],
    unmatched: &'a [(String, String)],
    #[serde(skip_serializing_if = "none")]
    not_comparable: &'a [NotComparable],
    fingerprint: Vec<FingerprintRow>,
    warning_lines: Vec<String>,
    warnings: Vec<String>,
    conclusions: Vec<String>,
    #[serde(skip_serializing_if = "none")]
    diagnoses: &'a [Diagnosis],
    #[serde(skip_serializing_if = "none")]
    attributions: &'a [crate::compare::attribute::Attribution],
    advice: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    exclude_suspect: bool,
}

/// A metric with its suspect flags as lines ("vm (v1): steal: ..."), last.
#[derive(Serialize)]
struct MetricDoc<'a> {
    #[serde(flatten)]
    metric: &'a MetricComparison,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suspect: Vec<String>,
}

fn none<T>(v: &&[T]) -> bool {
    v.is_empty()
}

impl<'a> Doc<'a> {
    fn new(r: &Report<'a>) -> Doc<'a> {
        let c = r.comparison;
        Doc {
            baseline: &c.baseline,
            environments: &c.environments,
            between_run: c.between_run,
            assumed_run_sd: c.assumed_run_sd,
            threshold: c.threshold,
            fdr: c.fdr,
            seed: c.seed,
            metrics: c
                .metrics
                .iter()
                .map(|m| MetricDoc {
                    metric: m,
                    suspect: m.suspect.iter().map(warning::flag_line).collect(),
                })
                .collect(),
            families: &c.families,
            unmatched: &c.unmatched,
            not_comparable: &c.not_comparable,
            fingerprint: fingerprint::rows(r.environments),
            warning_lines: warning::lines(c),
            warnings: warning::warnings(c),
            conclusions: conclude::conclusions(c, r.topics),
            diagnoses: &c.diagnoses,
            attributions: &c.attributions,
            advice: conclude::advice(c),
            exclude_suspect: c.exclude_suspect,
        }
    }
}
