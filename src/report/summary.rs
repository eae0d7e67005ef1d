//! The table printed after a run: each case's metrics with median, CI,
//! spread and repetitions, or the reason a case has no numbers.

use super::{render_text, Table};
use crate::results::{CaseResult, CaseStatus, ResultFile};
use crate::units::format_value;

/// One short phrase for a finished case: its first metric's median, or why not.
pub fn one_line(case: &CaseResult) -> String {
    if case.status != CaseStatus::Ok {
        return case.reason.clone().unwrap_or_default();
    }
    match case
        .metrics
        .first()
        .and_then(|m| m.summary.as_ref().map(|s| (m, s)))
    {
        Some((m, s)) => format!(
            "{} = {} {} (±{:.1} %, n={})",
            m.name,
            format_value(s.median),
            m.unit.symbol(),
            s.median_ci_relative_halfwidth() * 100.0,
            s.n
        ),
        None => String::new(),
    }
}

/// The run's results as a table.
pub fn table(file: &ResultFile) -> Table {
    let mut t = Table::new(&[
        "case",
        "metric",
        ">median",
        ">95% CI of median",
        "unit",
        ">CV %",
        ">n",
        "status",
    ]);
    for case in &file.cases {
        if case.status != CaseStatus::Ok {
            t.rows.push(vec![
                case.key.clone(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                format!(
                    "{:?}: {}",
                    case.status,
                    case.reason.clone().unwrap_or_default()
                )
                .to_lowercase(),
            ]);
            continue;
        }
        for m in &case.metrics {
            let Some(s) = &m.summary else { continue };
            let flags = if s.outliers.is_empty() {
                String::new()
            } else {
                format!(" ({} outlier(s))", s.outliers.len())
            };
            t.rows.push(vec![
                case.key.clone(),
                m.name.clone(),
                format_value(s.median),
                format!(
                    "{} .. {}",
                    format_value(s.median_ci_low),
                    format_value(s.median_ci_high)
                ),
                m.unit.symbol().to_string(),
                format!("{:.1}", s.cv * 100.0),
                s.n.to_string(),
                format!("ok{flags}"),
            ]);
        }
    }
    t
}

/// The table, followed by anomalies, as text.
pub fn render(file: &ResultFile) -> String {
    let mut out = render_text(&table(file));
    let anomalies: Vec<String> = file
        .anomalies
        .iter()
        .map(|a| format!("  run: {}: {}", a.kind, a.message))
        .chain(file.cases.iter().flat_map(|c| {
            c.anomalies
                .iter()
                .map(move |a| format!("  {}: {}: {}", c.key, a.kind, a.message))
        }))
        .collect();
    if !anomalies.is_empty() {
        out += "\nanomalies:\n";
        out += &anomalies.join("\n");
        out += "\n";
    }
    out
}

/// A stored run: a header naming the run and environment, then [`render`].
pub fn render_file(file: &ResultFile) -> String {
    let fp = &file.fingerprint;
    let mut out = format!(
        "run {} ({}), label {}, suite {}, started {}\nenvironment: {} on {}, kernel {}, {} CPU(s)\n\n",
        file.run_id,
        format!("{:?}", file.status).to_lowercase(),
        file.label,
        file.config.suite.name(),
        file.started_utc,
        fp.virtualization.summary(),
        fp.cpu.model.as_deref().unwrap_or("unknown CPU"),
        fp.os.kernel_release.as_deref().unwrap_or("unknown"),
        fp.cpu.usable_cpus.unwrap_or(fp.cpu.logical_cpus),
    );
    out += &render(file);
    out
}
