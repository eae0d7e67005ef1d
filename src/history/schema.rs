//! The history's layout and its versions, one list for both engines.
//!
//! A version is applied once, in a transaction, in order; the version
//! reached is kept in SQLite's `user_version` and in PostgreSQL's
//! `envbench.meta` table. PostgreSQL keeps its tables in a schema of their
//! own (`envbench`), so a shared database can hold other things too; many
//! hosts opening a new store at once take turns through an advisory lock.
//! A store whose version is newer than [`VERSION`] is refused, never
//! written.

use super::backend::{Cell, Conn, Failure};

/// One step of the layout.
struct Migration {
    /// The version it reaches.
    version: i64,
    /// For SQLite.
    sqlite: &'static str,
    /// For PostgreSQL (tables under the `envbench` schema).
    postgres: &'static str,
}

/// The columns of a run after its id, the same in both engines.
macro_rules! run_columns {
    () => {
        "run_id TEXT NOT NULL UNIQUE, label TEXT NOT NULL, host TEXT NOT NULL,
         virtualization TEXT NOT NULL, started_utc TEXT NOT NULL, suite TEXT NOT NULL,
         status TEXT NOT NULL, path TEXT NOT NULL, json TEXT NOT NULL"
    };
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sqlite: concat!(
            "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, ",
            run_columns!(),
            ");"
        ),
        postgres: concat!(
            "CREATE TABLE IF NOT EXISTS envbench.runs (",
            "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, ",
            run_columns!(),
            ");"
        ),
    },
    // The fingerprint fields a comparison filters by, as columns (filled
    // from the stored documents), and an index for labels.
    Migration {
        version: 2,
        sqlite: "ALTER TABLE runs ADD COLUMN cpu_model TEXT NOT NULL DEFAULT '';
             ALTER TABLE runs ADD COLUMN kernel TEXT NOT NULL DEFAULT '';
             UPDATE runs SET
                cpu_model = coalesce(json_extract(json, '$.fingerprint.cpu.model'), ''),
                kernel = coalesce(json_extract(json, '$.fingerprint.os.kernel_release'), '');
             CREATE INDEX IF NOT EXISTS runs_label ON runs (label);",
        postgres: "ALTER TABLE envbench.runs ADD COLUMN cpu_model TEXT NOT NULL DEFAULT '';
             ALTER TABLE envbench.runs ADD COLUMN kernel TEXT NOT NULL DEFAULT '';
             UPDATE envbench.runs SET
                cpu_model = coalesce(json::jsonb #>> '{fingerprint,cpu,model}', ''),
                kernel = coalesce(json::jsonb #>> '{fingerprint,os,kernel_release}', '');
             CREATE INDEX IF NOT EXISTS runs_label ON envbench.runs (label);",
    },
];

/// The version this envbench writes and reads.
pub const VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// The table of runs as statements name it.
pub(crate) fn runs_table(conn: &Conn) -> &'static str {
    if conn.is_server() {
        "envbench.runs"
    } else {
        "runs"
    }
}

/// The version a store has (0 for none yet).
pub(crate) fn version(conn: &Conn) -> Result<i64, Failure> {
    if conn.is_server() {
        let has_meta = conn.rows("SELECT to_regclass('envbench.meta')::text", &[])?;
        if has_meta
            .first()
            .and_then(|r| r.first())
            .is_none_or(|c| c == &Cell::Text(String::new()))
        {
            return Ok(0);
        }
        let rows = conn.rows(
            "SELECT value FROM envbench.meta WHERE key = 'schema_version'",
            &[],
        )?;
        Ok(rows.first().and_then(|r| r.first()).map_or(0, Cell::int))
    } else {
        let rows = conn.rows("PRAGMA user_version", &[])?;
        Ok(rows.first().and_then(|r| r.first()).map_or(0, Cell::int))
    }
}

/// Whether the store has a table of runs (a read-only history of a new
/// store has none: it lists nothing).
pub(crate) fn has_runs(conn: &Conn) -> Result<bool, Failure> {
    let sql = if conn.is_server() {
        "SELECT count(*)::bigint FROM pg_tables WHERE schemaname = 'envbench' AND tablename = 'runs'"
    } else {
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'"
    };
    Ok(conn
        .rows(sql, &[])?
        .first()
        .and_then(|r| r.first())
        .map_or(0, Cell::int)
        > 0)
}

/// Brings the store to [`VERSION`], one transaction per step; returns the
/// version found first (newer ones are left alone for the caller to refuse).
pub(crate) fn migrate(conn: &Conn) -> Result<i64, Failure> {
    let found = version(conn)?;
    if found >= VERSION {
        return Ok(found);
    }
    if conn.is_server() {
        conn.batch(
            "BEGIN;
             SELECT pg_advisory_xact_lock(7401220001);
             CREATE SCHEMA IF NOT EXISTS envbench;
             CREATE TABLE IF NOT EXISTS envbench.meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);",
        )?;
    } else {
        conn.batch("BEGIN IMMEDIATE;")?;
    }
    let steps = (|| {
        // read again under the lock: another process may have migrated
        let now = version(conn)?;
        for m in MIGRATIONS.iter().filter(|m| m.version > now) {
            if conn.is_server() {
                conn.batch(m.postgres)?;
                conn.rows(
                    "INSERT INTO envbench.meta (key, value) VALUES ('schema_version', ?1)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    &[Cell::Int(m.version)],
                )?;
            } else {
                conn.batch(m.sqlite)?;
                conn.batch(&format!("PRAGMA user_version = {};", m.version))?;
            }
        }
        Ok(())
    })();
    match steps {
        Ok(()) => conn.batch("COMMIT;")?,
        Err(e) => {
            let _ = conn.batch("ROLLBACK;");
            return Err(e);
        }
    }
    Ok(found)
}
