//! The run history: every `envbench run` is also recorded in a database,
//! so runs can be listed, shown and compared by id or label. By default an
//! SQLite file (XDG data directory, or `--db PATH`); `--db postgres://...`
//! (or `ENVBENCH_DB`) names a PostgreSQL store that many hosts share. The
//! JSON files stay the record: a missing, newer or corrupt database, or a
//! server that went away, is a clear error or warning, never a lost result.

mod backend;
mod compared;
mod error;
mod filter;
mod pgpass;
mod schema;

pub(crate) use compared::for_comparison;
pub use error::HistoryError;
pub use filter::Filter;

use crate::results::ResultFile;
pub use backend::{is_server_url, Db};
use backend::{Cell, Conn, Failure};
use error::{named, refuse_newer};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Version of the layout this envbench writes (SQLite's `user_version`,
/// PostgreSQL's `envbench.meta`).
pub const DB_VERSION: i64 = schema::VERSION;

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
    /// Where the result file was written (on the host that wrote it).
    pub path: String,
    /// CPU model.
    pub cpu_model: String,
    /// Kernel release.
    pub kernel: String,
}

/// What recording a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A run the store did not have.
    Added,
    /// A run it had in another state (a running or interrupted file, since finished).
    Updated,
    /// The same document was there already.
    Unchanged,
    /// The store holds a state of the run that got further (a complete
    /// file, where a `running` copy was pushed): kept, nothing written.
    Older,
}

/// `$XDG_DATA_HOME/envbench/history.sqlite3`, else `~/.local/share/envbench/...`.
/// Relative values are ignored, as the XDG Base Directory spec says; with
/// no home at all there is no default (never a history in the shared /tmp).
///
/// # Errors
/// [`HistoryError::NoHome`].
pub(crate) fn default_path() -> Result<PathBuf, HistoryError> {
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

/// `--db` (or `ENVBENCH_DB`) if given, else the SQLite file at [`default_path`].
///
/// # Errors
/// [`HistoryError::NoHome`].
pub(crate) fn db_path(given: Option<&Db>) -> Result<Db, HistoryError> {
    given
        .cloned()
        .map_or_else(|| default_path().map(Db::File), Ok)
}

/// Records `run`, written to `file_path`, in the history at `--db` or the
/// default place; returns its history id and the database as shown.
///
/// # Errors
/// [`HistoryError`], including [`HistoryError::NoHome`].
pub(crate) fn record_run(
    db: Option<&Db>,
    run: &ResultFile,
    file_path: &Path,
) -> Result<(i64, String), HistoryError> {
    let db = db_path(db)?;
    let (id, _) = History::open(&db)?.record(run, file_path)?;
    Ok((id, db.shown()))
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

/// An open history database.
pub struct History {
    conn: Conn,
    place: String,
    /// False for a read-only history without the runs table (an empty or
    /// missing database): it lists nothing.
    has_runs: bool,
    /// The layout's version: a read-only history of an older one is read
    /// as it is (version 1 has no CPU model or kernel columns), not changed.
    version: i64,
}

/// How many times [`History::record`] starts again when another writer
/// changed the run between its statements.
const RECORD_ATTEMPTS: usize = 5;

/// A text as a column holds it: NUL, which PostgreSQL's text cannot hold,
/// becomes U+FFFD (the JSON document keeps the character, escaped).
fn column_text(text: String) -> String {
    if text.contains('\0') {
        text.replace('\0', "\u{fffd}")
    } else {
        text
    }
}

/// The columns of a listed run, in [`Entry`]'s order.
const ENTRY_COLUMNS: &str =
    "id, run_id, label, host, virtualization, started_utc, suite, status, path, cpu_model, kernel";

/// The same from a version 1 layout, read as it is.
const ENTRY_COLUMNS_V1: &str =
    "id, run_id, label, host, virtualization, started_utc, suite, status, path, '', ''";

impl History {
    /// Opens the history at `db` for reading only, so `history`, `show`
    /// and `compare` work on a read-only directory; a missing SQLite file
    /// is an empty history and is not created, and a server without
    /// envbench's tables is an empty store that stays untouched.
    ///
    /// # Errors
    /// [`HistoryError`] naming the database.
    pub(crate) fn open_read_only(db: &Db) -> Result<History, HistoryError> {
        let place = db.shown();
        let conn = match db {
            Db::File(path) => {
                refuse_special(path)?;
                let opened = if path.exists() {
                    Conn::sqlite(path, true)
                } else {
                    Conn::empty()
                };
                opened.map_err(|e| named(&place, Failure::Lite(e)))?
            }
            Db::Server(url) => Conn::postgres(url)?,
        };
        let found = schema::version(&conn).map_err(|e| named(&place, e))?;
        refuse_newer(&place, found)?;
        let has_runs = schema::has_runs(&conn).map_err(|e| named(&place, e))?;
        Ok(History {
            conn,
            place,
            has_runs,
            version: found,
        })
    }

    /// Opens (creating or bringing up to date if needed) the history at `db`.
    ///
    /// # Errors
    /// [`HistoryError`] naming the database.
    pub(crate) fn open(db: &Db) -> Result<History, HistoryError> {
        let place = db.shown();
        let conn = match db {
            Db::File(path) => {
                refuse_special(path)?;
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|cause| HistoryError::Io {
                        path: dir.to_path_buf(),
                        cause,
                    })?;
                }
                Conn::sqlite(path, false).map_err(|e| named(&place, Failure::Lite(e)))?
            }
            Db::Server(url) => Conn::postgres(url)?,
        };
        let found = schema::migrate(&conn).map_err(|e| named(&place, e))?;
        refuse_newer(&place, found)?;
        if let Some(why) = conn
            .cannot_write(schema::runs_table(&conn))
            .map_err(|e| named(&place, e))?
        {
            return Err(HistoryError::ReadOnly { place, why });
        }
        Ok(History {
            conn,
            place,
            has_runs: true,
            version: DB_VERSION,
        })
    }

    /// The rows of `sql` (`{t}` stands for the table of runs).
    fn rows(&self, sql: &str, args: &[Cell]) -> Result<Vec<Vec<Cell>>, HistoryError> {
        let sql = sql.replace("{t}", schema::runs_table(&self.conn));
        self.conn
            .rows(&sql, args)
            .map_err(|e| named(&self.place, e))
    }

    /// Records (or updates, by run id) a run written to `file_path`, in
    /// one statement: a run is stored whole or not at all. Returns its
    /// history id and what was done. The outcome is decided by the
    /// statement that wrote (an insert that found no row, an update of
    /// the state that was read), so processes pushing the same files at
    /// once each say what they did: one "added", the others "already
    /// there", and an older state never replaces one that got further.
    ///
    /// # Errors
    /// [`HistoryError::Sqlite`], [`HistoryError::Server`];
    /// [`HistoryError::BadRun`] for a document larger than a result file
    /// may be.
    pub(crate) fn record(
        &self,
        run: &ResultFile,
        file_path: &Path,
    ) -> Result<(i64, Outcome), HistoryError> {
        let json = serde_json::to_string(run).expect("invariant: result types always serialise");
        if json.len() as u64 > crate::store::MAX_FILE_BYTES {
            return Err(HistoryError::TooLarge {
                place: self.place.clone(),
                run_id: run.run_id.clone(),
                bytes: json.len(),
            });
        }
        let fp = &run.fingerprint;
        let status = serde_json::to_value(run.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        // the columns are copies for choosing runs; the document keeps
        // every character (a NUL is escaped in JSON text, but PostgreSQL's
        // text refuses the character itself)
        let columns: Vec<Cell> = [
            run.run_id.clone(),
            run.label.clone(),
            fp.os.hostname.clone().unwrap_or_default(),
            fp.virtualization.summary(),
            run.started_utc.clone(),
            run.config.suite.name().to_string(),
            status,
            file_path.display().to_string(),
            json.clone(),
            fp.cpu.model.clone().unwrap_or_default(),
            fp.os.kernel_release.clone().unwrap_or_default(),
        ]
        .into_iter()
        .map(|t| Cell::Text(column_text(t)))
        .collect();
        let first_id = |rows: Vec<Vec<Cell>>| rows.first().and_then(|r| r.first()).map(Cell::int);
        // another writer may add or change the run between the statements:
        // each attempt starts again from what the store holds
        for _ in 0..RECORD_ATTEMPTS {
            let inserted = self.rows(
                "INSERT INTO {t} (run_id, label, host, virtualization, started_utc, suite, status, path, json, cpu_model, kernel)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (run_id) DO NOTHING
                 RETURNING id",
                &columns,
            )?;
            if let Some(id) = first_id(inserted) {
                return Ok((id, Outcome::Added));
            }
            let before = self.rows(
                "SELECT id, json FROM {t} WHERE run_id = ?1",
                &[columns[0].clone()],
            )?;
            let Some([id, stored]) = before.first().map(Vec::as_slice) else {
                continue; // removed meanwhile: insert again
            };
            if stored == &columns[8] {
                return Ok((id.int(), Outcome::Unchanged));
            }
            let got_further = match stored {
                Cell::Text(text) => serde_json::from_str::<ResultFile>(text)
                    .is_ok_and(|s| s.progress() > run.progress()),
                Cell::Int(_) => false,
            };
            if got_further {
                return Ok((id.int(), Outcome::Older));
            }
            let args = [
                columns[1].clone(),
                columns[6].clone(),
                columns[8].clone(),
                columns[7].clone(),
                columns[0].clone(),
                stored.clone(),
            ];
            let updated = self.rows(
                "UPDATE {t} SET label = ?1, status = ?2, json = ?3, path = ?4
                 WHERE run_id = ?5 AND json = ?6
                 RETURNING id",
                &args,
            )?;
            if let Some(id) = first_id(updated) {
                return Ok((id, Outcome::Updated));
            }
        }
        Err(HistoryError::KeptChanging {
            place: self.place.clone(),
            run_id: crate::terminal::escape(&run.run_id),
        })
    }

    /// Whether the store's connection was lost: nothing more can be done
    /// through it.
    pub(crate) fn connection_lost(&self) -> bool {
        self.conn.is_lost()
    }

    /// Every run, oldest first.
    ///
    /// # Errors
    /// [`HistoryError::Sqlite`], [`HistoryError::Server`].
    pub(crate) fn list(&self) -> Result<Vec<Entry>, HistoryError> {
        if !self.has_runs {
            return Ok(Vec::new());
        }
        let columns = if self.version < 2 {
            ENTRY_COLUMNS_V1
        } else {
            ENTRY_COLUMNS
        };
        let rows = self.rows(&format!("SELECT {columns} FROM {{t}} ORDER BY id"), &[])?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let mut cells = r.into_iter();
                let id = cells.next().map_or(0, |c| c.int());
                let mut text = || cells.next().map(Cell::into_text).unwrap_or_default();
                Entry {
                    id,
                    run_id: text(),
                    label: text(),
                    host: text(),
                    virtualization: text(),
                    started_utc: text(),
                    suite: text(),
                    status: text(),
                    path: text(),
                    cpu_model: text(),
                    kernel: text(),
                }
            })
            .collect())
    }

    fn parse(&self, id: i64, json: &str) -> Result<ResultFile, HistoryError> {
        // through the file reader, so stored runs are validated and escaped too
        crate::store::parse(Path::new(&format!("run {id}")), json).map_err(|e| {
            HistoryError::BadRun {
                place: self.place.clone(),
                id,
                cause: e.to_string(),
            }
        })
    }

    /// Parses rows of (id, json).
    fn parse_rows(&self, rows: Vec<Vec<Cell>>) -> Result<Vec<ResultFile>, HistoryError> {
        rows.into_iter()
            .map(|r| {
                let mut cells = r.into_iter();
                let id = cells.next().map_or(0, |c| c.int());
                let json = cells.next().map(Cell::into_text).unwrap_or_default();
                self.parse(id, &json)
            })
            .collect()
    }

    /// The run with history id `id`, if any.
    ///
    /// # Errors
    /// [`HistoryError`].
    pub(crate) fn get(&self, id: i64) -> Result<Option<ResultFile>, HistoryError> {
        if !self.has_runs {
            return Ok(None);
        }
        let rows = self.rows("SELECT id, json FROM {t} WHERE id = ?1", &[Cell::Int(id)])?;
        Ok(self.parse_rows(rows)?.into_iter().next())
    }

    /// Every run labelled `label` that passes `filter`, oldest first.
    ///
    /// # Errors
    /// [`HistoryError`].
    pub(crate) fn by_label(
        &self,
        label: &str,
        filter: &Filter,
    ) -> Result<Vec<ResultFile>, HistoryError> {
        if !self.has_runs {
            return Ok(Vec::new());
        }
        let (conditions, parts) = filter.conditions(2, self.version);
        let mut args = vec![Cell::Text(label.to_string())];
        args.extend(parts);
        let rows = self.rows(
            &format!("SELECT id, json FROM {{t}} WHERE label = ?1{conditions} ORDER BY id"),
            &args,
        )?;
        let runs = self.parse_rows(rows)?;
        Ok(runs.into_iter().filter(|r| filter.matches(r)).collect())
    }

    /// Up to `limit` complete runs, newest first, measured on the same
    /// machine as `run` (host, virtualisation, CPU model, kernel, CPU count and usable CPUs)
    /// with the same label, suite and worker setting: evidence of how much
    /// runs of one environment differ. `run` itself is among them when it
    /// was recorded. Runs the history cannot read are passed over.
    ///
    /// # Errors
    /// [`HistoryError`] for a database that cannot be queried.
    pub(crate) fn similar(
        &self,
        run: &ResultFile,
        limit: usize,
    ) -> Result<Vec<ResultFile>, HistoryError> {
        if !self.has_runs {
            return Ok(Vec::new());
        }
        let host = run.fingerprint.os.hostname.clone().unwrap_or_default();
        let rows = self.rows(
            "SELECT id, json FROM {t} WHERE host = ?1 AND suite = ?2 AND label = ?3 AND status = 'complete'
             ORDER BY id DESC LIMIT 200",
            &[
                Cell::Text(host),
                Cell::Text(run.config.suite.name().to_string()),
                Cell::Text(run.label.clone()),
            ],
        )?;
        let same = |f: &ResultFile| {
            let (a, b) = (&f.fingerprint, &run.fingerprint);
            a.virtualization.summary() == b.virtualization.summary()
                && a.cpu.model == b.cpu.model
                && a.cpu.logical_cpus == b.cpu.logical_cpus
                && a.cpu.usable_cpus == b.cpu.usable_cpus
                && a.os.kernel_release == b.os.kernel_release
                && f.config.workers == run.config.workers
        };
        Ok(rows
            .into_iter()
            .filter_map(|r| self.parse_rows(vec![r]).ok()?.pop())
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
        let h = History::open(&Db::File(tmp.path().join("h.sqlite3"))).unwrap();
        let mut a = sample("native", "r1");
        let (id, added) = h.record(&a, Path::new("a.json")).unwrap();
        assert_eq!(added, Outcome::Added);
        h.record(&sample("wsl2", "r2"), Path::new("b.json"))
            .unwrap();
        assert_eq!(
            h.record(&a, Path::new("copy/a.json")).unwrap(),
            (id, Outcome::Unchanged),
            "the same document again changes nothing"
        );
        assert_eq!(h.list().unwrap()[0].path, "a.json");
        a.notes.push("finished since".into());
        assert_eq!(
            h.record(&a, Path::new("a2.json")).unwrap(),
            (id, Outcome::Updated),
            "same run id updates"
        );
        let list = h.list().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(
            (list[0].label.as_str(), list[0].path.as_str()),
            ("native", "a2.json")
        );
        assert_eq!(h.get(id).unwrap().unwrap(), a);
        // a copy saved while it ran, pushed after: the finished run stays
        let mut early = a.clone();
        early.status = crate::results::RunStatus::Running;
        early.notes.push("an earlier save".into());
        assert_eq!(
            h.record(&early, Path::new("early.json")).unwrap(),
            (id, Outcome::Older)
        );
        assert_eq!(h.get(id).unwrap().unwrap(), a);
        // relabelled: the row takes the new label as the document does
        let mut relabelled = a.clone();
        relabelled.label = "renamed".into();
        h.record(&relabelled, Path::new("a2.json")).unwrap();
        assert_eq!(h.list().unwrap()[0].label, "renamed");
        assert_eq!(h.by_label("wsl2", &Filter::default()).unwrap().len(), 1);
        assert!(h.get(999).unwrap().is_none());
    }

    #[test]
    fn a_filter_picks_runs_by_their_fingerprint_in_the_query_and_in_memory() {
        let tmp = tempfile::tempdir().unwrap();
        let h = History::open(&Db::File(tmp.path().join("h.sqlite3"))).unwrap();
        for (id, host, cpu) in [
            ("r1", "lab-a", "AMD EPYC 9B14"),
            ("r2", "lab-b", "Intel(R) Xeon(R) Platinum 8481C"),
            ("r3", "lab_c%", "AMD EPYC 7B13"),
            ("r4", "ÄRGER-Ωmega", "Ampere Altra"),
        ] {
            let mut r = sample("native", id);
            r.fingerprint.os.hostname = Some(host.into());
            r.fingerprint.cpu.model = Some(cpu.into());
            h.record(&r, Path::new("x.json")).unwrap();
        }
        let ids = |f: Filter| -> Vec<String> {
            let runs = h.by_label("native", &f).unwrap();
            assert!(
                runs.iter().all(|r| f.matches(r)),
                "memory agrees with the query"
            );
            runs.into_iter().map(|r| r.run_id).collect()
        };
        let cpu = |c: &str| Filter {
            cpu: Some(c.into()),
            ..Filter::default()
        };
        assert_eq!(ids(cpu("epyc")), ["r1", "r3"]);
        assert_eq!(ids(cpu("xeon")), ["r2"]);
        let host = |c: &str| Filter {
            host: Some(c.into()),
            ..Filter::default()
        };
        assert_eq!(ids(host("_c%")), ["r3"], "% and _ are plain characters");
        assert_eq!(ids(host("lab-")), ["r1", "r2"]);
        assert!(ids(host("nowhere")).is_empty());
        // SQLite folds ASCII only: other letters are matched in memory
        assert_eq!(ids(host("ärger")), ["r4"]);
        assert_eq!(ids(host("ωMEGA")), ["r4"]);
        assert_eq!(ids(Filter::default()).len(), 4);
    }

    #[test]
    fn a_version_1_database_is_brought_up_to_date_with_its_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("h.sqlite3");
        let json = serde_json::to_string(&sample("native", "old")).unwrap();
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE,
                label TEXT NOT NULL, host TEXT NOT NULL, virtualization TEXT NOT NULL,
                started_utc TEXT NOT NULL, suite TEXT NOT NULL, status TEXT NOT NULL,
                path TEXT NOT NULL, json TEXT NOT NULL);
             PRAGMA user_version = 1;",
        )
        .unwrap();
        c.execute(
            "INSERT INTO runs (run_id, label, host, virtualization, started_utc, suite, status, path, json)
             VALUES ('old', 'native', 'h', 'kvm', 't', 'quick', 'complete', 'a.json', ?1)",
            [&json],
        )
        .unwrap();
        drop(c);
        // read as it is, unchanged, by the read-only commands
        let ro = History::open_read_only(&Db::File(p.clone())).unwrap();
        assert_eq!(ro.list().unwrap().len(), 1);
        assert_eq!(ro.by_label("native", &Filter::default()).unwrap().len(), 1);
        let cpu = |c: &str| Filter {
            cpu: Some(c.into()),
            ..Filter::default()
        };
        let model = sample("native", "old")
            .fingerprint
            .cpu
            .model
            .unwrap_or_default();
        assert_eq!(ro.by_label("native", &cpu(&model)).unwrap().len(), 1);
        assert!(ro
            .by_label("native", &cpu("no such cpu"))
            .unwrap()
            .is_empty());
        drop(ro);
        let v1: i64 = rusqlite::Connection::open(&p)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v1, 1, "a read-only open changes nothing");
        let h = History::open(&Db::File(p.clone())).unwrap();
        let v: i64 = rusqlite::Connection::open(&p)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, DB_VERSION);
        let list = h.list().unwrap();
        assert_eq!(list.len(), 1);
        let want = sample("native", "old")
            .fingerprint
            .cpu
            .model
            .unwrap_or_default();
        assert_eq!(list[0].cpu_model, want, "filled from the stored document");
        assert_eq!(h.by_label("native", &Filter::default()).unwrap().len(), 1);
    }

    #[test]
    fn a_newer_database_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("h.sqlite3");
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch("PRAGMA user_version = 7;")
            .unwrap();
        assert!(matches!(
            History::open(&Db::File(p.clone())),
            Err(HistoryError::TooNew { found: 7, .. })
        ));
    }

    #[test]
    fn read_only_opening_creates_nothing_and_reads_a_read_only_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("h.sqlite3");
        assert!(History::open_read_only(&Db::File(p.clone()))
            .unwrap()
            .list()
            .unwrap()
            .is_empty());
        assert!(!p.exists(), "a read-only open creates no file");
        History::open(&Db::File(p.clone()))
            .unwrap()
            .record(&sample("native", "r1"), Path::new("a.json"))
            .unwrap();
        let ro = History::open_read_only(&Db::File(p.clone())).unwrap();
        assert_eq!(ro.list().unwrap().len(), 1);
        assert_eq!(ro.by_label("native", &Filter::default()).unwrap().len(), 1);
    }

    #[test]
    fn a_corrupt_database_gets_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("h.sqlite3");
        std::fs::write(&p, vec![0x42u8; 4096]).unwrap();
        let err = History::open(&Db::File(p.clone()))
            .err()
            .expect("refused")
            .to_string();
        assert!(
            err.contains("not a usable envbench history database"),
            "{err}"
        );
    }
}
