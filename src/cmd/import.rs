//! `envbench import`: has every file read and parsed (the tool detected
//! with `--from auto`) and the result file built ([`crate::import::assemble`]),
//! validates it as `load` would, and saves it atomically. Every refusal is a [`UsageError`] (exit 2)
//! naming the file and line.

use crate::error::UsageError;
use crate::import::assemble::{self, BuildOptions};
use crate::import::{ImportError, Importer};
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
pub(crate) fn run(s: ImportSettings) -> anyhow::Result<ExitCode> {
    let output = s.output.clone();
    let inputs = assemble::read_all(&s.files, s.importer, |path, f| {
        eprintln!("envbench: {}: read as {} output", path.display(), f.name());
    })
    .map_err(usage)?;
    let opts = BuildOptions {
        label: s.label,
        env: s.env,
        params: s.params,
        output: output.clone(),
        seed: s.seed,
    };
    let mut file = assemble::build(&inputs, &opts).map_err(UsageError)?;
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
