//! What `envbench compare` asks of the history, in one visit: the files it
//! recorded for the runs compared (which an output must not replace), and,
//! for each run alone in its environment, the earlier runs like it
//! (evidence of how much its runs differ). A history that is not there, or
//! does not open, answers nothing: the comparison then says where else the
//! spread came from.

use super::{db_path, Db, History};
use crate::results::ResultFile;
use std::path::PathBuf;

/// The history's answer to a comparison.
#[derive(Debug, Default)]
pub(crate) struct ForComparison {
    /// Each run compared that the history recorded: its file, and how it
    /// is named in an error ("run 12 (/path/run.json)").
    pub files: Vec<(PathBuf, String)>,
    /// For each run asked about, in order, the earlier runs like it
    /// ([`History::similar`]), at most the limit given: one list a run
    /// (empty where none is known or the history cannot tell).
    pub earlier: Vec<Vec<ResultFile>>,
}

/// The history at `db` (or the default place) asked about the runs
/// `compared` and the earlier runs of each of `alone`, at most `limit` a
/// run; nothing where no history exists or it does not open (an SQLite
/// file that is not there is not made).
pub(crate) fn for_comparison(
    db: Option<&Db>,
    compared: &[&ResultFile],
    alone: &[&ResultFile],
    limit: usize,
) -> ForComparison {
    let history = db_path(db)
        .ok()
        .filter(|d| match d {
            Db::File(p) => p.is_file(),
            Db::Server(_) => true,
        })
        .and_then(|d| History::open_read_only(&d).ok());
    let Some(history) = history else {
        return ForComparison {
            files: Vec::new(),
            earlier: vec![Vec::new(); alone.len()],
        };
    };
    let files = history
        .list()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| compared.iter().any(|r| r.run_id == e.run_id))
        .map(|e| {
            let named = format!("run {} ({})", e.run_id, e.path);
            (PathBuf::from(e.path), named)
        })
        .collect();
    let earlier = alone
        .iter()
        .map(|r| history.similar(r, limit).unwrap_or_default())
        .collect();
    ForComparison { files, earlier }
}
