//! The local run history: every `envbench run` is also recorded in a SQLite
//! database (XDG data directory, or `--db PATH`), so runs can be listed,
//! shown and compared by id or label. The JSON files stay the record: a
//! missing, newer or corrupt database is a clear error or warning, never a
//! lost result.

use crate::results::ResultFile;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Version of the database layout, kept in SQLite's `user_version`.
pub const DB_VERSION: i64 = 1;

/// Why the history cannot be used.
#[derive(Debug, Error)]
pub enum HistoryError {
    /// Written by a newer envbench.
    #[error("{path}: history database version {found} is newer than this envbench supports ({DB_VERSION})")]
    TooNew {
        /// The database.
        path: PathBuf,
        /// Its user_version.
        found: i64,
    },
    /// Not a SQLite database, or damaged. (The cause is in the message and
    /// not a `source`, so `{err:#}` prints it once.)
    #[error("{}", sqlite_message(path, cause))]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// SQLite's error.
        cause: rusqlite::Error,
    },
    /// A stored run that no longer parses.
    #[error("{path}: run {id} is stored in a form this envbench cannot read ({cause})")]
    BadRun {
        /// The database.
        path: PathBuf,
        /// The history id.
        id: i64,
        /// What the reader found wrong.
        cause: String,
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

/// One listed run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// History id (for `show ID` and `compare ID ...`).
    pub id: i64,
    /// The run's own id.
    pub run_id: String,
    /// Environment label.
    pub label: String,
    /// Host name.
    pub host: String,
    /// Virtualisation summary.
    pub virtualization: String,
    /// Start, ISO 8601 UTC.
    pub started_utc: String,
    /// Suite.
    pub suite: String,
    /// complete, interrupted ...
    pub status: String,
    /// Where the result file was written.
    pub path: String,
}

/// `$XDG_DATA_HOME/envbench/history.sqlite3`, else `~/.local/share/envbench/...`.
/// Relative values are ignored, as the XDG Base Directory spec says; with
/// no home at all there is no default (never a history in the shared /tmp).
///
/// # Errors
/// [`HistoryError::NoHome`].
pub fn default_path() -> Result<PathBuf, HistoryError> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let base = absolute("XDG_DATA_HOME")
        .or_else(|| absolute("HOME").map(|h| h.join(".local/share")))
        .ok_or(HistoryError::NoHome)?;
    Ok(base.join("envbench").join("history.sqlite3"))
}

/// `--db PATH` if given, else [`default_path`].
///
/// # Errors
/// [`HistoryError::NoHome`].
pub fn db_path(given: Option<&PathBuf>) -> Result<PathBuf, HistoryError> {
    given.cloned().map_or_else(default_path, Ok)
}

/// Records `run`, written to `file_path`, in the history at `--db` or the
/// default place; returns its history id and the database's path.
///
/// # Errors
/// [`HistoryError`], including [`HistoryError::NoHome`].
pub fn record_run(
    db: Option<&PathBuf>,
    run: &ResultFile,
    file_path: &Path,
) -> Result<(i64, PathBuf), HistoryError> {
    let db = db_path(db)?;
    let id = History::open(&db)?.record(run, file_path)?;
    Ok((id, db))
}

/// Refuses a path that exists and is not a regular file (links followed).
fn refuse_special(path: &Path) -> Result<(), HistoryError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(HistoryError::NotRegular {
            path: path.to_path_buf(),
            kind: crate::store::kind_name(&m.file_type()),
        }),
        _ => Ok(()),
    }
}

/// Refuses a database whose `user_version` is newer than [`DB_VERSION`].
fn refuse_newer(conn: &Connection, path: &Path) -> Result<(), HistoryError> {
    let found: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|cause| HistoryError::Sqlite {
            path: path.to_path_buf(),
            cause,
        })?;
    if found > DB_VERSION {
        return Err(HistoryError::TooNew {
            path: path.to_path_buf(),
            found,
        });
    }
    Ok(())
}

/// An open history database.
pub struct History {
    conn: Connection,
    path: PathBuf,
    /// False for a read-only history without the runs table (an empty or
    /// missing database): it lists nothing.
    has_runs: bool,
}

/// What a SQLite error means for the person: a database another process
/// holds locked is usable, only busy.
fn sqlite_message(path: &std::path::Path, cause: &rusqlite::Error) -> String {
    let path = path.display();
    match cause.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => format!(
            "{path}: the history database is locked by another process (waited {} s; another envbench recording, or a program holding it open); try again, or give another --db",
            BUSY_WAIT.as_secs()
        ),
        _ => format!(
            "{path}: not a usable envbench history database ({cause}); result files still work"
        ),
    }
}

/// How long a connection waits for another writer before giving up: runs
/// started together record one after another.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl History {
    /// Opens the database at `path` for reading only, so `history`, `show`
    /// and `compare` work on a read-only directory; a missing database is an
    /// empty history and is not created.
    ///
    /// # Errors
    /// [`HistoryError`] naming `path`.
    pub fn open_read_only(path: &Path) -> Result<History, HistoryError> {
        refuse_special(path)?;
        let sql = |cause| HistoryError::Sqlite {
            path: path.to_path_buf(),
            cause,
        };
        let flags =
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = if path.exists() {
            let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
            conn.busy_timeout(BUSY_WAIT).map_err(sql)?;
            conn
        } else {
            Connection::open_in_memory().map_err(sql)?
        };
        refuse_newer(&conn, path)?;
        let has_runs = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(sql)?
            > 0;
        Ok(History {
            conn,
            path: path.to_path_buf(),
            has_runs,
        })
    }

    /// Opens (creating if needed) the database at `path`.
    ///
    /// # Errors
    /// [`HistoryError`] naming `path`.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        refuse_special(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|cause| HistoryError::Io {
                path: dir.to_path_buf(),
                cause,
            })?;
        }
        let sql = |cause| HistoryError::Sqlite {
            path: path.to_path_buf(),
            cause,
        };
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(BUSY_WAIT).map_err(sql)?;
        refuse_newer(&conn, path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS runs (
                id INTEGER PRIMARY KEY,
                run_id TEXT NOT NULL UNIQUE,
                label TEXT NOT NULL,
                host TEXT NOT NULL,
                virtualization TEXT NOT NULL,
                started_utc TEXT NOT NULL,
                suite TEXT NOT NULL,
                status TEXT NOT NULL,
                path TEXT NOT NULL,
                json TEXT NOT NULL
             );
             PRAGMA user_version = 1;",
        )
        .map_err(sql)?;
        Ok(History {
            conn,
            path: path.to_path_buf(),
            has_runs: true,
        })
    }

    fn sql(&self, cause: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            cause,
        }
    }

    /// Records (or updates, by run id) a run written to `file_path`; returns its history id.
    ///
    /// # Errors
    /// [`HistoryError::Sqlite`].
    pub fn record(&self, run: &ResultFile, file_path: &Path) -> Result<i64, HistoryError> {
        let json = serde_json::to_string(run).expect("invariant: result types always serialise");
        let host = run.fingerprint.os.hostname.clone().unwrap_or_default();
        let status = serde_json::to_value(run.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        self.conn
            .execute(
                "INSERT INTO runs (run_id, label, host, virtualization, started_utc, suite, status, path, json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, json = excluded.json, path = excluded.path",
                params![
                    run.run_id,
                    run.label,
                    host,
                    run.fingerprint.virtualization.summary(),
                    run.started_utc,
                    run.config.suite.name(),
                    status,
                    file_path.display().to_string(),
                    json
                ],
            )
            .map_err(|e| self.sql(e))?;
        self.conn
            .query_row(
                "SELECT id FROM runs WHERE run_id = ?1",
                [&run.run_id],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))
    }

    /// Every run, oldest first.
    ///
    /// # Errors
    /// [`HistoryError::Sqlite`].
    pub fn list(&self) -> Result<Vec<Entry>, HistoryError> {
        if !self.has_runs {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id, run_id, label, host, virtualization, started_utc, suite, status, path FROM runs ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Entry {
                    id: r.get(0)?,
                    run_id: r.get(1)?,
                    label: r.get(2)?,
                    host: r.get(3)?,
                    virtualization: r.get(4)?,
                    started_utc: r.get(5)?,
                    suite: r.get(6)?,
                    status: r.get(7)?,
                    path: r.get(8)?,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.sql(e))
    }

    fn parse(&self, id: i64, json: &str) -> Result<ResultFile, HistoryError> {
        // through the file reader, so stored runs are validated and escaped too
        crate::store::parse(Path::new(&format!("run {id}")), json).map_err(|e| {
            HistoryError::BadRun {
                path: self.path.clone(),
                id,
                cause: e.to_string(),
            }
        })
    }

    /// The run with history id `id`, if any.
    ///
    /// # Errors
    /// [`HistoryError`].
    pub fn get(&self, id: i64) -> Result<Option<ResultFile>, HistoryError> {
        if !self.has_runs {
            return Ok(None);
        }
        let json: Option<String> = self
            .conn
            .query_row("SELECT json FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))?;
        json.map(|j| self.parse(id, &j)).transpose()
    }

    /// Every run labelled `label`, oldest first.
    ///
    /// # Errors
    /// [`HistoryError`].
    pub fn by_label(&self, label: &str) -> Result<Vec<ResultFile>, HistoryError> {
        if !self.has_runs {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id, json FROM runs WHERE label = ?1 ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let rows: Vec<(i64, String)> = stmt
            .query_map([label], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.sql(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.sql(e))?;
        rows.iter().map(|(id, j)| self.parse(*id, j)).collect()
    }

    /// Up to `limit` complete runs, newest first, measured on the same
    /// machine as `run` (host, virtualisation, CPU model, kernel, CPU count and usable CPUs)
    /// with the same label, suite and worker setting: evidence of how much
    /// runs of one environment differ. `run` itself is among them when it
    /// was recorded. Runs the history cannot read are passed over.
    ///
    /// # Errors
    /// [`HistoryError`] for a database that cannot be queried.
    pub fn similar(&self, run: &ResultFile, limit: usize) -> Result<Vec<ResultFile>, HistoryError> {
        if !self.has_runs {
            return Ok(Vec::new());
        }
        let host = run.fingerprint.os.hostname.clone().unwrap_or_default();
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, json FROM runs WHERE host = ?1 AND suite = ?2 AND status = 'complete'
                 ORDER BY id DESC LIMIT 200",
            )
            .map_err(|e| self.sql(e))?;
        let rows: Vec<(i64, String)> = stmt
            .query_map([host.as_str(), run.config.suite.name()], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(|e| self.sql(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.sql(e))?;
        let same = |f: &ResultFile| {
            let (a, b) = (&f.fingerprint, &run.fingerprint);
            a.virtualization.summary() == b.virtualization.summary()
                && a.cpu.model == b.cpu.model
                && a.cpu.logical_cpus == b.cpu.logical_cpus
                && a.cpu.usable_cpus == b.cpu.usable_cpus
                && f.label == run.label
                && a.os.kernel_release == b.os.kernel_release
                && f.config.workers == run.config.workers
        };
        Ok(rows
            .iter()
            .filter_map(|(id, j)| self.parse(*id, j).ok())
            .filter(same)
            .take(limit)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;
    use crate::units::Direction;

    fn sample(label: &str, id: &str) -> ResultFile {
        run(
            label,
            id,
            &[(
                "cpu.x",
                "rate",
                Direction::HigherIsBetter,
                vec![1.0, 2.0, 3.0],
            )],
        )
    }

    #[test]
    fn records_lists_and_reads_back() {
        let tmp = tempfile::tempdir().unwrap();
        let h = History::open(&tmp.path().join("h.sqlite3")).unwrap();
        let a = sample("native", "r1");
        let id = h.record(&a, Path::new("a.json")).unwrap();
        h.record(&sample("wsl2", "r2"), Path::new("b.json"))
            .unwrap();
        assert_eq!(
            h.record(&a, Path::new("a2.json")).unwrap(),
            id,
            "same run id updates"
        );
        let list = h.list().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(
            (list[0].label.as_str(), list[0].path.as_str()),
            ("native", "a2.json")
        );
        assert_eq!(h.get(id).unwrap().unwrap(), a);
        assert_eq!(h.by_label("wsl2").unwrap().len(), 1);
        assert!(h.get(999).unwrap().is_none());
    }

    #[test]
    fn a_newer_database_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("h.sqlite3");
        Connection::open(&p)
            .unwrap()
            .execute_batch("PRAGMA user_version = 7;")
            .unwrap();
        assert!(matches!(
            History::open(&p),
            Err(HistoryError::TooNew { found: 7, .. })
        ));
    }

    #[test]
    fn read_only_opening_creates_nothing_and_reads_a_read_only_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("h.sqlite3");
        assert!(History::open_read_only(&p)
            .unwrap()
            .list()
            .unwrap()
            .is_empty());
        assert!(!p.exists(), "a read-only open creates no file");
        History::open(&p)
            .unwrap()
            .record(&sample("native", "r1"), Path::new("a.json"))
            .unwrap();
        let ro = History::open_read_only(&p).unwrap();
        assert_eq!(ro.list().unwrap().len(), 1);
        assert_eq!(ro.by_label("native").unwrap().len(), 1);
    }

    #[test]
    fn a_locked_database_is_called_locked_not_unusable() {
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(5), None);
        let m = sqlite_message(Path::new("h.sqlite3"), &busy);
        assert!(m.contains("locked by another process"), "{m}");
        assert!(!m.contains("not a usable"), "{m}");
    }

    #[test]
    fn a_corrupt_database_gets_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("h.sqlite3");
        std::fs::write(&p, vec![0x42u8; 4096]).unwrap();
        let err = History::open(&p).err().expect("refused").to_string();
        assert!(
            err.contains("not a usable envbench history database"),
            "{err}"
        );
    }
}
