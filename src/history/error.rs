//! Why the history cannot be used, each error naming the database: a
//! newer layout, a damaged or locked SQLite file, a server that refused or
//! went away, a path that is not a regular file, no home for a default.

use super::backend::{self, Failure};
use super::{DB_VERSION, RECORD_ATTEMPTS};
use std::path::PathBuf;
use thiserror::Error;

/// Why the history cannot be used.
#[derive(Debug, Error)]
pub enum HistoryError {
    /// Written by a newer envbench.
    #[error("{place}: history database version {found} is newer than this envbench supports ({DB_VERSION}); use a newer envbench, or another --db")]
    TooNew {
        /// The database.
        place: String,
        /// Its version.
        found: i64,
    },
    /// Not a SQLite database, or damaged. (The cause is in the message and
    /// not a `source`, so `{err:#}` prints it once.)
    #[error("{}", sqlite_message(place, cause))]
    Sqlite {
        /// The database.
        place: String,
        /// SQLite's error.
        cause: rusqlite::Error,
    },
    /// The PostgreSQL store cannot be reached or refused a statement.
    #[error("{place}: the shared store cannot be used: {cause}")]
    Server {
        /// The URL, password hidden.
        place: String,
        /// The server's or the client's message.
        cause: String,
    },
    /// A stored run that no longer parses.
    #[error("{place}: run {id} is stored in a form this envbench cannot read ({cause})")]
    BadRun {
        /// The database.
        place: String,
        /// The history id.
        id: i64,
        /// What the reader found wrong.
        cause: String,
    },
    /// Other writers changed the run at every attempt to record it.
    #[error("{place}: run {run_id} kept changing while it was recorded ({RECORD_ATTEMPTS} attempts); push it again")]
    KeptChanging {
        /// The database.
        place: String,
        /// The run's id, escaped.
        run_id: String,
    },
    /// Runs cannot be written there.
    #[error("{place}: runs cannot be recorded here: {why}")]
    ReadOnly {
        /// The database.
        place: String,
        /// Why, in words.
        why: String,
    },
    /// A run whose document is larger than a result file may be.
    #[error("{place}: run {run_id} is {} MiB as JSON, larger than the {} MiB envbench reads back; not stored", bytes >> 20, crate::store::MAX_FILE_BYTES >> 20)]
    TooLarge {
        /// The database.
        place: String,
        /// The run's id.
        run_id: String,
        /// Its size.
        bytes: usize,
    },
    /// Cannot create the directory for the database.
    #[error("{path}: {cause}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        cause: std::io::Error,
    },
    /// The database path is a device, FIFO, directory ...: SQLite would
    /// write into it or wait on it.
    #[error("{path}: is a {kind}; the history database must be a regular file or not exist yet")]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// No home directory to keep a history in.
    #[error(
        "no history database: neither an absolute XDG_DATA_HOME nor HOME is set; pass --db PATH"
    )]
    NoHome,
}

/// What a SQLite error means for the person: a database another process
/// holds locked is usable, only busy.
fn sqlite_message(place: &str, cause: &rusqlite::Error) -> String {
    match cause.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => format!(
            "{place}: the history database is locked by another process (waited {} s; another envbench recording, or a program holding it open); try again, or give another --db",
            backend::BUSY_WAIT.as_secs()
        ),
        _ => format!(
            "{place}: not a usable envbench history database ({cause}); result files still work"
        ),
    }
}

/// Names a failure with the database's place.
pub(super) fn named(place: &str, failure: Failure) -> HistoryError {
    match failure {
        Failure::Lite(cause) => HistoryError::Sqlite {
            place: place.to_string(),
            cause,
        },
        Failure::Pg(e) => HistoryError::Server {
            place: place.to_string(),
            cause: backend::pg_cause(&e),
        },
        Failure::Deadline(cause) => HistoryError::Server {
            place: place.to_string(),
            cause,
        },
    }
}

/// Refuses a store whose version is newer than this envbench's.
pub(super) fn refuse_newer(place: &str, found: i64) -> Result<(), HistoryError> {
    if found > DB_VERSION {
        return Err(HistoryError::TooNew {
            place: place.to_string(),
            found,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_database_is_called_locked_not_unusable() {
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(5), None);
        let m = sqlite_message("h.sqlite3", &busy);
        assert!(m.contains("locked by another process"), "{m}");
        assert!(!m.contains("not a usable"), "{m}");
    }
}
