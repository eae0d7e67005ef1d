//! The table printed after a run and by `envbench show`: one row per case
//! with its headline metric (the first: the one that drives early stopping
//! and that `compare` leads with), its median, 95 % CI and status, grouped
//! by family, so that a quick run fits a screen; or, with `--all-metrics`,
//! every metric with its spread. A case without numbers shows its reason.

use crate::report::{render_text, Table};
use crate::results::{CaseResult, CaseStatus, MetricResult, ResultFile};
use crate::stats::Summary;
use crate::units::format_value;

/// One short phrase for a finished case: its first metric's median, or why not.
pub(crate) fn one_line(case: &CaseResult) -> String {
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

/// `ok`, `ok (2 outlier(s))`, `ok (not comparable: the cold read was not
/// cold)`, or `skipped: reason`.
fn status_text(case: &CaseResult, outliers: usize) -> String {
    if case.status != CaseStatus::Ok {
        return format!(
            "{}: {}",
            format!("{:?}", case.status).to_lowercase(),
            case.reason.as_deref().unwrap_or("no reason recorded")
        );
    }
    if case.metrics.first().is_none_or(|m| m.summary.is_none()) {
        return "ok, but fewer than 2 samples: no summary".into();
    }
    let mut said: Vec<String> = case
        .assumptions
        .iter()
        .filter(|a| !a.held)
        .map(|a| {
            if a.metrics.is_empty() {
                format!("not comparable: {}", a.kind.words())
            } else {
                format!("{} unknown", a.metrics.join(", "))
            }
        })
        .collect();
    if outliers > 0 {
        said.push(format!("{outliers} outlier(s)"));
    }
    if said.is_empty() {
        "ok".into()
    } else {
        format!("ok ({})", said.join("; "))
    }
}

/// Metric name, median, CI of the median, unit.
fn metric_cells(m: &MetricResult, s: &Summary) -> [String; 4] {
    [
        m.name.clone(),
        format_value(s.median),
        format!(
            "{} .. {}",
            format_value(s.median_ci_low),
            format_value(s.median_ci_high)
        ),
        m.unit.symbol().to_string(),
    ]
}

/// One row per case: family (on its first case), case, headline metric,
/// median, CI, unit, n, status.
pub(crate) fn headline_table(file: &ResultFile) -> Table {
    let mut t = Table::new(&[
        "family",
        "case",
        "headline",
        ">median",
        ">95% CI of median",
        "unit",
        ">n",
        "status",
    ]);
    // cases grouped by family, families in first-seen order; found by key
    // in constant time (a file of 30 000 families took seconds by search)
    let mut families: Vec<(&str, Vec<&CaseResult>)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for case in &file.cases {
        let family = case.bench.split('.').next().unwrap_or("");
        let i = *index.entry(family).or_insert_with(|| {
            families.push((family, Vec::new()));
            families.len() - 1
        });
        families[i].1.push(case);
    }
    for (family, cases) in families {
        let mut first = true;
        for case in cases {
            let headline = case
                .metrics
                .first()
                .and_then(|m| m.summary.as_ref().map(|s| (m, s)))
                .filter(|_| case.status == CaseStatus::Ok);
            let mut row = vec![
                if first {
                    family.to_string()
                } else {
                    String::new()
                },
                case.key.clone(),
            ];
            first = false;
            match headline {
                Some((m, s)) => {
                    row.extend(metric_cells(m, s));
                    row.extend([s.n.to_string(), status_text(case, s.outliers.len())]);
                }
                None => {
                    row.extend(std::iter::repeat_n(String::new(), 5));
                    row.push(status_text(case, 0));
                }
            }
            t.rows.push(row);
        }
    }
    t
}

/// The run's results as a table, every metric of every case.
pub(crate) fn table(file: &ResultFile) -> Table {
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
            let mut row = vec![case.key.clone()];
            row.extend(std::iter::repeat_n(String::new(), 6));
            row.push(status_text(case, 0));
            t.rows.push(row);
            continue;
        }
        for m in &case.metrics {
            let Some(s) = &m.summary else { continue };
            let mut row = vec![case.key.clone()];
            row.extend(metric_cells(m, s));
            row.extend([
                format!("{:.1}", s.cv * 100.0),
                s.n.to_string(),
                status_text(case, s.outliers.len()),
            ]);
            t.rows.push(row);
        }
    }
    t
}

/// The headline table (or, with `all_metrics`, every metric), followed by
/// anomalies, as text.
pub(crate) fn render(file: &ResultFile, all_metrics: bool) -> String {
    let mut out = if all_metrics {
        render_text(&table(file))
    } else {
        let t = headline_table(file);
        let total: usize = file.cases.iter().map(|c| c.metrics.len()).sum();
        let mut out = render_text(&t);
        if total > t.rows.len() {
            out += &format!(
                "headline metric per case; {total} metrics in all: --all-metrics shows every one\n"
            );
        }
        out
    };
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
    // validity (#15): reasons to doubt cases, as compare will mark them
    let suspect: Vec<String> = (file.suspect.iter().map(|s| ("run", s)))
        .chain(
            file.cases
                .iter()
                .flat_map(|c| c.suspect.iter().map(move |s| (c.key.as_str(), s))),
        )
        .map(|(k, s)| format!("  {k}: {}: {}", s.kind, s.message))
        .collect();
    if !suspect.is_empty() {
        out += "\nsuspect (compare leaves these cases out of its geometric means):\n";
        out += &suspect.join("\n");
        out += "\n";
    }
    out
}

/// A stored run: a header naming the run and environment, then [`render`].
pub(crate) fn render_file(file: &ResultFile, all_metrics: bool) -> String {
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
    out += &render(file, all_metrics);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;
    use crate::units::{Direction, Unit};

    /// Two families, a case with a second metric, a skipped case.
    fn file() -> ResultFile {
        let mut f = run(
            "native",
            "r1",
            &[
                (
                    "cpu.count",
                    "loops_per_sec",
                    Direction::HigherIsBetter,
                    vec![100.0, 102.0, 98.0, 101.0],
                ),
                (
                    "os.call[call=getppid]",
                    "latency",
                    Direction::LowerIsBetter,
                    vec![95.0, 96.0, 94.0, 95.5],
                ),
                (
                    "os.pingpong[cpus=split,mode=pingpong]",
                    "round_trip",
                    Direction::LowerIsBetter,
                    vec![],
                ),
            ],
        );
        let second = MetricResult {
            name: "rate".into(),
            unit: Unit::OpsPerSec,
            ..f.cases[1].metrics[0].clone()
        };
        f.cases[1].metrics.push(second);
        f.cases[2].status = CaseStatus::Skipped;
        f.cases[2].reason = Some("cannot place the processes: only one usable CPU (0)".into());
        f
    }

    #[test]
    fn summary_shows_one_headline_row_per_case_by_family() {
        insta::assert_snapshot!("headline_summary", render(&file(), false));
    }

    #[test]
    fn suspect_flags_are_listed_after_the_table() {
        let mut f = file();
        f.cases[0].suspect.push(crate::results::Suspect {
            kind: "load".into(),
            value: None,
            message: "2.0 other task(s)".into(),
        });
        let text = render(&f, false);
        assert!(text.contains("suspect (compare leaves"), "{text}");
        assert!(
            text.contains("  cpu.count: load: 2.0 other task(s)"),
            "{text}"
        );
        assert!(!render(&file(), false).contains("suspect"));
    }

    #[test]
    fn summary_with_all_metrics_shows_every_metric() {
        insta::assert_snapshot!("all_metrics_summary", render(&file(), true));
    }
}
