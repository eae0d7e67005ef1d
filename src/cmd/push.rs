//! `envbench store push`: result files written elsewhere (other hosts, a
//! fleet's controller, imports) added to the history, by run id.

use crate::error::print_stdout;
use crate::history::{self, Db, History, Outcome};
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

/// Adds each file to the history: one line per file as it is done, then
/// the counts. A file that cannot be read or stored is named with the
/// reason and the others are still added; the exit code is then 1. A
/// connection lost on the way stops the push and says which files were
/// not tried.
///
/// # Errors
/// A history that cannot be opened.
pub(crate) fn run(s: &PushSettings) -> anyhow::Result<ExitCode> {
    let db = history::db_path(s.db.as_ref())?;
    let store = History::open(&db)?;
    let (mut counts, mut failed) = ([0usize; 4], 0usize);
    let shown = |p: &std::path::Path| crate::terminal::escape(&p.display().to_string());
    let mut untried = 0;
    for (i, path) in s.files.iter().enumerate() {
        if store.connection_lost() {
            untried = s.files.len() - i;
            eprintln!(
                "envbench: the connection to {} was lost; {untried} file(s) not tried, from {} on: push them again",
                db.shown(),
                shown(path)
            );
            break;
        }
        let file = match crate::store::load(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!(
                    "envbench: {}; not added",
                    crate::terminal::escape(&format!("{e:#}"))
                );
                failed += 1;
                continue;
            }
        };
        let written = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let (id, outcome) = match store.record(&file, &written) {
            Ok(done) => done,
            Err(e) => {
                eprintln!(
                    "envbench: {}: not added: {}",
                    shown(path),
                    crate::terminal::escape(&e.to_string())
                );
                failed += 1;
                continue;
            }
        };
        let (slot, word) = match outcome {
            Outcome::Added => (0, "added"),
            Outcome::Updated => (1, "updated"),
            Outcome::Unchanged => (2, "already there"),
            Outcome::Older => (3, "kept the stored state, which got further"),
        };
        counts[slot] += 1;
        print_stdout(&format!(
            "{word}: run {id}, {} ({}, label {})\n",
            crate::terminal::escape(&file.run_id),
            shown(path),
            crate::terminal::escape(&file.label)
        ))?;
    }
    let mut tail = String::new();
    if counts[3] > 0 {
        tail += &format!(", {} older than the stored state", counts[3]);
    }
    if failed > 0 {
        tail += &format!(", {failed} not added");
    }
    if untried > 0 {
        tail += &format!(", {untried} not tried");
    }
    print_stdout(&format!(
        "{} added, {} updated, {} already there{tail} in {}\n",
        counts[0],
        counts[1],
        counts[2],
        db.shown()
    ))?;
    Ok(if failed + untried > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
