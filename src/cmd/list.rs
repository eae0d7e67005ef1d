//! `envbench list`: every benchmark, its cases per suite, metrics and
//! units, and the study it reproduces.

use crate::bench::{NamedDir, Plan};
use crate::config::Suite;
use crate::error::print_stdout;
use crate::{probe, report};
use std::path::PathBuf;
use std::process::ExitCode;

/// What `envbench list` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct ListSettings {
    /// JSON instead of text.
    pub json: bool,
}

/// Runs `envbench list`.
///
/// # Errors
/// Writing to stdout.
pub(crate) fn run(s: &ListSettings) -> anyhow::Result<ExitCode> {
    let fp = probe::probe_live(&[]);
    let plan = Plan::from_fingerprint(
        Suite::Quick,
        &fp,
        None,
        NamedDir::by_position([PathBuf::from(".")]),
    );
    let text = if s.json {
        serde_json::to_string_pretty(&report::listing::catalog::catalog(&plan))? + "\n"
    } else {
        report::listing::catalog::render(&plan)
    };
    print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
