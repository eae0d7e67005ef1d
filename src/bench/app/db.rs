//! `app.db`: an application's SQLite commits, the work behind a browser's
//! history, a package manager's database, a mail client, Rails' seed data
//! (8 min native against 20 in Docker Desktop's bind mounts). Each
//! repetition makes a fresh database file and commits `transactions`
//! transactions of [`ROWS`] rows each into a table with an index, with
//! `synchronous=FULL`, and reads them back (the rows' count and sum must be
//! the ones written) before closing it. One case per journal mode:
//! `journal=delete`, a rollback journal (SQLite's default: each commit
//! creates, syncs and deletes a journal), and `journal=wal`, a write-ahead
//! log (each commit appends to the log and syncs it). The log needs its
//! index (`-shm`) mapped shared; where the file system refuses that (a 9p
//! share does), the WAL case is skipped and says so, as SQLite's own
//! documentation warns for network file systems.
//!
//! SQLite is the crate's own (rusqlite's bundled build, the same version in
//! every environment). Its connections run on a counting file layer
//! ([`super::vfs`]), so the case's counts are the opens, reads, writes,
//! syncs, deletes and lookups SQLite made. The database files are removed
//! after the timer stops, uncounted.

use super::{by_suite, ms, per_dir, time_metric, vfs, AppTrial, Ops, Workload};
use crate::bench::io::Target;
use crate::bench::{Bench, BenchError, CaseSpec, Context, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The case parameter: transactions per repetition.
const TRANSACTIONS: &str = "transactions";
/// The case parameter: the journal mode, `delete` or `wal`.
const JOURNAL: &str = "journal";
/// Rows each transaction inserts.
pub const ROWS: u64 = 8;
/// Bytes of each row's text.
const TEXT_BYTES: usize = 100;
/// The journal modes, a case each.
const MODES: [&str; 2] = ["delete", "wal"];

/// The `app.db` bench.
#[derive(Debug)]
pub struct Db;

impl Bench for Db {
    fn id(&self) -> &'static str {
        ids::APP_DB
    }
    fn topic(&self) -> &'static str {
        "databases"
    }
    fn summary(&self) -> &'static str {
        "SQLite with synchronous=FULL: commit 20 (quick), 100 or 1 000 transactions of 8 rows \
         into a fresh database, with a rollback journal and, a case apart, with a write-ahead \
         log; ms per repetition"
    }
    fn reproduces(&self) -> &'static str {
        "databases on a share or in a container (Rails seeds in Docker Desktop bind mounts)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let n = by_suite(plan.suite, [20, 100, 1_000]);
        per_dir(plan, self.id(), TRANSACTIONS, n, &[time_metric("ms")])
            .into_iter()
            .flat_map(|case| {
                MODES.map(|mode| {
                    let mut c = case.clone();
                    c.params.insert(JOURNAL.into(), Value::from(mode));
                    c
                })
            })
            .collect()
    }
    fn views(&self) -> Vec<crate::view::View> {
        vec![crate::bench::io::grid_by_dir(
            "databases by directory against the baseline",
            &["ms"],
        )]
    }
    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        // the rows and their index, with room for the journal or the log,
        // and SQLite's pages around them
        let rows = case.count(TRANSACTIONS).unwrap_or(0) * ROWS;
        rows * (TEXT_BYTES as u64 + 64) * 3 + (1 << 20)
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let transactions = case.count(TRANSACTIONS)?;
        let mode = case
            .params
            .get(JOURNAL)
            .and_then(Value::as_str)
            .and_then(|m| MODES.into_iter().find(|x| *x == m))
            .ok_or_else(|| BenchError::Failed(format!("{JOURNAL} must be one of {MODES:?}")))?;
        vfs::register()?;
        let target = Target::open(ctx, case, "db", self.disk_bytes(case))?;
        if mode == "wal" {
            wal_works(&target)?;
        }
        let journal = match mode {
            "wal" => "a write-ahead log",
            _ => "a rollback journal",
        };
        let about = format!(
            "SQLite {} with synchronous=FULL and {journal}: {transactions} transactions of \
             {ROWS} rows into a table with an index, in a fresh database, read back, closed, \
             and removed after timing",
            rusqlite::version()
        );
        let work = DbWork {
            transactions,
            mode,
            rep: 0,
        };
        Ok(AppTrial::boxed(target, work, about))
    }
}

/// Whether SQLite's write-ahead log works in `target`: a database made,
/// switched to WAL and given a table, then removed, untimed and uncounted.
///
/// # Errors
/// [`BenchError::Unsupported`] where the file system refused the log's
/// shared index (an I/O error), with the reason; any other failure as it is.
fn wal_works(target: &Target) -> Result<(), BenchError> {
    let path = target.file("wal-check.db");
    let tried = (|| {
        crate::bench::io::create_new(&path, 0)
            .map_err(|e| crate::bench::io::failed("creating", &path, e))?;
        let conn = Connection::open_with_flags_and_vfs(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            vfs::NAME,
        )
        .map_err(sql("opening a new database", &path))?;
        let set = conn
            .query_row("PRAGMA journal_mode=wal", [], |r| r.get::<_, String>(0))
            .and_then(|set| conn.execute_batch("CREATE TABLE t(x)").map(|()| set));
        match set {
            Ok(set) if set.eq_ignore_ascii_case("wal") => Ok(()),
            Ok(set) => Err(BenchError::Unsupported(format!(
                "SQLite kept journal_mode={set} here, not a write-ahead log"
            ))),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::SystemIoFailure =>
            {
                Err(BenchError::Unsupported(
                    "SQLite's write-ahead log needs its index (-shm) mapped shared, and this file \
                     system refused it (disk I/O error), as network file systems may; \
                     applications here must keep a rollback journal (journal=delete)"
                        .into(),
                ))
            }
            Err(e) => Err(sql("trying a write-ahead log", &path)(e)),
        }
    })();
    vfs::take();
    let removed = remove(&path);
    tried?;
    removed
}

struct DbWork {
    transactions: u64,
    mode: &'static str,
    rep: u64,
}

/// Row `n`'s key: spread, so that the index's pages are written all over.
fn row_key(n: u64) -> i64 {
    ((n * 7919) % 100_003) as i64
}

/// Row `n`'s text, [`TEXT_BYTES`] long.
fn row_text(n: u64) -> String {
    format!("{n:0width$}", width = TEXT_BYTES)
}

/// What [`phase`] must read back: the rows' count and the sum of their keys.
fn expected(transactions: u64) -> (i64, i64) {
    let rows = transactions * ROWS;
    (rows as i64, (0..rows).map(row_key).sum())
}

fn sql<'a>(what: &str, path: &'a Path) -> impl Fn(rusqlite::Error) -> BenchError + 'a {
    let what = what.to_string();
    move |e| BenchError::Failed(format!("SQLite {what} on {}: {e}", path.display()))
}

/// One journal mode's work on the database `path`, created here, empty
/// (SQLite's open would take an existing file as it is: envbench never
/// opens one for writing).
fn phase(ops: &mut Ops, path: &Path, mode: &str, transactions: u64) -> Result<(), BenchError> {
    ops.create(path, b"")?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags_and_vfs(path, flags, vfs::NAME)
        .map_err(sql("opening a new database", path))?;
    let set: String = conn
        .query_row(&format!("PRAGMA journal_mode={mode}"), [], |r| r.get(0))
        .map_err(sql("setting the journal mode", path))?;
    if !set.eq_ignore_ascii_case(mode) {
        return Err(BenchError::Failed(format!(
            "SQLite could not use journal_mode={mode} on {} (it kept {set}); the file system \
             may not support what it needs (shared memory maps for WAL)",
            path.display()
        )));
    }
    conn.execute_batch(
        "PRAGMA synchronous=FULL;
         CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT NOT NULL);
         CREATE INDEX t_k ON t(k);",
    )
    .map_err(sql("creating the table", path))?;
    for i in 0..transactions {
        let tx = conn.transaction().map_err(sql("beginning", path))?;
        {
            let mut insert = tx
                .prepare_cached("INSERT INTO t(k, v) VALUES (?1, ?2)")
                .map_err(sql("preparing", path))?;
            for j in 0..ROWS {
                let n = i * ROWS + j;
                insert
                    .execute(rusqlite::params![row_key(n), row_text(n)])
                    .map_err(sql("inserting", path))?;
            }
        }
        tx.commit().map_err(sql("committing", path))?;
    }
    let got: (i64, i64) = conn
        .query_row("SELECT count(*), total(k) FROM t", [], |r| {
            Ok((r.get(0)?, r.get::<_, f64>(1)? as i64))
        })
        .map_err(sql("reading back", path))?;
    if got != expected(transactions) {
        return Err(BenchError::Failed(format!(
            "{} holds {} rows with keys summing to {}, not the {:?} written",
            path.display(),
            got.0,
            got.1,
            expected(transactions)
        )));
    }
    conn.close().map_err(|(_, e)| sql("closing", path)(e))
}

/// Removes `path` and what SQLite may have left beside it (a journal, a
/// log, its index) after a failure; none is there after a clean close.
fn remove(path: &Path) -> Result<(), BenchError> {
    let mut first = None;
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let p = PathBuf::from(p);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                first.get_or_insert(crate::bench::io::failed("removing", &p, e));
            }
        }
    }
    first.map_or(Ok(()), Err)
}

impl Workload for DbWork {
    fn run(
        &mut self,
        ops: &mut Ops,
        target: &Target,
        clock: &Clock,
    ) -> Result<Vec<f64>, BenchError> {
        self.rep += 1;
        let path = target.file(&format!("{}{:06}.db", self.mode, self.rep));
        vfs::take();
        let t = clock.now();
        let done = phase(ops, &path, self.mode, self.transactions);
        let took = clock.now().saturating_sub(t);
        ops.counts += vfs::take();
        // the database goes on every path; the work's own error first
        let removed = remove(&path);
        done?;
        removed?;
        Ok(vec![ms(took)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::app::tests::{scratch_of, tiny};
    use crate::bench::app::OpCounts;
    use crate::bench::TestEnv;

    /// The case of `mode` with `n` transactions on the test's directory.
    fn case(mode: &str, n: u64) -> CaseSpec {
        let mut c = tiny(&Db, TRANSACTIONS, n);
        c.params.insert(JOURNAL.into(), Value::from(mode));
        c
    }

    /// The counts of one repetition of `mode` with `n` transactions.
    fn counts(env: &TestEnv, mode: &str, n: u64) -> OpCounts {
        let mut t = Db.prepare(&case(mode, n), &env.ctx()).unwrap();
        t.once(&env.clock).unwrap();
        OpCounts::of(t.details().as_ref()).unwrap()
    }

    #[test]
    fn each_mode_is_a_case_on_each_directory_and_no_other_mode_is() {
        let cases = Db.cases(&TestEnv::plan(crate::config::Suite::Quick, 1));
        let modes: Vec<_> = cases.iter().map(|c| c.params[JOURNAL].clone()).collect();
        assert_eq!(modes, vec![Value::from("delete"), Value::from("wal")]);
        let env = TestEnv::real(0.01);
        assert!(matches!(
            Db.prepare(&case("truncate", 1), &env.ctx()),
            Err(BenchError::Failed(m)) if m.contains("journal")
        ));
    }

    #[test]
    fn each_repetition_commits_every_transaction_and_counts_the_same_calls() {
        for mode in MODES {
            let env = TestEnv::real(0.01);
            let mut t = Db.prepare(&case(mode, 5), &env.ctx()).unwrap();
            for _ in 0..3 {
                let v = t.once(&env.clock).unwrap();
                assert!(v.len() == 1 && v[0] > 0.0, "{v:?}");
                // nothing left of the database between repetitions
                assert_eq!(std::fs::read_dir(scratch_of(&env)).unwrap().count(), 0);
            }
            let c = OpCounts::of(t.details().as_ref()).unwrap();
            // every commit syncs at least once
            assert!(c.syncs >= 5, "{mode}: {c:?}");
            // the 40 rows of 100 bytes went to the files at least twice
            // (the table and a journal or the log)
            assert!(c.pwrite_bytes >= 2 * 40 * 100, "{mode}: {c:?}");
            // the database, made empty by envbench itself, and no other
            // small file; its locks, sizes and close as calls
            assert_eq!(
                (c.creates, c.write_bytes, c.reads),
                (1, 0, 0),
                "{mode}: {c:?}"
            );
            assert!(c.calls >= 2 * 5, "{mode}: {c:?}");
        }
    }

    #[test]
    fn a_rollback_commit_opens_and_deletes_its_journal_and_a_log_commit_does_not() {
        let env = TestEnv::real(0.01);
        let per = |mode: &str, f: fn(&OpCounts) -> u64| {
            let (a, b) = (counts(&env, mode, 4), counts(&env, mode, 8));
            // the setup (open, pragmas, the table) is the same; each
            // further transaction adds the same calls
            (f(&b) - f(&a)) as f64 / 4.0
        };
        assert_eq!(per("delete", |c| c.opens), 1.0);
        assert_eq!(per("delete", |c| c.unlinks), 1.0);
        assert!(per("delete", |c| c.syncs) >= 2.0);
        assert_eq!(per("wal", |c| c.opens), 0.0);
        assert_eq!(per("wal", |c| c.unlinks), 0.0);
        assert_eq!(per("wal", |c| c.syncs), 1.0);
    }

    #[test]
    fn the_rows_written_are_the_rows_expected_and_no_file_is_opened_twice() {
        assert_eq!(expected(1).0, ROWS as i64);
        assert_eq!(row_text(7).len(), TEXT_BYTES);
        let tmp = tempfile::tempdir().unwrap();
        vfs::register().unwrap();
        let p = tmp.path().join("x.db");
        phase(&mut Ops::default(), &p, "wal", 3).unwrap();
        let c = Connection::open(&p).unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3 * ROWS as i64);
        assert!(
            phase(&mut Ops::default(), &p, "wal", 3).is_err(),
            "never opens an existing file"
        );
    }
}
