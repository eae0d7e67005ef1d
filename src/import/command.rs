//! `envbench import`: checks the output path, reads and parses every file
//! (detecting the format with `--from auto`), builds the result file,
//! validates it as `load` would, and saves it atomically. Every refusal is
//! a [`UsageError`] (exit 2) naming the file and line.

use super::build::{self, Input, Options};
use super::{detect, read_input, Format, ImportError};
use crate::cli::ImportArgs;
use crate::{check, store, UsageError};
use std::process::ExitCode;

/// Runs `envbench import`.
///
/// # Errors
/// [`UsageError`] for a bad output path, label, `--env` or `--param`, or an
/// input that cannot be read as its format; I/O errors while saving.
pub fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let output = store::output_path(&args.output, args.force, "-o").map_err(UsageError)?;
    let label = match &args.label {
        Some(l) => l.clone(),
        None => default_label(args),
    };
    check::label(&label)?;
    let mut inputs = Vec::new();
    for path in &args.files {
        let fixed = args.from.format();
        let text = read_input(path, fixed.map_or("auto", Format::name)).map_err(usage)?;
        let format = match fixed {
            Some(f) => f,
            None => {
                let f = detect(&text).ok_or_else(|| {
                    usage(ImportError {
                        file: path.clone(),
                        format: "auto",
                        line: 1,
                        msg: format!(
                            "not recognised as stream, sysbench, iozone, fio, dd or hpcc output (it begins '{}'); give --from if it is one of them",
                            crate::terminal::escape(text.lines().next().unwrap_or("").chars().take(60).collect::<String>().as_str())
                        ),
                    })
                })?;
                eprintln!("envbench: {}: read as {} output", path.display(), f.name());
                f
            }
        };
        let parsed = format.parse(&text).map_err(|e| {
            usage(ImportError {
                file: path.clone(),
                format: format.name(),
                line: e.line,
                msg: e.msg,
            })
        })?;
        let modified_unix = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs_f64());
        inputs.push(Input {
            path: path.clone(),
            format,
            parsed,
            modified_unix,
            digest: build::fnv1a(text.as_bytes()),
        });
    }
    let opts = Options {
        label,
        env: args.env.clone(),
        params: args.params.clone(),
        output: output.clone(),
        seed: args.seed.unwrap_or(crate::config::DEFAULT_SEED),
    };
    let mut file = build::build(&inputs, &opts).map_err(UsageError)?;
    crate::validate::validate(&mut file).map_err(UsageError)?;
    store::save(&output, &file).map_err(|e| {
        if e.is_bad_path() {
            anyhow::Error::new(UsageError(format!("cannot write the result file: {e}")))
        } else {
            anyhow::Error::new(e).context("saving the imported results")
        }
    })?;
    let (ok, invalid) = file.cases.iter().fold((0, 0), |(o, i), c| match c.status {
        crate::results::CaseStatus::Ok => (o + 1, i),
        _ => (o, i + 1),
    });
    let anomalies: usize = file.cases.iter().map(|c| c.anomalies.len()).sum();
    eprintln!(
        "envbench: {} case(s) from {} file(s) as '{}': {ok} usable, {invalid} invalid, {anomalies} anomal{} (envbench show {} lists them); wrote {}",
        file.cases.len(),
        inputs.len(),
        file.label,
        if anomalies == 1 { "y" } else { "ies" },
        output.display(),
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn usage(e: ImportError) -> UsageError {
    UsageError(e.to_string())
}

/// `--env virtualization=...`, else the output's file stem.
fn default_label(args: &ImportArgs) -> String {
    if let Some((_, v)) = args.env.iter().rev().find(|(k, _)| k == "virtualization") {
        return v.replace('/', "-");
    }
    args.output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".into())
}
