//! `envbench compare --html FILE`: one self-contained page (inline CSS and
//! SVG, no script, no network) with the verdict summary, warnings,
//! recommendations, fingerprints side by side, charts and every metric.

use super::compare::{fingerprint_table, method_note, metrics_table, summary_table, unclear_table};
use super::svg::{esc, line_chart, speedup_bars, timeline, Bar, Series};
use super::{Align, Table};
use crate::compare::{Comparison, Environment, Verdict};
use crate::results::CaseStatus;
use serde_json::Value;

const TEMPLATE: &str = include_str!("templates/report.html");

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

/// Median over runs of the median of `metric` for each ok case of `bench`: (params, value).
fn env_points(
    env: &Environment,
    bench: &str,
    metric: &str,
) -> Vec<(serde_json::Map<String, Value>, f64)> {
    let mut keys: Vec<String> = Vec::new();
    for r in &env.runs {
        for c in r
            .cases
            .iter()
            .filter(|c| c.bench == bench && c.status == CaseStatus::Ok)
        {
            if !keys.contains(&c.key) {
                keys.push(c.key.clone());
            }
        }
    }
    keys.iter()
        .filter_map(|k| {
            let mut meds: Vec<f64> = env
                .runs
                .iter()
                .filter_map(|r| {
                    r.cases
                        .iter()
                        .find(|c| &c.key == k && c.status == CaseStatus::Ok)
                })
                .filter_map(|c| {
                    c.metrics
                        .iter()
                        .find(|m| m.name == metric)?
                        .summary
                        .as_ref()
                        .map(|s| s.median)
                })
                .collect();
            if meds.is_empty() {
                return None;
            }
            meds.sort_by(f64::total_cmp);
            let case = env
                .runs
                .iter()
                .find_map(|r| r.cases.iter().find(|c| &c.key == k))?;
            let params: serde_json::Map<String, Value> = case.params.clone().into_iter().collect();
            Some((params, crate::stats::median_of_sorted(&meds)))
        })
        .collect()
}

fn num(p: &serde_json::Map<String, Value>, k: &str) -> Option<f64> {
    p.get(k).and_then(Value::as_f64)
}

/// Series per environment (and per value of `group`, if given) of `metric` against param `x`.
fn series(
    envs: &[Environment],
    bench: &str,
    metric: &str,
    x: &str,
    group: Option<&str>,
) -> Vec<Series> {
    let mut out = Vec::new();
    for e in envs {
        let pts = env_points(e, bench, metric);
        let mut groups: Vec<Option<f64>> = pts
            .iter()
            .map(|(p, _)| group.and_then(|g| num(p, g)))
            .collect();
        groups.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        groups.dedup();
        for g in groups {
            let mut points: Vec<(f64, f64)> = pts
                .iter()
                .filter(|(p, _)| group.and_then(|k| num(p, k)) == g)
                .filter_map(|(p, v)| Some((num(p, x)?, *v)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            if points.is_empty() {
                continue;
            }
            let name = match (group, g) {
                (Some(k), Some(v)) => format!("{} {k}={v}", e.label),
                _ => e.label.clone(),
            };
            out.push(Series { name, points });
        }
    }
    out
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

/// A percentile chart: bench, (metric, percentile) points, what one
/// sample is, the unit.
type PercentileChart = (
    &'static str,
    &'static [(&'static str, f64)],
    &'static str,
    &'static str,
);

fn charts(c: &Comparison, envs: &[Environment]) -> String {
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
    let lu = series(envs, "cpu.lu", "gflops", "threads", Some("n"));
    if !lu.is_empty() {
        s += &line_chart(
            "cpu.lu: GFLOPS by threads",
            "threads",
            "GFLOPS",
            &lu,
            false,
            false,
        );
    }
    let lu_speedup: Vec<Series> = lu
        .iter()
        .filter_map(|ser| {
            let t1 = ser.points.iter().find(|p| p.0 == 1.0)?.1;
            Some(Series {
                name: ser.name.clone(),
                points: ser.points.iter().map(|&(t, g)| (t, g / t1)).collect(),
            })
        })
        .collect();
    if !lu_speedup.is_empty() {
        s += &line_chart(
            "cpu.lu: speed-up T1/Tn by threads",
            "threads",
            "speed-up (ratio)",
            &lu_speedup,
            false,
            false,
        );
    }
    for (metric, title) in [("triad_rate", "Triad"), ("copy_rate", "Copy")] {
        let st = series(envs, "mem.stream", metric, "threads", None);
        if !st.is_empty() {
            s += &line_chart(
                &format!("mem.stream: {title} by threads"),
                "threads",
                "MB/s (10^6 B/s)",
                &st,
                false,
                false,
            );
        }
    }
    // one chart per benchmark: their latencies have different units
    let percentile_charts: [PercentileChart; 2] = [
        (
            "os.spawn",
            &[("latency_p50", 50.0), ("latency_p95", 95.0)],
            "spawn",
            "us per spawn",
        ),
        (
            "cpu.primes",
            &[
                ("latency_min", 0.0),
                ("latency_p95", 95.0),
                ("latency_max", 100.0),
            ],
            "primes event",
            "ms per event",
        ),
    ];
    for (bench, points, what, unit) in percentile_charts {
        let pct: Vec<Series> = envs
            .iter()
            .flat_map(|e| {
                let mut by_case: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
                for (metric, p) in points {
                    for (params, v) in env_points(e, bench, metric) {
                        let tag: Vec<String> = params
                            .iter()
                            .map(|(k, v)| {
                                format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_string))
                            })
                            .collect();
                        let name = format!("{} {}", e.label, tag.join(","));
                        match by_case.iter_mut().find(|(n, _)| *n == name) {
                            Some((_, pts)) => pts.push((*p, v)),
                            None => by_case.push((name, vec![(*p, v)])),
                        }
                    }
                }
                by_case
                    .into_iter()
                    .map(|(name, points)| Series { name, points })
            })
            .collect();
        if !pct.is_empty() {
            s += &line_chart(
                &format!("{bench}: latency percentiles per {what}"),
                "percentile (0 = min, 100 = max)",
                &format!("latency ({unit}; log)"),
                &pct,
                false,
                true,
            );
        }
    }
    let lat = series(envs, "mem.latency", "latency", "size_kib", None);
    if !lat.is_empty() {
        s += &line_chart(
            "mem.latency: ns per dependent load by working set",
            "working set (KiB, log)",
            "ns per load (log)",
            &lat,
            true,
            true,
        );
    }
    for e in envs {
        let largest = e
            .runs
            .first()
            .and_then(|r| {
                r.cases
                    .iter()
                    .rfind(|c| c.bench == "os.multiprog" && c.status == CaseStatus::Ok)
            })
            .and_then(|c| {
                Some((
                    c.key.clone(),
                    c.details
                        .as_ref()?
                        .get("timeline_last_repetition")?
                        .as_array()?
                        .clone(),
                ))
            });
        if let Some((key, tl)) = largest {
            let spans: Vec<(f64, f64)> = tl
                .iter()
                .filter_map(|p| Some((p.get("start_s")?.as_f64()?, p.get("end_s")?.as_f64()?)))
                .collect();
            s += &timeline(
                &format!(
                    "{}: {key}, one bar per process (seed 002's figures 6.1-6.5)",
                    e.label
                ),
                &spans,
            );
        }
    }
    s
}

/// The report page.
pub fn render(c: &Comparison, envs: &[Environment]) -> String {
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
    for r in c.recommendations.iter().chain(&c.advice) {
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
    b += &charts(c, envs);
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
