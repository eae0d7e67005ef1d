//! Runs grouped into the environments a comparison sets side by side: by
//! label (one environment per label, or per label and host), as a base and
//! another given apart, or by the directory their file cases ran in
//! (`compare --by-dir`); the baseline first.

use super::Environment;
use crate::results::params::key;
use crate::results::{case_key, ResultFile};

/// `--base` and `--other`: two environments, each named by its runs'
/// label when they share one (`base` and `other` otherwise).
pub(crate) fn base_and_other(base: Vec<ResultFile>, other: Vec<ResultFile>) -> Vec<Environment> {
    let name = |runs: &[ResultFile], fallback: &str| {
        let first = &runs[0].label;
        if runs.iter().all(|r| &r.label == first) {
            first.clone()
        } else {
            fallback.to_string()
        }
    };
    let (mut bl, ol) = (name(&base, "base"), name(&other, "other"));
    if bl == ol {
        bl = format!("{bl} (base)");
    }
    vec![Environment::new(bl, base), Environment::new(ol, other)]
}

/// Groups runs by label, in order of first appearance; with `per_host`,
/// a label's runs on each host (`label@host`) apart.
pub(crate) fn by_label(mut runs: Vec<ResultFile>, per_host: bool) -> Vec<Environment> {
    if per_host {
        for r in &mut runs {
            let host = r.fingerprint.os.hostname.as_deref().unwrap_or("?");
            r.label = format!("{}@{host}", r.label);
        }
    }
    let mut envs: Vec<Environment> = Vec::new();
    for f in runs {
        match envs.iter_mut().find(|e| e.label == f.label) {
            Some(e) => e.runs.push(f),
            None => envs.push(Environment::new(f.label.clone(), vec![f])),
        }
    }
    envs
}

/// The runs `envbench compare` was given, as it was given them.
pub(crate) enum Given {
    /// Files, history ids or labels.
    Runs(Vec<ResultFile>),
    /// `--base` and `--other`.
    BaseOther(Vec<ResultFile>, Vec<ResultFile>),
}

/// The environments `given` makes: two for `--base` and `--other`
/// ([`base_and_other`], the base first; `by_dir` and `baseline` are not
/// for them), else one per label ([`by_label`], per host with `per_host`)
/// or with `by_dir` one per directory ([`dir_envs`], the directory then
/// taken out of the keys, [`leave_dirs_out`]), `baseline` first; a run
/// given twice is refused ([`repeated_run`]).
///
/// # Errors
/// The sentence saying why the runs make no comparison.
pub(crate) fn environments(
    given: Given,
    by_dir: bool,
    per_host: bool,
    baseline: Option<&str>,
) -> Result<Vec<Environment>, String> {
    let runs = match given {
        Given::BaseOther(base, other) => {
            let envs = base_and_other(base, other);
            return match repeated_run(&envs, false) {
                Some(why) => Err(why),
                None => Ok(envs),
            };
        }
        Given::Runs(runs) => runs,
    };
    let mut envs = if by_dir {
        let envs = dir_envs(runs);
        if envs.len() < 2 {
            return Err(format!(
                "--by-dir needs runs with cases in two or more directories (run with --dir A=PATH --dir B=PATH); found {}",
                if envs.is_empty() {
                    "no directory".to_string()
                } else {
                    format!("only {}", envs[0].label)
                }
            ));
        }
        envs
    } else {
        by_label(runs, per_host)
    };
    if let Some(b) = baseline {
        baseline_first(&mut envs, b)?;
    }
    if let Some(why) = repeated_run(&envs, by_dir) {
        return Err(why);
    }
    if by_dir {
        leave_dirs_out(&mut envs);
    }
    Ok(envs)
}

/// `compare --by-dir`: one environment per directory name, holding every
/// run's cases that ran in that directory, with the directory taken out
/// of their keys so that the same case in two directories matches
/// (as [`environments`] makes them, without its checks, for the tests).
#[cfg(test)]
pub(crate) fn by_dir(files: Vec<ResultFile>) -> Vec<Environment> {
    let mut envs = dir_envs(files);
    leave_dirs_out(&mut envs);
    envs
}

/// The directory parameter of a case, if it has one.
fn dir_of(c: &crate::results::CaseResult) -> Option<String> {
    c.params
        .get(key::DIR)
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

/// One environment per directory name, holding every run's cases that
/// ran in that directory, their keys as they are.
fn dir_envs(files: Vec<ResultFile>) -> Vec<Environment> {
    let mut envs: Vec<Environment> = Vec::new();
    for f in files {
        let mut names: Vec<String> = Vec::new();
        for n in f.cases.iter().filter_map(dir_of) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        for name in names {
            let mut run = f.clone();
            run.label = name.clone();
            run.cases.retain(|c| dir_of(c).as_deref() == Some(&name));
            run.derived.clear();
            match envs.iter_mut().find(|e| e.label == name) {
                Some(e) => e.runs.push(run),
                None => envs.push(Environment::new(name, vec![run])),
            }
        }
    }
    envs
}

/// Takes the directory out of every case's parameters and key.
fn leave_dirs_out(envs: &mut [Environment]) {
    for c in envs
        .iter_mut()
        .flat_map(|e| &mut e.runs)
        .flat_map(|r| &mut r.cases)
    {
        c.params.remove(key::DIR);
        c.key = case_key(&c.bench, &c.params);
    }
}

/// Puts the environment labelled `label` first.
///
/// # Errors
/// When no environment has that label, the sentence naming the labels
/// there are.
pub(crate) fn baseline_first(envs: &mut Vec<Environment>, label: &str) -> Result<(), String> {
    let i = envs.iter().position(|e| e.label == label).ok_or_else(|| {
        let labels: Vec<&str> = envs.iter().map(|e| e.label.as_str()).collect();
        format!(
            "--baseline {label}: no run has that label (labels: {})",
            labels.join(", ")
        )
    })?;
    let e = envs.remove(i);
    envs.insert(0, e);
    Ok(())
}

/// A run given twice (the same file twice, a file and its history id, a
/// label and a file of it), which counted twice would pass for two runs
/// that agree perfectly and shrink the interval to nothing: the sentence
/// naming it. With `by_dir` each run is in every environment, once in each.
pub(crate) fn repeated_run(envs: &[Environment], by_dir: bool) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    for (i, e) in envs.iter().enumerate() {
        for r in &e.runs {
            let scope = if by_dir { i } else { 0 };
            if !seen.insert((scope, r.run_id.as_str())) {
                return Some(format!(
                    "run {} ({}) is given twice; give each run once",
                    r.run_id, r.label
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;
    use crate::units::Direction;
    use serde_json::Value;

    #[test]
    fn dirs_become_environments_and_leave_the_keys() {
        let mut r = run(
            "host",
            "r1",
            &[
                (
                    "io.meta[dir=a,files=100]",
                    "t",
                    Direction::LowerIsBetter,
                    vec![1.0],
                ),
                (
                    "io.meta[dir=b,files=100]",
                    "t",
                    Direction::LowerIsBetter,
                    vec![2.0],
                ),
                ("cpu.int", "t", Direction::LowerIsBetter, vec![3.0]),
            ],
        );
        for c in &mut r.cases[..2] {
            let dir = if c.key.contains("dir=a") { "a" } else { "b" };
            c.params.insert("dir".into(), Value::from(dir));
            c.params.insert("files".into(), Value::from(100));
        }
        let envs = by_dir(vec![r]);
        let labels: Vec<&str> = envs.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, ["a", "b"]);
        for e in &envs {
            let keys: Vec<&str> = e.runs[0].cases.iter().map(|c| c.key.as_str()).collect();
            assert_eq!(keys, ["io.meta[files=100]"]);
        }
        assert_eq!(repeated_run(&envs, true), None);
        assert!(repeated_run(&envs, false).unwrap().contains("r1"));
    }

    #[test]
    fn environments_check_what_compare_was_given() {
        let dir_run = |id: &str, dirs: &[&str]| {
            let keys: Vec<String> = dirs.iter().map(|d| format!("io.meta[dir={d}]")).collect();
            let cases: Vec<(&str, &str, Direction, Vec<f64>)> = keys
                .iter()
                .map(|k| (k.as_str(), "t", Direction::LowerIsBetter, vec![1.0]))
                .collect();
            let mut r = run("host", id, &cases);
            for (c, d) in r.cases.iter_mut().zip(dirs) {
                c.params.insert("dir".into(), Value::from(*d));
            }
            r
        };
        // by directory: the directories' keys leave them, the baseline first
        let envs = environments(
            Given::Runs(vec![dir_run("r1", &["a", "b"])]),
            true,
            false,
            Some("b"),
        )
        .unwrap();
        let labels: Vec<&str> = envs.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, ["b", "a"]);
        assert_eq!(envs[0].runs[0].cases[0].key, "io.meta");
        // one directory compares with nothing
        let e =
            environments(Given::Runs(vec![dir_run("r1", &["a"])]), true, false, None).unwrap_err();
        assert!(
            e.contains("--by-dir needs") && e.ends_with("found only a"),
            "{e}"
        );
        let e = environments(Given::Runs(vec![run("x", "1", &[])]), true, false, None).unwrap_err();
        assert!(e.ends_with("found no directory"), "{e}");
        // a run given twice, by label or as base and other
        let e = environments(
            Given::Runs(vec![run("x", "1", &[]), run("x", "1", &[])]),
            false,
            false,
            None,
        )
        .unwrap_err();
        assert!(e.contains("given twice"), "{e}");
        let e = environments(
            Given::BaseOther(vec![run("x", "1", &[])], vec![run("y", "1", &[])]),
            false,
            false,
            None,
        )
        .unwrap_err();
        assert!(e.contains("given twice"), "{e}");
        // --base and --other keep their order and their keys
        let envs = environments(
            Given::BaseOther(vec![dir_run("1", &["a"])], vec![dir_run("2", &["a"])]),
            false,
            false,
            Some("host"),
        )
        .unwrap();
        assert_eq!(envs[0].runs[0].run_id, "1");
        assert_eq!(envs[1].runs[0].cases[0].key, "io.meta[dir=a]");
    }

    #[test]
    fn labels_group_and_the_baseline_goes_first() {
        let runs = vec![run("a", "1", &[]), run("b", "2", &[]), run("a", "3", &[])];
        let mut envs = by_label(runs, false);
        assert_eq!(envs.len(), 2);
        assert_eq!(envs[0].runs.len(), 2);
        baseline_first(&mut envs, "b").unwrap();
        assert_eq!(envs[0].label, "b");
        let e = baseline_first(&mut envs, "c").unwrap_err();
        assert!(e.contains("labels: b, a"), "{e}");
        let two = base_and_other(vec![run("x", "1", &[])], vec![run("x", "2", &[])]);
        assert_eq!(
            (two[0].label.as_str(), two[1].label.as_str()),
            ("x (base)", "x")
        );
    }
}
