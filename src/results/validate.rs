//! Checks a parsed result file before anything reads its numbers, so a
//! hand-edited, truncated or fuzzed file cannot produce confident verdicts
//! on nonsense (a ratio of −1, an infinite speed-up, a stored median its
//! samples contradict). Called from [`crate::store::parse`].
//!
//! - Case keys are unique (else the file is refused, naming both).
//! - Samples are finite and in their unit's domain (times ≥ 0, rates > 0),
//!   and a time metric's median is above 0 (0 is below the clock's
//!   resolution and would make an infinite speed-up); otherwise the case is
//!   marked `invalid` with the field and the reason, and compare skips it.
//! - Summaries are recomputed from the samples; a stored one that disagrees
//!   is replaced and the case gets a `summary_recomputed` anomaly.
//! - Every string of a file read, object keys too, has its control and
//!   bidi characters escaped before anything reads it ([`escape_strings`],
//!   from [`crate::store::parse`]), whatever field holds it: a line break
//!   in a fingerprint field once forged a line of compare's report, and
//!   every format (terminal, Markdown, CSV, HTML, JSON) renders what the
//!   file said, escaped. A file built in memory (an import) has the
//!   strings [`validate`] names escaped here.
//! - An interleaved run's indices (`rounds.interleave`) name environments
//!   it lists, the fingerprint holds no impossible value (no CPUs, a
//!   quota of -1 CPU, a wrapped cache size), and no app case's counts add
//!   up beyond what a count holds (`preads + pwrites + calls` of 0,
//!   2^64 - 2 and 3, which would wrap to 1): else the file is refused, naming the field.

use crate::results::counts::{OpCounts, KEY};
use crate::results::{Anomaly, CaseResult, CaseStatus, Interleave, ResultFile, Suspect};
use crate::stats::{summary_of, Summary};
use crate::terminal::escape;
use serde_json::Value;
use std::collections::HashMap;

/// Most samples one metric may hold: a run keeps at most a few hundred;
/// recomputing the bootstrap of millions would take minutes.
pub const MAX_SAMPLES: usize = 100_000;

/// Validates `file` in place: escapes the strings people name runs and
/// cases by (label, keys, reasons, notes, anomalies, suspect flags,
/// interleaved environments), marks impossible cases invalid, recomputes
/// summaries.
///
/// # Errors
/// A message naming the field, for problems that make the whole file
/// unusable (repeated case keys, too many samples, counts that add up
/// beyond a count).
pub fn validate(file: &mut ResultFile) -> Result<(), String> {
    file.label = escape(&file.label);
    file.notes.iter_mut().for_each(|n| *n = escape(n));
    file.anomalies.iter_mut().for_each(escape_anomaly);
    file.suspect.iter_mut().for_each(escape_suspect);
    if let Some(i) = file.rounds.as_mut().and_then(|r| r.interleave.as_mut()) {
        check_interleave(i)?;
    }
    if let Some(why) = file.fingerprint.impossible() {
        return Err(format!("fingerprint.{why}"));
    }

    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, case) in file.cases.iter_mut().enumerate() {
        case.key = escape(&case.key);
        if let Some(first) = seen.insert(case.key.clone(), i) {
            return Err(format!(
                "cases[{i}].key '{}' repeats cases[{first}].key; each case may appear once",
                case.key
            ));
        }
        if let Some(why) = OpCounts::of(case.details.as_ref()).and_then(|c| c.overflow()) {
            return Err(format!("cases[{i}].details.{KEY}: {why}"));
        }
    }
    let mut fresh = fresh_summaries(file)?.into_iter();
    for (i, case) in file.cases.iter_mut().enumerate() {
        let n = case.metrics.len();
        check_case(i, case, fresh.by_ref().take(n).collect());
    }
    Ok(())
}

/// Escapes every string of a result file's JSON document, object keys
/// too, with [`escape`]: the fingerprint's fields, a case's details, a
/// field a later version adds. Whether any changed. JSON nests at most
/// 128 deep (serde_json's limit), so the recursion is bounded.
pub fn escape_strings(v: &mut Value) -> bool {
    let unsafe_text = |s: &str| s.chars().any(crate::terminal::is_unsafe);
    match v {
        Value::String(s) if unsafe_text(s) => {
            *s = escape(s);
            true
        }
        Value::Array(items) => items.iter_mut().fold(false, |c, i| escape_strings(i) | c),
        Value::Object(map) if map.keys().any(|k| unsafe_text(k)) => {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    escape_strings(&mut v);
                    (escape(&k), v)
                })
                .collect();
            true
        }
        Value::Object(map) => map.values_mut().fold(false, |c, v| escape_strings(v) | c),
        _ => false,
    }
}

/// Every metric's summary recomputed from its samples (None where they
/// are not finite), case by case, on the machine's cores: the bootstrap of
/// the median's interval is most of the time a file takes to read.
fn fresh_summaries(file: &ResultFile) -> Result<Vec<Option<Summary>>, String> {
    let mut all = Vec::new();
    for (i, case) in file.cases.iter().enumerate() {
        for (m, metric) in case.metrics.iter().enumerate() {
            if metric.samples.len() > MAX_SAMPLES {
                return Err(format!(
                    "cases[{i}].metrics[{m}].samples: {} samples, more than the {MAX_SAMPLES} envbench reads",
                    metric.samples.len()
                ));
            }
            all.push(metric.samples.as_slice());
        }
    }
    let seed = file.config.seed;
    Ok(crate::stats::par::map(&all, |samples| {
        if samples.iter().all(|v| v.is_finite()) {
            summary_of(samples, seed)
        } else {
            None
        }
    }))
}

/// Escapes an interleaved run's names and words, and refuses an index
/// beyond its environments.
fn check_interleave(i: &mut Interleave) -> Result<(), String> {
    for e in &mut i.environments {
        e.name = escape(&e.name);
        e.prefix.iter_mut().for_each(|w| *w = escape(w));
        e.binary = e.binary.as_deref().map(escape);
    }
    let n = i.environments.len();
    if i.index as usize >= n {
        return Err(format!(
            "rounds.interleave.index {} names no environment (it lists {n})",
            i.index
        ));
    }
    for (r, round) in i.env_orders.iter().enumerate() {
        for (c, order) in round.iter().enumerate() {
            if let Some(bad) = order.iter().find(|&&e| e as usize >= n) {
                return Err(format!(
                    "rounds.interleave.env_orders[{r}][{c}] holds {bad}, which names no \
                     environment (it lists {n})"
                ));
            }
        }
    }
    Ok(())
}

fn escape_anomaly(a: &mut Anomaly) {
    a.kind = escape(&a.kind);
    a.message = escape(&a.message);
}

fn escape_suspect(s: &mut Suspect) {
    s.kind = escape(&s.kind);
    s.message = escape(&s.message);
}

/// Checks one case's metrics; an impossible value marks it invalid.
fn check_case(i: usize, case: &mut CaseResult, fresh: Vec<Option<Summary>>) {
    case.reason = case.reason.as_deref().map(escape);
    case.notes.iter_mut().for_each(|n| *n = escape(n));
    case.anomalies.iter_mut().for_each(escape_anomaly);
    case.suspect.iter_mut().for_each(escape_suspect);
    let mut problem = None;
    for ((m, metric), fresh) in case.metrics.iter_mut().enumerate().zip(fresh) {
        let field = format!("cases[{i}].metrics[{m}]");
        let unit = metric.unit;
        let bad = metric.samples.iter().enumerate().find_map(|(j, &v)| {
            let why = if !v.is_finite() {
                "not a finite number"
            } else if unit.is_time() && v < 0.0 {
                "a negative time"
            } else if unit.is_rate() && v <= 0.0 {
                "a rate that is not above 0"
            } else {
                return None;
            };
            Some(format!("{field}.samples[{j}] = {v} is {why}"))
        });
        if let Some(b) = bad {
            problem.get_or_insert(b);
            metric.summary = None;
            continue;
        }
        // A zero headline time means the clock could not see the work. A
        // secondary one may be zero by nature (the spread of per-thread
        // times with one thread): compare lists it as not comparable.
        if m == 0 && unit.is_time() && fresh.as_ref().is_some_and(|s| s.median <= 0.0) {
            problem.get_or_insert(format!(
                "{field} ({}) has median 0: below the clock's resolution, so no ratio can be formed",
                metric.name
            ));
        }
        if !agrees(metric.summary.as_ref(), fresh.as_ref()) {
            case.anomalies.push(Anomaly {
                kind: "summary_recomputed".into(),
                message: format!(
                    "{field}.summary disagreed with its samples and was recomputed from them when read"
                ),
            });
        }
        metric.summary = fresh;
    }
    if let Some(p) = problem {
        if case.status == CaseStatus::Ok {
            case.status = CaseStatus::Invalid;
            case.reason = Some(format!("{p} (found when the file was read)"));
        }
    }
}

/// Whether a stored summary matches the recomputed one on the figures
/// reports use (count, median, mean, spread), to rounding.
fn agrees(stored: Option<&Summary>, fresh: Option<&Summary>) -> bool {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300);
    match (stored, fresh) {
        (None, None) => true,
        (Some(s), Some(f)) => {
            s.n == f.n
                && close(s.median, f.median)
                && close(s.mean, f.mean)
                && close(s.min, f.min)
                && close(s.max, f.max)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;
    use crate::units::Direction;

    fn one(samples: Vec<f64>, unit_name: &str) -> ResultFile {
        let mut f = run(
            "a",
            "r",
            &[("os.x", "latency", Direction::LowerIsBetter, samples)],
        );
        if unit_name == "ns" {
            f.cases[0].metrics[0].unit = crate::units::Unit::Nanoseconds;
        }
        f
    }

    #[test]
    fn negative_times_and_zero_medians_make_the_case_invalid() {
        for s in [vec![1.0, -2.0, 3.0], vec![0.0, 0.0, 0.0]] {
            let mut f = one(s, "ns");
            validate(&mut f).unwrap();
            assert_eq!(f.cases[0].status, CaseStatus::Invalid);
            assert!(f.cases[0]
                .reason
                .as_ref()
                .unwrap()
                .contains("cases[0].metrics[0]"));
        }
    }

    #[test]
    fn a_secondary_time_that_is_zero_by_nature_leaves_the_case_valid() {
        // cpu.primes with one thread: the spread of per-thread times is 0
        let mut f = one(vec![1.0, 2.0, 3.0], "ns");
        let mut spread = f.cases[0].metrics[0].clone();
        spread.name = "exec_time_per_thread_stddev".into();
        spread.unit = crate::units::Unit::Seconds;
        spread.samples = vec![0.0; 3];
        f.cases[0].metrics.push(spread);
        validate(&mut f).unwrap();
        assert_eq!(f.cases[0].status, CaseStatus::Ok);
        assert_eq!(f.cases[0].metrics[1].summary.as_ref().unwrap().median, 0.0);
    }

    #[test]
    fn a_summary_that_disagrees_is_recomputed_and_flagged() {
        let mut f = one(vec![1.0, 2.0, 3.0], "ns");
        f.cases[0].metrics[0].samples = vec![1000.0, 2000.0, 3000.0];
        validate(&mut f).unwrap();
        let m = &f.cases[0].metrics[0];
        assert_eq!(m.summary.as_ref().unwrap().median, 2000.0);
        assert!(f.cases[0]
            .anomalies
            .iter()
            .any(|a| a.kind == "summary_recomputed"));
        assert_eq!(f.cases[0].status, CaseStatus::Ok);
    }

    #[test]
    fn repeated_keys_are_refused_and_labels_escaped() {
        let mut f = one(vec![1.0, 2.0, 3.0], "ns");
        f.label = "\u{1b}[2J".into();
        validate(&mut f).unwrap();
        assert_eq!(f.label, "\\u{1b}[2J");
        f.cases.push(f.cases[0].clone());
        assert!(validate(&mut f).unwrap_err().contains("repeats cases[0]"));
    }

    #[test]
    fn every_string_and_key_of_a_document_is_escaped_wherever_it_is() {
        let mut doc = serde_json::json!({
            "fingerprint": {"dirs": [{"fs_type": "ext4\nfaster  FORGED"}], "cpu": {"model": "x"}},
            "cases": [{"details": {"k\u{1b}[2J": ["\u{202e}evil", 1.5, null, {"x": "\u{85}"}]}}],
        });
        assert!(escape_strings(&mut doc));
        assert_eq!(
            doc["fingerprint"]["dirs"][0]["fs_type"],
            "ext4\\u{a}faster  FORGED"
        );
        assert_eq!(doc["fingerprint"]["cpu"]["model"], "x");
        let details = &doc["cases"][0]["details"]["k\\u{1b}[2J"];
        assert_eq!(details[0], "\\u{202e}evil");
        assert_eq!(
            (details[1].as_f64(), details[3]["x"].as_str()),
            (Some(1.5), Some("\\u{85}"))
        );
        // escaped once, the document holds nothing more to escape
        assert!(!escape_strings(&mut doc));
    }

    #[test]
    fn counts_whose_sum_would_wrap_refuse_the_file_naming_the_field() {
        let mut f = one(vec![1.0, 2.0, 3.0], "ns");
        let counts = |pwrites: u64| serde_json::json!({ KEY: OpCounts { pwrites, calls: 3, ..OpCounts::default() } });
        f.cases[0].details = Some(counts(u64::MAX - 3));
        validate(&mut f).unwrap();
        f.cases[0].details = Some(counts(u64::MAX - 1));
        assert_eq!(
            validate(&mut f).unwrap_err(),
            "cases[0].details.counts: preads + pwrites + calls = 0 + 18446744073709551614 + 3 is \
             more than a count holds (18446744073709551615)"
        );
    }

    #[test]
    fn an_interleaved_run_names_only_environments_it_lists() {
        let mut f = one(vec![1.0, 2.0, 3.0], "ns");
        let env = |name: &str| crate::results::InterleavedEnv {
            name: name.into(),
            prefix: vec!["runsc".into(), "do\u{1b}".into()],
            binary: None,
            run_id: None,
            launches: None,
        };
        f.rounds = Some(crate::results::Rounds {
            planned: 1,
            started: 1,
            seed: 1,
            orders: vec![vec!["os.x".into()]],
            interleave: Some(Interleave {
                id: "i".into(),
                environments: vec![env("a"), env("b")],
                index: 1,
                env_orders: vec![vec![vec![1, 0]]],
            }),
        });
        validate(&mut f).unwrap();
        let i = f.rounds.as_ref().unwrap().interleave.as_ref().unwrap();
        assert_eq!(i.environments[0].prefix[1], "do\\u{1b}");
        let mut bad = f.clone();
        bad.rounds
            .as_mut()
            .unwrap()
            .interleave
            .as_mut()
            .unwrap()
            .index = 2;
        assert!(validate(&mut bad).unwrap_err().contains("index 2"));
        let mut bad = f;
        let i = bad.rounds.as_mut().unwrap().interleave.as_mut().unwrap();
        i.env_orders[0][0] = vec![0, 5];
        assert!(validate(&mut bad)
            .unwrap_err()
            .contains("env_orders[0][0] holds 5"));
    }
}
