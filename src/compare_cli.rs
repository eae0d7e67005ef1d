//! `envbench compare`: load result files, group them into environments,
//! compare, render, write the requested files.

use crate::cli::{ColorArg, CompareArgs};
use crate::compare::{compare, Environment, Options};
use crate::config::DEFAULT_SEED;
use crate::history::History;
use crate::report::compare::{csv_table, render, Style};
use crate::report::render_csv;
use crate::results::ResultFile;
use crate::{store, UsageError};
use anyhow::Context as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Groups runs by label, in order of first appearance.
fn by_label(files: Vec<ResultFile>) -> Vec<Environment> {
    let mut envs: Vec<Environment> = Vec::new();
    for f in files {
        match envs.iter_mut().find(|e| e.label == f.label) {
            Some(e) => e.runs.push(f),
            None => envs.push(Environment {
                label: f.label.clone(),
                runs: vec![f],
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
                }),
            }
        }
    }
    envs
}

/// The runs an argument names: an existing file, else a history id, else
/// every run of that label in the history (opened only when needed).
///
/// # Errors
/// Unreadable files, an unusable history, or an argument that names nothing.
pub fn resolve(args: &[PathBuf], db: Option<&PathBuf>) -> anyhow::Result<Vec<ResultFile>> {
    let mut history: Option<History> = None;
    let mut out = Vec::new();
    for arg in args {
        let text = arg.to_string_lossy();
        // an existing file, or something shaped like a path: load it (the error names it)
        if arg.exists() || text.contains('/') || text.ends_with(".json") {
            out.push(store::load(arg)?);
            continue;
        }
        if history.is_none() {
            history = Some(History::open_read_only(&crate::history::db_path(db)?)?);
        }
        let h = history.as_ref().expect("invariant: opened just above");
        let runs = match text.parse::<i64>() {
            Ok(id) => h.get(id)?.into_iter().collect(),
            Err(_) => h.by_label(&text)?,
        };
        if runs.is_empty() {
            return Err(UsageError(format!(
                "'{text}' is not a file, nor a history id or label (see `envbench history`)"
            ))
            .into());
        }
        out.extend(runs);
    }
    Ok(out)
}

/// The environments the arguments describe, baseline first.
fn environments(args: &CompareArgs) -> anyhow::Result<Vec<Environment>> {
    if !args.base.is_empty() || !args.other.is_empty() {
        if args.dirs {
            return Err(
                UsageError("--dirs takes result files, not --base and --other".into()).into(),
            );
        }
        if args.base.is_empty() || args.other.is_empty() || !args.files.is_empty() {
            return Err(
                UsageError("--base and --other go together, without other files".into()).into(),
            );
        }
        let (base, other) = (
            resolve(&args.base, args.db.as_ref())?,
            resolve(&args.other, args.db.as_ref())?,
        );
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
        return Ok(vec![
            Environment {
                label: bl,
                runs: base,
            },
            Environment {
                label: ol,
                runs: other,
            },
        ]);
    }
    if args.files.is_empty() {
        return Err(UsageError(
            "give result files to compare (or --base FILE... --other FILE...)".into(),
        )
        .into());
    }
    let runs = resolve(&args.files, args.db.as_ref())?;
    let mut envs = if args.dirs {
        let envs = by_dir(runs);
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
    } else {
        by_label(runs)
    };
    if let Some(b) = &args.baseline {
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

/// `path` made absolute with its directory's links resolved, so two
/// spellings of one file compare equal, whether or not it exists yet.
fn identity(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    path.file_name().map_or(dir.clone(), |n| dir.join(n))
}

/// The requested output files, checked before anything is read or
/// computed: none may be an input, two may not share a path, an existing
/// one needs `--force`, and a device, FIFO or directory is refused.
fn outputs(args: &CompareArgs) -> Result<Vec<(&'static str, PathBuf)>, UsageError> {
    let inputs: Vec<PathBuf> = (args.files.iter().chain(&args.base).chain(&args.other))
        .filter(|p| p.is_file())
        .map(|p| identity(p))
        .collect();
    let mut out: Vec<(&'static str, PathBuf)> = Vec::new();
    for (flag, path) in [
        ("--csv", &args.csv),
        ("--html", &args.html),
        ("--json", &args.json),
    ] {
        let Some(path) = path else { continue };
        let id = identity(path);
        if inputs.contains(&id) {
            return Err(UsageError(format!(
                "{flag} {}: is one of the files being compared; choose another name",
                path.display()
            )));
        }
        if let Some((other, _)) = out.iter().find(|(_, p)| identity(p) == id) {
            return Err(UsageError(format!(
                "{flag} and {other} both write {}; give each its own file",
                path.display()
            )));
        }
        out.push((
            flag,
            store::output_path(path, args.force, flag).map_err(UsageError)?,
        ));
    }
    Ok(out)
}

/// Runs `envbench compare`.
///
/// # Errors
/// Usage errors, unreadable files, environments that cannot be compared.
pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let outputs = outputs(args)?;
    let envs = environments(args)?;
    let cmp = compare(
        &envs,
        &Options {
            threshold: args.threshold,
            seed: args.seed.unwrap_or(DEFAULT_SEED),
            include_suspect: args.include_suspect,
        },
    )?;
    let color = match args.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let style = if args.markdown {
        Style::Markdown
    } else {
        Style::Text { color }
    };
    let views = crate::bench::views();
    for (flag, path) in &outputs {
        let text = match *flag {
            "--csv" => render_csv(&csv_table(&cmp)),
            "--html" => crate::report::html::render(&cmp, &envs, &views),
            _ => {
                serde_json::to_string_pretty(&cmp).expect("invariant: comparisons serialise") + "\n"
            }
        };
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    crate::print_stdout(&crate::terminal::escape_output(&render(
        &cmp,
        &envs,
        &views,
        style,
        args.all_metrics || args.markdown,
    )))?;
    Ok(ExitCode::SUCCESS)
}
