//! `envbench store push`: result files written elsewhere (other hosts, a
//! fleet's controller, imports) added to the history, by run id.

use crate::error::print_stdout;
use crate::history::{self, Db, History, Outcome};
use anyhow::Context as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `envbench store push` adds, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct PushSettings {
    /// Result files.
    pub files: Vec<PathBuf>,
    /// History database (None: the default place).
    pub db: Option<Db>,
}

/// Adds each file to the history: one line per file, then the counts. A
/// file that cannot be read is named and the others are still added; the
/// exit code is then 1.
///
/// # Errors
/// A history that cannot be opened or written.
pub fn run(s: &PushSettings) -> anyhow::Result<ExitCode> {
    let db = history::db_path(s.db.as_ref())?;
    let store = History::open(&db)?;
    let (mut counts, mut failed) = ([0usize; 4], 0usize);
    let mut text = String::new();
    for path in &s.files {
        let file = match crate::store::load(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("envbench: {e:#}; not added");
                failed += 1;
                continue;
            }
        };
        let written = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let (id, outcome) = store
            .record(&file, &written)
            .with_context(|| format!("adding {}", path.display()))?;
        let (slot, word) = match outcome {
            Outcome::Added => (0, "added"),
            Outcome::Updated => (1, "updated"),
            Outcome::Unchanged => (2, "already there"),
            Outcome::Older => (3, "kept the stored state, which got further"),
        };
        counts[slot] += 1;
        text += &format!(
            "{word}: run {id}, {} ({}, label {})\n",
            crate::terminal::escape_output(&file.run_id),
            path.display(),
            crate::terminal::escape_output(&file.label)
        );
    }
    text += &format!(
        "{} added, {} updated, {} already there{}{} in {}\n",
        counts[0],
        counts[1],
        counts[2],
        if counts[3] > 0 {
            format!(", {} older than the stored state", counts[3])
        } else {
            String::new()
        },
        if failed > 0 {
            format!(", {failed} unreadable")
        } else {
            String::new()
        },
        db.shown()
    );
    print_stdout(&text)?;
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
