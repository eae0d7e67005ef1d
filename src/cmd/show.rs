//! `envbench show`: a stored run (a result file or a history id) printed
//! as a summary.

use super::resolve;
use crate::error::print_stdout;
use crate::{report, terminal};
use std::path::PathBuf;
use std::process::ExitCode;

/// What `envbench show` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct ShowSettings {
    /// A result file or a history id.
    pub run: PathBuf,
    /// Every metric of every case, not only each case's headline metric.
    pub all_metrics: bool,
    /// History database (None: the default place).
    pub db: Option<crate::history::Db>,
}

/// Runs `envbench show`.
///
/// # Errors
/// An unreadable file or history, or a run that does not exist.
pub(crate) fn run(s: &ShowSettings) -> anyhow::Result<ExitCode> {
    for file in resolve(
        std::slice::from_ref(&s.run),
        s.db.as_ref(),
        &crate::history::Filter::default(),
    )? {
        print_stdout(&terminal::escape_output(
            &report::run::summary::render_file(&file, s.all_metrics),
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
