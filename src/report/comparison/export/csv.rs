//! CSV: one row per case × metric × environment, every number unformatted
//! (for spreadsheets and scripts); text cells that a spreadsheet would run
//! as a formula are defused by [`super::super::render_csv`].

use super::{Export, Exporter};
use crate::compare::Comparison;
use crate::report::comparison::Report;
use crate::report::words::basis_text;
use crate::report::{render_csv, Table};

/// `compare --csv FILE`.
#[derive(Debug)]
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, r: &Report) -> Export {
        Export::Document(render_csv(&csv_table(r.comparison)))
    }
}

/// One row per case × metric × environment, every number unformatted.
pub fn csv_table(c: &Comparison) -> Table {
    let mut t = Table::new(&[
        "environment",
        "baseline",
        "case",
        "family",
        "metric",
        "headline",
        "unit",
        "direction",
        "base_value",
        "other_value",
        "ratio",
        "ratio_ci_low",
        "ratio_ci_high",
        "ratio_ci_adjusted_low",
        "ratio_ci_adjusted_high",
        "confidence_adjusted",
        "variation_pct",
        "p_value",
        "p_adjusted",
        "verdict",
        "basis",
        "df",
        "share_runs",
        "share_rounds",
        "share_reps",
        "runs_needed",
    ]);
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for m in &c.metrics {
        let shares = m.variance.shares.unwrap_or([None; 3]);
        t.rows.push(vec![
            m.environment.clone(),
            c.baseline.clone(),
            m.key.clone(),
            m.family.clone(),
            m.metric.clone(),
            m.primary.to_string(),
            m.unit.symbol().to_string(),
            serde_json::to_value(m.direction)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            m.base_value.to_string(),
            m.other_value.to_string(),
            m.ratio.to_string(),
            m.ratio_ci.0.to_string(),
            m.ratio_ci.1.to_string(),
            opt(m.ratio_ci_adjusted.map(|c| c.0)),
            opt(m.ratio_ci_adjusted.map(|c| c.1)),
            opt(m.confidence_adjusted),
            m.variation_pct.to_string(),
            m.p_value.to_string(),
            m.p_adjusted.to_string(),
            m.verdict.word().to_string(),
            basis_text(&m.basis),
            m.basis.df.to_string(),
            opt(shares[0]),
            opt(shares[1]),
            opt(shares[2]),
            m.runs_needed.map_or(String::new(), |n| n.to_string()),
        ]);
    }
    t
}
