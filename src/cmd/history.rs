//! `envbench history`: the runs recorded in the local history.

use crate::error::print_stdout;
use crate::{history, report, terminal};
use std::process::ExitCode;

/// What `envbench history` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct HistorySettings {
    /// History database (None: the default place).
    pub db: Option<crate::history::Db>,
    /// JSON instead of a table.
    pub json: bool,
}

/// Runs `envbench history`.
///
/// # Errors
/// An unusable history database.
pub(crate) fn run(s: &HistorySettings) -> anyhow::Result<ExitCode> {
    let db = history::db_path(s.db.as_ref())?;
    let entries = history::History::open_read_only(&db)?.list()?;
    let text = if s.json {
        serde_json::to_string_pretty(&entries)? + "\n"
    } else {
        terminal::escape_output(&report::render_text(&report::listing::history::table(
            &entries,
        )))
    };
    print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
