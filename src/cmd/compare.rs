//! `envbench compare`: load the runs the settings name (files, history ids,
//! labels), group them into environments, compare, and write the
//! comparison in every format asked for. Ctrl-C or SIGTERM exits 130 and
//! leaves no output half-written: files are written through temporary
//! ones under the signal lock, figures into a hidden directory beside DIR.

mod figures;

use super::resolve;
use crate::compare::{compare, compare_dirs, Environment, Options};
use crate::error::{print_stdout, UsageError};
use crate::report::export::{Export, Format};
use crate::report::Report;
use crate::results::ResultFile;
use anyhow::Context as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Everything `envbench compare` needs, checked before anything is read.
pub struct CompareSettings {
    /// The runs to compare.
    pub inputs: Inputs,
    /// History database for ids and labels (None: the default place).
    pub db: Option<crate::history::Db>,
    /// `--where`: which runs to take, by fingerprint.
    pub filter: crate::history::Filter,
    /// `--per-host`: a label's runs on each host are an environment of their own.
    pub per_host: bool,
    /// `--baseline LABEL`.
    pub baseline: Option<String>,
    /// `--dirs`: each directory name of the runs is an environment.
    pub by_dir: bool,
    /// Threshold, bootstrap seed, suspect cases in the means.
    pub options: Options,
    /// The format printed on stdout (text, or Markdown).
    pub stdout: Format,
    /// Every metric and the views' tables on stdout.
    pub all_metrics: bool,
    /// Everything else on stdout: warnings in full, fingerprints, method.
    pub verbose: bool,
    /// ANSI colours on stdout.
    pub color: bool,
    /// The files to write, each in its format: checked already (not an
    /// input, not a device, `--force` for an existing file).
    pub exports: Vec<(Format, PathBuf)>,
}

/// The runs a comparison is given.
#[derive(Debug, Clone, PartialEq)]
pub enum Inputs {
    /// Files, history ids or labels: runs with one label form one
    /// environment (or one directory name, with `--dirs`).
    Runs(Vec<PathBuf>),
    /// `--base` and `--other`: two environments whatever the labels.
    BaseOther {
        /// The baseline's runs.
        base: Vec<PathBuf>,
        /// The other environment's runs.
        other: Vec<PathBuf>,
    },
}

/// Runs `envbench compare`.
///
/// # Errors
/// Unreadable files, environments that cannot be compared, a file that
/// cannot be written.
pub fn run(s: CompareSettings) -> anyhow::Result<ExitCode> {
    // the end waits for a signal's cleanup under way (dropped last)
    let _settle = crate::cleanup::Settle;
    crate::cleanup::exit_on_signal().context("cannot watch for Ctrl-C")?;
    // --figures: its hidden directory is made before anything is read, so
    // a directory that takes no new entry is a usage error, not a failure
    // after the comparison
    let mut staging = s
        .exports
        .iter()
        .find(|(f, _)| *f == Format::Figures)
        .map(|(_, dir)| figures::Staging::create(dir))
        .transpose()
        .map_err(UsageError)?;
    let mut envs = environments(&s)?;
    refuse_repeated_runs(&envs, s.by_dir)?;
    refuse_inputs_as_outputs(&s, &envs)?;
    attach_earlier(&mut envs, s.db.as_ref());
    let cmp = if s.by_dir {
        compare_dirs(&envs, &s.options)?
    } else {
        compare(&envs, &s.options)?
    };
    let (views, topics) = (crate::bench::views(), crate::bench::topics());
    let report = Report {
        comparison: &cmp,
        environments: &envs,
        views: &views,
        topics: &topics,
        all_metrics: s.all_metrics,
        verbose: s.verbose,
        color: s.color,
    };
    for (format, path) in &s.exports {
        match format.exporter().export(&report) {
            // whole or not at all: a full disk never truncates an earlier report
            Export::Document(text) => crate::store::write_document(path, text.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?,
            Export::Files { files, renamed } => {
                staging
                    .take()
                    .expect("invariant: the one --figures has its directory")
                    .write(&files)?;
                if !renamed.is_empty() {
                    eprint!(
                        "{}",
                        crate::terminal::escape_output(&format!(
                            "envbench: --figures {}: figures whose name another had first \
                             were numbered:\n{}",
                            path.display(),
                            renamed
                                .iter()
                                .map(|r| format!("  {r}\n"))
                                .collect::<String>()
                        ))
                    );
                }
            }
        }
    }
    let text = match s.stdout.exporter().export(&report) {
        Export::Document(text) => text,
        Export::Files { .. } => unreachable!("invariant: stdout is text or Markdown"),
    };
    print_stdout(&crate::terminal::escape_output(&text))?;
    Ok(ExitCode::SUCCESS)
}

/// Refuses a run given twice (the same file twice, a file and its
/// history id, a label and a file of it): counted twice it would pass for
/// two runs that agree perfectly and shrink the interval to nothing.
///
/// # Errors
/// [`UsageError`] naming the run.
fn refuse_repeated_runs(envs: &[Environment], by_dir: bool) -> anyhow::Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for (i, e) in envs.iter().enumerate() {
        for r in &e.runs {
            // with --dirs each run is in every environment, once in each
            let scope = if by_dir { i } else { 0 };
            if !seen.insert((scope, r.run_id.as_str())) {
                return Err(UsageError(format!(
                    "run {} ({}) is given twice; give each run once",
                    r.run_id, r.label
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// Refuses an output that is the file the history recorded for a run
/// given by id or label, which `--force` would otherwise replace (files
/// given by path, and their hard links, the settings refused already).
///
/// # Errors
/// [`UsageError`] naming the output and the run.
fn refuse_inputs_as_outputs(s: &CompareSettings, envs: &[Environment]) -> anyhow::Result<()> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let ids: Vec<&str> = envs
        .iter()
        .flat_map(|e| &e.runs)
        .map(|r| r.run_id.as_str())
        .collect();
    if let Some(history) = existing_history(s.db.as_ref()) {
        for e in history.list().unwrap_or_default() {
            if ids.contains(&e.run_id.as_str()) {
                files.push((
                    PathBuf::from(&e.path),
                    format!("run {} ({})", e.run_id, e.path),
                ));
            }
        }
    }
    for (_, out) in &s.exports {
        if let Some((_, what)) = files.iter().find(|(f, _)| crate::store::same_file(f, out)) {
            return Err(UsageError(format!(
                "{}: is the file of {what}, being compared; choose another name",
                out.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// The history at `db`, when it exists and opens: an SQLite file that is
/// there, or a server that answers.
fn existing_history(db: Option<&crate::history::Db>) -> Option<crate::history::History> {
    use crate::history::Db;
    crate::history::db_path(db)
        .ok()
        .filter(|d| match d {
            Db::File(p) => p.is_file(),
            Db::Server(_) => true,
        })
        .and_then(|d| crate::history::History::open_read_only(&d).ok())
}

/// Most earlier runs taken as evidence of the spread between runs.
const EARLIER_RUNS: usize = 20;

/// For each environment of a single run, the earlier runs on the same
/// machine from the history (evidence of how much its runs differ). A
/// history that cannot be opened gives none: the comparison then says
/// where else the spread came from.
fn attach_earlier(envs: &mut [Environment], db: Option<&crate::history::Db>) {
    if envs.iter().all(|e| e.runs.len() != 1) {
        return;
    }
    let Some(history) = existing_history(db) else {
        return;
    };
    for e in envs.iter_mut().filter(|e| e.runs.len() == 1) {
        e.earlier = history
            .similar(&e.runs[0], EARLIER_RUNS)
            .unwrap_or_default();
    }
}

/// The environments the settings describe, baseline first.
fn environments(s: &CompareSettings) -> anyhow::Result<Vec<Environment>> {
    let mut envs = match &s.inputs {
        Inputs::BaseOther { base, other } => {
            let (base, other) = (
                resolve(base, s.db.as_ref(), &s.filter)?,
                resolve(other, s.db.as_ref(), &s.filter)?,
            );
            return Ok(base_and_other(base, other));
        }
        Inputs::Runs(files) if s.by_dir => {
            let envs = by_dir(resolve(files, s.db.as_ref(), &s.filter)?);
            if envs.len() < 2 {
                return Err(UsageError(format!(
                    "--dirs needs runs with cases in two or more directories (run with --dir A=PATH --dir B=PATH); found {}",
                    if envs.is_empty() {
                        "no directory".to_string()
                    } else {
                        format!("only {}", envs[0].label)
                    }
                ))
                .into());
            }
            envs
        }
        Inputs::Runs(files) => {
            let mut runs = resolve(files, s.db.as_ref(), &s.filter)?;
            if s.per_host {
                for r in &mut runs {
                    let host = r.fingerprint.os.hostname.as_deref().unwrap_or("?");
                    r.label = format!("{}@{host}", r.label);
                }
            }
            by_label(runs)
        }
    };
    if let Some(b) = &s.baseline {
        let i = envs.iter().position(|e| &e.label == b).ok_or_else(|| {
            let labels: Vec<&str> = envs.iter().map(|e| e.label.as_str()).collect();
            UsageError(format!(
                "--baseline {b}: no run has that label (labels: {})",
                labels.join(", ")
            ))
        })?;
        let e = envs.remove(i);
        envs.insert(0, e);
    }
    Ok(envs)
}

/// `--base` and `--other`: two environments, each named by its runs'
/// label when they share one (`base` and `other` otherwise).
fn base_and_other(base: Vec<ResultFile>, other: Vec<ResultFile>) -> Vec<Environment> {
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
    vec![
        Environment {
            label: bl,
            runs: base,
            earlier: Vec::new(),
        },
        Environment {
            label: ol,
            runs: other,
            earlier: Vec::new(),
        },
    ]
}

/// Groups runs by label, in order of first appearance.
fn by_label(files: Vec<ResultFile>) -> Vec<Environment> {
    let mut envs: Vec<Environment> = Vec::new();
    for f in files {
        match envs.iter_mut().find(|e| e.label == f.label) {
            Some(e) => e.runs.push(f),
            None => envs.push(Environment {
                label: f.label.clone(),
                runs: vec![f],
                earlier: Vec::new(),
            }),
        }
    }
    envs
}

/// `compare --dirs`: one environment per directory name, holding every
/// run's cases that ran in that directory, with the directory taken out
/// of their keys so that the same case in two directories matches.
fn by_dir(files: Vec<ResultFile>) -> Vec<Environment> {
    let mut envs: Vec<Environment> = Vec::new();
    for f in files {
        let mut names: Vec<String> = Vec::new();
        for c in &f.cases {
            if let Some(n) = c.params.get("dir").and_then(|v| v.as_str()) {
                if !names.iter().any(|x| x == n) {
                    names.push(n.to_string());
                }
            }
        }
        for name in names {
            let mut run = f.clone();
            run.label = name.clone();
            run.cases
                .retain(|c| c.params.get("dir").and_then(|v| v.as_str()) == Some(&name));
            for c in &mut run.cases {
                c.params.remove("dir");
                c.key = c
                    .key
                    .replace(&format!("dir={name},"), "")
                    .replace(&format!(",dir={name}]"), "]")
                    .replace(&format!("[dir={name}]"), "");
            }
            run.derived.clear();
            match envs.iter_mut().find(|e| e.label == name) {
                Some(e) => e.runs.push(run),
                None => envs.push(Environment {
                    label: name,
                    runs: vec![run],
                    earlier: Vec::new(),
                }),
            }
        }
    }
    envs
}
