//! What an application workload (the `app` family) did in one repetition,
//! counted as it did it: each case performs every operation itself, one
//! call at a time, and adds it here, so the counts are exact rather than
//! estimated. A case writes them under [`KEY`] in its details; `compare`
//! reads them to predict the case's slowdown from the per-operation costs
//! the micro families measured (Saavedra and Smith, 1996: time = Σ
//! operations × cost per operation).

use serde::{Deserialize, Serialize};

/// The bytes io.meta writes per file: its per-file rates, which price an
/// app case's reads and creates, include them (`bench::io::meta` takes its
/// size from here, so the two cannot part).
pub const SMALL_FILE_BYTES: u64 = 4096;

/// The key of a case's details that holds its [`OpCounts`].
pub const KEY: &str = "counts";

/// Operations of one repetition of an application workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCounts {
    /// `lstat` of a name that exists (a file's size and times read).
    pub stats: u64,
    /// Lookups of a name that does not exist (an import's search path
    /// tried in vain, a PATH entry without the program).
    pub misses: u64,
    /// Directories listed (`readdir` to the end).
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
}

impl OpCounts {
    /// Every count, named as the result file names it, for reports.
    pub fn named(&self) -> [(&'static str, u64); 10] {
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
        ]
    }

    /// The counts a case recorded in its details, if it recorded them.
    pub fn of(details: Option<&serde_json::Value>) -> Option<OpCounts> {
        serde_json::from_value(details?.get(KEY)?.clone()).ok()
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
}
