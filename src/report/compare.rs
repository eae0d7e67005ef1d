//! `envbench compare` output: the comparison as tables (terminal,
//! Markdown, CSV) and the text around them. Deterministic: no timestamps,
//! fixed precision.

use super::{render_markdown, render_text, Table};
use crate::compare::{Comparison, Verdict};
use crate::units::format_value;

/// How tables become text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Aligned columns; `color` adds ANSI colours to verdicts.
    Text {
        /// Whether to colour verdicts.
        color: bool,
    },
    /// Markdown tables and headings.
    Markdown,
}

fn verdict_cell(v: Verdict, color: bool) -> String {
    let (word, code) = match v {
        Verdict::Faster => ("faster", "32"),
        Verdict::Slower => ("slower", "31"),
        Verdict::Tie => ("tie", "2"),
    };
    if color {
        format!("\x1b[{code}m{word}\x1b[0m")
    } else {
        word.to_string()
    }
}

/// Environments and their runs.
pub fn environments_table(c: &Comparison) -> Table {
    let mut t = Table::new(&["environment", ">runs", "run ids"]);
    for (i, e) in c.environments.iter().enumerate() {
        let name = if i == 0 {
            format!("{} (baseline)", e.label)
        } else {
            e.label.clone()
        };
        t.rows
            .push(vec![name, e.runs.len().to_string(), e.runs.join(" ")]);
    }
    t
}

/// Fingerprints side by side; `*` marks fields that differ from the baseline.
pub fn fingerprint_table(c: &Comparison) -> Table {
    let mut titles = vec!["field".to_string()];
    titles.extend(c.environments.iter().map(|e| e.label.clone()));
    let refs: Vec<&str> = titles.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    for row in &c.fingerprint {
        let mut cells = vec![if row.differs {
            format!("{} *", row.field)
        } else {
            row.field.clone()
        }];
        cells.extend(row.values.iter().cloned());
        t.rows.push(cells);
    }
    t
}

/// Geometric mean speed-up and verdict counts per family and environment.
pub fn summary_table(c: &Comparison) -> Table {
    let mut t = Table::new(&[
        "family",
        "environment",
        ">speed-up (geomean)",
        ">faster",
        ">slower",
        ">tie",
    ]);
    for f in &c.families {
        t.rows.push(vec![
            f.family.clone(),
            f.environment.clone(),
            if f.geomean_speedup.is_finite() {
                format!("{:.3}x", f.geomean_speedup)
            } else {
                "-".into()
            },
            f.faster.to_string(),
            f.slower.to_string(),
            f.tie.to_string(),
        ]);
    }
    t
}

/// Every metric comparison.
pub fn metrics_table(c: &Comparison, color: bool) -> Table {
    let mut t = Table::new(&[
        "case",
        "metric",
        "environment",
        ">baseline",
        ">other",
        "unit",
        ">ratio",
        ">95% CI",
        ">variation %",
        ">p (BH)",
        "verdict",
    ]);
    for m in &c.metrics {
        t.rows.push(vec![
            m.key.clone(),
            m.metric.clone(),
            m.environment.clone(),
            format_value(m.base_median),
            format_value(m.other_median),
            m.unit.symbol().to_string(),
            format!("{:.3}", m.ratio),
            format!("{:.3} .. {:.3}", m.ratio_ci.0, m.ratio_ci.1),
            format!("{:+.1}", m.variation_pct),
            format!("{:.3}", m.p_adjusted),
            verdict_cell(m.verdict, color),
        ]);
    }
    t
}

/// One row per case × metric × environment, every number unformatted.
pub fn csv_table(c: &Comparison) -> Table {
    let mut t = Table::new(&[
        "environment",
        "baseline",
        "case",
        "family",
        "metric",
        "unit",
        "direction",
        "base_median",
        "other_median",
        "ratio",
        "ratio_ci_low",
        "ratio_ci_high",
        "variation_pct",
        "p_value",
        "p_adjusted",
        "verdict",
        "basis",
    ]);
    for m in &c.metrics {
        t.rows.push(vec![
            m.environment.clone(),
            c.baseline.clone(),
            m.key.clone(),
            m.family.clone(),
            m.metric.clone(),
            m.unit.symbol().to_string(),
            serde_json::to_value(m.direction)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            m.base_median.to_string(),
            m.other_median.to_string(),
            m.ratio.to_string(),
            m.ratio_ci.0.to_string(),
            m.ratio_ci.1.to_string(),
            m.variation_pct.to_string(),
            m.p_value.to_string(),
            m.p_adjusted.to_string(),
            verdict_cell(m.verdict, false),
            m.basis.clone(),
        ]);
    }
    t
}

/// How [`render`] writes tables, headings and list items.
struct Writer {
    table: fn(&Table) -> String,
    heading: fn(&str) -> String,
    bullet: &'static str,
    color: bool,
}

/// The whole comparison as text or Markdown.
pub fn render(c: &Comparison, style: Style) -> String {
    let w = match style {
        Style::Text { color } => Writer {
            table: render_text,
            heading: |h| format!("{h}\n"),
            bullet: "  - ",
            color,
        },
        Style::Markdown => Writer {
            table: render_markdown,
            heading: |h| format!("## {h}\n\n"),
            bullet: "- ",
            color: false,
        },
    };
    let (table, heading, bullet, color) = (w.table, w.heading, w.bullet, w.color);
    let mut out = String::new();
    out += &heading("Environments");
    out += &table(&environments_table(c));
    out += "\n";
    out += &heading("Fingerprints (* differs from the baseline)");
    out += &table(&fingerprint_table(c));
    if !c.warnings.is_empty() {
        out += "\n";
        out += &heading("Warnings");
        for w in &c.warnings {
            out += &format!("{bullet}{w}\n");
        }
    }
    out += "\n";
    out += &heading(&format!(
        "Summary: headline metric of each case; speed-up > 1 means faster than {}",
        c.baseline
    ));
    out += &table(&summary_table(c));
    out += "\n";
    out += &heading(&format!(
        "Cases: ratio = other / {b}; variation = ({b} - other) / {b} x 100, as the seeds report it; \
         a verdict needs BH-adjusted p < {fdr} and the CI beyond ±{thr:.0} %",
        b = c.baseline,
        fdr = c.fdr,
        thr = c.threshold * 100.0
    ));
    out += &table(&metrics_table(c, color));
    if !c.unmatched.is_empty() {
        out += "\n";
        out += &heading("Cases in one environment only (not compared)");
        for (env, key) in &c.unmatched {
            out += &format!("{bullet}{env}: {key}\n");
        }
    }
    out += "\n";
    out += &heading("Recommendations");
    for r in &c.recommendations {
        out += &format!("{bullet}{r}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{draws, run};
    use crate::compare::{compare, Environment, Options};
    use crate::report::render_csv;
    use crate::stats::rng::Rng;
    use crate::units::Direction;

    /// Two environments of fixed synthetic runs: one faster, one slower, one tie.
    fn envs() -> Vec<Environment> {
        let mut rng = Rng::new(2026);
        let mut mk = |label: &str, id: &str, cpu: f64, lat: f64| {
            run(
                label,
                id,
                &[
                    (
                        "cpu.lu[n=1000,threads=1]",
                        "gflops",
                        Direction::HigherIsBetter,
                        draws(&mut rng, 8, cpu, 0.02),
                    ),
                    (
                        "os.fork[n=100]",
                        "time_per_process",
                        Direction::LowerIsBetter,
                        draws(&mut rng, 8, lat, 0.02),
                    ),
                    (
                        "os.syscall[call=getppid]",
                        "latency",
                        Direction::LowerIsBetter,
                        draws(&mut rng, 8, 95.0, 0.02),
                    ),
                ],
            )
        };
        let native = mk("native", "n1", 30.0, 45.0);
        let wsl1 = mk("wsl1", "w1", 36.0, 4530.0);
        vec![
            Environment {
                label: "native".into(),
                runs: vec![native],
            },
            Environment {
                label: "wsl1".into(),
                runs: vec![wsl1],
            },
        ]
    }

    fn comparison() -> (Comparison, Vec<Environment>) {
        let e = envs();
        (
            compare(
                &e,
                &Options {
                    threshold: None,
                    seed: 7,
                },
            )
            .unwrap(),
            e,
        )
    }

    #[test]
    fn text_report_snapshot() {
        insta::assert_snapshot!(render(&comparison().0, Style::Text { color: false }));
    }

    #[test]
    fn markdown_report_snapshot() {
        insta::assert_snapshot!(render(&comparison().0, Style::Markdown));
    }

    #[test]
    fn csv_snapshot() {
        insta::assert_snapshot!(render_csv(&csv_table(&comparison().0)));
    }

    #[test]
    fn json_snapshot() {
        insta::assert_snapshot!(serde_json::to_string_pretty(&comparison().0).unwrap());
    }

    #[test]
    fn html_snapshot() {
        let (c, e) = comparison();
        insta::assert_snapshot!(crate::report::html::render(&c, &e));
    }

    #[test]
    fn colour_marks_verdicts_only_when_asked() {
        let (c, _) = comparison();
        assert!(render(&c, Style::Text { color: true }).contains("\x1b[31mslower\x1b[0m"));
        assert!(!render(&c, Style::Text { color: false }).contains('\x1b'));
    }
}
