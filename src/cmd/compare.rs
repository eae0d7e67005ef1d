//! `envbench compare`: load the runs the settings name (files, history ids,
//! labels), group them into environments, compare, and write the
//! comparison in every format asked for. Ctrl-C or SIGTERM exits 130 and
//! leaves no output half-written: files are written through temporary
//! ones under the signal lock, figures into a hidden directory beside DIR.

use super::resolve;
use crate::compare::{compare_as, group, Environment, Options};
use crate::error::{print_stdout, UsageError};
use crate::report::comparison::export::{Export, Format};
use crate::report::comparison::Report;
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
    /// `--by-dir`: each directory name of the runs is an environment.
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
    /// environment (or one directory name, with `--by-dir`).
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
pub(crate) fn run(s: CompareSettings) -> anyhow::Result<ExitCode> {
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
        .map(|(_, dir)| crate::store::figures::Staging::create(dir))
        .transpose()
        .map_err(UsageError)?;
    let mut envs = environments(&s)?;
    // the history asked once: a server's answers both. An environment of
    // one run takes the earlier runs like it as evidence of how much its
    // runs differ.
    let alone: Vec<usize> = (0..envs.len())
        .filter(|&i| envs[i].runs.len() == 1)
        .collect();
    let asked = {
        let compared: Vec<&crate::results::ResultFile> =
            envs.iter().flat_map(|e| &e.runs).collect();
        let lone: Vec<&crate::results::ResultFile> =
            alone.iter().map(|&i| &envs[i].runs[0]).collect();
        crate::history::for_comparison(s.db.as_ref(), &compared, &lone, EARLIER_RUNS)
    };
    refuse_inputs_as_outputs(&s.exports, &asked.files)?;
    assert_eq!(asked.earlier.len(), alone.len(), "invariant: a list a run");
    for (i, earlier) in alone.into_iter().zip(asked.earlier) {
        envs[i].earlier = earlier;
    }
    let cmp = compare_as(&envs, &s.options, s.by_dir)?;
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
    // data was escaped when read; envbench's colours pass only when asked
    print_stdout(&if s.color {
        crate::terminal::escape_coloured_output(&text)
    } else {
        crate::terminal::escape_output(&text)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Refuses an output that is the file the history recorded for a run
/// given by id or label (`recorded`: each such file and how it is named),
/// which `--force` would otherwise replace (files given by path, and their
/// hard links, the settings refused already).
///
/// # Errors
/// [`UsageError`] naming the output and the run.
fn refuse_inputs_as_outputs(
    exports: &[(Format, PathBuf)],
    recorded: &[(PathBuf, String)],
) -> anyhow::Result<()> {
    for (_, out) in exports {
        if let Some((_, what)) = recorded
            .iter()
            .find(|(f, _)| crate::store::same_file(f, out))
        {
            return Err(UsageError(format!(
                "{}: is the file of {what}, being compared; choose another name",
                out.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Most earlier runs taken as evidence of the spread between runs.
const EARLIER_RUNS: usize = 20;

/// The environments the settings describe, baseline first; a run given
/// twice is refused ([`group::environments`]).
fn environments(s: &CompareSettings) -> anyhow::Result<Vec<Environment>> {
    let runs = |given: &[PathBuf]| resolve(given, s.db.as_ref(), &s.filter);
    let given = match &s.inputs {
        Inputs::BaseOther { base, other } => group::Given::BaseOther(runs(base)?, runs(other)?),
        Inputs::Runs(files) => group::Given::Runs(runs(files)?),
    };
    group::environments(given, s.by_dir, s.per_host, s.baseline.as_deref())
        .map_err(|why| UsageError(why).into())
}
