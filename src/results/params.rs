//! The parameters and details of a case that rooms other than the bench
//! that wrote them read back (the diagnosis groups cases by them, the
//! notices compare how cases were measured): their keys and values written
//! once, and typed accessors on [`CaseResult`], so no reader matches a
//! bench's strings. A parameter only its own bench reads stays in that
//! bench.

use super::CaseResult;
use serde_json::Value;

/// Parameter keys, as a case's key and `params` name them.
pub mod key {
    /// Where two processes run: [`super::SAME`] or [`super::SPLIT`] CPUs.
    pub const CPUS: &str = "cpus";
    /// How many threads compute at once.
    pub const THREADS: &str = "threads";
    /// How many processes compute at once.
    pub const PROCESSES: &str = "processes";
    /// The pages a working set lies in: [`super::HUGE`] or [`super::SMALL`].
    pub const PAGES: &str = "pages";
    /// A working set's size, KiB.
    pub const SIZE_KIB: &str = "size_kib";
    /// A file transfer ([`super::IoOp`]).
    pub const OP: &str = "op";
    /// The `--dir` a file case ran on, by name.
    pub const DIR: &str = "dir";
    /// How os.spawn starts its program (`fork_exec`, `posix_spawn`).
    pub const METHOD: &str = "method";
}

/// Detail keys, as a case's `details` name them.
pub mod detail {
    /// The `--dir` a file case ran on: `{"name", "filesystem"}`.
    pub const DIR: &str = "dir";
    /// The `--dir`'s name, inside [`DIR`].
    pub const NAME: &str = "name";
    /// The `--dir`'s file-system facts, inside [`DIR`].
    pub const FILESYSTEM: &str = "filesystem";
    /// The file system's type, inside [`FILESYSTEM`].
    pub const FS_TYPE: &str = "fs_type";
    /// A person's command's words, as given (`cmd.run`).
    pub const COMMAND: &str = "command";

    /// The details that say how a case was measured: when they differ
    /// between environments (a fallback helper, fewer processes allowed by
    /// a limit, transparent huge pages off on one side, affinity that
    /// could not be set), the figures are not like for like.
    pub const METHOD: &[&str] = &[
        "method",
        "program",
        super::key::PROCESSES,
        super::key::THREADS,
        "thp_mode",
        "page_request",
        "placement",
        SHELL,
    ];

    /// The shell a person's command ran through, or `none`.
    pub const SHELL: &str = "shell";
}

/// The hash in a person's command's key (`cmd.run[command=HASH,...]`):
/// eight hex digits of FNV-1a over its text as given, so a changed
/// command never matches an old result; stable across builds and
/// machines. How it ran (a shell or none) is a method detail
/// ([`detail::SHELL`]), compared apart.
pub fn command_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", h >> 32)
}

/// Both processes on one CPU.
pub const SAME: &str = "same";
/// Each process on a CPU of its own.
pub const SPLIT: &str = "split";
/// Transparent huge pages asked for.
pub const HUGE: &str = "huge";
/// Base pages only.
pub const SMALL: &str = "small";

/// The transfers of `io.dd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    /// Written in 64 KiB blocks, flushed with fdatasync before the clock stops.
    WriteFdatasync,
    /// Written through the page cache.
    WriteBuffered,
    /// Written with O_DIRECT, past the page cache.
    WriteDirect,
    /// Read from the page cache.
    ReadWarm,
    /// Read after the file left the page cache.
    ReadCold,
}

impl IoOp {
    /// Every transfer, in the order a run measures them.
    pub const ALL: [IoOp; 5] = [
        IoOp::WriteFdatasync,
        IoOp::WriteBuffered,
        IoOp::WriteDirect,
        IoOp::ReadWarm,
        IoOp::ReadCold,
    ];

    /// Its name as the `op` parameter.
    pub(crate) fn name(self) -> &'static str {
        match self {
            IoOp::WriteFdatasync => "write_fdatasync",
            IoOp::WriteBuffered => "write_buffered",
            IoOp::WriteDirect => "write_direct",
            IoOp::ReadWarm => "read_warm",
            IoOp::ReadCold => "read_cold",
        }
    }

    /// The transfer named `name`, if any.
    pub(crate) fn from_name(name: &str) -> Option<IoOp> {
        IoOp::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Whether the data must reach the storage before the clock stops.
    pub(crate) fn durable(self) -> bool {
        matches!(self, IoOp::WriteFdatasync | IoOp::WriteDirect)
    }
}

/// The `--dir` a file case ran on, from its details (or its parameters,
/// where `compare --by-dir` took the name out of the details' reach).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RanOn {
    /// The directory's name.
    pub name: String,
    /// Its file system's type; empty when unknown.
    pub fs_type: String,
}

/// Whether a parameter's value `v` is the one written `value` (a number
/// as its digits): a case's, or a planned case's.
pub(crate) fn value_is(v: Option<&Value>, value: &str) -> bool {
    match v {
        Some(Value::String(s)) => s == value,
        Some(Value::Number(n)) => n.to_string() == value,
        _ => false,
    }
}

impl CaseResult {
    fn param_text(&self, key: &str) -> Option<&str> {
        self.params.get(key).and_then(Value::as_str)
    }

    fn param_count(&self, key: &str) -> Option<u64> {
        self.params.get(key).and_then(Value::as_u64)
    }

    /// Whether parameter `key` has the value written `value` (a number
    /// as its digits).
    pub(crate) fn param_is(&self, key: &str, value: &str) -> bool {
        value_is(self.params.get(key), value)
    }

    /// The `--dir` parameter, by name, where the case has one (a
    /// `compare --by-dir` environment's cases have none).
    pub(crate) fn dir_param(&self) -> Option<&str> {
        self.param_text(key::DIR)
    }

    /// A person's command's words, for a case that ran one.
    pub(crate) fn command_text(&self) -> Option<&str> {
        self.details.as_ref()?.get(detail::COMMAND)?.as_str()
    }

    /// Whether the case placed its two processes on different CPUs.
    pub(crate) fn split_cpus(&self) -> bool {
        self.param_text(key::CPUS) == Some(SPLIT)
    }

    /// How many threads or processes computed at once (1 unless said).
    pub(crate) fn parallelism(&self) -> u64 {
        self.param_count(key::THREADS)
            .or_else(|| self.param_count(key::PROCESSES))
            .unwrap_or(1)
    }

    /// Whether the working set was asked to lie in huge pages.
    pub(crate) fn huge_pages(&self) -> bool {
        self.param_text(key::PAGES) == Some(HUGE)
    }

    /// The working set's size, KiB, when the case has one.
    pub(crate) fn size_kib(&self) -> Option<u64> {
        self.param_count(key::SIZE_KIB)
    }

    /// The file transfer, for a case of `io.dd`.
    pub(crate) fn io_op(&self) -> Option<IoOp> {
        self.param_text(key::OP).and_then(IoOp::from_name)
    }

    /// The `--dir`'s facts as the probe described them where the case ran
    /// (its device, its disk's queue), from the details; None in files
    /// that do not hold them.
    pub(crate) fn dir_info(&self) -> Option<crate::probe::storage::DirInfo> {
        let d = self.details.as_ref()?.get(detail::DIR)?;
        serde_json::from_value(d.get(detail::FILESYSTEM)?.clone()).ok()
    }

    /// The `--dir` the case ran on and its file system, from the details.
    pub(crate) fn ran_on(&self) -> Option<RanOn> {
        let d = self.details.as_ref()?.get(detail::DIR)?;
        Some(RanOn {
            name: d.get(detail::NAME)?.as_str()?.to_string(),
            fs_type: d
                .get(detail::FILESYSTEM)
                .and_then(|f| f.get(detail::FS_TYPE))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
    }

    /// The `--dir` the case ran on, by name: from its details, else its
    /// parameters; empty when neither says.
    pub(crate) fn dir_name(&self) -> String {
        self.ran_on()
            .map(|d| d.name)
            .or_else(|| self.param_text(key::DIR).map(str::to_string))
            .unwrap_or_default()
    }

    /// The value of the method detail `key` ([`detail::METHOD`]), if the
    /// case has it.
    pub(crate) fn method_detail(&self, key: &str) -> Option<&Value> {
        self.details.as_ref()?.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case(params: Value, details: Option<Value>) -> CaseResult {
        use crate::units::Direction;
        let mut r = crate::compare::tests::run(
            "x",
            "x",
            &[("io.dd", "t", Direction::LowerIsBetter, vec![1.0])],
        );
        let mut c = r.cases.remove(0);
        c.params = serde_json::from_value(params).unwrap();
        c.details = details;
        c
    }

    #[test]
    fn accessors_read_what_the_benches_write() {
        let c = case(
            json!({"cpus": "split", "threads": 4, "pages": "huge", "size_kib": 256, "op": "read_cold"}),
            None,
        );
        assert!(c.split_cpus() && c.huge_pages());
        assert_eq!(c.parallelism(), 4);
        assert_eq!(c.size_kib(), Some(256));
        assert_eq!(c.io_op(), Some(IoOp::ReadCold));
        let c = case(
            json!({"cpus": "same", "processes": 3, "op": "sideways"}),
            None,
        );
        assert!(!c.split_cpus() && !c.huge_pages());
        assert_eq!((c.parallelism(), c.io_op(), c.size_kib()), (3, None, None));
        assert_eq!(case(json!({}), None).parallelism(), 1);
    }

    #[test]
    fn the_dir_comes_from_the_details_then_the_parameters() {
        let details = json!({"dir": {"name": "share", "filesystem": {"fs_type": "9p"}}});
        let c = case(json!({"dir": "other"}), Some(details));
        assert_eq!(
            c.ran_on(),
            Some(RanOn {
                name: "share".into(),
                fs_type: "9p".into()
            })
        );
        assert_eq!(c.dir_name(), "share");
        let c = case(json!({"dir": "other"}), None);
        assert_eq!((c.ran_on(), c.dir_name().as_str()), (None, "other"));
        assert_eq!(case(json!({}), None).dir_name(), "");
    }

    #[test]
    fn op_names_round_trip() {
        for op in IoOp::ALL {
            assert_eq!(IoOp::from_name(op.name()), Some(op));
        }
        assert!(IoOp::WriteDirect.durable() && !IoOp::ReadCold.durable());
    }
}
