//! The file I/O family: IOzone-style sequential throughput (`io.seq`),
//! sysbench fileio random read/write with fsync (`io.random`), dd-style
//! sequential transfers (`io.dd`) and small-file metadata (`io.meta`).
//!
//! Every case names its directory by the `--dir` NAME (`dir=dir1`), never
//! by its path, so runs in environments that mount the same storage at
//! different paths compare. The path and the filesystem facts of the
//! directory (probed by [`crate::probe::storage`]) are the case's notes
//! and details. A case works in a fresh [`ScratchDir`] under its
//! directory, which is removed with everything in it on every path
//! (success, error, Ctrl-C); it checks the free space before writing and
//! creates every file it writes with `O_CREAT|O_EXCL`.

mod block;
pub mod dd;
pub mod meta;
pub mod random;
pub(crate) mod references;
pub mod seq;

use super::{
    Bench, BenchError, CaseSpec, Context, Family, FamilyOption, NamedDir, Plan, ScratchDir,
};
use crate::measure::pages::{huge_pages_unavailable, PageBuf, PagePolicy};
use crate::probe::storage::DirInfo;
use crate::results::params::{detail, key};
use crate::units::{parse_size, size_text};
use serde_json::{json, Value};
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

#[cfg(test)]
pub(crate) use block::holds_blocks;
#[cfg(test)]
use block::ALIGN;
pub(crate) use block::{read_blocks, write_blocks};
pub use block::{Block, SECTOR, STAMP_BYTES};

/// The family's name, the first part of its ids.
pub const NAME: &str = crate::results::ids::IO;

/// The file I/O family: its benches, its size options, the check of write
/// rates against the memory bandwidth, and the note naming its directories.
#[derive(Debug)]
pub struct Io;

impl Family for Io {
    fn name(&self) -> &'static str {
        NAME
    }

    fn benches(&self) -> &'static [&'static dyn Bench] {
        &[&seq::Seq, &random::Random, &dd::Dd, &meta::Meta]
    }

    fn options(&self) -> Vec<FamilyOption> {
        vec![
            FamilyOption {
                long: "file-size",
                key: FILE_SIZE,
                value_name: "SIZE",
                help: "io.seq's file per thread and io.dd's file, e.g. 64M, 1G (suffixes K, M, G, \
                       T are powers of 1024). [default: 16M in quick, 256M in standard, 2G in full \
                       for io.seq; 16M, 512M, 1G for io.dd]",
                parse: parse_size_option,
            },
            FamilyOption {
                long: "record",
                key: RECORD,
                value_name: "SIZE",
                help: "io.seq's record: the size of each read and write call (IOzone -r). \
                       [default: 1M]",
                parse: parse_size_option,
            },
            FamilyOption {
                long: "io-total",
                key: TOTAL,
                value_name: "SIZE",
                help: "io.random's file set, written before timing (sysbench --file-total-size); \
                       make it larger than memory to reach the device. [default: 64M in quick, \
                       1G in standard, 30G in full]",
                parse: parse_size_option,
            },
        ]
    }

    fn check(&self, cases: &mut [crate::results::CaseResult]) {
        check_plausibility(cases);
    }

    fn notes(&self, plan: &Plan) -> Vec<String> {
        vec![dirs_note(&plan.dirs)]
    }
}

/// `--file-size`'s key in the plan's options.
const FILE_SIZE: &str = "file_size";
/// `--record`'s key.
const RECORD: &str = "record";
/// `--io-total`'s key.
const TOTAL: &str = "io_total";

fn parse_size_option(s: &str) -> Result<Value, String> {
    parse_size(s).map(Value::from)
}

/// Sizes of the family given on the command line; None means the suite's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IoOptions {
    /// io.seq's file per thread and io.dd's file (`--file-size`).
    pub file_size: Option<u64>,
    /// io.seq's record (`--record`).
    pub record: Option<u64>,
    /// io.random's file set (`--io-total`).
    pub total: Option<u64>,
}

impl IoOptions {
    /// The sizes `plan` was given.
    pub(crate) fn of(plan: &Plan) -> IoOptions {
        IoOptions {
            file_size: plan.options.u64(FILE_SIZE),
            record: plan.options.u64(RECORD),
            total: plan.options.u64(TOTAL),
        }
    }

    /// `options` with these sizes set.
    #[cfg(test)]
    pub(crate) fn into_options(
        self,
        mut options: crate::config::FamilyOptions,
    ) -> crate::config::FamilyOptions {
        for (key, v) in [
            (FILE_SIZE, self.file_size),
            (RECORD, self.record),
            (TOTAL, self.total),
        ] {
            if let Some(v) = v {
                options = options.with(key, v);
            }
        }
        options
    }

    /// KiB-sized files, for tests.
    #[cfg(test)]
    pub(crate) fn tiny() -> IoOptions {
        IoOptions {
            file_size: Some(256 << 10),
            record: Some(64 << 10),
            total: Some(1 << 20),
        }
    }
}

/// Room kept free beyond what a case writes: a filesystem filled to the
/// last block misbehaves for everyone using it.
pub const SPACE_MARGIN_MIN_BYTES: u64 = 64 << 20;

/// The run note naming each directory: `directories: dir1 = /home/me/w`.
pub(crate) fn dirs_note(dirs: &[NamedDir]) -> String {
    let list: Vec<String> = dirs
        .iter()
        .map(|d| format!("{} = {}", d.name, d.path.display()))
        .collect();
    format!(
        "directories (cases name them, not their paths): {}",
        list.join(", ")
    )
}

/// The most a fixture may hold to be kept for a case's later rounds
/// ([`Target::fixture`]): a tree of files or a file set of the quick and
/// standard suites. Larger ones (io.random's 30 GiB set in full) are made
/// by every round, so that a run never holds more than its largest case
/// and these beside it.
pub const KEEP_MOST_BYTES: u64 = 256 << 20;

/// What a case holding `disk_bytes` keeps for its later rounds: all of it
/// up to [`KEEP_MOST_BYTES`], else nothing.
pub(crate) fn kept_bytes(disk_bytes: u64) -> u64 {
    if disk_bytes <= KEEP_MOST_BYTES {
        disk_bytes
    } else {
        0
    }
}

/// Where a case writes: its named directory, that directory's filesystem
/// facts, and the fresh scratch directory below it (removed on drop).
///
/// The scratch directory and each fixture's directory are held open while
/// the case lives, as a tool's working directory is held by the tool that
/// works there (`git status` in its work tree, `tar -C`): on a file system
/// that keeps no unused directory entries (9p without a cache), the held
/// directory and those above it stay in the dentry cache, so only the
/// components below it cost the file system a lookup. In a QEMU guest's
/// 9p share (TCG, Intel Xeon VM, 2026-11-29), 1 000 lstats by absolute
/// path five directories below the share took 4.6 s with nothing held,
/// 2.1 s with the tree's root held open and 1.8 s relative to a working
/// directory there; on the guest's ext4 disk 18.5, 17.6 and 11.5 ms.
/// app.status on that share against the disk: 303x before, 116x with
/// these path descriptors.
#[derive(Debug)]
pub struct Target {
    /// The `--dir` the case names.
    pub dir: NamedDir,
    /// Filesystem facts of the directory.
    pub info: DirInfo,
    /// The scratch directory and the fixtures' directories, held open
    /// (dropped before the scratch directory is removed).
    held: std::sync::Mutex<Vec<File>>,
    /// The case's own directory, removed with everything in it on drop.
    pub scratch: ScratchDir,
    /// What the scratch directory is for (`status`, `random`): names the
    /// case's kept fixtures.
    purpose: String,
    /// The most the case writes, bytes.
    need_bytes: u64,
}

impl Target {
    /// Finds the directory named by `case`'s `dir` parameter, describes its
    /// filesystem, checks it has room for `need_bytes` plus a margin and
    /// creates the scratch directory `purpose`.
    ///
    /// # Errors
    /// [`BenchError::Unsupported`] without room or for an unknown name;
    /// [`BenchError::Failed`] when the scratch directory cannot be made or
    /// opened.
    pub(crate) fn open(
        ctx: &Context,
        case: &CaseSpec,
        purpose: &str,
        need_bytes: u64,
    ) -> Result<Target, BenchError> {
        let name = case
            .params
            .get(key::DIR)
            .and_then(Value::as_str)
            .ok_or_else(|| BenchError::Failed(format!("{}: no dir parameter", case.key())))?;
        let dir = ctx
            .dirs
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| BenchError::Unsupported(format!("no --dir named '{name}' in this run")))?
            .clone();
        let info = describe(&dir);
        check_room(&dir, info.free_bytes, need_bytes)?;
        let scratch = ScratchDir::new(&dir.path, purpose)?;
        let target = Target {
            dir,
            info,
            held: std::sync::Mutex::new(Vec::new()),
            scratch,
            purpose: purpose.to_string(),
            need_bytes,
        };
        target.hold(target.scratch.path())?;
        Ok(target)
    }

    /// Holds the directory `dir` open while the case lives ([`Target`]).
    ///
    /// # Errors
    /// [`BenchError::Failed`] when it cannot be opened.
    fn hold(&self, dir: &Path) -> Result<(), BenchError> {
        // a path descriptor: it pins the directory without reading it
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
            .open(dir)
            .map_err(|e| failed("opening", dir, e))?;
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(f);
        Ok(())
    }

    /// A path inside the scratch directory.
    pub(crate) fn file(&self, name: &str) -> std::path::PathBuf {
        self.scratch.path().join(name)
    }

    /// The directory holding the case's fixture `name` (a tree of files, a
    /// file set: what it makes before timing, untimed). `make` fills a new directory at the path it is
    /// given. Where the run keeps fixtures in this `--dir`
    /// ([`Context::kept`]: a run that measures each case once a round,
    /// not one that compares, `engine::select::keeps_fixtures`) and the
    /// case holds at most [`KEEP_MOST_BYTES`],
    /// the first round makes it in its scratch directory and moves it
    /// there whole (a rename), and later rounds, each a fresh process, use
    /// it as they find it: a tree of 1000 files took 0.7-1.3 s of each
    /// round to write under gVisor, its 1000 lstats 0.16 s. `name` must tell
    /// apart every fixture of the case's bench (its sizes); rounds of a
    /// case that change their fixture must leave it as usable as they
    /// found it. Otherwise every round makes its own in its scratch
    /// directory.
    ///
    /// # Errors
    /// The error of `make`, or the directory cannot be created or opened.
    pub(crate) fn fixture(
        &self,
        ctx: &Context,
        name: &str,
        make: impl FnOnce(&Path) -> Result<(), BenchError>,
    ) -> Result<PathBuf, BenchError> {
        let kept = ctx
            .kept
            .iter()
            .find(|k| k.name == self.dir.name && kept_bytes(self.need_bytes) > 0)
            .map(|k| k.path.join(format!("{}-{name}", self.purpose)));
        let found = match kept {
            Some(kept) if kept.is_dir() => kept,
            kept => {
                let made = self.file(name);
                std::fs::create_dir(&made).map_err(|e| failed("creating", &made, e))?;
                make(&made)?;
                match kept {
                    // a fixture that cannot be moved (another filesystem below the
                    // --dir, a rename refused) serves this round where it is
                    Some(kept) if std::fs::rename(&made, &kept).is_ok() => kept,
                    _ => made,
                }
            }
        };
        self.hold(&found)?;
        Ok(found)
    }

    /// One line naming the directory and its filesystem.
    pub(crate) fn note(&self) -> String {
        let i = &self.info;
        let or = |o: &Option<String>| o.clone().unwrap_or_else(|| "?".into());
        format!(
            "{} = {}: {} on {} (device {}), mount options {}",
            self.dir.name,
            self.dir.path.display(),
            or(&i.fs_type),
            or(&i.source),
            or(&i.device),
            or(&i.mount_options)
        )
    }

    /// The case's details: `{"dir": {"name", "filesystem"}}`.
    pub(crate) fn details(&self) -> Value {
        json!({ (detail::DIR): { (detail::NAME): self.dir.name, (detail::FILESYSTEM): self.info } })
    }
}

/// Filesystem facts of `dir` from the same probe as the fingerprint.
pub(crate) fn describe(dir: &NamedDir) -> DirInfo {
    let mut notes = Vec::new();
    let mut infos = crate::probe::storage::probe_dirs(
        &crate::probe::Roots::live(),
        std::slice::from_ref(&dir.path),
        &mut notes,
    );
    infos.pop().unwrap_or_default()
}

/// Refuses a case that would write `need` bytes where `free` (None when
/// statfs could not tell) leaves less than that plus a margin of 10 % or
/// [`SPACE_MARGIN_MIN_BYTES`], whichever is larger.
///
/// # Errors
/// [`BenchError::Unsupported`] naming both sizes and the directory.
pub(crate) fn check_room(dir: &NamedDir, free: Option<u64>, need: u64) -> Result<(), BenchError> {
    let margin = (need / 10).max(SPACE_MARGIN_MIN_BYTES);
    match free {
        Some(free) if need.saturating_add(margin) > free => Err(BenchError::Unsupported(format!(
            "{} ({}) has {} free; this case writes {} and keeps {} spare: a smaller \
             --file-size or --io-total fits",
            dir.name,
            dir.path.display(),
            size_text(free),
            size_text(need),
            size_text(margin)
        ))),
        _ => Ok(()),
    }
}

/// Creates `path`, which must not exist (`O_CREAT|O_EXCL`), for reading
/// and writing, with `flags` (e.g. `O_DIRECT`) added.
///
/// # Errors
/// The error of `open(2)`.
pub(crate) fn create_new(path: &Path, flags: i32) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(flags)
        .open(path)
}

/// A flush of written data faster than this on a spinning disk or across a
/// network cannot have reached the storage (a disk rotation takes
/// milliseconds, a network round trip tens of microseconds).
pub const IMPLAUSIBLE_SYNC_SECS: f64 = 10e-6;

/// A note when a flush of written data (`secs`, the quickest seen) was
/// too fast for the storage behind `info`: a rotational device or a
/// network or host filesystem whose fsync is then probably not honoured.
pub(crate) fn implausible_sync(info: &DirInfo, secs: f64) -> Option<String> {
    let remote = info
        .fs_type
        .as_deref()
        .is_some_and(crate::probe::storage::is_remote);
    let spinning = info.rotational == Some(true);
    (secs < IMPLAUSIBLE_SYNC_SECS && (remote || spinning)).then(|| {
        format!(
            "a flush of written data took {:.1} us on a {} filesystem: faster than the storage \
             can answer, so it probably did not reach it (fsync not honoured)",
            secs * 1e6,
            if spinning {
                "rotational"
            } else {
                "network or host"
            }
        )
    })
}

/// The view of a bench whose metrics are compared directory against
/// directory: one row per metric, a column per directory.
pub(crate) fn grid_by_dir(
    title: &'static str,
    metrics: &'static [&'static str],
) -> crate::view::View {
    use crate::view::{Grid, GridRows, View, ViewKind};
    View {
        title,
        kind: ViewKind::Grid(Grid {
            rows: GridRows::Metrics(metrics),
            columns: "dir",
        }),
    }
}

/// Write metrics of the io family: the data they claim to have moved
/// must at least have crossed memory.
const WRITE_METRICS: &[&str] = &["write", "rewrite", "written_throughput"];

/// Seed 000's lesson (IOzone rates of 1.05e12 kB/s): a write rate above
/// the memory bandwidth measured in the same run (the best STREAM Triad
/// median) cannot be real: the data went nowhere (a cache that discards
/// it, a filesystem that drops it) or the clock failed. Each such io case
/// gets one `implausible_write` anomaly, once however often this runs
/// (it runs at every save). Cases measured in MiB/s are compared after
/// conversion to MB/s.
pub(crate) fn check_plausibility(cases: &mut [crate::results::CaseResult]) {
    use crate::results::{Anomaly, CaseStatus};
    use crate::units::Unit;
    let median = |m: &crate::results::MetricResult| m.summary.as_ref().map(|s| s.median);
    // STREAM's Triad, from the mem family: the fastest a write can be
    let bandwidth =
        crate::bench::mem::best_triad(cases.iter().filter(|c| c.status == CaseStatus::Ok))
            .map(|(rate, _)| rate);
    let Some(bandwidth) = bandwidth else {
        return;
    };
    let ours = format!("{NAME}.");
    for c in cases.iter_mut().filter(|c| c.bench.starts_with(&ours)) {
        if c.anomalies.iter().any(|a| a.kind == "implausible_write") {
            continue;
        }
        let is_write = |name: &str| {
            WRITE_METRICS.contains(&name)
                || (name == "throughput"
                    && c.params
                        .get("op")
                        .and_then(|o| o.as_str())
                        .is_some_and(|o| o.starts_with("write")))
        };
        let worst = c
            .metrics
            .iter()
            .filter(|m| is_write(&m.name))
            .filter_map(|m| {
                let mb = match m.unit {
                    Unit::MegabytesPerSec => median(m)?,
                    Unit::MebibytesPerSec => median(m)? * 1.048_576,
                    _ => return None,
                };
                (mb > bandwidth).then(|| (m.name.clone(), mb))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((name, mb)) = worst {
            c.anomalies.push(Anomaly {
                kind: "implausible_write".into(),
                message: format!(
                    "{name} = {mb:.0} MB/s is faster than this run's memory bandwidth (STREAM Triad {bandwidth:.0} MB/s): \
                     the data cannot have been written; a cache or filesystem discarded it, or the clock failed"
                ),
            });
        }
    }
}

/// Metric bytes per second as 10⁶ B/s (IOzone's and dd's MB/s), with an
/// interval of zero (the fake clock, a coarse timer) counted as 1 ns.
pub(crate) fn mb_per_sec(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs.max(1e-9) / 1e6
}

/// `fsync(2)` or `fdatasync(2)` errors as [`BenchError::Failed`] naming the file.
pub(crate) fn failed(what: &str, path: &Path, e: std::io::Error) -> BenchError {
    BenchError::Failed(format!("{what} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{CaseSpec, TestEnv};
    use crate::config::Suite;
    use crate::engine::runner;
    use crate::units::size_label;

    fn io_benches() -> Vec<&'static dyn Bench> {
        crate::bench::ALL
            .iter()
            .copied()
            .filter(|b| b.family() == NAME)
            .collect()
    }

    #[test]
    fn keys_name_the_directory_never_its_path() {
        let named = |path: &str| {
            let mut p = TestEnv::plan(Suite::Standard, 2);
            p.dirs = vec![
                NamedDir {
                    name: "work".into(),
                    path: path.into(),
                },
                NamedDir {
                    name: "shm".into(),
                    path: "/dev/shm".into(),
                },
            ];
            p
        };
        let keys = |p: &Plan| -> Vec<String> {
            io_benches()
                .iter()
                .flat_map(|b| b.cases(p))
                .map(|c| c.key())
                .collect()
        };
        let (a, b) = (keys(&named("/home/me/work")), keys(&named("/mnt/c/work")));
        assert_eq!(a, b);
        assert_eq!(io_benches().len(), 4);
        for bench in ["io.seq", "io.random", "io.dd", "io.meta"] {
            for dir in ["dir=work", "dir=shm"] {
                assert!(
                    a.iter().any(|k| k.starts_with(bench) && k.contains(dir)),
                    "{bench} {dir}: {a:?}"
                );
            }
        }
        assert!(a.iter().all(|k| !k.contains('/')), "{a:?}");
    }

    #[test]
    fn an_interrupted_case_leaves_no_file_behind() {
        let env = TestEnv::real(0.01);
        let plan = TestEnv::plan(Suite::Quick, 1);
        let mut ctx = env.ctx();
        let stop = std::sync::atomic::AtomicBool::new(true);
        ctx.interrupted = &stop;
        for bench in io_benches() {
            let case = bench.cases(&plan).remove(0);
            // Ctrl-C arrived: prepare wrote its files, no repetition runs
            let run = runner::run_case(bench, &case, &ctx, &mut |_| {});
            assert_eq!(
                run.status,
                crate::results::CaseStatus::Interrupted,
                "{}",
                case.key()
            );
            assert_eq!(
                std::fs::read_dir(&env.dirs[0].path).unwrap().count(),
                0,
                "{}",
                case.key()
            );
        }
    }

    #[test]
    fn sizes_parse_with_binary_suffixes_and_whole_pages() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("512KiB"), Ok(512 << 10));
        assert_eq!(parse_size("8192"), Ok(8192));
        assert!(parse_size("100").unwrap_err().contains("4 KiB pages"));
        assert!(parse_size("1.5G").unwrap_err().contains("not a size"));
        assert!(parse_size("-1M").unwrap_err().contains("not a size"));
        assert!(parse_size("99999999999T")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn size_labels_are_exact_and_parse_back() {
        for b in [4096u64, 64 << 10, 16 << 20, 3 << 30, (1 << 20) + 4096] {
            let label = size_label(b);
            let case = CaseSpec {
                bench: "io.x".into(),
                params: [("size".to_string(), Value::from(label.clone()))].into(),
                metrics: vec![],
            };
            assert_eq!(case.size("size").unwrap(), b, "{label}");
        }
        assert_eq!(size_label(16 << 20), "16MiB");
        assert_eq!(size_label((1 << 20) + 4096), "1028KiB");
    }

    #[test]
    fn a_directory_without_room_is_refused_with_both_sizes() {
        let dir = NamedDir {
            name: "small".into(),
            path: "/mnt/small".into(),
        };
        let err = check_room(&dir, Some(100 << 20), 64 << 20).unwrap_err();
        let BenchError::Unsupported(why) = err else {
            panic!("not a skip")
        };
        assert!(
            why.contains("small") && why.contains("100.0 MiB free"),
            "{why}"
        );
        assert!(check_room(&dir, Some(1 << 30), 64 << 20).is_ok());
        // unknown free space does not block the case
        assert!(check_room(&dir, None, 1 << 40).is_ok());
    }

    #[test]
    fn a_flush_too_fast_for_a_spinning_or_remote_disk_is_noted() {
        let info = |fs: &str, rotational| DirInfo {
            fs_type: Some(fs.into()),
            rotational,
            ..DirInfo::default()
        };
        assert!(implausible_sync(&info("9p", None), 2e-6)
            .unwrap()
            .contains("network or host"));
        assert!(implausible_sync(&info("ext4", Some(true)), 5e-6)
            .unwrap()
            .contains("rotational"));
        assert!(implausible_sync(&info("fuse.sshfs", None), 1e-6).is_some());
        // an SSD or tmpfs may answer that fast; a slower flush is plausible
        assert_eq!(implausible_sync(&info("ext4", Some(false)), 2e-6), None);
        assert_eq!(implausible_sync(&info("tmpfs", None), 1e-7), None);
        assert_eq!(implausible_sync(&info("9p", None), 3e-3), None);
    }

    #[test]
    fn blocks_are_aligned_seeded_and_written_back_exactly() {
        let tmp = tempfile::tempdir().unwrap();
        let mut block = Block::new(8192, 7);
        assert_eq!(block.bytes().as_ptr() as usize % ALIGN, 0);
        assert_ne!(block.bytes(), Block::new(8192, 8).bytes());
        let path = tmp.path().join("f");
        let mut f = create_new(&path, 0).unwrap();
        assert_eq!(write_blocks(&mut f, &mut block, 20_000).unwrap(), 20_000);
        assert!(holds_blocks(&path, &block, 20_000).unwrap());
        assert!(!holds_blocks(&path, &Block::new(8192, 8), 20_000).unwrap());
        let mut again = std::fs::File::open(&path).unwrap();
        let mut buf = Block::new(4096, 0);
        assert_eq!(read_blocks(&mut again, &mut buf).unwrap(), 20_000);
        // never opened again for writing
        assert_eq!(
            create_new(&path, 0).unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
    }

    #[test]
    fn a_block_on_huge_pages_holds_the_same_bytes_in_one_huge_page() {
        let heap = Block::new(1 << 20, 9);
        assert!(heap.page_details().is_none());
        let mut huge = match Block::on_huge_pages(1 << 20, 9) {
            Ok(b) => b,
            Err(why) => {
                // only where the kernel says it has none
                assert!(huge_pages_unavailable().is_some(), "{why}");
                return;
            }
        };
        assert_eq!(huge.bytes(), heap.bytes(), "the seed decides the bytes");
        assert_eq!(
            huge.bytes().as_ptr() as usize % crate::measure::pages::HUGE_PAGE_BYTES,
            0
        );
        huge.stamp();
        assert!(heap.written_as(huge.bytes()));
        let (d, given) = huge.page_details().unwrap();
        // what the kernel gave, as smaps says
        let pages = match given {
            Some(true) => serde_json::json!("huge"),
            Some(false) => serde_json::json!("small"),
            None => Value::Null,
        };
        assert_eq!(d["pages"], pages, "{d}");
        assert_eq!(d["page_request"], "madvise(MADV_HUGEPAGE)");
        assert_eq!(d["mapped_bytes"], 2 << 20);
        assert!(d.get("thp_mode").is_none(), "{d}");
        // the kernel's answer is read back wherever smaps is there
        if Path::new("/proc/self/smaps").exists() {
            assert!(d["anon_huge_bytes"].is_u64(), "{d}");
        }
    }

    #[test]
    fn stamps_leave_no_two_sectors_alike_within_or_across_writers() {
        // 4 KiB blocks of 8 sectors, three writes each by two writers
        let first = Block::new(4096, 3);
        let mut writers = [first.for_writer(0), first.for_writer(1)];
        assert_eq!(writers[1].bytes().as_ptr() as usize % ALIGN, 0);
        let mut sectors = std::collections::HashSet::new();
        let mut written = 0;
        for _ in 0..3 {
            for w in &mut writers {
                w.stamp();
                assert!(first.written_as(w.bytes()), "only the stamps change");
                for s in w.bytes().chunks(SECTOR) {
                    sectors.insert(s.to_vec());
                    written += 1;
                }
            }
        }
        assert_eq!(sectors.len(), written, "every sector written is unique");
        // a changed byte outside the stamps is told apart
        let mut w = first.for_writer(0);
        w.bytes_mut()[SECTOR + STAMP_BYTES] ^= 1;
        assert!(!first.written_as(w.bytes()));
        assert!(first.written_as(&w.bytes()[..SECTOR + STAMP_BYTES]));
    }
}

#[cfg(test)]
mod plausibility_tests {
    use super::check_plausibility;
    use crate::compare::tests::run;
    use crate::units::{Direction, Unit};

    #[test]
    fn a_write_faster_than_memory_is_an_anomaly_once() {
        let mut f = run(
            "a",
            "r",
            &[
                (
                    "mem.stream[threads=1]",
                    "triad_rate",
                    Direction::HigherIsBetter,
                    vec![10_000.0, 10_100.0, 9_900.0],
                ),
                (
                    "io.dd[op=write_buffered]",
                    "throughput",
                    Direction::HigherIsBetter,
                    vec![20_000.0, 21_000.0, 19_000.0],
                ),
                (
                    "io.dd[op=read_warm]",
                    "throughput",
                    Direction::HigherIsBetter,
                    vec![50_000.0, 50_000.0, 50_000.0],
                ),
                (
                    "io.seq[threads=1]",
                    "write",
                    Direction::HigherIsBetter,
                    vec![2_000.0, 2_100.0, 1_900.0],
                ),
            ],
        );
        f.cases[1]
            .params
            .insert("op".into(), serde_json::Value::from("write_buffered"));
        f.cases[2]
            .params
            .insert("op".into(), serde_json::Value::from("read_warm"));
        for c in &mut f.cases {
            c.metrics[0].unit = Unit::MegabytesPerSec;
        }
        check_plausibility(&mut f.cases);
        check_plausibility(&mut f.cases);
        let kinds = |i: usize| -> Vec<String> {
            f.cases[i]
                .anomalies
                .iter()
                .map(|a| a.kind.clone())
                .collect()
        };
        // the write at twice memory bandwidth, once; a read from the page
        // cache may beat STREAM (it is not a write); a slow write is fine
        assert_eq!(kinds(1), ["implausible_write"]);
        assert!(f.cases[1].anomalies[0].message.contains("20000 MB/s"));
        assert!(kinds(2).is_empty() && kinds(3).is_empty());
        // without a STREAM figure in the run there is nothing to compare with
        let mut g = f.clone();
        g.cases.remove(0);
        for c in &mut g.cases {
            c.anomalies.clear();
        }
        check_plausibility(&mut g.cases);
        assert!(g.cases.iter().all(|c| c.anomalies.is_empty()));
    }
}
