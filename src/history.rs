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
    /// Not a SQLite database, or damaged.
    #[error("{path}: not a usable envbench history database ({source}); result files still work")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A stored run that no longer parses.
    #[error("{path}: run {id} is stored in a form this envbench cannot read ({source})")]
    BadRun {
        /// The database.
        path: PathBuf,
        /// The history id.
        id: i64,
        /// serde's error.
        source: serde_json::Error,
    },
    /// Cannot create the directory for the database.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
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
pub fn default_path() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("envbench").join("history.sqlite3")
}

/// An open history database.
pub struct History {
    conn: Connection,
    path: PathBuf,
}

impl History {
    /// Opens (creating if needed) the database at `path`.
    ///
    /// # Errors
    /// [`HistoryError`] naming `path`.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let sql = |source| HistoryError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(sql)?;
        let found: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql)?;
        if found > DB_VERSION {
            return Err(HistoryError::TooNew {
                path: path.to_path_buf(),
                found,
            });
        }
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
        })
    }

    fn sql(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            source,
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
        serde_json::from_str(json).map_err(|source| HistoryError::BadRun {
            path: self.path.clone(),
            id,
            source,
        })
    }

    /// The run with history id `id`, if any.
    ///
    /// # Errors
    /// [`HistoryError`].
    pub fn get(&self, id: i64) -> Result<Option<ResultFile>, HistoryError> {
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
