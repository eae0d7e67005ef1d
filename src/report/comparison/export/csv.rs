//! CSV: one row per case × metric × environment, every number unformatted
//! (for spreadsheets and scripts), and empty where no number holds it (the
//! degrees of freedom of a normal interval are infinite), as JSON writes
//! null; text cells that a spreadsheet would run as a formula are defused
//! by [`super::super::render_csv`]. A person reads it, so its figures run
//! the report's way: speed-ups, > 1 faster than the baseline, whatever the
//! metric's direction (JSON keeps `compare`'s ratio other / base).

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
        "speed_up",
        "speed_up_ci_low",
        "speed_up_ci_high",
        "speed_up_ci_adjusted_low",
        "speed_up_ci_adjusted_high",
        "confidence_adjusted",
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
    let opt = |v: Option<f64>| v.map_or(String::new(), num);
    for m in &c.metrics {
        let shares = m.variance.shares.unwrap_or([None; 3]);
        let (lo, hi) = m.speedup_ci();
        let adjusted = m.ratio_ci_adjusted.map(|_| m.verdict_ci());
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
            num(m.base_value),
            num(m.other_value),
            num(m.speedup()),
            num(lo),
            num(hi),
            opt(adjusted.map(|c| c.0)),
            opt(adjusted.map(|c| c.1)),
            opt(m.confidence_adjusted),
            num(m.p_value),
            num(m.p_adjusted),
            m.verdict.word().to_string(),
            basis_text(&m.basis),
            num(m.basis.df),
            opt(shares[0]),
            opt(shares[1]),
            opt(shares[2]),
            m.runs_needed.map_or(String::new(), |n| n.to_string()),
        ]);
    }
    t
}

/// A number as Rust writes it in full, or an empty cell where it is
/// infinite or NaN: a spreadsheet reads `inf` as text.
fn num(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_no_number_holds_are_empty_cells() {
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(f64::INFINITY), "");
        assert_eq!(num(f64::NAN), "");
    }
}
