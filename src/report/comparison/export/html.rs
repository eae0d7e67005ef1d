//! `envbench compare --html FILE`: one self-contained page (inline CSS and
//! SVG, no script, no network) that leads with its conclusions and the
//! speed-up chart, then has a section per family (its conclusion, its
//! cases, its declared views), and keeps the rest (warnings in full,
//! fingerprints, anomalies, the spread of unclear cases, every metric, the
//! method) in collapsed sections.

use super::{Export, Exporter};
use crate::compare::{Comparison, Environment};
use crate::report::comparison::draw::figures;
use crate::report::comparison::figure::{speedup_figures, Figure};
use crate::report::comparison::svg::{esc, STYLE};
use crate::report::comparison::text::{
    cases_table, environments_table, fingerprint_table, headline, method_note, metrics_table,
    summary_table, unclear_table,
};
use crate::report::comparison::Report;
use crate::report::comparison::{conclude, warning};
use crate::report::{Align, Table};

const TEMPLATE: &str = include_str!("../templates/report.html");

/// `compare --html FILE`.
#[derive(Debug)]
pub struct Html;

impl Exporter for Html {
    fn export(&self, r: &Report) -> Export {
        Export::Document(render(r))
    }
}

/// Text for a table cell: escaped, with a break allowed after each comma,
/// opening bracket and equals sign
/// (`fam.bench[<wbr>size=<wbr>2000000,<wbr>threads=<wbr>1]`) so that long
/// case keys wrap there on a phone and never inside a word.
fn cell_text(s: &str) -> String {
    esc(s)
        .replace(',', ",<wbr>")
        .replace('[', "[<wbr>")
        .replace('=', "=<wbr>")
}

/// A number column's text: a narrow screen may wrap it between words
/// (`0.91 ..` above `1.58`) but never inside one (`1.000e-4`, `speed-up`).
fn num_text(s: &str) -> String {
    s.split(' ')
        .map(|w| format!("<span class=\"nb\">{}</span>", esc(w)))
        .collect::<Vec<_>>()
        .join(" ")
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
        let title = if c.align == Align::Right {
            num_text(&c.title)
        } else {
            cell_text(&c.title)
        };
        s += &format!("<th{}>{title}</th>", class(c.align));
    }
    s += "</tr></thead><tbody>";
    for r in &t.rows {
        let diff = r
            .first()
            .is_some_and(|c| c.ends_with(" *") || c.ends_with(" !"));
        s += if diff { "<tr class=\"diff\">" } else { "<tr>" };
        for (cell, col) in r.iter().zip(&t.columns) {
            let v = match cell.as_str() {
                "faster" | "slower" | "tie" | "unclear" => {
                    format!("<span class=\"verdict-{cell}\">{cell}</span>")
                }
                _ if col.align == Align::Right => num_text(cell),
                _ => cell_text(cell),
            };
            s += &format!("<td{}>{v}</td>", class(col.align));
        }
        s += "</tr>";
    }
    s + "</tbody></table></div>"
}

/// A list of lines as `<ul>`.
fn list(items: &[String], class: &str) -> String {
    let mut s = format!("<ul class=\"{class}\">");
    for i in items {
        s += &format!("<li>{}</li>", esc(i));
    }
    s + "</ul>"
}

/// A collapsed section.
fn collapsed(summary: &str, body: &str) -> String {
    format!(
        "<details><summary>{}</summary>{body}</details>",
        esc(summary)
    )
}

/// A figure: its chart, else its table under its title.
fn figure(f: &Figure) -> String {
    match (&f.svg, &f.table) {
        (Some(svg), _) => format!("<figure>{svg}</figure>"),
        (None, Some(t)) => format!("<h3>{}</h3>{}", esc(&f.title), html_table(t)),
        (None, None) => String::new(),
    }
}

/// The families compared, in the order of their first case.
fn families(c: &Comparison) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for m in &c.metrics {
        if !out.contains(&m.family.as_str()) {
            out.push(&m.family);
        }
    }
    out
}

/// Every anomaly of every run, one line each.
fn anomalies(envs: &[Environment]) -> Vec<String> {
    let mut out = Vec::new();
    for e in envs {
        for r in &e.runs {
            for a in &r.anomalies {
                out.push(format!(
                    "{} / {}: {}: {}",
                    e.label, r.run_id, a.kind, a.message
                ));
            }
            for cs in &r.cases {
                for a in &cs.anomalies {
                    out.push(format!(
                        "{} / {} / {}: {}: {}",
                        e.label, r.run_id, cs.key, a.kind, a.message
                    ));
                }
            }
        }
    }
    out
}

/// What follows the family sections, collapsed.
fn details(c: &Comparison, envs: &[Environment]) -> String {
    let mut b = String::new();
    let causes: Vec<(String, Vec<String>)> = c
        .diagnoses
        .iter()
        .flat_map(|d| crate::report::comparison::diagnosis::evidence(d, &c.baseline))
        .collect();
    if !causes.is_empty() {
        let body: String = causes
            .iter()
            .map(|(head, items)| format!("<p>{}</p>{}", esc(head), list(items, "full")))
            .collect();
        b += &collapsed(
            &format!("Likely causes: the signs checked ({})", causes.len()),
            &format!(
                "<p class=\"note\">+ a sign that holds, - one that does not, each rule's source \
                 last.</p>{body}"
            ),
        );
    }
    let warnings = warning::warnings(c);
    if !warnings.is_empty() {
        b += &collapsed(
            &format!("Each warning in full ({})", warnings.len()),
            &list(&warnings, "full"),
        );
    }
    b += &collapsed(
        "Environments and their fingerprints",
        &format!(
            "{}<p class=\"note\">Highlighted rows differ from the baseline.</p>{}",
            html_table(&environments_table(c)),
            html_table(&fingerprint_table(envs))
        ),
    );
    let found = anomalies(envs);
    if !found.is_empty() {
        b += &collapsed(
            &format!("Anomalies in the runs ({})", found.len()),
            &list(&found, "full"),
        );
    }
    let unclear = unclear_table(c);
    if !unclear.rows.is_empty() {
        b += &collapsed(
            &format!(
                "Unclear cases: where the spread comes from ({})",
                unclear.rows.len()
            ),
            &format!(
                "<p class=\"note\">Share of the variance between runs, between rounds and between \
                 repetitions, and the runs per environment that would resolve an effect of the \
                 threshold's size.</p>{}",
                html_table(&unclear)
            ),
        );
    }
    let mut every = html_table(&summary_table(c));
    for f in families(c) {
        every += &format!("<h3>{}</h3>", esc(f));
        every += &html_table(&metrics_table(c, false, true, Some(f)));
    }
    b += &collapsed(&format!("Every metric ({})", c.metrics.len()), &every);
    if !c.unmatched.is_empty() {
        let lines: Vec<String> = c
            .unmatched
            .iter()
            .map(|(e, k)| format!("{e}: {k}"))
            .collect();
        b += &collapsed(
            &format!("Cases in one environment only ({})", lines.len()),
            &list(&lines, "full"),
        );
    }
    b += &collapsed(
        "Method",
        &format!(
            "<p class=\"note\">{} Bootstrap seed {}.</p>",
            esc(&method_note(c)),
            c.seed
        ),
    );
    b
}

/// The report page: conclusions and the speed-up chart first, advice and
/// warnings in a line each, a section per family, the rest collapsed.
pub fn render(r: &Report) -> String {
    let (c, envs) = (r.comparison, r.environments);
    let others = c.other_labels();
    let title = format!("envbench: {} against {}", others.join(", "), c.baseline);
    let mut b = format!(
        "<header><h1>{}</h1><p class=\"sub\">{}</p></header>",
        esc(&title),
        esc(&headline(c))
    );
    b += "<section id=\"conclusions\"><h2>Conclusions</h2>";
    b += &list(&conclude::conclusions(c, r.topics), "conclusions");
    b += "</section><section id=\"speedup\">";
    for f in speedup_figures(c) {
        b += &figure(&f);
    }
    b += "</section>";
    let advice = conclude::advice(c);
    if !advice.is_empty() {
        b += "<section id=\"advice\"><h2>Advice</h2>";
        b += &list(&advice, "advice");
        b += "</section>";
    }
    let lines = warning::lines(c);
    if !lines.is_empty() {
        b += "<section id=\"warnings\"><h2>Warnings</h2>";
        b += &list(&lines, "warnings");
        b += "</section>";
    }
    let all = figures(c, envs, r.views);
    for fam in families(c) {
        b += &format!(
            "<section class=\"family\" id=\"family-{0}\"><h2>{0}</h2>",
            esc(fam)
        );
        b += &list(
            &conclude::family_conclusions(c, r.topics, fam),
            "conclusions",
        );
        b += &html_table(&cases_table(c, false, false, Some(fam)));
        for f in all.iter().filter(|f| f.family == fam) {
            b += &figure(f);
        }
        b += "</section>";
    }
    b += "<section id=\"details\">";
    b += &details(c, envs);
    b += "</section>";
    fill(
        TEMPLATE,
        &[
            ("{{TITLE}}", &esc(&title)),
            ("{{SVG_STYLE}}", STYLE),
            ("{{BODY}}", &b),
        ],
    )
}

/// `template` with each placeholder replaced once, in one pass: a value is
/// never searched again, so a label `{{BODY}}` in the title stays text.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out += &rest[..at];
        rest = &rest[at..];
        match values.iter().find(|(k, _)| rest.starts_with(k)) {
            Some((k, v)) => {
                out += v;
                rest = &rest[k.len()..];
            }
            None => {
                out += "{{";
                rest = &rest[2..];
            }
        }
    }
    out + rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_inside_a_value_stays_text() {
        let t = "<title>{{TITLE}}</title>{{BODY}}{{OTHER}}";
        let got = fill(t, &[("{{TITLE}}", "{{BODY}}"), ("{{BODY}}", "<p>x</p>")]);
        assert_eq!(got, "<title>{{BODY}}</title><p>x</p>{{OTHER}}");
    }
}
