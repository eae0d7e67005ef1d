//! What an application workload (the `app` family) did in one repetition,
//! counted as it did it: each case performs every operation itself, one
//! call at a time, and adds it here, so the counts are exact rather than
//! estimated. A case writes them under [`KEY`] in its details; `compare`
//! reads them to predict the case's slowdown from the per-operation costs
//! the micro families measured (Saavedra and Smith, 1996: time = Σ
//! operations × cost per operation).

use super::price::Op;
use serde::{Deserialize, Serialize};

/// The bytes io.meta writes per file: its per-file rates, which price an
/// app case's reads and creates, include them (`bench::io::meta` takes its
/// size from here, so the two cannot part).
pub const SMALL_FILE_BYTES: u64 = 4096;

/// The key of a case's details that holds its [`OpCounts`].
pub const KEY: &str = "counts";

/// The key under which a person's command records the part of its counts
/// made on files outside its directory.
pub const ELSEWHERE_KEY: &str = "counts_elsewhere";

/// The key under which a person's command records the part of its counts
/// in its directory made by threads alive together (git's preloaded
/// index), where there was any.
pub const PARALLEL_KEY: &str = "counts_parallel";

/// The key of how many threads were alive together, on average over
/// those operations (at most the CPUs the command could use).
pub const THREADS_KEY: &str = "parallel_threads";

/// The key under which a person's command records why its operations
/// could not be counted (no ptrace in its environment, no counter).
pub const NOT_COUNTED_KEY: &str = "not_counted";

/// Operations of one repetition of an application workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCounts {
    /// `lstat` of a name that exists (a file's size and times read), or a
    /// database's check that a file is there (SQLite's `xAccess`, found).
    pub stats: u64,
    /// Lookups of a name that does not exist (an import's search path
    /// tried in vain, a PATH entry without the program, a database's check
    /// for a journal that is not there).
    pub misses: u64,
    /// Directories listed (`readdir` to the end); for a person's command,
    /// counted, each `getdents64` that returned entries.
    pub readdirs: u64,
    /// Small files opened, read whole and closed.
    pub reads: u64,
    /// Bytes those reads returned.
    pub read_bytes: u64,
    /// Files created new, written whole and closed.
    pub creates: u64,
    /// Bytes those creates wrote.
    pub write_bytes: u64,
    /// Directories created.
    pub mkdirs: u64,
    /// Files removed.
    pub unlinks: u64,
    /// Directories removed.
    pub rmdirs: u64,
    /// Files a database opened or created through its file layer (its own
    /// file, each rollback journal, its write-ahead log). Absent in results
    /// written before app.db: none.
    #[serde(default)]
    pub opens: u64,
    /// Reads from a file held open (a database's pages).
    #[serde(default)]
    pub preads: u64,
    /// Bytes those reads asked for.
    #[serde(default)]
    pub pread_bytes: u64,
    /// Writes into a file held open (a database's pages, its journal).
    #[serde(default)]
    pub pwrites: u64,
    /// Bytes those writes wrote.
    #[serde(default)]
    pub pwrite_bytes: u64,
    /// Syncs of a file to its disk (`fsync` or `fdatasync`; one may also
    /// sync its directory, as SQLite's first sync of a new journal does).
    #[serde(default)]
    pub syncs: u64,
    /// Other calls on a database's open files that SQLite's file layer
    /// makes a system call for: locks and unlocks, sizes, truncates,
    /// closes.
    #[serde(default)]
    pub calls: u64,
    /// Programs started and waited for: a compiler driver and each program
    /// it names with `-###` (app.cc). Absent in results written before it:
    /// none.
    #[serde(default)]
    pub spawns: u64,
    /// Files renamed (a person's command, counted: an editor's or a
    /// build's write-then-rename). Absent in results written before
    /// commands were counted: none.
    #[serde(default)]
    pub renames: u64,
    /// Names walked by the paths of the stats, misses, reads, creates,
    /// unlinks, renames and attribute changes: each path's names below the nearest directory
    /// the command held (its working directory, a directory or file it
    /// had open), `a/b/f` 3, `f` at its directory's descriptor 1 (a
    /// person's command, counted). 0 where not counted (app cases, and
    /// results from before names were counted, on 2026-12-04): their
    /// operations are priced with the names their pricing case walked,
    /// as are those of a command that walked none.
    #[serde(default)]
    pub names: u64,
    /// Attributes changed: a file's mode, owner or times (a person's
    /// command, counted: tar and `cp -a` restoring them). Absent in
    /// results written before these were counted (2026-12-07): none, the
    /// calls among `calls`.
    #[serde(default)]
    pub setattrs: u64,
}

/// One priced quantity of a workload's counts ([`OpCounts::priced`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// What it is, in a report's words: `stats`, `misses`.
    pub words: &'static str,
    /// The operation whose price it takes.
    pub op: Op,
    /// How many, per repetition.
    pub count: u64,
}

/// Field by field, saturating: a count that no longer fits stays at
/// `u64::MAX` rather than wrapping to a small one.
impl std::ops::AddAssign for OpCounts {
    fn add_assign(&mut self, o: OpCounts) {
        *self = self.each(&o, u64::saturating_add);
    }
}

impl OpCounts {
    /// `f` of each field of these counts and `o`'s.
    fn each(&self, o: &OpCounts, f: impl Fn(u64, u64) -> u64) -> OpCounts {
        OpCounts {
            stats: f(self.stats, o.stats),
            misses: f(self.misses, o.misses),
            readdirs: f(self.readdirs, o.readdirs),
            reads: f(self.reads, o.reads),
            read_bytes: f(self.read_bytes, o.read_bytes),
            creates: f(self.creates, o.creates),
            write_bytes: f(self.write_bytes, o.write_bytes),
            mkdirs: f(self.mkdirs, o.mkdirs),
            unlinks: f(self.unlinks, o.unlinks),
            rmdirs: f(self.rmdirs, o.rmdirs),
            opens: f(self.opens, o.opens),
            preads: f(self.preads, o.preads),
            pread_bytes: f(self.pread_bytes, o.pread_bytes),
            pwrites: f(self.pwrites, o.pwrites),
            pwrite_bytes: f(self.pwrite_bytes, o.pwrite_bytes),
            syncs: f(self.syncs, o.syncs),
            calls: f(self.calls, o.calls),
            spawns: f(self.spawns, o.spawns),
            renames: f(self.renames, o.renames),
            names: f(self.names, o.names),
            setattrs: f(self.setattrs, o.setattrs),
        }
    }

    /// These counts without `part` (field by field, at least 0).
    pub fn less(&self, part: &OpCounts) -> OpCounts {
        self.each(part, u64::saturating_sub)
    }

    /// The file operations among the counts (not their bytes, nor other
    /// calls or programs): what "its 1 200 operations" says.
    pub fn file_operations(&self) -> u64 {
        [
            self.stats,
            self.misses,
            self.readdirs,
            self.reads,
            self.creates,
            self.mkdirs,
            self.unlinks,
            self.rmdirs,
            self.renames,
            self.syncs,
            self.setattrs,
        ]
        .iter()
        .fold(0, |a, &b| a.saturating_add(b))
    }

    /// Every count, named as the result file names it, for reports.
    pub fn named(&self) -> [(&'static str, u64); 21] {
        [
            ("stats", self.stats),
            ("misses", self.misses),
            ("readdirs", self.readdirs),
            ("reads", self.reads),
            ("read_bytes", self.read_bytes),
            ("creates", self.creates),
            ("write_bytes", self.write_bytes),
            ("mkdirs", self.mkdirs),
            ("unlinks", self.unlinks),
            ("rmdirs", self.rmdirs),
            ("opens", self.opens),
            ("preads", self.preads),
            ("pread_bytes", self.pread_bytes),
            ("pwrites", self.pwrites),
            ("pwrite_bytes", self.pwrite_bytes),
            ("syncs", self.syncs),
            ("calls", self.calls),
            ("spawns", self.spawns),
            ("renames", self.renames),
            ("names", self.names),
            ("setattrs", self.setattrs),
        ]
    }

    /// The counts that compare prices, in the order a report lists them,
    /// each with its words and the operation whose price it takes. A small
    /// file's read or create includes its first
    /// [`SMALL_FILE_BYTES`]: only the bytes beyond are priced as bytes. A
    /// database's file opens are creates (each journal is new), its page
    /// reads and writes, locks, sizes and closes each a system call, their
    /// bytes apart. A rename changes a directory's entries as an unlink
    /// does, and takes its price. The names their paths walked, where
    /// counted, come last.
    pub fn priced(&self) -> [Counted; 17] {
        let extra_read = self
            .read_bytes
            .saturating_sub(self.reads.saturating_mul(SMALL_FILE_BYTES));
        let extra_write = self
            .write_bytes
            .saturating_sub(self.creates.saturating_mul(SMALL_FILE_BYTES));
        let c = |words, op, count| Counted { words, op, count };
        [
            // a file whose sums do not fit was refused when it was read
            // ([`OpCounts::overflow`]): saturated, they change none read
            c("stats", Op::Lookup, self.stats),
            c("misses", Op::Miss, self.misses),
            c("reads", Op::SmallRead, self.reads),
            c("creates", Op::SmallCreate, self.creates),
            c("unlinks", Op::Unlink, self.unlinks),
            c("renames", Op::Unlink, self.renames),
            c("attribute changes", Op::SetAttr, self.setattrs),
            c("listings", Op::List, self.readdirs),
            c("bytes read", Op::ByteRead, extra_read),
            c("bytes written", Op::ByteWritten, extra_write),
            c("opens", Op::SmallCreate, self.opens),
            c("page bytes read", Op::ByteRead, self.pread_bytes),
            c("page bytes written", Op::ByteWritten, self.pwrite_bytes),
            c("syncs", Op::Sync, self.syncs),
            c(
                "file system calls",
                Op::Syscall,
                self.file_calls().unwrap_or(u64::MAX),
            ),
            c("programs started", Op::Spawn, self.spawns),
            c("names walked", Op::Name, self.names),
        ]
    }

    /// A database's calls on its open files (page reads and writes, and
    /// the other calls), each priced as a system call; None where the sum
    /// does not fit a count.
    pub fn file_calls(&self) -> Option<u64> {
        self.preads
            .checked_add(self.pwrites)?
            .checked_add(self.calls)
    }

    /// The sum `compare` forms that does not fit a count (64 bits), named
    /// by the fields it adds: a file that says so was not written by a
    /// case that counted (`preads + pwrites + calls = 1 +
    /// 18446744073709551614 + 3`).
    pub fn overflow(&self) -> Option<String> {
        if self.file_calls().is_some() {
            return None;
        }
        let terms = [self.preads, self.pwrites, self.calls].map(|t| t.to_string());
        Some(format!(
            "preads + pwrites + calls = {} is more than a count holds ({})",
            terms.join(" + "),
            u64::MAX
        ))
    }

    /// The counts a case recorded in its details, if it recorded them.
    pub fn of(details: Option<&serde_json::Value>) -> Option<OpCounts> {
        serde_json::from_value(details?.get(KEY)?.clone()).ok()
    }

    /// The part of them a person's command made on files outside its
    /// directory, if it recorded it.
    pub fn elsewhere_of(details: Option<&serde_json::Value>) -> Option<OpCounts> {
        serde_json::from_value(details?.get(ELSEWHERE_KEY)?.clone()).ok()
    }

    /// The part of them a person's command made in its directory on
    /// threads alive together, and how many were on average, if it
    /// recorded them with more than one thread.
    pub fn parallel_of(details: Option<&serde_json::Value>) -> Option<(OpCounts, f64)> {
        let d = details?;
        let counts = serde_json::from_value(d.get(PARALLEL_KEY)?.clone()).ok()?;
        let threads = d.get(THREADS_KEY)?.as_f64()?;
        (threads > 1.0 && threads.is_finite()).then_some((counts, threads))
    }

    /// Why a person's command's operations were not counted, where it
    /// says.
    pub fn not_counted_of(details: Option<&serde_json::Value>) -> Option<&str> {
        details?.get(NOT_COUNTED_KEY)?.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_trip_through_a_case_s_details() {
        let c = OpCounts {
            stats: 3,
            misses: 7,
            reads: 2,
            read_bytes: 8192,
            ..OpCounts::default()
        };
        let details = serde_json::json!({ "dir": {"name": "work"}, KEY: c });
        assert_eq!(OpCounts::of(Some(&details)), Some(c));
        assert_eq!(OpCounts::of(Some(&serde_json::json!({}))), None);
        assert_eq!(OpCounts::of(None), None);
        assert_eq!(c.named().iter().map(|(_, n)| n).sum::<u64>(), 8204);
    }

    #[test]
    fn counts_written_before_the_database_counts_read_as_none_of_them() {
        let old = serde_json::json!({ KEY: {
            "stats": 1, "misses": 2, "readdirs": 3, "reads": 4, "read_bytes": 5,
            "creates": 6, "write_bytes": 7, "mkdirs": 8, "unlinks": 9, "rmdirs": 10
        }});
        let c = OpCounts::of(Some(&old)).unwrap();
        assert_eq!((c.rmdirs, c.opens, c.syncs, c.pwrite_bytes), (10, 0, 0, 0));
        assert_eq!((c.setattrs, c.names), (0, 0));
    }

    #[test]
    fn counts_that_would_wrap_stay_at_the_most_a_count_holds() {
        let mut a = OpCounts {
            stats: u64::MAX - 1,
            ..OpCounts::default()
        };
        a += OpCounts {
            stats: 3,
            spawns: 1,
            ..OpCounts::default()
        };
        assert_eq!((a.stats, a.spawns), (u64::MAX, 1));
    }

    #[test]
    fn sums_that_do_not_fit_a_count_are_named_with_their_fields() {
        // stats and misses are priced apart: no sum of theirs to wrap
        let apart = OpCounts {
            stats: u64::MAX - 1,
            misses: 3,
            ..OpCounts::default()
        };
        assert_eq!(apart.overflow(), None);
        let fine = OpCounts {
            preads: 1,
            pwrites: u64::MAX - 4,
            calls: 3,
            ..OpCounts::default()
        };
        assert_eq!((fine.file_calls(), fine.overflow()), (Some(u64::MAX), None));
        let calls = OpCounts {
            preads: 1,
            pwrites: u64::MAX,
            calls: 1,
            ..OpCounts::default()
        };
        assert_eq!(calls.file_calls(), None);
        assert!(calls
            .overflow()
            .unwrap()
            .starts_with("preads + pwrites + calls = 1 + 18446744073709551615 + 1 is"));
    }

    #[test]
    fn counts_add_field_by_field() {
        let mut a = OpCounts {
            stats: 1,
            syncs: 2,
            ..OpCounts::default()
        };
        a += OpCounts {
            stats: 10,
            pwrites: 3,
            syncs: 20,
            ..OpCounts::default()
        };
        assert_eq!((a.stats, a.pwrites, a.syncs, a.reads), (11, 3, 22, 0));
    }
}
