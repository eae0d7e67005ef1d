//! `compare`'s settings: the outputs checked first (none an input, no two
//! alike, `--force` for an existing one, `--figures` a directory that can
//! take the figures), then the runs' grouping and the options.

use super::args::{ColorArg, CompareArgs};
use super::check::{self, identity};
use crate::cmd::compare::{CompareSettings, Inputs};
use crate::compare::{Options, DEFAULT_THRESHOLD};
use crate::config::DEFAULT_SEED;
use crate::error::UsageError;
use crate::report::comparison::export::Format;
use crate::store;
use std::io::IsTerminal;
use std::path::PathBuf;

/// `compare`'s settings: the outputs checked first (none an input, no two
/// alike, `--force` for an existing one), then the runs' grouping.
pub(crate) fn settings(a: CompareArgs) -> Result<CompareSettings, UsageError> {
    let db = check::db(a.db.db.as_ref())?;
    let exports = exports(&a)?;
    let inputs = if !a.base.is_empty() || !a.other.is_empty() {
        if a.by_dir {
            return Err(UsageError(
                "--by-dir takes result files, not --base and --other".into(),
            ));
        }
        if a.base.is_empty() || a.other.is_empty() || !a.files.is_empty() {
            return Err(UsageError(
                "--base and --other go together, without other files".into(),
            ));
        }
        Inputs::BaseOther {
            base: a.base,
            other: a.other,
        }
    } else if a.files.is_empty() {
        return Err(UsageError(
            "give result files to compare (or --base FILE... --other FILE...)".into(),
        ));
    } else {
        Inputs::Runs(a.files)
    };
    let color = match a.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let stdout = if a.markdown {
        Format::Markdown
    } else {
        Format::Text
    };
    Ok(CompareSettings {
        inputs,
        db,
        filter: filter(&a.filters)?,
        per_host: a.per_host,
        baseline: a.baseline,
        by_dir: a.by_dir,
        options: Options {
            threshold: a.threshold.unwrap_or(DEFAULT_THRESHOLD),
            seed: a.seed.unwrap_or(DEFAULT_SEED),
            // no suspect kind is shown (none has predicted a worse
            // figure), so there is nothing for an option to leave out
            exclude_suspect: false,
            prices: crate::bench::prices(),
        },
        stdout,
        all_metrics: a.all_metrics.all_metrics,
        verbose: a.verbose,
        color,
        exports,
    })
}

/// `--where FIELD=VALUE`, each field at most once.
fn filter(given: &[String]) -> Result<crate::history::Filter, UsageError> {
    let mut f = crate::history::Filter::default();
    for w in given {
        let (field, value) = w.split_once('=').unwrap_or((w.as_str(), ""));
        let slot = match field.trim() {
            "host" => &mut f.host,
            "cpu" => &mut f.cpu,
            "kernel" => &mut f.kernel,
            "virt" => &mut f.virt,
            other => {
                return Err(UsageError(format!(
                    "--where {w}: no field '{other}' (host, cpu, kernel or virt, as FIELD=VALUE)"
                )))
            }
        };
        if value.is_empty() || slot.is_some() {
            return Err(UsageError(format!(
                "--where {w}: give each field once, with a value (FIELD=VALUE)"
            )));
        }
        *slot = Some(value.to_string());
    }
    Ok(f)
}

/// The files `compare` is asked to write, each with its format: none may
/// be an input, two may not share a path, an existing one needs
/// `--force`, and a device, FIFO or directory is refused.
fn exports(a: &CompareArgs) -> Result<Vec<(Format, PathBuf)>, UsageError> {
    let input_files: Vec<&PathBuf> = (a.files.iter().chain(&a.base).chain(&a.other))
        .filter(|p| p.is_file())
        .collect();
    let inputs: Vec<PathBuf> = input_files.iter().map(|p| identity(p)).collect();
    let figures = a
        .figures
        .as_deref()
        .map(store::figures::figures_dir)
        .transpose()
        .map_err(UsageError)?;
    let mut out: Vec<(Format, PathBuf)> = Vec::new();
    for (format, path) in [
        (Format::Csv, &a.csv),
        (Format::Html, &a.html),
        (Format::Json, &a.json),
    ] {
        let Some(path) = path else { continue };
        let flag = format
            .flag()
            .expect("invariant: a file's format has its flag");
        let id = identity(path);
        if inputs.contains(&id) || input_files.iter().any(|i| store::same_file(i, path)) {
            return Err(UsageError(format!(
                "{flag} {}: is one of the files being compared; choose another name",
                path.display()
            )));
        }
        if let Some(dir) = &figures {
            let dir_id = identity(dir);
            if id == dir_id {
                return Err(UsageError(format!(
                    "{flag} and --figures both write {}; give each its own path",
                    path.display()
                )));
            }
            if id.starts_with(&dir_id) {
                return Err(UsageError(format!(
                    "{flag} {}: is inside --figures {}, which holds only the figures; \
                     write it elsewhere",
                    path.display(),
                    dir.display()
                )));
            }
        }
        if let Some((other, _)) = out.iter().find(|(_, p)| identity(p) == id) {
            return Err(UsageError(format!(
                "{flag} and {} both write {}; give each its own file",
                other
                    .flag()
                    .expect("invariant: a file's format has its flag"),
                path.display()
            )));
        }
        out.push((
            format,
            store::output_path(path, a.force, flag).map_err(UsageError)?,
        ));
    }
    if let Some(dir) = figures {
        out.push((Format::Figures, dir));
    }
    Ok(out)
}
