//! Draws the views families declare ([`crate::view`]) from a comparison's
//! data as figures: SVG charts for the HTML report and `--figures`, tables
//! for the terminal, Markdown and CSV. Nothing here knows a bench: ids,
//! parameters and metric names all come from the views and the results.

use crate::compare::{Comparison, Environment, MetricComparison, Verdict};
use crate::report::comparison::figure::Figure;
use crate::report::comparison::svg::{line_chart, timeline, Series};
use crate::report::Table;
use crate::results::{param_text, CaseResult, CaseStatus};
use crate::units::{format_value, Direction, Unit};
use crate::view::{
    BenchView, Grid, GridRows, Lines, Percentiles, Scale, Timeline, ViewKind, YValue,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// One point of one environment: a case's parameters and the median over
/// runs of its median of a metric, with the metric's unit and direction.
struct Point {
    params: BTreeMap<String, Value>,
    value: f64,
    unit: Unit,
    direction: Direction,
}

/// The ok cases of `bench` in `env`, one per key (from the first run that has it).
fn cases<'a>(env: &'a Environment, bench: &str) -> Vec<&'a CaseResult> {
    let mut out: Vec<&CaseResult> = Vec::new();
    for r in &env.runs {
        for c in r
            .cases
            .iter()
            .filter(|c| c.bench == bench && c.status == CaseStatus::Ok)
        {
            if !out.iter().any(|o| o.key == c.key) {
                out.push(c);
            }
        }
    }
    out
}

/// `metric` of every ok case of `bench` in `env`.
fn points(env: &Environment, bench: &str, metric: &str) -> Vec<Point> {
    cases(env, bench)
        .into_iter()
        .filter_map(|case| {
            let mut unit = None;
            let mut direction = None;
            let mut meds: Vec<f64> = env
                .runs
                .iter()
                .filter_map(|r| {
                    r.cases
                        .iter()
                        .find(|c| c.key == case.key && c.status == CaseStatus::Ok)
                })
                .filter_map(|c| {
                    let m = c.metrics.iter().find(|m| m.name == metric)?;
                    unit.get_or_insert(m.unit);
                    direction.get_or_insert(m.direction);
                    m.summary.as_ref().map(|s| s.median)
                })
                .collect();
            if meds.is_empty() {
                return None;
            }
            meds.sort_by(f64::total_cmp);
            Some(Point {
                params: case.params.clone(),
                value: crate::stats::median_of_sorted(&meds),
                unit: unit?,
                direction: direction?,
            })
        })
        .collect()
}

/// Points of a line being gathered: its identity, its unit, its (x, y).
type Gathered<Id> = Vec<(Id, Unit, Vec<(f64, f64)>)>;

/// A line of a [`Lines`] view being gathered: the values of its `by`
/// parameters, its metric's unit and direction, its (x, y).
type Line = (Vec<String>, Unit, Direction, Vec<(f64, f64)>);

/// What a chart's y values are: a metric in its unit, or a speed-up.
#[derive(Debug, Clone, Copy, PartialEq)]
enum YUnit {
    /// The metric's values, in this unit.
    Metric(Unit),
    /// Speed-ups, > 1 faster: dimensionless, never "ratio".
    Speedup,
}

impl YUnit {
    /// The unit's name in a title or a table's column (`MB/s`, `speed-up`).
    fn symbol(self) -> &'static str {
        match self {
            YUnit::Metric(u) => u.symbol(),
            YUnit::Speedup => "speed-up",
        }
    }

    /// The unit an axis label adds; none for a speed-up, which the label
    /// names already ("speed-up over 1 thread").
    fn axis_symbol(self) -> Option<&'static str> {
        match self {
            YUnit::Metric(u) => Some(u.symbol()),
            YUnit::Speedup => None,
        }
    }
}

/// A chart's series in one unit.
struct Chart {
    unit: YUnit,
    series: Vec<Series>,
}

/// Puts `series` in the chart of its unit, making one if needed.
fn add(charts: &mut Vec<Chart>, unit: YUnit, s: Series) {
    match charts.iter_mut().find(|c| c.unit == unit) {
        Some(c) => c.series.push(s),
        None => charts.push(Chart {
            unit,
            series: vec![s],
        }),
    }
}

/// The values each `by` parameter takes across every environment; only
/// parameters with two or more values name a line.
fn varying(envs: &[Environment], bench: &str, by: &[&str]) -> Vec<String> {
    by.iter()
        .filter(|k| {
            let mut vals: Vec<String> = envs
                .iter()
                .flat_map(|e| cases(e, bench))
                .filter_map(|c| c.params.get(**k).map(param_text))
                .collect();
            vals.sort();
            vals.dedup();
            vals.len() > 1
        })
        .map(|k| (*k).to_string())
        .collect()
}

fn lines_charts(envs: &[Environment], bench: &str, l: &Lines) -> Vec<Chart> {
    let named = varying(envs, bench, l.by);
    let mut charts = Vec::new();
    for e in envs {
        // the line a point belongs to: the values of every `by` parameter
        let mut lines: Vec<Line> = Vec::new();
        for p in points(e, bench, l.metric) {
            let Some(x) = p.params.get(l.x).and_then(Value::as_f64) else {
                continue;
            };
            let id: Vec<String> =
                l.by.iter()
                    .map(|k| p.params.get(*k).map(param_text).unwrap_or_default())
                    .collect();
            match lines
                .iter_mut()
                .find(|(i, u, d, _)| *i == id && *u == p.unit && *d == p.direction)
            {
                Some((_, _, _, pts)) => pts.push((x, p.value)),
                None => lines.push((id, p.unit, p.direction, vec![(x, p.value)])),
            }
        }
        lines.sort_by(|a, b| a.0.cmp(&b.0));
        for (id, unit, direction, mut pts) in lines {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if let YValue::SpeedupOverX(at) = l.y {
                let Some(&(_, base)) = pts.iter().find(|p| p.0 == at) else {
                    continue;
                };
                // > 1 better than at `at`, whichever way the metric runs; a
                // point whose speed-up no number holds (1 against 1e-310) is
                // left out
                pts = pts
                    .iter()
                    .map(|&(x, y)| match direction {
                        Direction::HigherIsBetter => (x, y / base),
                        Direction::LowerIsBetter => (x, base / y),
                    })
                    .filter(|p| crate::compare::comparable(p.1))
                    .collect();
            }
            let tags: Vec<String> =
                l.by.iter()
                    .zip(&id)
                    .filter(|(k, _)| named.iter().any(|n| n == *k))
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
            let name = if tags.is_empty() {
                e.label.clone()
            } else {
                format!("{} {}", e.label, tags.join(","))
            };
            let unit = match l.y {
                YValue::Metric => YUnit::Metric(unit),
                YValue::SpeedupOverX(_) => YUnit::Speedup,
            };
            add(&mut charts, unit, Series { name, points: pts });
        }
    }
    charts
}

fn percentile_charts(envs: &[Environment], bench: &str, p: &Percentiles) -> Vec<Chart> {
    // a line per case, named by the parameters that tell cases apart
    let mut keys: Vec<&str> = envs
        .iter()
        .flat_map(|e| cases(e, bench))
        .flat_map(|c| c.params.keys().map(String::as_str))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let named = varying(envs, bench, &keys);
    let mut charts = Vec::new();
    for e in envs {
        let mut by_case: Gathered<String> = Vec::new();
        for (metric, pct) in p.points {
            for pt in points(e, bench, metric) {
                let tag: Vec<String> = pt
                    .params
                    .iter()
                    .filter(|(k, _)| named.contains(k))
                    .map(|(k, v)| format!("{k}={}", param_text(v)))
                    .collect();
                let name = if tag.is_empty() {
                    e.label.clone()
                } else {
                    format!("{} {}", e.label, tag.join(","))
                };
                match by_case
                    .iter_mut()
                    .find(|(n, u, _)| *n == name && *u == pt.unit)
                {
                    Some((_, _, pts)) => pts.push((*pct, pt.value)),
                    None => by_case.push((name, pt.unit, vec![(*pct, pt.value)])),
                }
            }
        }
        for (name, unit, mut points) in by_case {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            add(&mut charts, YUnit::Metric(unit), Series { name, points });
        }
    }
    charts
}

/// `(label, spans)` per environment: the last ok case of `bench` in its
/// first run whose details hold the spans.
fn timelines(envs: &[Environment], bench: &str, t: &Timeline) -> Vec<(String, Vec<(f64, f64)>)> {
    envs.iter()
        .filter_map(|e| {
            let (key, items) = e.runs.first()?.cases.iter().rev().find_map(|c| {
                if c.bench != bench || c.status != CaseStatus::Ok {
                    return None;
                }
                Some((&c.key, c.details.as_ref()?.get(t.detail)?.as_array()?))
            })?;
            let spans: Vec<(f64, f64)> = items
                .iter()
                .filter_map(|p| Some((p.get(t.start)?.as_f64()?, p.get(t.end)?.as_f64()?)))
                .collect();
            Some((format!("{}: {key}", e.label), spans))
        })
        .collect()
}

/// Axis label: what it shows, its unit, and "log" when logarithmic.
fn axis(what: &str, unit: Option<&str>, scale: Scale) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if let Some(u) = unit {
        parts.push(u);
    }
    if scale == Scale::Log {
        parts.push("log");
    }
    match what.strip_suffix(')') {
        // `working set (KiB)` on a log axis: `working set (KiB, log)`
        Some(open) if open.contains('(') && !parts.is_empty() => {
            format!("{open}, {})", parts.join(", "))
        }
        _ if parts.is_empty() => what.to_string(),
        _ => format!("{what} ({})", parts.join(", ")),
    }
}

/// The title of one of a view's charts: with the unit when the view split
/// into several.
fn chart_title(bench: &str, title: &str, unit: YUnit, split: bool) -> String {
    if split {
        format!("{bench}: {title} (in {})", unit.symbol())
    } else {
        format!("{bench}: {title}")
    }
}

/// Every view with data as figures, in the views' order: line and
/// percentile charts with their points as tables, timelines as charts,
/// grids as tables. Their names may collide: [`unique_names`] tells them
/// apart among all of a comparison's figures.
pub(crate) fn figures(c: &Comparison, envs: &[Environment], views: &[BenchView]) -> Vec<Figure> {
    let mut out: Vec<Figure> = Vec::new();
    for BenchView { bench, view } in views {
        match &view.kind {
            ViewKind::Lines(l) => {
                let charts = lines_charts(envs, bench, l);
                let split = charts.len() > 1;
                for ch in charts {
                    let title = chart_title(bench, view.title, ch.unit, split);
                    let svg = line_chart(
                        &title,
                        &axis(l.x_label, None, l.x_scale),
                        &axis(l.y_label, ch.unit.axis_symbol(), l.y_scale),
                        &ch.series,
                        l.x_scale == Scale::Log,
                        l.y_scale == Scale::Log,
                    );
                    let table = chart_table(l.x_label, ch.unit, &ch.series);
                    out.push(Figure::new(bench, title, Some(svg), Some(table)));
                }
            }
            ViewKind::Percentiles(p) => {
                let charts = percentile_charts(envs, bench, p);
                let split = charts.len() > 1;
                for ch in charts {
                    let title = chart_title(bench, view.title, ch.unit, split);
                    let svg = line_chart(
                        &title,
                        "percentile (0 = min, 100 = max)",
                        &axis(
                            &format!("latency per {}", p.per),
                            ch.unit.axis_symbol(),
                            Scale::Log,
                        ),
                        &ch.series,
                        false,
                        true,
                    );
                    let table = chart_table("percentile", ch.unit, &ch.series);
                    out.push(Figure::new(bench, title, Some(svg), Some(table)));
                }
            }
            ViewKind::Timeline(t) => {
                for (name, spans) in timelines(envs, bench, t) {
                    let title = format!("{name}, {}", view.title);
                    let svg = timeline(&title, &spans);
                    out.push(Figure::new(bench, title, Some(svg), None));
                }
            }
            ViewKind::Grid(g) => {
                if let Some(t) = grid_table(c, envs, bench, g) {
                    out.push(Figure::new(
                        bench,
                        format!("{bench}: {}", view.title),
                        None,
                        Some(t),
                    ));
                }
            }
        }
    }
    out
}

/// A grid's cell: the speed-up in the conclusions' words ("3.7x faster",
/// "3.0 % slower"), with the verdict where it is neither faster nor slower
/// ("1.2 % faster, tie"): never the seeds' signed variation, whose "+"
/// meant slower for a rate and faster for a time.
fn grid_cell(m: &MetricComparison) -> String {
    let said = crate::report::words::describe_speedup(m.speedup());
    match m.verdict {
        Verdict::Faster | Verdict::Slower => said,
        v => format!("{said}, {}", v.word()),
    }
}

/// A grid view as a table: a row per value of `rows`, a column per
/// environment and value of `columns`, cells with the speed-up and verdict
/// against the baseline.
fn grid_table(c: &Comparison, envs: &[Environment], bench: &str, g: &Grid) -> Option<Table> {
    let params: BTreeMap<&str, &BTreeMap<String, Value>> = envs
        .iter()
        .flat_map(|e| cases(e, bench))
        .map(|cs| (cs.key.as_str(), &cs.params))
        .collect();
    // other parameters that tell cases apart (a second directory, say)
    // name the rows too, so that no two cases share a cell
    let mut others: Vec<&str> = params
        .values()
        .flat_map(|p| p.keys().map(String::as_str))
        .filter(|k| {
            *k != g.columns && !matches!(&g.rows, GridRows::Param { name, .. } if name == k)
        })
        .collect();
    others.sort_unstable();
    others.dedup();
    let others = varying(envs, bench, &others);
    let mut rows: Vec<String> = Vec::new();
    let mut cols: Vec<(String, String)> = Vec::new();
    let mut cells: BTreeMap<(String, String, String), String> = BTreeMap::new();
    for m in &c.metrics {
        let Some(p) = params.get(m.key.as_str()) else {
            continue;
        };
        let Some(col) = p.get(g.columns) else {
            continue;
        };
        let Some(r) = grid_row(m, p, g, &others) else {
            continue;
        };
        let col = param_text(col);
        if !rows.contains(&r) {
            rows.push(r.clone());
        }
        let column = (m.environment.clone(), col.clone());
        if !cols.contains(&column) {
            cols.push(column);
        }
        cells.insert((r, m.environment.clone(), col), grid_cell(m));
    }
    if rows.is_empty() {
        return None;
    }
    sort_grid(g, &mut rows, &mut cols);
    let first = match &g.rows {
        GridRows::Param { name, .. } => (*name).to_string(),
        GridRows::Metrics(_) => "metric".to_string(),
    };
    let titles: Vec<String> = std::iter::once(first)
        .chain(cols.iter().map(|(e, v)| format!(">{e} {}={v}", g.columns)))
        .collect();
    let refs: Vec<&str> = titles.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    for r in rows {
        let mut row = vec![r.clone()];
        for (e, v) in &cols {
            row.push(
                cells
                    .get(&(r.clone(), e.clone(), v.clone()))
                    .cloned()
                    .unwrap_or_else(|| "-".into()),
            );
        }
        t.rows.push(row);
    }
    Some(t)
}

/// The row of metric `m` of a case with parameters `p` in a grid view (None:
/// not in the grid), tagged with the `others` parameters that tell cases
/// apart.
fn grid_row(
    m: &MetricComparison,
    p: &BTreeMap<String, Value>,
    g: &Grid,
    others: &[String],
) -> Option<String> {
    let r = match &g.rows {
        GridRows::Param { name, metric } => {
            let wanted = match metric {
                Some(want) => m.metric == *want,
                None => m.primary,
            };
            match p.get(*name) {
                Some(v) if wanted => param_text(v),
                _ => return None,
            }
        }
        GridRows::Metrics(names) if names.contains(&m.metric.as_str()) => m.metric.clone(),
        GridRows::Metrics(_) => return None,
    };
    let tags: Vec<String> = others
        .iter()
        .filter_map(|k| Some(format!("{k}={}", param_text(p.get(k)?))))
        .collect();
    Some(if tags.is_empty() {
        r
    } else {
        format!("{r} {}", tags.join(","))
    })
}

/// Orders a grid's rows (parameter values, numbers by value; metrics in the
/// order the view lists them) and its columns (by environment, then value).
fn sort_grid(g: &Grid, rows: &mut [String], cols: &mut [(String, String)]) {
    let num = |s: &str| s.parse::<f64>().ok();
    let order = |a: &String, b: &String| match (num(a), num(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    };
    match &g.rows {
        GridRows::Param { .. } => rows.sort_by(order),
        // metrics in the order the view lists them
        GridRows::Metrics(names) => rows.sort_by_key(|r| {
            let metric = r.split(' ').next().unwrap_or_default();
            (names.iter().position(|n| *n == metric), r.clone())
        }),
    }
    cols.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| order(&a.1, &b.1)));
}

/// A chart as a table: x (or percentile) down, one column per line.
fn chart_table(x_title: &str, unit: YUnit, series: &[Series]) -> Table {
    let mut xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let titles: Vec<String> = std::iter::once(format!(">{x_title}"))
        .chain(
            series
                .iter()
                .map(|s| format!(">{} ({})", s.name, unit.symbol())),
        )
        .collect();
    let refs: Vec<&str> = titles.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    for x in xs {
        // parameters are mostly whole numbers: 2, not 2.000
        let x_text = if x.fract() == 0.0 && x.abs() < 1e15 {
            format!("{x:.0}")
        } else {
            format_value(x)
        };
        let mut row = vec![x_text];
        for s in series {
            row.push(
                s.points
                    .iter()
                    .find(|p| p.0 == x)
                    .map_or_else(|| "-".into(), |p| format_value(p.1)),
            );
        }
        t.rows.push(row);
    }
    t
}

/// Every view with data as (title, table), for the terminal and Markdown.
/// Timelines have no table form and are left to the HTML report.
pub(crate) fn tables(
    c: &Comparison,
    envs: &[Environment],
    views: &[BenchView],
) -> Vec<(String, Table)> {
    figures(c, envs, views)
        .into_iter()
        .filter_map(|f| Some((f.title, f.table?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{draws, run};
    use crate::compare::{compare, Options, DEFAULT_THRESHOLD};
    use crate::stats::rng::Rng;
    use crate::units::Direction;
    use crate::view::View;

    /// Parameters read back from a key: `fam.x[n=10,op=read]`.
    fn with_params(mut env: Environment) -> Environment {
        for r in &mut env.runs {
            for c in &mut r.cases {
                let inner = c
                    .key
                    .split_once('[')
                    .map_or("", |(_, p)| p.trim_end_matches(']'));
                for kv in inner.split(',').filter(|s| !s.is_empty()) {
                    let (k, v) = kv.split_once('=').unwrap();
                    let v = v
                        .parse::<i64>()
                        .map_or_else(|_| Value::from(v), Value::from);
                    c.params.insert(k.into(), v);
                }
            }
        }
        env
    }

    /// `fam.rate` at 1, 2 and 4 threads for two sizes; `other` is `scale`
    /// times as fast at 4 threads only.
    fn envs(scale: f64) -> Vec<Environment> {
        let mut rng = Rng::new(9);
        let mut mk = |label: &str, s4: f64| {
            let mut cases = Vec::new();
            for size in [10, 20] {
                for t in [1, 2, 4] {
                    let v = 100.0 * t as f64 * if t == 4 { s4 } else { 1.0 };
                    cases.push((format!("fam.rate[size={size},threads={t}]"), v));
                }
            }
            let cases: Vec<(&str, &str, Direction, Vec<f64>)> = cases
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str(),
                        "rate",
                        Direction::HigherIsBetter,
                        draws(&mut rng, 6, *v, 0.001),
                    )
                })
                .collect();
            with_params(Environment {
                label: label.into(),
                runs: vec![
                    run(label, &format!("{label}1"), &cases),
                    run(label, &format!("{label}2"), &cases),
                ],
                earlier: Vec::new(),
            })
        };
        vec![mk("base", 1.0), mk("other", scale)]
    }

    fn lines(by: &'static [&'static str], y: YValue) -> Vec<BenchView> {
        vec![BenchView {
            bench: "fam.rate".into(),
            view: View {
                title: "rate by threads",
                kind: ViewKind::Lines(Lines {
                    metric: "rate",
                    y_label: "rate",
                    y,
                    y_scale: Scale::Linear,
                    x: "threads",
                    x_label: "threads",
                    x_scale: Scale::Linear,
                    by,
                }),
            },
        }]
    }

    #[test]
    fn lines_split_by_environment_and_by_parameter() {
        let e = envs(2.0);
        let v = lines(&["size"], YValue::Metric);
        let ViewKind::Lines(l) = &v[0].view.kind else {
            unreachable!()
        };
        let charts = lines_charts(&e, "fam.rate", l);
        assert_eq!(charts.len(), 1);
        let names: Vec<&str> = charts[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "base size=10",
                "base size=20",
                "other size=10",
                "other size=20"
            ]
        );
        let other = &charts[0].series[2];
        let xs: Vec<f64> = other.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 4.0]);
        assert!((other.points[2].1 / 800.0 - 1.0).abs() < 0.01, "{other:?}");
    }

    #[test]
    fn a_parameter_with_one_value_does_not_name_lines() {
        let mut e = envs(1.0);
        for env in &mut e {
            for r in &mut env.runs {
                r.cases.retain(|c| c.params["size"] == 10);
            }
        }
        let v = lines(&["size"], YValue::Metric);
        let ViewKind::Lines(l) = &v[0].view.kind else {
            unreachable!()
        };
        let names: Vec<String> = lines_charts(&e, "fam.rate", l)[0]
            .series
            .iter()
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(names, ["base", "other"]);
    }

    #[test]
    fn speed_up_over_a_point_is_faster_above_one_whichever_way_the_metric_runs() {
        let mut e = envs(1.0);
        let v = lines(&["size"], YValue::SpeedupOverX(1.0));
        let ViewKind::Lines(l) = &v[0].view.kind else {
            unreachable!()
        };
        let ys = |e: &[Environment]| -> Vec<Vec<f64>> {
            let charts = lines_charts(e, "fam.rate", l);
            assert_eq!(charts[0].unit, YUnit::Speedup);
            charts[0]
                .series
                .iter()
                .map(|s| {
                    s.points
                        .iter()
                        .map(|p| (p.1 * 100.0).round() / 100.0)
                        .collect()
                })
                .collect()
        };
        // a rate that doubles with the threads: twice as fast
        for line in ys(&e) {
            assert_eq!(line, [1.0, 2.0, 4.0]);
        }
        // a time that doubles: half as fast, never the ratio 2
        for env in &mut e {
            for r in &mut env.runs {
                for c in &mut r.cases {
                    c.metrics[0].direction = Direction::LowerIsBetter;
                }
            }
        }
        for line in ys(&e) {
            assert_eq!(line, [1.0, 0.5, 0.25]);
        }
    }

    #[test]
    fn series_of_different_units_never_share_an_axis() {
        let mut e = envs(1.0);
        // one percentile in ms, the other in us
        for env in &mut e {
            for r in &mut env.runs {
                for c in &mut r.cases {
                    let mut m = c.metrics[0].clone();
                    m.name = "p99".into();
                    m.unit = Unit::Microseconds;
                    c.metrics[0].name = "p50".into();
                    c.metrics[0].unit = Unit::Milliseconds;
                    c.metrics.push(m);
                }
            }
        }
        let p = Percentiles {
            points: &[("p50", 50.0), ("p99", 99.0)],
            per: "request",
        };
        let charts = percentile_charts(&e, "fam.rate", &p);
        let units: Vec<YUnit> = charts.iter().map(|c| c.unit).collect();
        assert_eq!(
            units,
            [
                YUnit::Metric(Unit::Milliseconds),
                YUnit::Metric(Unit::Microseconds)
            ]
        );
        let views = vec![BenchView {
            bench: "fam.rate".into(),
            view: View {
                title: "latency",
                kind: ViewKind::Percentiles(p),
            },
        }];
        let html = charts_html(&e, &views);
        assert!(html.contains("fam.rate: latency (in ms)"), "{html}");
        assert!(html.contains("fam.rate: latency (in us)"), "{html}");
    }

    fn charts_html(e: &[Environment], views: &[BenchView]) -> String {
        let c = compare(
            e,
            &Options {
                threshold: DEFAULT_THRESHOLD,
                seed: 1,
                exclude_suspect: false,
                prices: &[],
            },
        )
        .unwrap();
        figures(&c, e, views)
            .iter()
            .map(|f| {
                f.svg
                    .clone()
                    .or_else(|| f.table.as_ref().map(crate::report::render_markdown))
                    .unwrap_or_default()
            })
            .collect()
    }

    #[test]
    fn a_grid_gives_each_cell_its_speed_up_and_verdict() {
        let e = envs(2.0);
        let c = compare(
            &e,
            &Options {
                threshold: DEFAULT_THRESHOLD,
                seed: 1,
                exclude_suspect: false,
                prices: &[],
            },
        )
        .unwrap();
        let g = Grid {
            rows: GridRows::Param {
                name: "size",
                metric: None,
            },
            columns: "threads",
        };
        let t = grid_table(&c, &e, "fam.rate", &g).unwrap();
        let titles: Vec<&str> = t.columns.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "size",
                "other threads=1",
                "other threads=2",
                "other threads=4"
            ]
        );
        assert_eq!(t.rows.len(), 2);
        for row in &t.rows {
            // in words, never the seeds' signed variation ("+0.3 % tie")
            assert!(row[1].ends_with(", tie"), "{row:?}");
            assert!(
                row[1].contains(" % faster") || row[1].contains(" % slower"),
                "{row:?}"
            );
            // a twofold speed-up reads as the conclusions say it, not as
            // the seeds' "-100.0 %"
            assert_eq!(row[3], "2.0x faster", "{row:?}");
        }
        // metrics as rows (seed 000's operations by threads)
        let g = Grid {
            rows: GridRows::Metrics(&["rate", "absent"]),
            columns: "threads",
        };
        let t = grid_table(&c, &e, "fam.rate", &g).unwrap();
        // the sizes tell the cases apart, so they name the rows too
        let rows: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(rows, ["rate size=10", "rate size=20"]);
        assert!(t.rows[0][3].ends_with(" faster"), "{:?}", t.rows[0]);
    }

    #[test]
    fn views_without_data_draw_nothing() {
        let e = envs(1.0);
        let mut v = lines(&[], YValue::Metric);
        v[0].bench = "fam.absent".into();
        assert!(charts_html(&e, &v).is_empty());
    }

    #[test]
    fn the_report_names_no_bench() {
        // families declare their views; the report must not know a bench
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report");
        let mut files = vec![dir.clone()];
        let mut texts = Vec::new();
        while let Some(p) = files.pop() {
            if p.is_dir() {
                files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            } else {
                texts.push((p.clone(), std::fs::read_to_string(&p).unwrap_or_default()));
            }
        }
        assert!(texts.len() > 5);
        for b in crate::bench::ALL.iter() {
            let id = b.id();
            for (path, text) in &texts {
                let named = text.match_indices(&id).any(|(i, _)| {
                    let next = text[i + id.len()..].chars().next();
                    !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                });
                assert!(!named, "{} names {id}", path.display());
            }
        }
    }
}
