//! Prices: which operation a micro bench's metric puts a cost on, declared
//! by the bench beside its cases ([`crate::bench::Bench::prices`]), the way
//! it declares its views. An application case or a person's command counts
//! its operations ([`super::counts::OpCounts`]); `compare` prices each
//! count with the declaration that names its operation, from the micro case
//! that ran on the same directory in the same runs, and names no bench,
//! metric or parameter itself.

use serde::Serialize;

/// An operation that workloads count and micro benches price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// A name looked up and found (`stat`).
    Lookup,
    /// A name looked up and not there (a failed `stat` or `open`).
    Miss,
    /// A small file opened, read whole (up to [`super::counts::SMALL_FILE_BYTES`])
    /// and closed.
    SmallRead,
    /// A small file created, written whole and closed.
    SmallCreate,
    /// A file removed.
    Unlink,
    /// A file's attributes changed: its mode, owner or times (`chmod`,
    /// `chown`, `utimensat`, by path or descriptor), as tar and `cp -a`
    /// restore them. A FUSE or 9p share answers each with a round trip.
    SetAttr,
    /// A directory listed (a batch of its entries read).
    List,
    /// A byte read beyond what a small-file read includes.
    ByteRead,
    /// A byte written beyond what a small-file create includes.
    ByteWritten,
    /// A file synced to its disk.
    Sync,
    /// A name a path walks below the nearest directory the workload
    /// holds (a working directory, a directory or file open, and every
    /// directory above them): `a/b/f` from the working directory walks 3,
    /// `f` at its directory's descriptor 1. Priced apart only where the workload counted its
    /// names ([`super::counts::OpCounts::names`]) and the runs measured
    /// what a name costs; the price of each operation that walks a path
    /// then leaves out the names its own pricing case walked
    /// ([`Price::names`]).
    Name,
    /// Any other system call, at the price of a null one.
    Syscall,
    /// A program started and waited for.
    Spawn,
    /// The computation: not counted, it scales the time nothing else
    /// prices (its price is a time per unit of work on each side).
    Compute,
}

/// How a metric's value becomes seconds per operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// Operations per second: 1 / value.
    PerSecond,
    /// MB (10^6 bytes) per second, priced per byte: 10^-6 / value.
    MegabytesPerSecond,
    /// Nanoseconds per operation: value × 10^-9.
    Nanoseconds,
    /// A name's price from two operations per second of the same case
    /// that differ only in the names their paths walk: the metric's
    /// (`deep`, its paths `apart` names longer) and `near`'s; (1 / deep −
    /// 1 / near) / apart, and none below 0.
    PerName {
        /// Its metric of the same operation at the shorter paths.
        near: &'static str,
        /// How many names longer the metric's paths are.
        apart: u8,
    },
    /// Operations per second of a case that also reads and writes, at
    /// the MiB-per-second values of its metrics `read` and `written`:
    /// each operation is priced at the time left once those bytes are
    /// priced at [`Op::ByteRead`] and [`Op::ByteWritten`] on the same
    /// directory (io.random's fsyncs), where at least a tenth is left.
    LessTransfers {
        /// Its metric of MiB read per second.
        read: &'static str,
        /// Its metric of MiB written per second.
        written: &'static str,
    },
}

/// One operation's price, as a bench declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Price {
    /// The operation priced.
    pub op: Op,
    /// The metric of the bench's cases that prices it.
    pub metric: &'static str,
    /// The parameters the pricing case has (`threads=1`), besides its
    /// directory.
    pub params: &'static [(&'static str, &'static str)],
    /// Whether the pricing case must have run on the workload's own
    /// `--dir` (a file operation); false: any case prices it (a system
    /// call, the computation).
    pub on_dir: bool,
    /// How the metric's value becomes a time per operation.
    pub cost: Cost,
    /// The names each priced operation's path walks below a directory the
    /// pricing case holds ([`Op::Name`]): io.meta's `tree-N/dNNNN/fNNNNN`,
    /// 3, its listing's open of `tree-N/dNNNN` 2; 0 for an operation that
    /// names no path.
    pub names: u8,
}

/// A price with the bench that declared it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchPrice {
    /// The bench's id (`io.meta`).
    pub bench: &'static str,
    /// Its price.
    pub price: Price,
}

impl Op {
    /// Whether a workload without this price keeps these operations in
    /// its unpriced rest instead of going without a prediction: a system
    /// call's and a program's price come from cases that a comparison of
    /// directories does not have, a listing's and an attribute change's
    /// from runs made since io.meta measured them, and without a name's
    /// price each operation's keeps the names its pricing case walked.
    pub fn may_stay_in_rest(self) -> bool {
        matches!(
            self,
            Op::Syscall | Op::Spawn | Op::List | Op::Name | Op::SetAttr
        )
    }
}

impl Cost {
    /// Seconds per operation at `value`: None where the value is not a
    /// positive finite number. A value so near 0 that its price is beyond
    /// what a number holds gives an infinite one, which the prediction
    /// then refuses, saying so. A [`Cost::PerName`] metric's value gives
    /// the time of one of its operations, names and all.
    pub fn seconds(self, value: f64) -> Option<f64> {
        if !(value > 0.0 && value.is_finite()) {
            return None;
        }
        Some(match self {
            Cost::PerSecond | Cost::LessTransfers { .. } | Cost::PerName { .. } => 1.0 / value,
            Cost::MegabytesPerSecond => 1e-6 / value,
            Cost::Nanoseconds => value * 1e-9,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_turn_values_into_seconds_and_refuse_what_is_no_rate() {
        assert_eq!(Cost::PerSecond.seconds(4.0), Some(0.25));
        assert_eq!(Cost::MegabytesPerSecond.seconds(2.0), Some(5e-7));
        let ns = Cost::Nanoseconds.seconds(50.0).unwrap();
        assert!((ns - 5e-8).abs() < 1e-20, "{ns}");
        assert_eq!(Cost::PerSecond.seconds(0.0), None);
        assert_eq!(Cost::PerSecond.seconds(-1.0), None);
        assert_eq!(Cost::PerSecond.seconds(1e-320), Some(f64::INFINITY));
        assert_eq!(Cost::PerSecond.seconds(f64::INFINITY), None);
        assert_eq!(Cost::Nanoseconds.seconds(f64::NAN), None);
    }
}
