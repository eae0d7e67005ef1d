//! `envbench compare --html FILE`: one self-contained page (inline CSS and
//! SVG, no script, no network) with the verdict summary, warnings,
//! recommendations, fingerprints side by side, charts and every metric.

use super::{Export, Exporter, Report};
use crate::compare::{Comparison, Environment, Verdict};
use crate::report::compare::{
    fingerprint_table, method_note, metrics_table, summary_table, unclear_table,
};
use crate::report::svg::{esc, speedup_bars, Bar};
use crate::report::{Align, Table};
use crate::view::BenchView;

const TEMPLATE: &str = include_str!("../templates/report.html");

/// `compare --html FILE`.
#[derive(Debug)]
pub struct Html;

impl Exporter for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn export(&self, r: &Report) -> Export {
        Export::Document(render(r.comparison, r.environments, r.views))
    }
}

/// A table as HTML; rows whose first cell ends in " *" (differs) or " !"
/// (suspect) are highlighted.
fn html_table(t: &Table) -> String {
    let class = |a: Align| {
        if a == Align::Right {
            " class=\"num\""
        } else {
            ""
        }
    };
    let mut s = String::from("<div class=\"wide\"><table><thead><tr>");
    for c in &t.columns {
        s += &format!("<th{}>{}</th>", class(c.align), esc(&c.title));
    }
    s += "</tr></thead><tbody>";
    for r in &t.rows {
        let diff = r
            .first()
            .is_some_and(|c| c.ends_with(" *") || c.ends_with(" !"));
        s += if diff { "<tr class=\"diff\">" } else { "<tr>" };
        for (cell, col) in r.iter().zip(&t.columns) {
            let v = match cell.as_str() {
                "faster" | "slower" | "tie" => {
                    format!("<span class=\"verdict-{cell}\">{cell}</span>")
                }
                _ => esc(cell),
            };
            s += &format!("<td{}>{v}</td>", class(col.align));
        }
        s += "</tr>";
    }
    s + "</tbody></table></div>"
}

/// Okabe–Ito colours: faster bluish green, slower vermillion, tie grey,
/// unclear sky blue.
pub fn verdict_color(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "#009E73",
        Verdict::Slower => "#D55E00",
        Verdict::Tie => "#9a9a9a",
        Verdict::Unclear => "#56B4E9",
    }
}

/// The speed-up bars of every environment, then every view with data.
fn charts(c: &Comparison, envs: &[Environment], views: &[BenchView]) -> String {
    let mut s = String::new();
    for other in c.environments.iter().skip(1) {
        let bars: Vec<Bar> = c
            .metrics
            .iter()
            .filter(|m| m.primary && m.environment == other.label)
            .map(|m| {
                let (lo, hi) = m.speedup_ci();
                let color = verdict_color(m.verdict);
                Bar {
                    label: format!("{} {}", m.key, m.metric),
                    value: m.speedup(),
                    lo,
                    hi,
                    color: color.into(),
                }
            })
            .collect();
        if !bars.is_empty() {
            s += &speedup_bars(
                &format!(
                    "Speed-up of {} over {} (headline metric per case, 95 % CI)",
                    other.label, c.baseline
                ),
                &format!(
                    "speed-up (log scale; > 1x: {} faster; green faster, vermillion slower, grey tie, blue unclear)",
                    other.label
                ),
                &bars,
            );
        }
    }
    s + &crate::report::views::charts(c, envs, views, html_table)
}

/// The report page.
pub fn render(c: &Comparison, envs: &[Environment], views: &[BenchView]) -> String {
    let others: Vec<&str> = c
        .environments
        .iter()
        .skip(1)
        .map(|e| e.label.as_str())
        .collect();
    let title = format!("envbench: {} against {}", others.join(", "), c.baseline);
    let mut b = format!("<h1>{}</h1>", esc(&title));
    b += &format!(
        "<p class=\"note\">{} Bootstrap seed {}.</p>",
        esc(&method_note(c)),
        c.seed
    );
    b += "<h2>Summary by family</h2>";
    b += &html_table(&summary_table(c));
    b += "<h2>Recommendations</h2><ul>";
    for r in c.conclusions.iter().chain(&c.advice) {
        b += &format!("<li>{}</li>", esc(r));
    }
    b += "</ul>";
    if !c.warnings.is_empty() {
        b += "<h2>Warnings</h2><ul>";
        for w in &c.warnings {
            b += &format!("<li>{}</li>", esc(w));
        }
        b += "</ul>";
    }
    b += "<h2>Environments (highlighted rows differ from the baseline)</h2>";
    b += &html_table(&fingerprint_table(c));
    let anomalies: Vec<String> = envs
        .iter()
        .flat_map(|e| {
            e.runs.iter().flat_map(move |r| {
                r.anomalies
                    .iter()
                    .map(move |a| format!("{} / {}: {}: {}", e.label, r.run_id, a.kind, a.message))
                    .chain(r.cases.iter().flat_map(move |cs| {
                        cs.anomalies.iter().map(move |a| {
                            format!(
                                "{} / {} / {}: {}: {}",
                                e.label, r.run_id, cs.key, a.kind, a.message
                            )
                        })
                    }))
            })
        })
        .collect();
    if !anomalies.is_empty() {
        b += "<h2>Anomalies</h2><ul>";
        for a in anomalies {
            b += &format!("<li>{}</li>", esc(&a));
        }
        b += "</ul>";
    }
    b += "<h2>Charts</h2>";
    b += &charts(c, envs, views);
    let unclear = unclear_table(c);
    if !unclear.rows.is_empty() {
        b += "<h2>Unclear cases: where the spread comes from</h2>";
        b += "<p class=\"note\">Share of the variance between runs, between rounds and between repetitions, and the runs per environment that would resolve an effect of the threshold's size.</p>";
        b += &html_table(&unclear);
    }
    b += "<h2>Every metric</h2>";
    b += &html_table(&metrics_table(c, false, true));
    if !c.unmatched.is_empty() {
        b += "<h2>Cases in one environment only</h2><ul>";
        for (e, k) in &c.unmatched {
            b += &format!("<li>{}: {}</li>", esc(e), esc(k));
        }
        b += "</ul>";
    }
    TEMPLATE
        .replace("{{TITLE}}", &esc(&title))
        .replace("{{BODY}}", &b)
}
