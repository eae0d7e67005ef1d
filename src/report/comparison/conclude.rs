//! What a comparison concludes, in the studies' manner: one sentence per
//! family with the factor range and the cases that carry it ("os: B slower
//! in 8 of 8 cases, 3.5x to 400x: system calls (222x, 400x), pipes (40x)"),
//! or the largest difference the intervals allow where none is shown ("cpu:
//! no difference beyond ±4.1 % in 4 of 4 cases", seed 000's "technical
//! tie"); and advice a person can follow.

use crate::compare::{Advice, Carrier, Comparison, FamilySummary, MOST_RUNS_ADVISED};
use crate::report::words::{bound_text, cases_word, describe_speedup, factor_text, percent_text};
use std::collections::BTreeMap;

/// Cases named per direction in a conclusion: the topics with the
/// largest factors, and factors per topic.
const TOPICS_NAMED: usize = 3;
const FACTORS_PER_TOPIC: usize = 2;

/// The likely cause of each environment's differences first (the
/// diagnosis, a line per mechanism), then one sentence per family and
/// environment, then one per environment for all families; `topics` names
/// benches in a few words (a bench id → `system calls`), a bench without
/// one is named by its id.
pub(crate) fn conclusions(c: &Comparison, topics: &BTreeMap<String, String>) -> Vec<String> {
    let named = c.environments.len() > 2;
    c.diagnoses
        .iter()
        .flat_map(|d| crate::report::comparison::diagnosis::lines(d, &c.baseline, named))
        .chain(family_lines(c, topics))
        .chain(crate::report::comparison::attribution::lines(c, topics))
        .collect()
}

/// One sentence per family and environment, then one per environment for
/// all families.
fn family_lines(c: &Comparison, topics: &BTreeMap<String, String>) -> Vec<String> {
    c.families
        .iter()
        .filter(|f| f.total() > 0)
        .map(|f| {
            let who = if c.environments.len() > 2 {
                format!("{} ", f.environment)
            } else {
                String::new()
            };
            if f.family == "overall" {
                format!("{who}overall: {}{}", overall(f), not_compared(c))
            } else {
                format!("{who}{}: {}", f.family, family_sentence(f, topics))
            }
        })
        .collect()
}

/// Where two environments did not measure the same cases (one skipped or
/// failed a case the other measured: `taskset -c 0` skips the cases that
/// need two CPUs), how many were left out, so that "over 46 cases" of a
/// 50-case suite is explained where it is read.
fn not_compared(c: &Comparison) -> String {
    match c.unmatched.len() {
        0 => String::new(),
        _ if c.environments.len() > 2 => String::new(),
        n => format!(
            "; {n} {} measured in one environment only, not compared (--verbose lists {})",
            cases_word(n),
            if n == 1 { "it" } else { "them" }
        ),
    }
}

/// The conclusions about `family`, one per environment compared.
pub(crate) fn family_conclusions(
    c: &Comparison,
    topics: &BTreeMap<String, String>,
    family: &str,
) -> Vec<String> {
    let all = family_lines(c, topics);
    c.families
        .iter()
        .filter(|f| f.total() > 0)
        .zip(all)
        .filter(|(f, _)| f.family == family)
        .map(|(_, line)| line)
        .collect()
}

/// "slower in 8 of 8 cases, ...; faster in 1 ...; no difference beyond
/// ±X % in 2; 1 unclear".
fn family_sentence(f: &FamilySummary, topics: &BTreeMap<String, String>) -> String {
    let (g, total) = (&f.groups, f.total());
    let mut parts = Vec::new();
    let mut lead = true;
    // the larger group first
    let ordered = if g.faster.len() > g.slower.len() {
        [(&g.faster, "faster"), (&g.slower, "slower")]
    } else {
        [(&g.slower, "slower"), (&g.faster, "faster")]
    };
    for (cases, word) in ordered {
        if cases.is_empty() {
            continue;
        }
        let of = if lead {
            format!(
                "{} {word} in {} of {total} {}",
                f.environment,
                cases.len(),
                cases_word(total)
            )
        } else {
            format!("{word} in {}", cases.len())
        };
        parts.push(format!("{of}, {}", carried_by(cases, topics)));
        lead = false;
    }
    if g.same > 0 {
        let bound = bound_text(g.same_bound);
        parts.push(if lead {
            format!(
                "no difference beyond {bound} in {} of {total} {}",
                g.same,
                cases_word(total)
            )
        } else {
            format!("no difference beyond {bound} in {}", g.same)
        });
        lead = false;
    }
    if g.unclear > 0 {
        parts.push(if lead {
            format!("{} of {total} {} unclear", g.unclear, cases_word(total))
        } else {
            format!("{} unclear", g.unclear)
        });
    }
    parts.join("; ")
}

/// "3.5x to 400x: system calls (222x, 400x), pipes (40x), process
/// creation (3.6x)"; "2000x: system calls" when one topic carries all.
fn carried_by(cases: &[Carrier], topics: &BTreeMap<String, String>) -> String {
    let (lo, hi) = cases.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), c| {
        (lo.min(c.factor), hi.max(c.factor))
    });
    let range = if cases.len() == 1 || factor_text(lo) == factor_text(hi) {
        factor_text(hi)
    } else {
        format!("{} to {}", factor_text(lo), factor_text(hi))
    };
    // topic -> factors, topics with the largest factor first
    let mut by: Vec<(String, Vec<f64>)> = Vec::new();
    for c in cases {
        let bench = c.key.split('[').next().unwrap_or(&c.key);
        let topic = topics
            .get(bench)
            .cloned()
            .unwrap_or_else(|| bench.to_string());
        match by.iter_mut().find(|(t, _)| *t == topic) {
            Some((_, v)) => v.push(c.factor),
            None => by.push((topic, vec![c.factor])),
        }
    }
    for (_, v) in &mut by {
        v.sort_by(|a, b| b.total_cmp(a));
    }
    by.sort_by(|a, b| b.1[0].total_cmp(&a.1[0]));
    let named: Vec<String> = by
        .iter()
        .take(TOPICS_NAMED)
        .map(|(t, v)| {
            let mut f: Vec<String> = v.iter().map(|x| factor_text(*x)).collect();
            f.dedup();
            f.truncate(FACTORS_PER_TOPIC);
            // one topic: the range before the colon already gives its factors
            if by.len() == 1 {
                t.clone()
            } else {
                format!("{t} ({})", f.join(", "))
            }
        })
        .collect();
    let more = if by.len() > TOPICS_NAMED {
        format!(", {} more", by.len() - TOPICS_NAMED)
    } else {
        String::new()
    };
    format!("{range}: {}{more}", named.join(", "))
}

/// "geometric mean 1.4x slower over 45 cases (3 suspect): 1 slower, 44 tie".
fn overall(f: &FamilySummary) -> String {
    let suspect = if f.suspect > 0 {
        format!(" ({} suspect)", f.suspect)
    } else {
        String::new()
    };
    let counts: Vec<String> = [
        (f.slower, "slower"),
        (f.faster, "faster"),
        (f.tie, "tie"),
        (f.unclear, "unclear"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, w)| format!("{n} {w}"))
    .collect();
    let mean = format!(
        "geometric mean {} over {} {}{suspect}: {}",
        describe_speedup(f.geomean_speedup),
        f.total(),
        cases_word(f.total()),
        counts.join(", ")
    );
    // nothing shown to differ: say that first, and what the intervals
    // allow, not a mean that reads as a difference
    match f.within {
        Some(bound) if f.slower + f.faster == 0 => format!(
            "no difference shown beyond {} in {} of {} {}{suspect}; geometric mean {}: {}",
            bound_text(bound),
            f.no_difference,
            f.total(),
            cases_word(f.total()),
            describe_speedup(f.geomean_speedup),
            counts.join(", ")
        ),
        _ => mean,
    }
}

/// What a person can do about the unclear cases: a few more runs where
/// that would narrow them to their margin, otherwise what limits the
/// comparison and what would help. Made to the count the advice gives, 5
/// of 14 unclear A/A metrics settled (ten interleaved runs on the Zen 3
/// VM, 2026-12-05, docs/log/precision.md): the count is where the expected
/// half-width meets the margin, so the words promise about half.
pub(crate) fn advice(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for (label, cases) in &c.split_history {
        out.push(format!(
            "the earlier runs of {label} disagree among themselves far beyond their own intervals \
             in {cases} case(s), as runs of two environments would: they were not taken as the \
             spread between runs; give each environment a label of its own"
        ));
    }
    match &c.advice {
        None => {}
        Some(Advice::OneRun { unclear }) => out.push(format!(
            "{unclear} case(s) are unclear with one run on a side: make 3 runs per environment, \
             alternated (A B A B A B), so that the spread between runs is measured; or, where one \
             machine reaches both, one interleaved run (`envbench run --in A --in B=PREFIX`) \
             pairs their rounds"
        )),
        Some(Advice::Runs {
            unclear,
            interleaved,
            settle,
            unsettled,
        }) => {
            let runs = if *interleaved {
                "interleaved run(s)"
            } else {
                "run(s) per environment"
            };
            if let Some(s) = settle {
                out.push(format!(
                    "{} more {runs} ({} in all) would narrow {} of the {unclear} unclear \
                     case(s) to their margin, judging by the spread measured here; about half \
                     settle at that count",
                    s.more, s.total, s.cases
                ));
            }
            if let Some(u) = unsettled {
                let mut why = Vec::new();
                if let Some(steal) = u.steal {
                    why.push(format!("steal time up to {}", percent_text(steal, false)));
                }
                if let Some(tasks) = u.tasks_per_cpu {
                    why.push(format!("{tasks:.1} other runnable task(s) per CPU"));
                }
                let limits = if why.is_empty() {
                    "the machine's noise".to_string()
                } else {
                    why.join(", ")
                };
                let runs = if *interleaved {
                    "interleaved runs"
                } else {
                    "runs per side"
                };
                out.push(format!(
                    "{} case(s) need over {MOST_RUNS_ADVISED} {runs} ({limits}): \
                     `envbench info --tuning` or a quieter hour would help",
                    u.cases
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{clear_difference, steady, synthetic, OPTS};
    use crate::compare::{compare, Environment};
    use crate::stats::rng::Rng;

    fn said(envs: &[Environment]) -> (Vec<String>, Vec<String>) {
        let c = compare(envs, &OPTS).unwrap();
        (conclusions(&c, &BTreeMap::new()), advice(&c))
    }

    #[test]
    fn a_clear_difference_is_concluded_with_its_factor() {
        let (conclusions, _) = said(&clear_difference());
        assert!(
            conclusions
                .iter()
                .any(|r| r.starts_with("os: wsl1 slower in 1 of 1 case, 40x")),
            "{conclusions:?}"
        );
    }

    #[test]
    fn cases_are_named_by_their_topic() {
        let c = compare(&clear_difference(), &OPTS).unwrap();
        let topics = BTreeMap::from([("os.y".to_string(), "system calls".to_string())]);
        let all = conclusions(&c, &topics);
        assert!(
            all.iter()
                .any(|r| r.starts_with("os: wsl1 slower in 1 of 1 case, 40x: system calls")),
            "{all:?}"
        );
        // the diagnosis leads the conclusions; a family's are its own
        let os: Vec<String> = all
            .iter()
            .filter(|l| l.starts_with("os:"))
            .cloned()
            .collect();
        assert_eq!(family_conclusions(&c, &topics, "os"), os);
        assert!(all[0].starts_with("likely cause: "), "{all:?}");
    }

    #[test]
    fn a_thousandfold_effect_reads_as_one() {
        let (conclusions, _) = said(&synthetic(&mut Rng::new(2), 3, 1, 4, &|_| 0.001));
        let rec = conclusions.join(" ");
        assert!(
            rec.contains("slower in 4 of 4 cases, 905x to 1052x"),
            "{rec}"
        );
        assert!(!rec.contains("no difference"), "{rec}");
    }

    #[test]
    fn nothing_shown_to_differ_leads_the_overall_line_with_that() {
        // A/A at 3 runs a side: no verdict, and the overall line says so
        // before its mean, which would otherwise read as a difference
        let (conclusions, _) = said(&synthetic(&mut Rng::new(4), 3, 3, 4, &|_| 1.0));
        let overall = conclusions
            .iter()
            .find(|l| l.starts_with("overall: "))
            .expect("an overall line");
        assert!(
            overall.starts_with("overall: no difference shown beyond ±"),
            "{overall}"
        );
        assert!(overall.contains("; geometric mean "), "{overall}");
        // one that differs keeps the mean first
        let (conclusions, _) = said(&clear_difference());
        let overall = conclusions
            .iter()
            .find(|l| l.starts_with("overall: "))
            .unwrap();
        assert!(overall.starts_with("overall: geometric mean "), "{overall}");
    }

    #[test]
    fn unclear_cases_come_with_advice() {
        // one run per side: advice is to make three
        let (conclusions, advice) = said(&synthetic(&mut Rng::new(4), 1, 3, 4, &|_| 1.0));
        assert!(advice[0].contains("make 3 runs"), "{advice:?}");
        assert!(
            conclusions[0].contains("no difference beyond") || conclusions[0].contains("unclear"),
            "{conclusions:?}"
        );
        // three noisy runs per side: the cookbook names a number of runs
        let (_, advice) = said(&synthetic(&mut Rng::new(5), 3, 3, 4, &|_| 1.0));
        assert!(
            advice
                .iter()
                .any(|a| a.contains("more run(s) per environment")),
            "{advice:?}"
        );
    }

    #[test]
    fn steady_equal_environments_are_the_same_within_a_small_bound() {
        let (conclusions, advice) = said(&steady());
        assert!(
            conclusions[0].contains("no difference beyond ±0."),
            "{conclusions:?}"
        );
        assert!(advice.is_empty());
    }
}
