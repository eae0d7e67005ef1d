//! `import`'s settings: the output (never over an input, `--force` for an
//! existing one) and the label checked.

use super::args::ImportArgs;
use super::check::{self, identity};
use crate::cmd::import::ImportSettings;
use crate::config::DEFAULT_SEED;
use crate::error::UsageError;
use crate::{import, store};

/// `import`'s settings: the output path and the label checked.
pub(crate) fn settings(a: ImportArgs) -> Result<ImportSettings, UsageError> {
    // never over an input, even with --force (the tool's output would be lost)
    if let Some(f) = a
        .files
        .iter()
        .find(|f| identity(f) == identity(&a.output) || store::same_file(f, &a.output))
    {
        return Err(UsageError(format!(
            "-o {}: is the input {}; choose another name",
            a.output.display(),
            f.display()
        )));
    }
    let output = store::output_path(&a.output, a.force, "-o").map_err(UsageError)?;
    let label = match &a.label {
        Some(l) => l.clone(),
        None => import_label(&a),
    };
    check::label(&label)?;
    Ok(ImportSettings {
        importer: import::importer(&a.from),
        files: a.files,
        output,
        label,
        env: a.env,
        params: a.params,
        seed: a.seed.unwrap_or(DEFAULT_SEED),
    })
}

/// `--env virtualization=...`, else the output's file stem.
fn import_label(a: &ImportArgs) -> String {
    if let Some((_, v)) = a.env.iter().rev().find(|(k, _)| k == "virtualization") {
        return v.replace('/', "-");
    }
    a.output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".into())
}
