//! Every format of a recorded comparison reads one way, and every verdict
//! agrees with the interval printed beside it.
//!
//! Each comparison the docs show (tests/fixtures/docs) and each recorded
//! pair of tests/fixtures/compare is written as terminal text, Markdown,
//! HTML, CSV and JSON. In every table a person reads, each figure is a
//! speed-up (> 1: faster than the baseline) that agrees with its verdict's
//! word and with `compare`'s own ratio (the JSON's other / base, turned
//! round where lower is better); no column or sentence calls a number a
//! "ratio"; and each verdict agrees with the last interval of its row (the
//! widened one where the control for multiple comparisons widened it) and
//! the band: faster or slower wholly beyond it, tie wholly inside, unclear
//! across an edge.

use crate::common::output;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The recorded comparisons, as `compare` arguments.
fn recorded() -> Vec<Vec<String>> {
    let docs = |f: &str| format!("tests/fixtures/docs/{f}");
    let mut out = vec![
        vec![
            "--by-dir".into(),
            docs("fuse-1.json"),
            docs("fuse-2.json"),
            "--baseline".into(),
            "local".into(),
        ],
        vec![
            "--by-dir".into(),
            docs("cmd-fuse.json"),
            "--baseline".into(),
            "local".into(),
        ],
        vec![
            "--base".into(),
            docs("gvisor-host.json"),
            "--other".into(),
            docs("gvisor-gvisor.json"),
        ],
    ];
    for pair in [
        "1cpu",
        "aa",
        "bindfs",
        "container",
        "gvisor",
        "i1cpu",
        "iaa",
        "igvisor",
        "namespaces",
        "quota",
        "quota-wild",
        "strace",
    ] {
        out.push(vec![
            "--base".into(),
            format!("tests/fixtures/compare/{pair}-a.json"),
            "--other".into(),
            format!("tests/fixtures/compare/{pair}-b.json"),
        ]);
    }
    out
}

/// The standard output of `envbench compare ARGS`, run from the repository
/// with an empty history.
fn compare(args: &[String], home: &Path) -> String {
    let mut all = vec!["compare".to_string()];
    all.extend(args.iter().cloned());
    all.extend(["--color".to_string(), "never".to_string()]);
    output::stdout_of(&all, home)
}

/// Whether `verdict` agrees with the speed-up interval `(lo, hi)` and the
/// band ±`t`, numbers being known to a relative `eps` (printed ones to 4
/// significant digits).
fn agrees(verdict: &str, (lo, hi): (f64, f64), t: f64, eps: f64) -> bool {
    let (down, up) = (1.0 - t, 1.0 + t);
    let above = |v: f64, edge: f64| v > edge * (1.0 - eps);
    let below = |v: f64, edge: f64| v < edge * (1.0 + eps);
    match verdict {
        "faster" => above(lo, up),
        "slower" => below(hi, down),
        "tie" => above(lo, down) && below(hi, up),
        // clearly none of the others
        "unclear" => {
            let faster = lo > up * (1.0 + eps);
            let slower = hi < down * (1.0 - eps);
            let tie = lo > down * (1.0 + eps) && hi < up * (1.0 - eps);
            !(faster || slower || tie)
        }
        v => panic!("no verdict {v:?}"),
    }
}

/// Whether the speed-up `s` reads the way `verdict` says.
fn reads_as(verdict: &str, s: f64) -> bool {
    match verdict {
        "faster" => s > 1.0,
        "slower" => s < 1.0,
        _ => s.is_finite() && s > 0.0,
    }
}

/// A table: its column titles and rows of cells.
#[derive(Debug)]
struct Table {
    titles: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn col(&self, title: &str) -> Option<usize> {
        self.titles.iter().position(|t| t == title)
    }
}

/// "0.4078 .. 0.6582".
fn interval(cell: &str) -> (f64, f64) {
    let (lo, hi) = cell
        .split_once(" .. ")
        .unwrap_or_else(|| panic!("not an interval: {cell:?}"));
    (lo.trim().parse().unwrap(), hi.trim().parse().unwrap())
}

/// What the comparison computed, per (environment, case, metric): the
/// speed-up from the JSON's ratio (other / base, turned round where lower
/// is better) and the verdict.
struct Computed {
    threshold: f64,
    baseline: String,
    speedup: BTreeMap<(String, String, String), (f64, String, bool)>,
}

fn computed(json: &Value) -> Computed {
    let mut speedup = BTreeMap::new();
    for m in json["metrics"].as_array().unwrap() {
        let ratio = m["ratio"].as_f64().unwrap();
        let s = match m["direction"].as_str().unwrap() {
            "higher_is_better" => ratio,
            "lower_is_better" => 1.0 / ratio,
            d => panic!("direction {d}"),
        };
        let key = (
            m["environment"].as_str().unwrap().to_string(),
            m["key"].as_str().unwrap().to_string(),
            m["metric"].as_str().unwrap().to_string(),
        );
        let verdict = m["verdict"].as_str().unwrap().to_string();
        speedup.insert(key, (s, verdict, m["primary"].as_bool().unwrap()));
    }
    Computed {
        threshold: json["threshold"].as_f64().unwrap(),
        baseline: json["baseline"].as_str().unwrap().to_string(),
        speedup,
    }
}

impl Computed {
    /// The speed-up and verdict of the row `(env, case, metric)`; `env` or
    /// `metric` None where the table has no such column (one environment;
    /// headline metrics only, the first of the case's).
    fn find(&self, env: Option<&str>, case: &str, metric: Option<&str>) -> (f64, &str) {
        let hits: Vec<_> = self
            .speedup
            .iter()
            .filter(|((e, k, m), (_, _, primary))| {
                k == case && env.is_none_or(|x| x == e) && metric.map_or(*primary, |x| x == m)
            })
            .collect();
        assert_eq!(hits.len(), 1, "{env:?} {case} {metric:?}: {hits:?}");
        let first = hits[0];
        (first.1 .0, &first.1 .1)
    }
}

/// Holds every row of a table that has a speed-up column: the speed-up
/// the comparison computed, read the verdict's way; the verdict (given, or
/// `implied` where the table has none) agreeing with the row's last
/// interval. Returns the rows checked.
fn check_rows(t: &Table, c: &Computed, implied: Option<&str>, what: &str) -> usize {
    let Some(speed) = t.col("speed-up") else {
        return 0;
    };
    let plain = t
        .col("95% interval")
        .expect("an interval beside a speed-up");
    let wide = t.col("widened interval");
    let verdict_col = t.col("verdict");
    let (env_col, metric_col) = (t.col("environment"), t.col("metric"));
    for row in &t.rows {
        let case = row[0].trim_end_matches(" !");
        let verdict = match (verdict_col, implied) {
            (Some(v), _) => row[v].as_str(),
            (None, Some(v)) => v,
            (None, None) => panic!("{what}: neither a verdict nor one implied"),
        };
        assert!(!verdict.contains('*'), "{what}: {row:?}");
        let s: f64 = row[speed]
            .parse()
            .unwrap_or_else(|_| panic!("{what}: a speed-up is a plain number: {row:?}"));
        assert!(
            reads_as(verdict, s),
            "{what}: {s} is not {verdict}: {row:?}"
        );
        let metric = metric_col.map(|m| row[m].trim_end_matches(" (secondary)"));
        let (want, judged) = c.find(env_col.map(|e| row[e].as_str()), case, metric);
        assert!(
            (s / want - 1.0).abs() < 1e-3,
            "{what}: speed-up {s} where compare found {want}: {row:?}"
        );
        assert_eq!(verdict, judged, "{what}: {row:?}");
        let rests = match wide.map(|w| row[w].as_str()).filter(|w| !w.is_empty()) {
            Some(w) => interval(w),
            None => interval(&row[plain]),
        };
        assert!(
            agrees(verdict, rests, c.threshold, 1e-3),
            "{what}: {verdict} against {rests:?} and ±{} %: {row:?}",
            c.threshold * 100.0
        );
        assert!(
            interval(&row[plain]).0 <= s * 1.001 && s <= interval(&row[plain]).1 * 1.001,
            "{what}: {row:?}"
        );
    }
    t.rows.len()
}

/// The families table's geometric means: plain speed-ups ("0.1575", never
/// "0.1575x"), the overall one read as the conclusions say it.
fn check_families(t: &Table, conclusions: &str, what: &str) {
    let Some(col) = t.col("speed-up (geomean)") else {
        return;
    };
    for row in &t.rows {
        let s: f64 = row[col]
            .parse()
            .unwrap_or_else(|_| panic!("{what}: a plain speed-up: {row:?}"));
        if row[0] == "overall" {
            // "overall: geometric mean 6.3x slower over 8 cases", or after
            // what no case showed: "...; geometric mean 12 % slower: ..."
            let line = conclusions
                .lines()
                .find(|l| l.contains("overall:") && l.contains("geometric mean"))
                .unwrap_or_else(|| panic!("{what}: no overall line"));
            let said: Vec<&str> = line
                .split("geometric mean")
                .nth(1)
                .unwrap()
                .split_whitespace()
                .take(3)
                .collect();
            if said.iter().any(|w| w.starts_with("slower")) {
                assert!(s < 1.0, "{what}: {s} beside {line}");
            } else if said.iter().any(|w| w.starts_with("faster")) {
                assert!(s > 1.0, "{what}: {s} beside {line}");
            } else {
                panic!("{what}: no direction in {line}");
            }
        }
    }
}

/// A grid's cells are words ("3.0 % slower, unclear"), never the seeds'
/// signed variation ("+3.0 % unclear").
fn check_no_signed_percent(t: &Table, what: &str) {
    for row in &t.rows {
        for cell in row {
            let signed = (cell.starts_with('+') || cell.starts_with('-'))
                && cell.contains(" %")
                && cell[1..].starts_with(|c: char| c.is_ascii_digit());
            assert!(!signed, "{what}: a signed percentage {cell:?} in {row:?}");
        }
    }
}

/// No title, cell or sentence calls a number a ratio.
fn check_no_ratio(text: &str, what: &str) {
    for (i, line) in text.lines().enumerate() {
        let l = line.to_lowercase();
        // words, so that "operations" passes and "ratio_ci_low" does not
        let named = l
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| matches!(w, "ratio" | "ratios" | "variation"));
        assert!(!named, "{what}:{}: {line}", i + 1);
    }
}

/// The cells of one CSV line: quoted ones may hold commas, `""` a quote.
fn csv_cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// The Markdown document's tables.
fn markdown_tables(md: &str) -> Vec<Table> {
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_start_matches('|')
            .trim_end_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut out = Vec::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with('|') && lines.get(i + 1).is_some_and(|l| l.starts_with("|---")) {
            let titles = cells(lines[i]);
            let mut rows = Vec::new();
            i += 2;
            while i < lines.len() && lines[i].starts_with('|') {
                rows.push(cells(lines[i]));
                i += 1;
            }
            out.push(Table { titles, rows });
        } else {
            i += 1;
        }
    }
    out
}

/// Text of an HTML fragment: tags dropped, entities read.
fn html_text(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for ch in s.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The HTML page's tables.
fn html_tables(html: &str) -> Vec<Table> {
    let cells = |row: &str, tag: &str| -> Vec<String> {
        row.split(&format!("<{tag}"))
            .skip(1)
            .map(|c| {
                let body = &c[c.find('>').unwrap() + 1..];
                html_text(&body[..body.find(&format!("</{tag}>")).unwrap()])
            })
            .collect()
    };
    html.split("<table>")
        .skip(1)
        .map(|t| {
            let t = &t[..t.find("</table>").unwrap()];
            let mut rows = t.split("<tr").skip(1);
            let titles = cells(rows.next().unwrap(), "th");
            Table {
                titles,
                rows: rows.map(|r| cells(r, "td")).collect(),
            }
        })
        .collect()
}

/// The terminal's Cases rows: case, speed-up, 95 % interval, the widened
/// one where there is one, the verdict.
fn terminal_cases(text: &str, many: bool) -> Table {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("Cases:"));
    lines.next();
    let header = lines.next().expect("the cases' header");
    let widened = header.contains("widened interval");
    let mut titles: Vec<String> = vec!["case".into()];
    if many {
        titles.push("environment".into());
    }
    titles.extend(["speed-up".into(), "95% interval".into()]);
    if widened {
        titles.push("widened interval".into());
    }
    titles.push("verdict".into());
    let mut rows = Vec::new();
    for line in lines {
        // a suspect case's " !" is part of its key's cell
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if words.get(1) == Some(&"!") {
            words.remove(1);
        }
        let Some(v) = words
            .iter()
            .position(|w| matches!(*w, "faster" | "slower" | "tie" | "unclear"))
        else {
            break;
        };
        // case [environment] speed-up lo .. hi [lo .. hi] verdict
        let mut row = vec![words[0].to_string()];
        let mut at = 1;
        if many {
            row.push(words[1].to_string());
            at = 2;
        }
        row.push(words[at].to_string());
        let rest = &words[at + 1..v];
        row.push(rest[..3].join(" "));
        if widened {
            row.push(if rest.len() > 3 {
                rest[3..].join(" ")
            } else {
                String::new()
            });
        }
        row.push(words[v].to_string());
        rows.push(row);
    }
    Table { titles, rows }
}

#[test]
fn every_format_of_every_recorded_comparison_reads_as_speed_ups_its_verdicts_agree_with() {
    let home = tempfile::tempdir().unwrap();
    let (mut rows_checked, mut widened_seen) = (0, 0);
    for args in recorded() {
        let dir = tempfile::tempdir().unwrap();
        let file = |ext: &str| dir.path().join(format!("c.{ext}"));
        let mut files = args.clone();
        for ext in ["csv", "html", "json"] {
            files.push(format!("--{ext}"));
            files.push(file(ext).display().to_string());
        }
        files.extend([
            "--markdown".into(),
            "--all-metrics".into(),
            "--verbose".into(),
        ]);
        let md = compare(&files, home.path());
        let name = args.join(" ");
        let json: Value = serde_json::from_slice(&std::fs::read(file("json")).unwrap()).unwrap();
        let c = computed(&json);
        let many = json["environments"].as_array().unwrap().len() > 2;

        // CSV: speed-ups in full precision, the verdict's interval beside
        let csv = std::fs::read_to_string(file("csv")).unwrap();
        check_no_ratio(csv.lines().next().unwrap(), &format!("{name}: csv header"));
        let mut reader = csv.lines();
        let titles: Vec<&str> = reader.next().unwrap().split(',').collect();
        let at = |t: &str| titles.iter().position(|x| *x == t).unwrap();
        for line in reader {
            let cells = csv_cells(line);
            let num = |t: &str| cells[at(t)].parse::<f64>().ok();
            let (env, case, metric) = (&cells[0], &cells[2], &cells[4]);
            let (want, judged) = c.find(Some(env), case, Some(metric));
            let s = num("speed_up").unwrap();
            let verdict = cells[at("verdict")].as_str();
            assert!((s / want - 1.0).abs() < 1e-12, "{name}: csv {line}");
            assert_eq!(verdict, judged, "{name}: csv {line}");
            assert!(reads_as(verdict, s), "{name}: csv {line}");
            let plain = (
                num("speed_up_ci_low").unwrap(),
                num("speed_up_ci_high").unwrap(),
            );
            let rests = match (
                num("speed_up_ci_adjusted_low"),
                num("speed_up_ci_adjusted_high"),
            ) {
                (Some(lo), Some(hi)) => {
                    widened_seen += 1;
                    (lo, hi)
                }
                _ => plain,
            };
            assert!(
                agrees(verdict, rests, c.threshold, 1e-12),
                "{name}: csv {verdict} against {rests:?}: {line}"
            );
            rows_checked += 1;
        }

        // Markdown: the cases (all metrics), the families, the unclear
        // cases' spread, the views' grids
        check_no_ratio(&md, &format!("{name}: markdown"));
        for t in markdown_tables(&md) {
            let implied = t.col("verdict").is_none().then_some("unclear");
            rows_checked += check_rows(&t, &c, implied, &format!("{name}: markdown"));
            check_families(&t, &md, &format!("{name}: markdown"));
            check_no_signed_percent(&t, &format!("{name}: markdown"));
        }

        // HTML: every table, and no ratio in its words
        let html = std::fs::read_to_string(file("html")).unwrap();
        let body = &html[html.find("<body").unwrap()..];
        check_no_ratio(&html_text(body), &format!("{name}: html"));
        for t in html_tables(body) {
            let implied = t.col("verdict").is_none().then_some("unclear");
            rows_checked += check_rows(&t, &c, implied, &format!("{name}: html"));
            check_families(&t, &md, &format!("{name}: html"));
            check_no_signed_percent(&t, &format!("{name}: html"));
        }

        // terminal, as a person runs it, and with everything
        for extra in [&[][..], &["--verbose".to_string()][..]] {
            let mut a = args.clone();
            a.extend(extra.iter().cloned());
            let text = compare(&a, home.path());
            check_no_ratio(&text, &format!("{name}: terminal"));
            assert!(text.contains(&format!("speed-up > 1: faster than {}", c.baseline)));
            let cases = terminal_cases(&text, many);
            assert!(!cases.rows.is_empty(), "{name}: no cases in\n{text}");
            rows_checked += check_rows(&cases, &c, None, &format!("{name}: terminal"));
        }
    }
    // the checks above ran, on rows whose verdict rests on a widened interval too
    assert!(rows_checked > 1000, "{rows_checked}");
    assert!(widened_seen > 0);
}
