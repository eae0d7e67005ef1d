//! `--only` patterns: a bench id (`os.syscall`), a family (`os`) or a glob
//! (`cpu.*`), optionally followed by parameters in brackets that pick
//! cases, written as in a case key: `io.dd[op=write_direct]`,
//! `net.http[clients=1,page=1KiB]`. A value may hold `*` (`size=*KiB`).
//! A pattern without brackets takes every case of its benches.

use crate::bench::{Bench, CaseSpec, ALL};
use crate::results::param_text;
use crate::results::params::key;

/// One parsed `--only` pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    /// The bench part: id, family or glob.
    pub bench: String,
    /// `name=value` pairs every selected case must have.
    pub params: Vec<(String, String)>,
}

/// Splits a comma-separated `--only` value into patterns, leaving the
/// commas inside brackets to their pattern: `io.dd[op=a,block=1MiB],os`
/// is two patterns. Empty patterns are kept (and refused by [`parse`]).
pub(crate) fn split(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for ch in raw.chars() {
        match ch {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur);
    out.into_iter().map(|p| p.trim().to_string()).collect()
}

/// Parses one pattern.
///
/// # Errors
/// A message naming what is wrong: an empty pattern, an unclosed or
/// misplaced bracket, a parameter without `=`, or no bench matching.
pub fn parse(pattern: &str) -> Result<Selector, String> {
    let p = pattern.trim();
    if p.is_empty() {
        return Err(
            "--only has an empty pattern; give ids, families or globs separated by commas".into(),
        );
    }
    let (bench, params) = match p.find('[') {
        None if p.contains(']') => return Err(format!("'{p}' has a ']' without a '['")),
        None => (p, Vec::new()),
        Some(open) => {
            let Some(inner) = p[open + 1..].strip_suffix(']') else {
                return Err(format!(
                    "'{p}': parameters go in brackets at the end, as in io.dd[op=write_direct]"
                ));
            };
            if inner.contains('[') || inner.contains(']') {
                return Err(format!("'{p}' has nested brackets"));
            }
            let mut params = Vec::new();
            for pair in inner.split(',') {
                let Some((k, v)) = pair.split_once('=') else {
                    return Err(format!(
                        "'{p}': '{}' is not name=value, as in io.dd[op=write_direct]",
                        pair.trim()
                    ));
                };
                let (k, v) = (k.trim(), v.trim());
                if k.is_empty() || v.is_empty() {
                    return Err(format!("'{p}': '{}' lacks a name or a value", pair.trim()));
                }
                params.push((k.to_string(), v.to_string()));
            }
            (&p[..open], params)
        }
    };
    if bench.is_empty() {
        return Err(format!("'{p}' names no benchmark before its brackets"));
    }
    if !ALL.iter().any(|b| matches_pattern(b.id(), bench)) {
        return Err(format!("no benchmark matches '{bench}'"));
    }
    Ok(Selector {
        bench: bench.to_string(),
        params,
    })
}

/// A value against a wanted one: equal, or a `*`-glob that matches.
fn value_matches(value: &str, want: &str) -> bool {
    value == want || glob(want.as_bytes(), value.as_bytes())
}

impl Selector {
    /// Whether this selector takes cases of `bench`.
    pub(crate) fn takes_bench(&self, bench: &dyn Bench) -> bool {
        matches_pattern(bench.id(), &self.bench)
    }

    /// Whether this selector takes `case`: its bench matches and it has
    /// every parameter with a matching value.
    pub(crate) fn takes_case(&self, case: &CaseSpec) -> bool {
        matches_pattern(&case.bench, &self.bench)
            && self.params.iter().all(|(k, want)| {
                case.params
                    .get(k)
                    .is_some_and(|v| value_matches(&param_text(v), want))
            })
    }

    /// Why this selector took none of `cases` (the cases its benches
    /// planned): the parameter no case has, or the values each parameter
    /// takes.
    pub(crate) fn explain_empty(&self, cases: &[CaseSpec]) -> String {
        let mine: Vec<&CaseSpec> = cases
            .iter()
            .filter(|c| matches_pattern(&c.bench, &self.bench))
            .collect();
        let shown = format!(
            "{}[{}]",
            self.bench,
            self.params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        if mine.is_empty() {
            return format!(
                "'{shown}' matches no case: '{}' plans none in this suite",
                self.bench
            );
        }
        let mut parts = Vec::new();
        for (k, _) in &self.params {
            let mut values: Vec<String> = mine
                .iter()
                .filter_map(|c| c.params.get(k).map(param_text))
                .collect();
            values.sort();
            values.dedup();
            if values.is_empty() {
                let mut names: Vec<&String> = mine.iter().flat_map(|c| c.params.keys()).collect();
                names.sort();
                names.dedup();
                let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                parts.push(format!(
                    "its cases have no parameter '{k}' (they have {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ));
            } else {
                parts.push(format!("{k} is one of {}", values.join(", ")));
            }
        }
        format!(
            "'{shown}' matches no case in this suite: {}",
            parts.join("; ")
        )
    }
}

/// Whether `id` matches a user pattern: an exact id, a family name, or a
/// glob with `*`.
fn matches_pattern(id: &str, pattern: &str) -> bool {
    let family = id.split('.').next().unwrap_or("");
    pattern == id || pattern == family || glob(pattern.as_bytes(), id.as_bytes())
}

/// `*`-glob matching without recursion: on a mismatch, only the latest `*`
/// is retried one byte further, so the cost is at most |p|·|s| steps
/// (a recursive matcher took exponential time on 40 stars).
fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    // the latest star: (its index in p, where in s it currently ends)
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len() && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            star = Some((sp, ss + 1));
            pi = sp + 1;
            si = ss + 1;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Benches selected by `selectors` (all when empty).
pub(crate) fn benches(selectors: &[Selector]) -> Vec<&'static dyn Bench> {
    ALL.iter()
        .copied()
        .filter(|b| selectors.is_empty() || selectors.iter().any(|s| s.takes_bench(*b)))
        .collect()
}

/// The cases `selectors` take of those planned (all when empty).
///
/// # Errors
/// Explains the first selector with parameters that takes no case.
pub(crate) fn cases(
    selectors: &[Selector],
    planned: Vec<(&'static dyn Bench, CaseSpec)>,
) -> Result<Vec<(&'static dyn Bench, CaseSpec)>, String> {
    if selectors.is_empty() {
        return Ok(planned);
    }
    if let Some(s) = selectors
        .iter()
        .find(|s| !s.params.is_empty() && !planned.iter().any(|(_, c)| s.takes_case(c)))
    {
        let cases: Vec<CaseSpec> = planned.iter().map(|(_, c)| c.clone()).collect();
        return Err(s.explain_empty(&cases));
    }
    Ok(planned
        .into_iter()
        .filter(|(_, c)| selectors.iter().any(|s| s.takes_case(c)))
        .collect())
}

/// The selected `cases` with, where some count their operations (an app
/// case, a command), the micro cases that price those operations
/// ([`Bench::prices`]) on the same `--dir` from `plan`, where they are not
/// selected already; and the line that says which were added.
pub(crate) fn with_prices(
    mut cases: Vec<(&'static dyn Bench, CaseSpec)>,
    plan: &crate::bench::Plan,
) -> (Vec<(&'static dyn Bench, CaseSpec)>, Option<String>) {
    let mut dirs: Vec<Option<String>> = cases
        .iter()
        .filter(|(b, _)| counts_operations(*b))
        .map(|(_, c)| c.params.get(key::DIR).map(param_text))
        .collect();
    if dirs.is_empty() {
        return (cases, None);
    }
    dirs.sort();
    dirs.dedup();
    let mut added = Vec::new();
    for bench in ALL.iter().copied().filter(|b| !b.prices().is_empty()) {
        let planned = bench.cases(plan);
        for price in bench.prices() {
            let wanted: Vec<Option<&str>> = if price.on_dir {
                dirs.iter().map(Option::as_deref).collect()
            } else {
                vec![None]
            };
            for dir in wanted {
                let prices = |c: &CaseSpec| prices_on(price, c, dir);
                let have = cases.iter().any(|(b, c)| b.id() == bench.id() && prices(c));
                if let Some(c) = planned.iter().find(|c| prices(c)).filter(|_| !have) {
                    added.push(c.key());
                    cases.push((bench, c.clone()));
                }
            }
        }
    }
    let note = (!added.is_empty()).then(|| {
        format!(
            "added to price the operations its app and command cases count: {}",
            added.join(", ")
        )
    });
    (cases, note)
}

/// Whether the bench's cases count their operations (its family is app or
/// cmd: [`crate::bench::Family::counts_operations`]).
fn counts_operations(bench: &dyn Bench) -> bool {
    crate::bench::FAMILIES
        .iter()
        .any(|f| f.counts_operations() && f.name() == bench.family())
}

/// Whether `case` can give `price` for a workload on `dir` (any directory
/// for a price not tied to one).
fn prices_on(price: &crate::results::price::Price, case: &CaseSpec, dir: Option<&str>) -> bool {
    let has = |k: &str, v: &str| case.params.get(k).is_some_and(|x| param_text(x) == v);
    price.params.iter().all(|(k, v)| has(k, v))
        && (!price.on_dir || dir.is_none_or(|d| has(key::DIR, d)))
}

/// What one `--dir` must hold for a run: the most its cases hold at once
/// (they run one at a time and remove their files, but for the fixtures
/// some keep until the run ends: [`Bench::kept_bytes`]), beside its free
/// space.
#[derive(Debug, Clone, PartialEq)]
pub struct DirNeed {
    /// The directory's name.
    pub name: String,
    /// Its path.
    pub path: std::path::PathBuf,
    /// The most its cases hold at once, bytes: every kept fixture and the
    /// rest of the largest case.
    pub most_bytes: u64,
    /// Of that, what cases keep until the run ends, bytes.
    pub kept_bytes: u64,
    /// Its free space for this user, when known.
    pub free_bytes: Option<u64>,
}

/// The most `cases`, all writing to one `--dir`, hold there at once, and
/// of that what they keep until the run ends, bytes: every kept fixture
/// ([`Bench::kept_bytes`]) and the rest of the largest case (they run one
/// at a time and remove the rest of their files).
pub(crate) fn held_at_once<'a>(
    cases: impl Iterator<Item = &'a (&'static dyn Bench, CaseSpec)>,
) -> (u64, u64) {
    let (mut kept, mut rest) = (0, 0);
    for (b, c) in cases {
        kept += b.kept_bytes(c);
        rest = rest.max(b.disk_bytes(c).saturating_sub(b.kept_bytes(c)));
    }
    (kept + rest, kept)
}

/// What the environments' rounds of case `i` hold at once in its `--dir`
/// when they take turns (bytes): each environment's files of the case. A
/// run of several environments keeps no fixtures ([`keeps_fixtures`]).
pub(crate) fn held_in_turns(
    cases: &[(&'static dyn Bench, CaseSpec)],
    i: usize,
    environments: usize,
) -> u64 {
    let (b, c) = &cases[i];
    b.disk_bytes(c).saturating_mul(environments as u64)
}

/// For each case, the index of the first case that differs from it only
/// in its `--dir` (itself where none comes before it): the cases a
/// `compare --by-dir` matches, by their keys without the directory.
pub(crate) fn dir_groups<'a>(
    cases: impl IntoIterator<Item = &'a crate::bench::CaseSpec>,
) -> Vec<usize> {
    let without_dir = |c: &crate::bench::CaseSpec| {
        let mut params = c.params.clone();
        params.remove(crate::results::params::key::DIR);
        crate::results::case_key(&c.bench, &params)
    };
    let keys: Vec<String> = cases.into_iter().map(without_dir).collect();
    (0..keys.len())
        .map(|i| keys.iter().position(|k| *k == keys[i]).unwrap_or(i))
        .collect()
}

/// Whether some case differs from another only in its `--dir` (`groups`
/// from [`dir_groups`]): a run that compares directories.
pub(crate) fn has_dir_siblings(groups: &[usize]) -> bool {
    groups.iter().enumerate().any(|(i, &g)| g != i)
}

/// Whether a run keeps fixtures for a case's later rounds
/// ([`crate::bench::Context::kept`]): only where it measures each case
/// once a round. Where it compares (more than one of `environments`, or
/// cases differing only in their `--dir`, [`dir_groups`]), every round
/// makes its own, as an environment entered through a prefix always did.
/// Kept, a fixture is written in the case's first round, one environment's
/// before the other's, and in interleaved A/A runs on the Zen 3 VM
/// (2026-12-05) the environment whose io.random set was written first read
/// 0.80-0.99x or 1.16-1.25x the other's for the whole run, as it went
/// first or second: a difference between the runs (B/A 17 % apart, SD of
/// log) that no run's interval held. Made afresh every round, 3.4 % apart
/// over 8 runs (docs/log/precision.md).
pub(crate) fn keeps_fixtures<'a>(
    cases: impl IntoIterator<Item = &'a (&'static dyn Bench, CaseSpec)>,
    environments: usize,
) -> bool {
    environments <= 1 && !has_dir_siblings(&dir_groups(cases.into_iter().map(|(_, c)| c)))
}

/// The needs of every directory of `dirs` that a case of `cases` writes
/// to, in a run of `environments`.
pub(crate) fn dir_needs(
    cases: &[(&'static dyn Bench, CaseSpec)],
    dirs: &[crate::bench::NamedDir],
    environments: usize,
) -> Vec<DirNeed> {
    let keeps = keeps_fixtures(cases, environments);
    dirs.iter()
        .filter_map(|d| {
            let on_it =
                |c: &CaseSpec| c.params.get(key::DIR).and_then(|v| v.as_str()) == Some(&d.name);
            let (mut most, mut kept) = held_at_once(cases.iter().filter(|(_, c)| on_it(c)));
            // where a case works in the directory itself (a command), or
            // the run compares, nothing is kept: each round makes its own
            // fixture
            if !keeps || cases.iter().any(|(b, c)| b.in_place() && on_it(c)) {
                most = cases
                    .iter()
                    .filter(|(_, c)| on_it(c))
                    .map(|(b, c)| b.disk_bytes(c))
                    .max()
                    .unwrap_or(0);
                kept = 0;
            }
            (most > 0).then(|| DirNeed {
                name: d.name.clone(),
                path: d.path.clone(),
                most_bytes: most,
                kept_bytes: kept,
                free_bytes: free_within(&d.path),
            })
        })
        .collect()
}

/// The free space in `dir`, asked within [`crate::deadline::ASK_WITHIN`]:
/// None when it cannot tell, or gave no answer.
fn free_within(dir: &std::path::Path) -> Option<u64> {
    let path = dir.to_path_buf();
    let within = crate::deadline::ASK_WITHIN;
    crate::deadline::on_dir(dir, "statfs", within, move || {
        crate::probe::storage::free_bytes(&path)
    })
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn case(bench: &str, params: &[(&str, Value)]) -> CaseSpec {
        CaseSpec {
            bench: bench.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            metrics: Vec::new(),
        }
    }

    #[test]
    fn commas_inside_brackets_stay_with_their_pattern() {
        assert_eq!(
            split("io.dd[op=write_direct,block=1MiB], os ,cpu.*"),
            vec!["io.dd[op=write_direct,block=1MiB]", "os", "cpu.*"]
        );
        assert_eq!(split("os,"), vec!["os", ""]);
        assert_eq!(split(""), vec![""]);
    }

    #[test]
    fn patterns_parse_into_a_bench_part_and_parameters() {
        assert_eq!(
            parse("io.dd[op=write_direct, block=1MiB]").unwrap(),
            Selector {
                bench: "io.dd".into(),
                params: vec![
                    ("op".into(), "write_direct".into()),
                    ("block".into(), "1MiB".into())
                ],
            }
        );
        assert_eq!(parse("os").unwrap().params, vec![]);
        for (bad, says) in [
            ("", "empty pattern"),
            ("io.dd[op=x", "brackets at the end"),
            ("io.dd]", "without a '['"),
            ("io.dd[op]", "not name=value"),
            ("io.dd[=x]", "lacks a name"),
            ("io.dd[op=]", "lacks a name or a value"),
            ("io.dd[a=[b]]", "nested"),
            ("[op=x]", "names no benchmark"),
            ("nope[op=x]", "no benchmark matches 'nope'"),
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn cases_are_taken_by_every_parameter_and_values_may_be_globs() {
        let direct = case(
            "io.dd",
            &[
                ("op", Value::from("write_direct")),
                ("block", Value::from("1MiB")),
            ],
        );
        let synced = case(
            "io.dd",
            &[
                ("op", Value::from("write_fdatasync")),
                ("block", Value::from("64KiB")),
            ],
        );
        let threads = case("cpu.lu", &[("threads", Value::from(2))]);
        let s = parse("io.dd[op=write_direct]").unwrap();
        assert!(s.takes_case(&direct) && !s.takes_case(&synced) && !s.takes_case(&threads));
        let s = parse("io.*[op=write_*,block=64KiB]").unwrap();
        assert!(!s.takes_case(&direct) && s.takes_case(&synced));
        // numbers compare as they read in the key
        let s = parse("cpu.lu[threads=2]").unwrap();
        assert!(s.takes_case(&threads));
        assert!(!parse("cpu.lu[threads=1]").unwrap().takes_case(&threads));
        // a parameter the case lacks takes nothing
        assert!(!parse("cpu.lu[op=x]").unwrap().takes_case(&threads));
        assert!(parse("io").unwrap().takes_case(&direct));
    }

    #[test]
    fn an_empty_selection_says_which_values_exist() {
        let cases = vec![
            case("io.dd", &[("op", Value::from("write_direct"))]),
            case("io.dd", &[("op", Value::from("read_warm"))]),
        ];
        let why = parse("io.dd[op=write_dirct]")
            .unwrap()
            .explain_empty(&cases);
        assert!(
            why.contains("op is one of read_warm, write_direct"),
            "{why}"
        );
        let why = parse("io.dd[threads=1]").unwrap().explain_empty(&cases);
        assert!(
            why.contains("no parameter 'threads' (they have op)"),
            "{why}"
        );
        let why = parse("io.dd[op=x]").unwrap().explain_empty(&[]);
        assert!(why.contains("plans none"), "{why}");
    }

    #[test]
    fn patterns_match_ids_families_and_globs() {
        assert!(matches_pattern("os.syscall", "os"));
        assert!(matches_pattern("os.syscall", "os.syscall"));
        assert!(matches_pattern("os.syscall", "os.*"));
        assert!(matches_pattern("os.syscall", "*call"));
        assert!(!matches_pattern("os.syscall", "cpu"));
        assert!(!matches_pattern("os.syscall", "os.sys"));
        assert!(matches_pattern("os.syscall", "o*s*c*l"));
        assert!(!matches_pattern("os.syscall", "*x*"));
        assert!(matches_pattern("os.syscall", "**os.sys*ll**"));
    }

    #[test]
    fn many_stars_match_without_backtracking_blow_up() {
        let stars = "*".repeat(40);
        assert!(matches_pattern("os.syscall", &stars));
        assert!(!matches_pattern("os.syscall", &format!("{stars}x{stars}")));
    }

    #[test]
    fn select_takes_benches_by_their_part_and_cases_by_parameters() {
        assert_eq!(benches(&[]).len(), ALL.len());
        // what `run` plans for these selectors' benches in quick
        let planned = |sel: &[Selector]| -> Vec<(&'static dyn Bench, CaseSpec)> {
            let p = crate::bench::TestEnv::plan(crate::config::Suite::Quick, 2);
            benches(sel)
                .into_iter()
                .flat_map(|b| b.cases(&p).into_iter().map(move |c| (b, c)))
                .collect()
        };
        let sel = vec![
            parse("os.syscall[call=getppid]").unwrap(),
            parse("os.fork").unwrap(),
        ];
        let ids: Vec<&str> = benches(&sel).iter().map(|b| b.id()).collect();
        assert_eq!(ids, vec!["os.syscall", "os.fork"]);
        let all = planned(&sel);
        let fork_cases = all.iter().filter(|(b, _)| b.id() == "os.fork").count();
        let keys: Vec<String> = cases(&sel, all)
            .unwrap()
            .iter()
            .map(|(_, c)| c.key())
            .collect();
        assert_eq!(keys.len(), 1 + fork_cases, "{keys:?}");
        assert_eq!(keys[0], "os.syscall[call=getppid]");
        let bad = vec![parse("os.syscall[call=getpid]").unwrap()];
        let Err(why) = cases(&bad, planned(&bad)) else {
            panic!("call=getpid takes no case")
        };
        assert!(why.contains("call is one of getppid"), "{why}");
    }

    #[test]
    fn a_directory_holds_every_kept_fixture_and_the_rest_of_its_largest_case() {
        let plan = crate::bench::TestEnv::plan(crate::config::Suite::Quick, 2);
        let first = |id: &str| {
            let b = *ALL.iter().find(|b| b.id() == id).unwrap();
            (b, b.cases(&plan).remove(0))
        };
        let (status, dd) = (first("app.status"), first("io.dd"));
        let (tree, file) = (status.0.disk_bytes(&status.1), dd.0.disk_bytes(&dd.1));
        assert!(tree > 0 && file > 0 && dd.0.kept_bytes(&dd.1) == 0);
        // app.status keeps its tree for the run, io.dd removes its file
        let both = [status, dd];
        assert_eq!(held_at_once(both.iter()), (tree + file, tree));
        assert_eq!(held_at_once(both[1..].iter()), (file, 0));
        let dir = both[0]
            .1
            .params
            .get(key::DIR)
            .and_then(|v| v.as_str())
            .unwrap()
            .to_string();
        // in turns, each environment holds its own files of the case at
        // once, and none is kept where environments compare
        assert_eq!(held_in_turns(&both, 1, 2), 2 * file);
        assert_eq!(held_in_turns(&both, 0, 3), 3 * tree);
        assert!(keeps_fixtures(&both, 1) && !keeps_fixtures(&both, 2));
        // nor where cases differ only in their --dir
        let mut other = both[0].clone();
        other
            .1
            .params
            .insert(key::DIR.into(), serde_json::json!("dir2"));
        assert!(!keeps_fixtures(&[both[0].clone(), other], 1));
        let dirs = [crate::bench::NamedDir {
            name: dir.clone(),
            path: std::env::temp_dir(),
        }];
        let need = |envs: usize| {
            let n = dir_needs(&both, &dirs, envs).remove(0);
            (n.most_bytes, n.kept_bytes)
        };
        assert_eq!(need(1), (tree + file, tree));
        assert_eq!(need(2), (tree.max(file), 0));
    }
}
