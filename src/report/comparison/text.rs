//! `envbench compare` output: the comparison as tables (terminal,
//! Markdown, CSV) and the text around them. Deterministic: no timestamps,
//! fixed precision.

use crate::compare::{Comparison, Environment, MetricComparison, Verdict};
use crate::report::comparison::{conclude, warning, Report};
use crate::report::words::{basis_text, bound_text};
use crate::report::{fingerprint, render_markdown, render_text, Table};
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

/// The verdict's word, coloured on request: faster green, slower red,
/// tie dim, unclear yellow.
pub(crate) fn verdict_cell(v: Verdict, color: bool) -> String {
    let code = match v {
        Verdict::Faster => "32",
        Verdict::Slower => "31",
        Verdict::Tie => "2",
        Verdict::Unclear => "33",
    };
    if color {
        format!("\x1b[{code}m{}\x1b[0m", v.word())
    } else {
        v.word().to_string()
    }
}

/// Environments and their runs.
pub(crate) fn environments_table(c: &Comparison) -> Table {
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
pub(crate) fn fingerprint_table(envs: &[Environment]) -> Table {
    let mut titles = vec!["field".to_string()];
    titles.extend(envs.iter().map(|e| e.label.clone()));
    let refs: Vec<&str> = titles.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    for row in fingerprint::rows(envs) {
        let mut cells = vec![if row.differs {
            format!("{} *", row.field)
        } else {
            row.field
        }];
        cells.extend(row.values);
        t.rows.push(cells);
    }
    t
}

/// Geometric mean speed-up and outcome counts per family and environment.
pub(crate) fn summary_table(c: &Comparison) -> Table {
    let mut titles = vec![
        "family",
        "environment",
        ">speed-up (geomean)",
        ">faster",
        ">slower",
        ">tie",
        ">unclear",
    ];
    // validity (#15): suspect cases are counted in their own column
    let suspect = c.families.iter().any(|f| f.suspect > 0);
    if suspect {
        titles.push(if c.exclude_suspect {
            ">suspect (left out)"
        } else {
            ">suspect (counted)"
        });
    }
    let mut t = Table::new(&titles);
    for f in &c.families {
        t.rows.push(vec![
            f.family.clone(),
            f.environment.clone(),
            if f.geomean_speedup.is_finite() {
                format_value(f.geomean_speedup)
            } else {
                "-".into()
            },
            f.faster.to_string(),
            f.slower.to_string(),
            f.tie.to_string(),
            f.unclear.to_string(),
        ]);
        if suspect {
            t.rows
                .last_mut()
                .expect("invariant: pushed just above")
                .push(f.suspect.to_string());
        }
    }
    t
}

fn interval(ci: (f64, f64)) -> String {
    format!("{} .. {}", format_value(ci.0), format_value(ci.1))
}

/// The interval columns of a table's rows: the speed-up's 95 % interval,
/// and, where the control for multiple comparisons widened the interval a
/// row's verdict rests on, that one in a column of its own ("widened
/// interval", empty in the other rows). Whatever a verdict says, the last
/// interval in its row says too.
pub(crate) struct Intervals {
    /// Whether a row has a widened interval, so the column is there.
    widened: bool,
}

impl Intervals {
    /// The interval columns of `rows`.
    pub(crate) fn of<'a>(rows: impl IntoIterator<Item = &'a MetricComparison>) -> Intervals {
        Intervals {
            widened: rows.into_iter().any(|m| m.widened_ci().is_some()),
        }
    }

    /// The columns' titles.
    pub(crate) fn titles(&self) -> &'static [&'static str] {
        if self.widened {
            &[">95% interval", ">widened interval"]
        } else {
            &[">95% interval"]
        }
    }

    /// The cells of `m`'s row.
    pub(crate) fn cells(&self, m: &MetricComparison) -> Vec<String> {
        let mut out = vec![interval(m.speedup_ci())];
        if self.widened {
            out.push(m.widened_ci().map_or(String::new(), interval));
        }
        out
    }
}

/// The metrics a table shows: the headline ones, or all; of one family,
/// or of every family.
fn shown_metrics<'a>(
    c: &'a Comparison,
    all: bool,
    family: Option<&str>,
) -> Vec<&'a MetricComparison> {
    c.metrics
        .iter()
        .filter(|m| (all || m.primary) && family.is_none_or(|f| m.family == f))
        .collect()
}

/// Metric comparisons: headline metrics only, or every metric with
/// secondary ones marked; of one family, or of all.
pub(crate) fn metrics_table(c: &Comparison, color: bool, all: bool, family: Option<&str>) -> Table {
    let shown = shown_metrics(c, all, family);
    let intervals = Intervals::of(shown.iter().copied());
    let mut titles = vec![
        "case",
        "metric",
        "environment",
        ">baseline",
        ">other",
        "unit",
        ">speed-up",
    ];
    titles.extend(intervals.titles());
    titles.push("verdict");
    let mut t = Table::new(&titles);
    for m in shown {
        let verdict = verdict_cell(m.verdict, color);
        let mut row = vec![
            // validity (#15): a suspect case is marked
            if m.suspect.is_empty() {
                m.key.clone()
            } else {
                format!("{} !", m.key)
            },
            if m.primary {
                m.metric.clone()
            } else {
                format!("{} (secondary)", m.metric)
            },
            m.environment.clone(),
            format_value(m.base_value),
            format_value(m.other_value),
            m.unit.symbol().to_string(),
            format_value(m.speedup()),
        ];
        row.extend(intervals.cells(m));
        row.push(verdict);
        t.rows.push(row);
    }
    t
}

fn percent(share: Option<f64>) -> String {
    share.map_or("-".into(), |s| format!("{:.0}", s * 100.0))
}

/// Unclear headline metrics: where their spread comes from and how many
/// runs per side would resolve them.
pub(crate) fn unclear_table(c: &Comparison) -> Table {
    let unclear: Vec<&MetricComparison> = c
        .metrics
        .iter()
        .filter(|m| m.primary && m.verdict == Verdict::Unclear)
        .collect();
    let intervals = Intervals::of(unclear.iter().copied());
    let mut titles = vec!["case", "environment", ">speed-up"];
    titles.extend(intervals.titles());
    titles.extend(["basis", ">runs %", ">rounds %", ">reps %", ">runs needed"]);
    let mut t = Table::new(&titles);
    for m in unclear {
        let shares = m.variance.shares.unwrap_or([None; 3]);
        let mut row = vec![
            m.key.clone(),
            m.environment.clone(),
            format_value(m.speedup()),
        ];
        row.extend(intervals.cells(m));
        row.extend([
            basis_text(&m.basis),
            percent(shares[0]),
            percent(shares[1]),
            percent(shares[2]),
            runs_needed(m),
        ]);
        t.rows.push(row);
    }
    t
}

fn runs_needed(m: &MetricComparison) -> String {
    match (m.runs_needed, m.basis.runs.0.min(m.basis.runs.1)) {
        (Some(n), _) => n.to_string(),
        // one run a side apart: its spread between runs is unmeasured
        (None, 1) if !m.basis.run_spread.0.is_paired() => ">= 3".into(),
        (None, _) => format!("> {}", crate::compare::MAX_ADVISED_RUNS),
    }
}

/// How [`render`] writes tables, headings and list items.
struct Writer {
    table: fn(&Table) -> String,
    heading: fn(&str) -> String,
    bullet: &'static str,
    color: bool,
    /// Sentences wrapped at [`crate::terminal::TEXT_WIDTH`] (the terminal).
    wrapped: bool,
}

impl Writer {
    /// One list item, wrapped with a hanging indent in the terminal.
    fn item(&self, s: &str) -> String {
        if self.wrapped {
            crate::terminal::wrap(s, crate::terminal::TEXT_WIDTH, self.bullet, "      ")
        } else {
            format!("{}{s}\n", self.bullet)
        }
    }
}

/// The method in one paragraph, for the heading of the cases table.
pub(crate) fn method_note(c: &Comparison) -> String {
    let levels = if c.interleaved() {
        "the differences of rounds measured side by side (interleaved), between rounds and \
         between runs"
            .to_string()
    } else if c.between_run {
        "runs, rounds and repetitions".to_string()
    } else {
        format!(
            "rounds and repetitions, with an assumed {:.0} % spread between runs for a side with one run",
            c.assumed_run_sd * 100.0
        )
    };
    let suspect = if c.metrics.iter().any(|m| !m.suspect.is_empty()) {
        if c.exclude_suspect {
            " ! marks a suspect case (see the warnings); it is left out of the geometric means."
        } else {
            " ! marks a suspect case (see the warnings); it counts in the geometric means."
        }
    } else {
        ""
    };
    format!(
        "speed-up = {b} / other where lower is better (times), other / {b} where higher is \
         better (rates): above 1 faster than {b}, below 1 slower. Intervals: hierarchical bootstrap over \
         {levels}. faster/slower: the whole interval beyond ±{thr:.0} %; tie: the whole 95 % \
         interval inside it; unclear: it straddles an edge. Headline metrics are controlled for \
         multiple comparisons (false discovery rate {fdr}); where that widened the interval a \
         verdict rests on, the wider one follows the 95 % one as the \"widened interval\", \
         and the verdict reads it.{suspect}",
        b = c.baseline,
        fdr = c.fdr,
        thr = c.threshold * 100.0
    )
}

/// How much of the comparison [`render`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Detail {
    /// Secondary metrics in the cases table, and each family's views as tables.
    pub all_metrics: bool,
    /// Everything else: each warning in full, the method, the environments
    /// and fingerprints side by side, the spread of unclear cases.
    pub verbose: bool,
}

/// The first line: who is compared with whom, on how many runs.
pub(crate) fn headline(c: &Comparison) -> String {
    let others = c.other_labels();
    let runs: Vec<String> = c
        .environments
        .iter()
        .map(|e| e.runs.len().to_string())
        .collect();
    let sides = &c.environments[1..];
    let (paired, compared) = sides.iter().fold((0, 0), |(p, n), e| {
        (p + e.paired_cases, n + e.compared_cases)
    });
    let whole = sides
        .iter()
        .all(|e| !e.interleaved || e.paired_cases == e.compared_cases);
    // "rounds paired" only for the cases that were
    let how = if paired == 0 {
        String::new()
    } else if !whole {
        format!(", interleaved: rounds paired in {paired} of {compared} cases")
    } else if c.interleaved() {
        ", interleaved: rounds paired".into()
    } else {
        ", some interleaved: rounds paired".into()
    };
    format!(
        "{} against {} ({} runs{how}); speed-up > 1: faster than {}",
        others.join(", "),
        c.baseline,
        runs.join(" vs "),
        c.baseline
    )
}

/// One row per case (per metric with `all`): the speed-up (> 1: faster
/// than the baseline), its 95 % interval and the widened one a verdict
/// rests on ([`Intervals`]), the verdict, and for cases not called faster
/// or slower the largest difference the verdict's interval allows.
pub(crate) fn cases_table(c: &Comparison, color: bool, all: bool, family: Option<&str>) -> Table {
    let many = c.environments.len() > 2;
    let mut titles = vec!["case"];
    if all {
        titles.push("metric");
    }
    if many {
        titles.push("environment");
    }
    let shown = shown_metrics(c, all, family);
    let intervals = Intervals::of(shown.iter().copied());
    titles.push(">speed-up");
    titles.extend(intervals.titles());
    titles.extend(["verdict", ">within"]);
    let mut t = Table::new(&titles);
    for m in shown {
        let mut row = vec![if m.suspect.is_empty() {
            m.key.clone()
        } else {
            format!("{} !", m.key)
        }];
        if all {
            row.push(if m.primary {
                m.metric.clone()
            } else {
                format!("{} (secondary)", m.metric)
            });
        }
        if many {
            row.push(m.environment.clone());
        }
        let verdict = verdict_cell(m.verdict, color);
        row.push(format_value(m.speedup()));
        row.extend(intervals.cells(m));
        row.extend([
            verdict,
            if matches!(m.verdict, Verdict::Faster | Verdict::Slower) {
                String::new()
            } else {
                bound_text(m.verdict_bound())
            },
        ]);
        t.rows.push(row);
    }
    t
}

/// The whole comparison as text or Markdown: the conclusions first, then
/// the cases, then the warnings and the advice; the rest as `detail` asks.
pub fn render(r: &Report, style: Style, detail: Detail) -> String {
    let c = r.comparison;
    let w = match style {
        Style::Text { color } => Writer {
            table: render_text,
            heading: |h| format!("{h}\n"),
            bullet: "  ",
            color,
            wrapped: true,
        },
        Style::Markdown => Writer {
            table: render_markdown,
            heading: |h| format!("\n## {h}\n\n"),
            bullet: "- ",
            color: false,
            wrapped: false,
        },
    };
    let (table, heading) = (w.table, w.heading);
    let list = |items: &[String]| -> String { items.iter().map(|i| w.item(i)).collect() };
    // the terminal's first line names the comparison and heads its
    // conclusions, so that they and every case fit one screen
    let mut out = match style {
        Style::Markdown => format!("# {}\n", headline(c)) + &heading("Conclusions"),
        Style::Text { .. } => format!("Conclusions: {}\n", headline(c)),
    };
    out += &list(&conclude::conclusions(c, r.topics));
    out += &heading(&format!(
        "Cases: headline metric{}; within = the largest difference the verdict's interval allows",
        if detail.all_metrics {
            "s and secondary ones"
        } else {
            ""
        }
    ));
    out += &table(&cases_table(c, w.color, detail.all_metrics, None));
    let more = if detail.verbose {
        ""
    } else {
        " (--verbose: each in full)"
    };
    let (lines, advice) = (warning::lines(c), conclude::advice(c));
    if w.wrapped && !lines.is_empty() && !advice.is_empty() {
        // one heading in the terminal, so that a comparison fits a screen
        out += &heading(&format!("Warnings{more}, then advice"));
        out += &list(&lines);
        out += &list(&advice);
    } else {
        if !lines.is_empty() {
            out += &heading(&format!("Warnings{more}"));
            out += &list(&lines);
        }
        if !advice.is_empty() {
            out += &heading("Advice");
            out += &list(&advice);
        }
    }
    if detail.verbose {
        out += &verbose_part(c, r.environments, &w);
    }
    if detail.all_metrics {
        for (title, t) in crate::report::comparison::draw::tables(c, r.environments, r.views) {
            out += &heading(&title);
            out += &table(&t);
        }
    }
    match style {
        Style::Markdown => markdown_text(&out),
        Style::Text { .. } => out,
    }
}

/// Markdown that shows its text rather than running it: `&` and `<` in
/// strings from data (labels, hosts, case keys, fingerprint fields) become
/// entities, so that a label `<script>` is shown on a page that renders
/// the Markdown, never run. envbench's own words hold neither character,
/// so escaping the whole document changes only what came from data; `>`
/// opens nothing without a `<` and stays (`speed-up > 1`). Pipes in table
/// cells are escaped by [`render_markdown`].
fn markdown_text(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;")
}

/// What `--verbose` adds: the method, each warning in full, environments
/// and fingerprints, the family summary and the spread of unclear cases.
fn verbose_part(c: &Comparison, envs: &[Environment], w: &Writer) -> String {
    let (table, heading, bullet) = (w.table, w.heading, w.bullet);
    let mut out = String::new();
    let base = &c.baseline;
    for d in &c.diagnoses {
        for (head, items) in crate::report::comparison::diagnosis::evidence(d, base) {
            if out.is_empty() {
                out += &heading("Likely causes: the signs checked (+ holds, - does not)");
            }
            out += &w.item(&head);
            out += &items
                .iter()
                .map(|i| w.item(&format!("  {i}")))
                .collect::<String>();
        }
    }
    out += &heading("Method");
    out += &w.item(&method_note(c));
    let warnings = warning::warnings(c);
    if !warnings.is_empty() {
        out += &heading("Warnings in full");
        out += &warnings.iter().map(|x| w.item(x)).collect::<String>();
    }
    out += &heading("Families");
    out += &table(&summary_table(c));
    out += &heading("Environments");
    out += &table(&environments_table(c));
    out += &heading("Fingerprints (* differs from the baseline)");
    out += &table(&fingerprint_table(envs));
    let unclear = unclear_table(c);
    if !unclear.rows.is_empty() {
        out += &heading(
            "Unclear cases: share of the spread between runs, rounds and repetitions, and runs per environment that would resolve ±threshold",
        );
        out += &table(&unclear);
    }
    if !c.unmatched.is_empty() {
        out += &heading("Cases in one environment only (not compared)");
        for (env, key) in &c.unmatched {
            out += &format!("{bullet}{env}: {key}\n");
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::compare::tests::{draws, run};
    use crate::compare::{compare, Environment, Options, DEFAULT_THRESHOLD};
    use crate::report::comparison::export::csv::csv_table;
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
                        "cpu.dense[n=1000,threads=1]",
                        "gflops",
                        Direction::HigherIsBetter,
                        draws(&mut rng, 8, cpu, 0.02),
                    ),
                    (
                        "os.create[n=100]",
                        "time_per_process",
                        Direction::LowerIsBetter,
                        draws(&mut rng, 8, lat, 0.02),
                    ),
                    (
                        "os.call[call=getppid]",
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
                earlier: Vec::new(),
            },
            Environment {
                label: "wsl1".into(),
                runs: vec![wsl1],
                earlier: Vec::new(),
            },
        ]
    }

    const OPTS: Options = Options {
        threshold: DEFAULT_THRESHOLD,
        seed: 7,
        exclude_suspect: false,
        prices: &[],
    };

    fn comparison() -> (Comparison, Vec<Environment>) {
        let e = envs();
        (compare(&e, &OPTS).unwrap(), e)
    }

    const NO_TOPICS: &std::collections::BTreeMap<String, String> =
        &std::collections::BTreeMap::new();

    /// The report of `c`, compared from `e`, with no views and no topics.
    pub(crate) fn report<'a>(c: &'a Comparison, e: &'a [Environment]) -> Report<'a> {
        Report {
            comparison: c,
            environments: e,
            views: &[],
            topics: NO_TOPICS,
            all_metrics: false,
            verbose: false,
            color: false,
        }
    }

    #[test]
    fn the_headline_says_which_sides_had_their_rounds_paired() {
        use crate::compare::tests::interleaved::{apart, pair};
        let opts = Options {
            threshold: DEFAULT_THRESHOLD,
            seed: 1,
            exclude_suspect: false,
            prices: &[],
        };
        let mut rng = Rng::new(8);
        let [a, b] = pair(&mut rng, 1, 12, 2, 1.0, &|_| 1.0);
        let both = compare(&[a.clone(), b.clone()], &opts).unwrap();
        assert!(
            headline(&both).starts_with("B against A (1 vs 1 runs, interleaved: rounds paired);")
        );
        // a third environment measured on its own: only B is paired with A
        let [_, mut c] = apart(&pair(&mut rng, 1, 12, 2, 1.0, &|_| 1.0));
        c.label = "C".into();
        for run in &mut c.runs {
            run.label = "C".into();
            run.run_id = "C0".into();
        }
        let three = compare(&[a.clone(), b.clone(), c], &opts).unwrap();
        assert!(
            headline(&three)
                .starts_with("B, C against A (1 vs 1 vs 1 runs, some interleaved: rounds paired);"),
            "{}",
            headline(&three)
        );
        // nothing paired: nothing said
        let [a, b] = apart(&[a, b]);
        let none = compare(&[a, b], &opts).unwrap();
        assert!(headline(&none).starts_with("B against A (1 vs 1 runs);"));
    }

    #[test]
    fn text_report_snapshot() {
        let (c, e) = comparison();
        insta::assert_snapshot!(render(
            &report(&c, &e),
            Style::Text { color: false },
            Detail::default()
        ));
    }

    #[test]
    fn markdown_report_snapshot() {
        let (c, e) = comparison();
        insta::assert_snapshot!(render(
            &report(&c, &e),
            Style::Markdown,
            Detail {
                all_metrics: true,
                verbose: true
            }
        ));
    }

    #[test]
    fn markdown_escapes_markup_and_pipes_from_data() {
        let mut e = envs();
        e[0].label = "<script>alert(1)</script>".into();
        e[1].label = "a|b & <i>c".into();
        for env in &mut e {
            for r in &mut env.runs {
                r.label = env.label.clone();
                r.fingerprint.cpu.model = Some("<b>cpu|x\ny".into());
                r.cases[0].key = "cpu.dense[n=<img>|1]".into();
            }
        }
        let c = compare(&e, &OPTS).unwrap();
        let md = render(
            &report(&c, &e),
            Style::Markdown,
            Detail {
                all_metrics: true,
                verbose: true,
            },
        );
        for raw in ["<script>", "<i>", "<b>", "<img>", " & "] {
            assert!(!md.contains(raw), "{raw} in\n{md}");
        }
        assert!(md.contains("&lt;script>alert(1)&lt;/script>"), "{md}");
        assert!(md.contains("a\\|b &amp; &lt;i>c"), "{md}");
        // every table row has as many cells as its header
        let mut cells = None;
        for line in md.lines() {
            if !line.starts_with('|') {
                cells = None;
                continue;
            }
            let n = line.replace("\\|", "").matches('|').count();
            assert_eq!(*cells.get_or_insert(n), n, "{line}\n{md}");
        }
    }

    #[test]
    fn csv_snapshot() {
        insta::assert_snapshot!(render_csv(&csv_table(&comparison().0)));
    }

    #[test]
    fn json_snapshot() {
        let (c, e) = comparison();
        insta::assert_snapshot!(crate::report::comparison::export::json::document(&report(
            &c, &e
        )));
    }

    #[test]
    fn html_snapshot() {
        let (c, e) = comparison();
        insta::assert_snapshot!(crate::report::comparison::export::html::render(&report(
            &c, &e
        )));
    }

    #[test]
    fn colour_marks_verdicts_only_when_asked() {
        let (c, e) = comparison();
        assert!(render(
            &report(&c, &e),
            Style::Text { color: true },
            Detail::default()
        )
        .contains("\x1b[31mslower\x1b[0m"));
        assert!(!render(
            &report(&c, &e),
            Style::Text { color: false },
            Detail::default()
        )
        .contains('\x1b'));
    }
}
