//! `envbench import`: reads and parses every file (detecting the tool with
//! `--from auto`), builds the result file, validates it as `load` would,
//! and saves it atomically. Every refusal is a [`UsageError`] (exit 2)
//! naming the file and line.

use crate::error::UsageError;
use crate::import::build::{self, Input, Options};
use crate::import::{detect, read_input, ImportError, Importer};
use crate::store;
use std::path::PathBuf;
use std::process::ExitCode;

/// Everything `envbench import` needs, checked before any file is read.
pub struct ImportSettings {
    /// The tool that wrote the files; None: recognise each file's.
    pub importer: Option<&'static dyn Importer>,
    /// The outputs, one round each.
    pub files: Vec<PathBuf>,
    /// The result file to write (checked: `--force` for an existing one).
    pub output: PathBuf,
    /// The environment's label (checked).
    pub label: String,
    /// Facts about the environment (`--env`).
    pub env: Vec<(String, String)>,
    /// Case parameters the outputs do not print (`--param`).
    pub params: Vec<(String, String)>,
    /// Seed of the summaries' bootstrap.
    pub seed: u64,
}

/// Runs `envbench import`.
///
/// # Errors
/// [`UsageError`] for a bad `--env` or `--param`, or an input that cannot
/// be read as its format; I/O errors while saving.
pub fn run(s: ImportSettings) -> anyhow::Result<ExitCode> {
    let output = s.output.clone();
    let mut inputs = Vec::new();
    let mut records = 0usize;
    for path in &s.files {
        let fixed = s.importer;
        let text = read_input(path, fixed.map_or("auto", |i| i.name())).map_err(usage)?;
        let format = match fixed {
            Some(f) => f,
            None => {
                let f = detect(&text).ok_or_else(|| {
                    usage(ImportError {
                        file: path.clone(),
                        format: "auto",
                        line: 1,
                        msg: format!(
                            "not recognised as {} output (it begins '{}'); give --from if it is one of them",
                            crate::import::names_in_words(),
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
        records += parsed.records.len();
        if records > crate::import::MAX_RECORDS {
            return Err(usage(ImportError {
                file: path.clone(),
                format: format.name(),
                line: 0,
                msg: crate::import::too_many_records(&format!(
                    " in the {} file(s) up to this one",
                    inputs.len() + 1
                )),
            })
            .into());
        }
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
        label: s.label,
        env: s.env,
        params: s.params,
        output: output.clone(),
        seed: s.seed,
    };
    let mut file = build::build(&inputs, &opts).map_err(UsageError)?;
    crate::results::validate::validate(&mut file).map_err(UsageError)?;
    // what readers refuse is never written
    let bytes = serde_json::to_vec(&file).map_or(0, |b| b.len() as u64);
    if bytes > store::MAX_FILE_BYTES {
        return Err(UsageError(format!(
            "the result file would be {} MiB, larger than the {} MiB envbench reads; import fewer files or cases at once",
            bytes >> 20,
            store::MAX_FILE_BYTES >> 20
        ))
        .into());
    }
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
