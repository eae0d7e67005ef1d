//! Figures of a comparison: a chart, a table or both, each named for a
//! file (`compare --figures DIR`) and grouped by family (the HTML report's
//! sections), names made unique among all of a comparison's figures; and
//! the speed-up chart of each environment against the baseline, coloured
//! by verdict.

use crate::compare::{Comparison, Verdict};
use crate::report::comparison::svg::{speedup_bars, Bar};
use crate::report::Table;
use crate::units::format_value;

/// One figure of a comparison: a chart, a table, or a chart with its data
/// as a table; named for a file (`compare --figures DIR`) and grouped by
/// family (the HTML report's sections).
#[derive(Debug, Clone)]
pub struct Figure {
    /// The family it belongs to (`mem`), or `all` for the speed-up charts.
    pub family: String,
    /// A file name without extension (`fam.bench-bandwidth_by_threads`),
    /// unique in a comparison once [`unique_names`] has seen them all.
    pub name: String,
    /// Its title.
    pub title: String,
    /// The chart, as a standalone-ready SVG element.
    pub svg: Option<String>,
    /// The data as a table (a grid, or a chart's points).
    pub table: Option<Table>,
}

impl Figure {
    /// The figure of `bench` titled `title`, named after both.
    pub(super) fn new(
        bench: &str,
        title: String,
        svg: Option<String>,
        table: Option<Table>,
    ) -> Figure {
        let family = bench.split('.').next().unwrap_or(bench).to_string();
        let short = title.strip_prefix(&format!("{bench}: ")).unwrap_or(&title);
        let name = crate::units::file_safe(&format!("{bench}-{}", short.to_lowercase()))
            .split('_')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("_");
        Figure {
            family,
            name,
            title,
            svg,
            table,
        }
    }
}

/// Okabe–Ito colours of verdicts: faster bluish green, slower vermillion,
/// tie grey, unclear sky blue.
pub(crate) fn verdict_color(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "#009E73",
        Verdict::Slower => "#D55E00",
        Verdict::Tie => "#9a9a9a",
        Verdict::Unclear => "#56B4E9",
    }
}

/// The speed-up chart of each environment against the baseline: a bar per
/// case's headline metric with the interval its verdict rests on (95 %, or
/// widened for multiple comparisons), coloured by verdict, the tie band
/// shaded; with the cases table of the same numbers.
pub(crate) fn speedup_figures(c: &Comparison) -> Vec<Figure> {
    let mut out = Vec::new();
    for other in c.environments.iter().skip(1) {
        let mine: Vec<&crate::compare::MetricComparison> = c
            .metrics
            .iter()
            .filter(|m| m.primary && m.environment == other.label)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let bars: Vec<Bar> = mine
            .iter()
            .map(|m| {
                // the whisker the colour reads: the verdict's interval
                let (lo, hi) = m.verdict_ci();
                Bar {
                    label: m.key.clone(),
                    value: m.speedup(),
                    lo,
                    hi,
                    color: verdict_color(m.verdict).into(),
                }
            })
            .collect();
        let title = format!(
            "Speed-up of {} over {} (headline metric per case, the verdict's interval)",
            other.label, c.baseline
        );
        let svg = speedup_bars(
            &title,
            &format!(
                "speed-up, log scale; > 1x: {} faster; grey band: a tie within ±{} %\n\
                 green faster, vermillion slower, grey tie, blue unclear",
                other.label,
                c.threshold * 100.0
            ),
            &bars,
            c.threshold,
        );
        // the interval a verdict rests on, where the control for multiple
        // comparisons widened it, in columns of its own
        let widened = mine.iter().any(|m| m.widened_ci().is_some());
        let mut titles = vec!["case", "metric", ">speed-up", ">low", ">high"];
        if widened {
            titles.extend([">widened low", ">widened high"]);
        }
        titles.extend(["verdict", ">within"]);
        let mut t = Table::new(&titles);
        for m in &mine {
            let (lo, hi) = m.speedup_ci();
            let mut row = vec![
                m.key.clone(),
                m.metric.clone(),
                format_value(m.speedup()),
                format_value(lo),
                format_value(hi),
            ];
            if widened {
                let wide = m.widened_ci();
                row.extend([
                    wide.map_or(String::new(), |w| format_value(w.0)),
                    wide.map_or(String::new(), |w| format_value(w.1)),
                ]);
            }
            row.extend([
                m.verdict.word().to_string(),
                format!("{:.4}", m.verdict_bound()),
            ]);
            t.rows.push(row);
        }
        let suffix = if c.environments.len() > 2 {
            format!("-{}", other.label)
        } else {
            String::new()
        };
        out.push(Figure {
            family: "all".into(),
            name: crate::units::file_safe(&format!("speedup{suffix}")),
            title,
            svg: Some(svg),
            table: Some(t),
        });
    }
    out
}

/// The longest name [`unique_names`] leaves as it is: with `.svg` it is
/// the 255 bytes a file name may have.
const MAX_NAME: usize = 251;

/// What a longer name is cut to, leaving room for a number.
const CUT_NAME: usize = 240;

/// Gives every figure a file name no other has, deterministically: a name
/// an earlier figure has (labels `a b` and `a_b` both make
/// `speedup-a_b`), or has but for case (one file on a case-insensitive
/// filesystem), gets the first of `-2`, `-3` ... that is no figure's own
/// name and not given yet, so that a label `a_b-2` keeps `speedup-a_b-2`.
/// A name too long for a file is cut first. Returns each renamed figure's
/// title with its new name, for `compare` to list.
pub(crate) fn unique_names(figures: &mut [Figure]) -> Vec<(String, String)> {
    for f in figures.iter_mut().filter(|f| f.name.len() > MAX_NAME) {
        let mut cut = CUT_NAME;
        while !f.name.is_char_boundary(cut) {
            cut -= 1;
        }
        f.name.truncate(cut);
    }
    let key = |n: &str| n.to_lowercase();
    let own: std::collections::BTreeSet<String> = figures.iter().map(|f| key(&f.name)).collect();
    let mut given = std::collections::BTreeSet::new();
    let mut renamed = Vec::new();
    for f in figures {
        if given.insert(key(&f.name)) {
            continue;
        }
        let name = (2..)
            .map(|n| format!("{}-{n}", f.name))
            .find(|c| !own.contains(&key(c)) && !given.contains(&key(c)))
            .expect("invariant: some number is free");
        given.insert(key(&name));
        renamed.push((f.title.clone(), name.clone()));
        f.name = name;
    }
    renamed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(names: &[&str]) -> Vec<Figure> {
        names
            .iter()
            .map(|n| Figure {
                family: "all".into(),
                name: (*n).into(),
                title: format!("title of {n}"),
                svg: None,
                table: None,
            })
            .collect()
    }

    #[test]
    fn every_figure_gets_a_name_no_other_has() {
        // `a b` and `a_b` both make speedup-a_b; a label a_b-2 keeps its name
        let mut f = named(&["speedup-a_b", "speedup-a_b", "speedup-a_b-2", "x", "x", "x"]);
        let renamed = unique_names(&mut f);
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "speedup-a_b",
                "speedup-a_b-3",
                "speedup-a_b-2",
                "x",
                "x-2",
                "x-3"
            ]
        );
        assert_eq!(
            renamed,
            [
                (
                    "title of speedup-a_b".to_string(),
                    "speedup-a_b-3".to_string()
                ),
                ("title of x".into(), "x-2".into()),
                ("title of x".into(), "x-3".into()),
            ]
        );
        // names alike but for case are one file on a case-insensitive filesystem
        let mut f = named(&["speedup-VM", "speedup-vm"]);
        unique_names(&mut f);
        assert_eq!(f[1].name, "speedup-vm-2");
        // a name too long for a file is shortened, and still unique
        let long = format!("fam.b-{}", "k".repeat(300));
        let mut f = named(&[&long, &long]);
        unique_names(&mut f);
        assert!(
            f.iter().all(|f| f.name.len() + ".svg".len() <= 255),
            "{f:?}"
        );
        assert_ne!(f[0].name, f[1].name);
    }
}
