//! What a comparison concludes, in the studies' manner: one sentence per
//! family with the factor range and the cases that carry it ("os: B slower
//! in 8 of 8 cases, 3.5x to 400x: system calls (222x, 400x), pipes (40x)"),
//! or the largest difference the intervals allow where none is shown ("cpu:
//! no difference beyond ±4.1 % in 4 of 4 cases", seed 000's "technical
//! tie"); the warnings grouped by kind, one line each; and advice a person
//! can follow.

use super::{Comparison, Environment, MetricComparison, Verdict};
use crate::results::ResultFile;
use std::collections::BTreeMap;

/// Cases named per direction in a conclusion: the topics with the
/// largest factors, and factors per topic.
const TOPICS_NAMED: usize = 3;
const FACTORS_PER_TOPIC: usize = 2;

/// A case with no difference shown is said to be the same "within ±X %"
/// only up to this bound; wider intervals say nothing and count as unclear.
const MOST_SAME_BOUND: f64 = 0.5;

/// More runs per side than this are not advised: nobody makes them.
pub const MOST_RUNS_ADVISED: usize = 10;

/// A factor for a sentence: `400x`, `3.6x`, `12 %`.
pub fn factor_text(f: f64) -> String {
    if f >= 10.0 {
        format!("{f:.0}x")
    } else if f >= 1.5 {
        format!("{f:.1}x")
    } else {
        format!("{:.0} %", (f - 1.0) * 100.0)
    }
}

/// A bound for a sentence: `±4.1 %`, `±12 %`.
pub fn bound_text(b: f64) -> String {
    if b >= 1.0 {
        format!("{:.0}x", 1.0 + b)
    } else if b < 0.1 {
        format!("±{:.1} %", b * 100.0)
    } else {
        format!("±{:.0} %", b * 100.0)
    }
}

/// How many times better (or worse) a metric is, ≥ 1.
fn factor(m: &MetricComparison) -> f64 {
    let s = m.speedup();
    if s >= 1.0 {
        s
    } else {
        1.0 / s
    }
}

/// One sentence per family and environment, then one per environment for
/// all families; `topics` names benches in a few words.
pub(super) fn conclusions(c: &Comparison, topics: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for f in c.families.iter().filter(|f| f.total() > 0) {
        let mine: Vec<&MetricComparison> = c
            .metrics
            .iter()
            .filter(|m| {
                m.primary
                    && m.environment == f.environment
                    && (f.family == "overall" || m.family == f.family)
            })
            .collect();
        let who = if c.environments.len() > 2 {
            format!("{} ", f.environment)
        } else {
            String::new()
        };
        out.push(if f.family == "overall" {
            format!("{who}overall: {}", overall(f, &mine))
        } else {
            format!(
                "{who}{}: {}",
                f.family,
                family_sentence(&f.environment, &mine, topics)
            )
        });
    }
    out
}

/// "slower in 8 of 8 cases, ...; faster in 1 ...; no difference beyond
/// ±X % in 2; 1 unclear".
fn family_sentence(
    env: &str,
    mine: &[&MetricComparison],
    topics: &BTreeMap<String, String>,
) -> String {
    let total = mine.len();
    let pick = |v: Verdict| -> Vec<&MetricComparison> {
        mine.iter().copied().filter(|m| m.verdict == v).collect()
    };
    let (slower, faster) = (pick(Verdict::Slower), pick(Verdict::Faster));
    let same: Vec<&MetricComparison> = mine
        .iter()
        .copied()
        .filter(|m| !matches!(m.verdict, Verdict::Faster | Verdict::Slower))
        // a tie may lie wholly on one side of 1 (a difference shown, but
        // within the band): it is the same within its bound all the same
        .filter(|m| m.verdict == Verdict::Tie || (m.ratio_ci.0 <= 1.0 && 1.0 <= m.ratio_ci.1))
        .filter(|m| m.equivalence_bound <= MOST_SAME_BOUND)
        .collect();
    let unclear = total - slower.len() - faster.len() - same.len();
    let mut parts = Vec::new();
    let mut lead = true;
    for (cases, word) in ordered(&slower, &faster) {
        if cases.is_empty() {
            continue;
        }
        let of = if lead {
            format!(
                "{env} {word} in {} of {total} {}",
                cases.len(),
                cases_word(total)
            )
        } else {
            format!("{word} in {}", cases.len())
        };
        parts.push(format!("{of}, {}", carried_by(cases, topics)));
        lead = false;
    }
    if !same.is_empty() {
        let most = same.iter().map(|m| m.equivalence_bound).fold(0.0, f64::max);
        parts.push(if lead {
            format!(
                "no difference beyond {} in {} of {total} {}",
                bound_text(most),
                same.len(),
                cases_word(total)
            )
        } else {
            format!(
                "no difference beyond {} in {}",
                bound_text(most),
                same.len()
            )
        });
        lead = false;
    }
    if unclear > 0 {
        parts.push(if lead {
            format!("{unclear} of {total} {} unclear", cases_word(total))
        } else {
            format!("{unclear} unclear")
        });
    }
    parts.join("; ")
}

/// "case" or "cases" after a count.
fn cases_word(n: usize) -> &'static str {
    if n == 1 {
        "case"
    } else {
        "cases"
    }
}

/// The larger group first.
fn ordered<'a>(
    slower: &'a [&'a MetricComparison],
    faster: &'a [&'a MetricComparison],
) -> [(&'a [&'a MetricComparison], &'static str); 2] {
    if faster.len() > slower.len() {
        [(faster, "faster"), (slower, "slower")]
    } else {
        [(slower, "slower"), (faster, "faster")]
    }
}

/// "3.5x to 400x: system calls (222x, 400x), pipes (40x), process
/// creation (3.6x)"; "2000x: system calls" when one topic carries all.
fn carried_by(cases: &[&MetricComparison], topics: &BTreeMap<String, String>) -> String {
    let factors: Vec<f64> = cases.iter().map(|m| factor(m)).collect();
    let (lo, hi) = factors.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), f| {
        (lo.min(*f), hi.max(*f))
    });
    let range = if cases.len() == 1 || factor_text(lo) == factor_text(hi) {
        factor_text(hi)
    } else {
        format!("{} to {}", factor_text(lo), factor_text(hi))
    };
    // topic -> factors, topics with the largest factor first
    let mut by: Vec<(String, Vec<f64>)> = Vec::new();
    for m in cases {
        let bench = m.key.split('[').next().unwrap_or(&m.key);
        let topic = topics
            .get(bench)
            .cloned()
            .unwrap_or_else(|| bench.to_string());
        match by.iter_mut().find(|(t, _)| *t == topic) {
            Some((_, v)) => v.push(factor(m)),
            None => by.push((topic, vec![factor(m)])),
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

/// "geometric mean 1.4x slower over 45 cases (3 suspect)".
fn overall(f: &super::FamilySummary, mine: &[&MetricComparison]) -> String {
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
    format!(
        "geometric mean {} over {} {}{suspect}: {}",
        super::describe_speedup(f.geomean_speedup),
        mine.len(),
        cases_word(mine.len()),
        counts.join(", ")
    )
}

/// The noise of a set of runs: the largest steal share seen in any
/// repetition, and the mean number of other runnable tasks per CPU.
fn noise(runs: &[&ResultFile]) -> (f64, f64) {
    let (mut steal, mut tasks, mut n) = (0.0f64, 0.0, 0usize);
    for r in runs {
        let cpus = r
            .fingerprint
            .cpu
            .usable_cpus
            .unwrap_or(r.fingerprint.cpu.logical_cpus)
            .max(1);
        for t in r.cases.iter().filter_map(|c| c.telemetry.as_ref()) {
            steal = t.steal_share.iter().flatten().fold(steal, |a, &b| a.max(b));
            for v in t.runnable_others.iter().flatten() {
                tasks += f64::from(*v) / cpus as f64;
                n += 1;
            }
        }
    }
    (steal, if n > 0 { tasks / n as f64 } else { 0.0 })
}

/// What a person can do about the unclear cases: a few more runs where
/// that would settle them, otherwise what limits the comparison and what
/// would help.
pub(super) fn advice(c: &Comparison, envs: &[Environment]) -> Vec<String> {
    let unclear: Vec<&MetricComparison> = c
        .metrics
        .iter()
        .filter(|m| m.primary && m.verdict == Verdict::Unclear)
        .collect();
    if unclear.is_empty() {
        return Vec::new();
    }
    let fewest = envs.iter().map(|e| e.runs.len()).min().unwrap_or(0);
    let mut out = Vec::new();
    if fewest < 2 {
        out.push(format!(
            "{} case(s) are unclear with one run on a side: make 3 runs per environment, \
             alternated (A B A B A B), so that the spread between runs is measured",
            unclear.len()
        ));
        return out;
    }
    let settled: Vec<usize> = unclear
        .iter()
        .filter_map(|m| m.runs_needed)
        .filter(|&n| n <= MOST_RUNS_ADVISED)
        .collect();
    if let Some(&most) = settled.iter().max() {
        let total = most.max(fewest + 1);
        out.push(format!(
            "{} more run(s) per environment ({total} in all) would settle {} of the {} unclear \
             case(s), judging by the spread measured here",
            total - fewest,
            settled.len(),
            unclear.len()
        ));
    }
    let rest = unclear.len() - settled.len();
    if rest > 0 {
        let runs: Vec<&ResultFile> = envs.iter().flat_map(|e| &e.runs).collect();
        let (steal, tasks) = noise(&runs);
        let mut why = Vec::new();
        if steal > 0.05 {
            why.push(format!("steal time up to {:.0} %", steal * 100.0));
        }
        if tasks > 0.25 {
            why.push(format!("{tasks:.1} other runnable task(s) per CPU"));
        }
        let limits = if why.is_empty() {
            "the machine's noise".to_string()
        } else {
            why.join(", ")
        };
        out.push(format!(
            "{rest} case(s) need over {MOST_RUNS_ADVISED} runs per side ({limits}): \
             `envbench info --tuning` or a quieter hour would help"
        ));
    }
    out
}

/// A suspect flag's kind in a few words, and how its measure reads.
fn flag_words(kind: &str, most: f64) -> (String, String) {
    use crate::validity::suspect::SuspectKind;
    match SuspectKind::from_name(kind) {
        Some(k) => (k.words(), k.measure(most)),
        None => ("a flag".into(), format!("{most:.2}")),
    }
}

/// The warnings as one line per kind: suspect flags counted per
/// environment with their largest measure ("steal time above 5 % in 9
/// cases of B, up to 31 %"), anomalies and cases measured differently
/// counted, the rest (other hardware, a single run) in short. Each line's
/// full paragraphs are in [`Comparison::warnings`].
/// One line naming the headline metrics given no verdict, with the
/// assumption that failed and where: "not comparable (a method's
/// assumption failed): io.dd[...] (the cold read was not cold in gvisor)".
fn not_comparable_line(c: &Comparison) -> Option<String> {
    let each: Vec<String> = c
        .not_comparable
        .iter()
        .filter(|n| n.primary)
        .map(|n| format!("{} ({} in {})", n.key, n.assumption.words(), n.side))
        .collect();
    if each.is_empty() {
        return None;
    }
    Some(format!(
        "not comparable, {} case(s) whose method's assumption failed where they ran \
         (--verbose shows what was measured): {}",
        each.len(),
        each.join(", ")
    ))
}

pub(super) fn warning_lines(
    c: &Comparison,
    envs: &[Environment],
    details: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    let has = |needle: &str| details.iter().filter(|w| w.contains(needle)).count();
    for w in details
        .iter()
        .filter(|w| w.contains("runs on different CPUs"))
    {
        out.push(w.split(':').next().unwrap_or(w).to_string());
    }
    for w in details
        .iter()
        .filter(|w| w.contains("idles its CPUs") || w.contains("appears twice"))
    {
        out.push(w.split(':').next().unwrap_or(w).to_string());
    }
    let differently = has("was measured differently");
    if differently > 0 {
        out.push(format!(
            "{differently} case(s) measured differently on the sides (a fallback helper, a limit, \
             huge pages): not like for like"
        ));
    }
    // anomalies (a high load average at a run's start, mostly left by the
    // run before) have shown no worth as a warning: each run's count is in
    // the full warnings (--verbose) and `envbench show RUN` lists them
    out.extend(not_comparable_line(c));
    out.extend(suspect_lines(c, envs));
    if let Some(w) = details
        .iter()
        .find(|w| w.contains("whose unit or direction differs"))
    {
        out.push(w.split(':').next().unwrap_or(w).to_string());
    }
    for w in details.iter().filter(|w| w.starts_with("no ratio for")) {
        out.push(w.split(':').next().unwrap_or(w).to_string());
    }
    if let Some(spread) = c
        .metrics
        .iter()
        .find(|m| m.basis.runs.0.min(m.basis.runs.1) == 1)
    {
        let source = [spread.basis.run_spread.0, spread.basis.run_spread.1]
            .iter()
            .map(|s| super::spread_words(*s))
            .find(|w| !w.is_empty())
            .unwrap_or_default();
        out.push(format!(
            "one run on a side: the spread between runs {source}; 3 alternated runs per side measure it"
        ));
    }
    out
}

/// An environment's label and the keys of its cases with a flag.
type EnvCases<'a> = (&'a str, Vec<&'a str>);

/// One line per shown flag kind over all environments ("other tasks on
/// its CPUs in 3 case(s) (plain 1, traced 2), up to 0.9 per CPU"), and
/// each run-level flag.
fn suspect_lines(c: &Comparison, envs: &[Environment]) -> Vec<String> {
    let fate = if c.exclude_suspect {
        "left out of the means"
    } else {
        "counted in the means"
    };
    let mut out = Vec::new();
    // kind -> (cases per environment label, largest measure)
    let mut kinds: BTreeMap<&str, (Vec<EnvCases>, f64)> = BTreeMap::new();
    for e in envs {
        for r in &e.runs {
            for case in &r.cases {
                for s in &case.suspect {
                    let k = kinds
                        .entry(s.kind.as_str())
                        .or_insert((Vec::new(), f64::NAN));
                    let at = match k.0.iter().position(|(l, _)| *l == e.label) {
                        Some(i) => i,
                        None => {
                            k.0.push((&e.label, Vec::new()));
                            k.0.len() - 1
                        }
                    };
                    if !k.0[at].1.contains(&case.key.as_str()) {
                        k.0[at].1.push(&case.key);
                    }
                    if let Some(v) = s.value {
                        k.1 = if k.1.is_nan() { v } else { k.1.max(v) };
                    }
                }
            }
            for s in &r.suspect {
                out.push(format!(
                    "{}: {}",
                    e.label,
                    s.message.split(':').next().unwrap_or("")
                ));
            }
        }
    }
    for (kind, (per_env, most)) in kinds {
        let (what, how) = flag_words(kind, most);
        let up_to = if most.is_nan() {
            String::new()
        } else {
            format!(", up to {how}")
        };
        let total: usize = per_env.iter().map(|(_, cases)| cases.len()).sum();
        let whose = match per_env.as_slice() {
            [(label, _)] => format!("of {label}"),
            _ => format!(
                "({})",
                per_env
                    .iter()
                    .map(|(l, cases)| format!("{l} {}", cases.len()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        out.push(format!(
            "suspect (!): {what} in {total} case(s) {whose}{up_to}; {fate}"
        ));
    }
    out.dedup();
    out
}
