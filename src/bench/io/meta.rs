//! `io.meta`: many small files, the load behind seed 003's "git and grep
//! on a large source tree feel slow". Each repetition creates a tree of
//! 4 KiB files (100 per directory), then stats each, stats each again,
//! looks up a name beside each that is not there (twice, the second
//! timed), reads each, lists each directory, changes each file's mode and
//! deletes each file (with the directories); operations per second per
//! phase (the listing's: directories listed).
//!
//! Creation is the headline: it writes metadata and data through the
//! filesystem itself (a 9P or FUSE round trip, a journal entry), while the
//! stat and read phases that follow at once are largely answered by the
//! kernel's dentry and page caches on a local filesystem.
//!
//! Why a second stat and a second miss: a file just written has no valid
//! cached attributes on FUSE (the write invalidates them), so the first
//! stat goes to the daemon, many times dearer than the same stat again
//! (docs/log/attribution.md, 2026-12-03). A command
//! repeated, as hyperfine and `run --cmd` repeat it, meets its files in
//! the second state: the re-stat and the repeated miss price its lookups
//! ([`crate::results::price`]), and the first stat stays a metric.
//!
//! Why a near stat: every other phase names each file by a path three
//! names below the directory the case holds (`tree-N/dNNNN/fNNNNN`), and
//! a cacheless share (a QEMU guest's 9p) walks each of those names again,
//! where git or grep name a file one or two names from where they stand.
//! The near stat stats each file again at its own directory's descriptor
//! (one name); the difference from the re-stat, over the two names
//! between them, prices a name walked ([`Cost::PerName`]), and each
//! phase's price leaves out its three.
//!
//! Why a change of mode: tar run as root restores each file's owner and
//! mode after writing it (one fchown and one fchmod a file), `cp -a` and
//! rsync do the same, and a FUSE or 9p share answers each change with a
//! round trip where a local disk changes an inode in memory: unpriced,
//! they were the part of tar + rm's slowdown on bindfs that its
//! prediction left out (docs/log/attribution.md). The changes come after
//! the listing, so that the listing is measured as before them; the
//! deletes follow them. A file system that refuses a change of mode (FAT,
//! a share mounted without permissions) still answers each call: the
//! refused calls are timed as they are, and a note says so.

use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use super::{create_new, failed, Block, Target};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::price::{Cost, Op, Price};
use crate::units::{Direction, Unit};
use crate::view::View;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Size of each file.
pub const FILE_BYTES: usize = crate::results::counts::SMALL_FILE_BYTES as usize;
/// Files per directory of the tree.
pub const FILES_PER_DIR: u64 = 100;

/// Files per repetition: the 10 000 in standard and full, fewer in
/// quick so that a repetition stays near 50 ms.
pub(crate) fn suite_files(suite: Suite) -> u64 {
    match suite {
        Suite::Quick => 500,
        Suite::Standard | Suite::Full => 10_000,
    }
}

/// Each phase's metric, in the order [`MetaTrial::once`] returns them
/// (the indices below name their places).
const PHASES: [&str; 9] = [
    "creates_per_sec",
    "stats_per_sec",
    "reads_per_sec",
    "deletes_per_sec",
    "lists_per_sec",
    "restats_per_sec",
    "misses_per_sec",
    "near_restats_per_sec",
    "chmods_per_sec",
];
const CREATES: usize = 0;
const STATS: usize = 1;
const READS: usize = 2;
const DELETES: usize = 3;
const LISTS: usize = 4;
const RESTATS: usize = 5;
const MISSES: usize = 6;
const NEAR_RESTATS: usize = 7;
const CHMODS: usize = 8;

/// The names each phase's path walks below the scratch directory the
/// case holds: `tree-N/dNNNN/fNNNNN`.
const NAMES: u8 = 3;

/// The `io.meta` bench.
#[derive(Debug)]
pub struct Meta;

impl Bench for Meta {
    fn id(&self) -> &'static str {
        ids::IO_META
    }
    fn prices(&self) -> &'static [Price] {
        // each phase's rate, on the directory the workload ran on, its
        // paths three names long
        const fn on_dir(op: Op, metric: &'static str) -> Price {
            Price {
                op,
                metric,
                params: &[],
                on_dir: true,
                cost: Cost::PerSecond,
                names: NAMES,
            }
        }
        // a listing opens its directory, two names down
        const LIST: Price = Price {
            names: NAMES - 1,
            ..on_dir(Op::List, "lists_per_sec")
        };
        // a name looked up by a repeated workload finds it as the second
        // stat and the second miss do; a result from before those were
        // measured falls back on the first stat
        const PRICES: &[Price] = &[
            on_dir(Op::Lookup, "restats_per_sec"),
            on_dir(Op::Lookup, "stats_per_sec"),
            on_dir(Op::Miss, "misses_per_sec"),
            on_dir(Op::Miss, "stats_per_sec"),
            on_dir(Op::SmallRead, "reads_per_sec"),
            on_dir(Op::SmallCreate, "creates_per_sec"),
            on_dir(Op::Unlink, "deletes_per_sec"),
            on_dir(Op::SetAttr, "chmods_per_sec"),
            LIST,
            // the re-stat walks two names more than the near stat
            Price {
                cost: Cost::PerName {
                    near: "near_restats_per_sec",
                    apart: NAMES - 1,
                },
                names: 0,
                ..on_dir(Op::Name, "restats_per_sec")
            },
        ];
        PRICES
    }
    fn topic(&self) -> &'static str {
        "small files"
    }
    fn summary(&self) -> &'static str {
        "small files: create, stat (twice, then at each directory's descriptor), miss, read, \
         chmod and delete 500 (quick) or 10 000 files of 4 KiB in a tree of 100 per directory; \
         operations/s per phase"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 (git and grep on a large source tree slow under WSL)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let metrics: Vec<MetricSpec> = PHASES
            .iter()
            .map(|&name| MetricSpec {
                name,
                unit: Unit::OpsPerSec,
                direction: Direction::HigherIsBetter,
            })
            .collect();
        plan.dirs
            .iter()
            .map(|dir| CaseSpec {
                bench: self.id().into(),
                params: BTreeMap::from([
                    ("dir".to_string(), Value::from(dir.name.clone())),
                    ("files".to_string(), Value::from(suite_files(plan.suite))),
                ]),
                metrics: metrics.clone(),
            })
            .collect()
    }
    fn views(&self) -> Vec<View> {
        vec![super::grid_by_dir(
            "small-file phases by directory against the baseline",
            &[
                "creates_per_sec",
                "stats_per_sec",
                "reads_per_sec",
                "deletes_per_sec",
            ],
        )]
    }

    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        // data plus about one block of metadata per file
        case.count("files").unwrap_or(0) * 2 * FILE_BYTES as u64
    }

    fn one_cpu(&self, _case: &CaseSpec) -> bool {
        true
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let files = case.count("files")?;
        let target = Target::open(ctx, case, "meta", self.disk_bytes(case))?;
        let notes = vec![
            target.note(),
            format!(
                "{files} files of {FILE_BYTES} bytes, {FILES_PER_DIR} per directory; stat and \
                 read follow creation at once, so local filesystems answer them from cache; \
                 restats and misses are the second stat of each file and the second lookup of \
                 a name beside it that is not there; near restats stat each file again at its \
                 directory's descriptor; chmods change each file's mode by its path"
            ),
        ];
        Ok(Box::new(MetaTrial {
            target,
            files,
            content: Block::new(FILE_BYTES, ctx.seed),
            rep: 0,
            notes,
        }))
    }
}

struct MetaTrial {
    target: Target,
    files: u64,
    content: Block,
    rep: u64,
    notes: Vec<String>,
}

/// Stats each of `files`, which must hold [`FILE_BYTES`] each.
fn stat_each(files: &[PathBuf]) -> Result<(), BenchError> {
    for p in files {
        let m = std::fs::metadata(p).map_err(|e| failed("stat", p, e))?;
        if m.len() != FILE_BYTES as u64 {
            return Err(BenchError::Failed(format!(
                "{} has {} bytes, {FILE_BYTES} were written",
                p.display(),
                m.len()
            )));
        }
    }
    Ok(())
}

/// Stats each of `files`, the tree's files in `dirs` ([`MetaTrial::layout`]),
/// at its directory's descriptor, one name, as [`stat_each`] checks them;
/// the time the stats took, the directories' opening and the names apart.
fn near_stat_each(
    dirs: &[PathBuf],
    files: &[PathBuf],
    clock: &Clock,
) -> Result<Duration, BenchError> {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let held = dirs
        .iter()
        .map(|d| {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
                .open(d)
                .map_err(|e| failed("opening", d, e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let names = files
        .iter()
        .enumerate()
        .map(|(i, p)| {
            use std::os::unix::ffi::OsStrExt as _;
            let name = p.file_name().unwrap_or_default().as_bytes().to_vec();
            let name = std::ffi::CString::new(name).map_err(|_| {
                BenchError::Failed(format!("{} has a NUL in its name", p.display()))
            })?;
            Ok((i / FILES_PER_DIR as usize, name))
        })
        .collect::<Result<Vec<_>, BenchError>>()?;
    let t = clock.now();
    for (d, name) in &names {
        let r = size_at(held[*d].as_raw_fd(), name);
        let p = || dirs[*d].join(name.to_string_lossy().as_ref());
        match r {
            Err(e) => return Err(failed("stat", &p(), e)),
            Ok(size) if size != FILE_BYTES as u64 => {
                return Err(BenchError::Failed(format!(
                    "{} has {size} bytes, {FILE_BYTES} were written",
                    p().display()
                )))
            }
            Ok(_) => {}
        }
    }
    Ok(clock.now().saturating_sub(t))
}

/// The size of `name` in directory `dirfd`, by the call the standard
/// library's metadata makes (`statx`, or `newfstatat` on kernels before
/// 4.11), as system calls: the portable build's C library is older than
/// its statx.
fn size_at(dirfd: libc::c_int, name: &std::ffi::CStr) -> std::io::Result<u64> {
    // what the standard library asks of statx, as the re-stat
    let mask = libc::STATX_BASIC_STATS | libc::STATX_BTIME;
    // SAFETY: an all-zero statx is valid.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `name` ends in NUL and `stx` is a statx the kernel writes.
    let r = unsafe {
        libc::syscall(
            libc::SYS_statx,
            dirfd,
            name.as_ptr(),
            libc::AT_STATX_SYNC_AS_STAT,
            mask,
            &mut stx as *mut libc::statx,
        )
    };
    if r == 0 {
        return Ok(stx.stx_size);
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::ENOSYS) {
        return Err(err);
    }
    // SAFETY: an all-zero stat is valid.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the kernel writes a stat.
    let r = unsafe {
        libc::syscall(
            libc::SYS_newfstatat,
            dirfd,
            name.as_ptr(),
            &mut st as *mut libc::stat,
            0,
        )
    };
    if r == 0 {
        Ok(st.st_size as u64)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether `e`, from a change of mode, says the file system does not keep
/// modes (EPERM from FAT or a share's fixed permissions, EOPNOTSUPP,
/// ENOSYS) rather than that something went wrong.
fn refuses_modes(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EOPNOTSUPP | libc::ENOSYS)
    )
}

/// Looks up each of `names`, none of which may be there.
fn miss_each(names: &[PathBuf]) -> Result<(), BenchError> {
    for p in names {
        match std::fs::symlink_metadata(p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(failed("looking up", p, e)),
            Ok(_) => {
                return Err(BenchError::Failed(format!(
                    "{} is there, and no repetition made it",
                    p.display()
                )))
            }
        }
    }
    Ok(())
}

/// Counts a listing's entries, each read.
trait CountEntries {
    fn count_entries(self) -> std::io::Result<usize>;
}

impl CountEntries for std::fs::ReadDir {
    fn count_entries(self) -> std::io::Result<usize> {
        let mut n = 0;
        for entry in self {
            entry?;
            n += 1;
        }
        Ok(n)
    }
}

impl MetaTrial {
    /// Owner read and write only for each of `files` (each stays
    /// removable), timed: a file made under umask 077 already had it, and
    /// the call is made all the same. A directory that refuses modes is
    /// timed refusing, and a note says so.
    fn chmod_each(&mut self, files: &[PathBuf], clock: &Clock) -> Result<Duration, BenchError> {
        use std::os::unix::fs::PermissionsExt as _;
        let (t, mut refused) = (clock.now(), None);
        for p in files {
            match std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)) {
                Ok(()) => {}
                Err(e) if refuses_modes(&e) => refused = Some(e),
                Err(e) => return Err(failed("changing the mode of", p, e)),
            }
        }
        let took = clock.now().saturating_sub(t);
        if let Some(e) = refused {
            let note = format!(
                "the directory refused a change of mode ({e}): chmods_per_sec times the refused calls"
            );
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        Ok(took)
    }

    /// The tree's directories and files for this repetition.
    fn layout(&self) -> (PathBuf, Vec<PathBuf>, Vec<PathBuf>) {
        let root = self.target.file(&format!("tree-{}", self.rep));
        let dirs: Vec<PathBuf> = (0..self.files.div_ceil(FILES_PER_DIR))
            .map(|d| root.join(format!("d{d:04}")))
            .collect();
        let files = (0..self.files)
            .map(|i| dirs[(i / FILES_PER_DIR) as usize].join(format!("f{i:05}.txt")))
            .collect();
        (root, dirs, files)
    }
}

impl Trial for MetaTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        self.rep += 1;
        let (root, dirs, files) = self.layout();
        let mut times = [Duration::ZERO; PHASES.len()];

        let t = clock.now();
        std::fs::create_dir(&root).map_err(|e| failed("creating", &root, e))?;
        for d in &dirs {
            std::fs::create_dir(d).map_err(|e| failed("creating", d, e))?;
        }
        for p in &files {
            let mut f = create_new(p, 0).map_err(|e| failed("creating", p, e))?;
            self.content.stamp();
            f.write_all(self.content.bytes())
                .map_err(|e| failed("writing", p, e))?;
        }
        times[CREATES] = clock.now().saturating_sub(t);

        let t = clock.now();
        stat_each(&files)?;
        times[STATS] = clock.now().saturating_sub(t);
        let t = clock.now();
        stat_each(&files)?;
        times[RESTATS] = clock.now().saturating_sub(t);
        times[NEAR_RESTATS] = near_stat_each(&dirs, &files, clock)?;

        // a name beside each file that is not there, looked up twice: the
        // second finds what the first left in the caches
        let absent: Vec<PathBuf> = files.iter().map(|p| p.with_extension("absent")).collect();
        miss_each(&absent)?;
        let t = clock.now();
        miss_each(&absent)?;
        times[MISSES] = clock.now().saturating_sub(t);

        let mut buf = Vec::with_capacity(2 * FILE_BYTES);
        let t = clock.now();
        for p in &files {
            buf.clear();
            std::fs::File::open(p)
                .and_then(|mut f| f.read_to_end(&mut buf))
                .map_err(|e| failed("reading", p, e))?;
            if buf.len() != FILE_BYTES {
                return Err(BenchError::Failed(format!("{} read short", p.display())));
            }
        }
        times[READS] = clock.now().saturating_sub(t);
        if !self.content.written_as(&buf) {
            return Err(BenchError::Failed(
                "a file does not hold what was written".into(),
            ));
        }

        // after the stats and reads, so that a listing's answers (FUSE's
        // readdirplus) cannot warm them
        let t = clock.now();
        for d in &dirs {
            let listed = std::fs::read_dir(d)
                .and_then(|it| it.count_entries())
                .map_err(|e| failed("listing", d, e))?;
            if listed == 0 {
                return Err(BenchError::Failed(format!("{} lists empty", d.display())));
            }
        }
        times[LISTS] = clock.now().saturating_sub(t);

        times[CHMODS] = self.chmod_each(&files, clock)?;

        let t = clock.now();
        for p in &files {
            std::fs::remove_file(p).map_err(|e| failed("removing", p, e))?;
        }
        for d in dirs.iter().chain([&root]) {
            std::fs::remove_dir(d).map_err(|e| failed("removing", d, e))?;
        }
        times[DELETES] = clock.now().saturating_sub(t);

        let per_sec = |n: u64, d: &Duration| n as f64 / d.as_secs_f64().max(1e-9);
        Ok(times
            .iter()
            .enumerate()
            .map(|(phase, d)| match phase {
                LISTS => per_sec(dirs.len() as u64, d),
                _ => per_sec(self.files, d),
            })
            .collect())
    }

    fn details(&mut self) -> Option<Value> {
        Some(self.target.details())
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    /// The one entry of `dir`: the case's scratch directory.
    fn only_entry(dir: &std::path::Path) -> PathBuf {
        let entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        entries[0].clone()
    }

    #[test]
    fn every_phase_touches_every_file_and_the_tree_is_gone_after() {
        let env = TestEnv::real(0.01);
        let case = Meta.cases(&TestEnv::plan(Suite::Quick, 1)).remove(0);
        let mut t = Meta.prepare(&case, &env.ctx()).unwrap();
        let v = t.once(&env.clock).unwrap();
        assert_eq!(v.len(), PHASES.len());
        assert!(v.iter().all(|x| *x > 0.0), "{v:?}");
        let base = &env.dirs[0].path;
        let scratch = only_entry(base);
        assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
        drop(t);
        assert_eq!(std::fs::read_dir(base).unwrap().count(), 0);
    }

    #[test]
    fn a_failed_repetition_still_removes_everything() {
        let env = TestEnv::real(0.01);
        let case = Meta.cases(&TestEnv::plan(Suite::Quick, 1)).remove(0);
        let mut t = Meta.prepare(&case, &env.ctx()).unwrap();
        let base = &env.dirs[0].path;
        let scratch = only_entry(base);
        // something in the way of the first repetition's tree: never reused
        std::fs::create_dir(scratch.join("tree-1")).unwrap();
        std::fs::write(scratch.join("tree-1/keep"), b"x").unwrap();
        assert!(matches!(t.once(&env.clock), Err(BenchError::Failed(_))));
        assert_eq!(std::fs::read(scratch.join("tree-1/keep")).unwrap(), b"x");
        drop(t);
        assert_eq!(std::fs::read_dir(base).unwrap().count(), 0);
    }

    #[test]
    fn each_phase_index_names_its_metric_and_a_miss_must_miss() {
        let named = [
            (CREATES, "creates_per_sec"),
            (STATS, "stats_per_sec"),
            (READS, "reads_per_sec"),
            (DELETES, "deletes_per_sec"),
            (LISTS, "lists_per_sec"),
            (RESTATS, "restats_per_sec"),
            (MISSES, "misses_per_sec"),
            (NEAR_RESTATS, "near_restats_per_sec"),
            (CHMODS, "chmods_per_sec"),
        ];
        for (i, name) in named {
            assert_eq!(PHASES[i], name);
        }
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("there");
        std::fs::write(&there, b"x").unwrap();
        miss_each(&[dir.path().join("absent")]).unwrap();
        let err = miss_each(&[there]).unwrap_err().to_string();
        assert!(err.contains("is there"), "{err}");
    }

    /// The audit architecture a seccomp filter checks, for this build.
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xC000_00B7;

    /// Makes the calling thread's `statx` fail with ENOSYS, as a kernel
    /// before 4.11 (or WSL 1) answers it, by a seccomp filter on this
    /// thread alone (no TSYNC); other calls pass. The error where the
    /// kernel or a confinement refuses the filter.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn without_statx() -> std::io::Result<()> {
        let stmt = |code: u32, k: u32| libc::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        };
        let jump = |k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt,
            jf,
            k,
        };
        let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
        let ret = libc::BPF_RET | libc::BPF_K;
        let mut code = [
            // seccomp_data: nr at 0, arch at 4
            stmt(load, 4),
            jump(AUDIT_ARCH, 0, 3),
            stmt(load, 0),
            jump(libc::SYS_statx as u32, 0, 1),
            stmt(ret, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
            stmt(ret, libc::SECCOMP_RET_ALLOW),
        ];
        let prog = libc::sock_fprog {
            len: code.len() as u16,
            filter: code.as_mut_ptr(),
        };
        // SAFETY: no_new_privs takes plain integers; the filter program
        // lives across the call, which copies it.
        let set = unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) == 0
        };
        if set {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// The error of a raw `statx` of `name` at `dirfd` into a null buffer:
    /// EFAULT where statx is there (the kernel refuses the buffer), ENOSYS
    /// where a filter answers first. Nothing is written.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn statx_error(dirfd: libc::c_int, name: &std::ffi::CStr) -> Option<i32> {
        // SAFETY: a null buffer is never written: the filter answers before
        // the kernel reads the arguments, and an unfiltered call fails on
        // it with EFAULT
        let r = unsafe { libc::syscall(libc::SYS_statx, dirfd, name.as_ptr(), 0, 0u32, 0usize) };
        (r == -1)
            .then(std::io::Error::last_os_error)
            .and_then(|e| e.raw_os_error())
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn the_near_stat_falls_back_to_newfstatat_where_statx_is_not_there() {
        // a thread of its own, whose filter ends with it
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), [7u8; 4096]).unwrap();
        let fd = std::fs::File::open(dir.path()).unwrap();
        let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
        let got = std::thread::spawn(move || {
            let statx = |name: &std::ffi::CStr| statx_error(raw, name);
            let before = statx(c"f");
            without_statx()?;
            let after = statx(c"f");
            Ok::<_, std::io::Error>((
                before,
                after,
                size_at(raw, c"f").map_err(|e| e.kind()),
                size_at(raw, c"absent").map_err(|e| e.kind()),
            ))
        })
        .join()
        .unwrap();
        // a kernel without seccomp filters, or a confinement that refuses
        // them (EINVAL, EACCES, EPERM), cannot take statx away: skipped
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                let code = e.raw_os_error();
                assert!(
                    [libc::EINVAL, libc::EACCES, libc::EPERM, libc::ENOSYS]
                        .map(Some)
                        .contains(&code),
                    "the filter was refused for a reason no confinement gives: {e}"
                );
                eprintln!("skipped: this environment refuses a seccomp filter ({e})");
                return;
            }
        };
        // the filter took: statx is gone, and the sizes come by newfstatat
        assert_eq!(got.0, Some(libc::EFAULT));
        assert_eq!(got.1, Some(libc::ENOSYS));
        assert_eq!(got.2, Ok(4096));
        assert_eq!(got.3, Err(std::io::ErrorKind::NotFound));
        // this thread still has statx
        assert_eq!(statx_error(raw, c"f"), Some(libc::EFAULT));
        assert_eq!(size_at(raw, c"f").unwrap(), 4096);
        drop(fd);
    }

    #[test]
    fn a_file_system_without_modes_is_told_from_a_failure() {
        let os = std::io::Error::from_raw_os_error;
        assert!(refuses_modes(&os(libc::EPERM)));
        assert!(refuses_modes(&os(libc::EOPNOTSUPP)));
        assert!(!refuses_modes(&os(libc::ENOENT)));
        assert!(!refuses_modes(&os(libc::EIO)));
    }

    #[test]
    fn each_price_says_the_names_its_phase_walks() {
        let names: Vec<(Op, &str, u8)> = Meta
            .prices()
            .iter()
            .map(|p| (p.op, p.metric, p.names))
            .collect();
        for (op, metric, n) in &names {
            let want = match op {
                Op::List => 2,
                Op::Name => 0,
                _ => 3,
            };
            assert_eq!(*n, want, "{op:?} {metric}");
        }
        let name = Meta.prices().iter().find(|p| p.op == Op::Name).unwrap();
        assert_eq!(
            (name.metric, name.cost),
            (
                "restats_per_sec",
                Cost::PerName {
                    near: "near_restats_per_sec",
                    apart: 2
                }
            )
        );
    }

    #[test]
    fn the_layout_puts_100_files_per_directory() {
        let env = TestEnv::real(0.01);
        let case = Meta.cases(&TestEnv::plan(Suite::Quick, 1)).remove(0);
        let target = Target::open(&env.ctx(), &case, "meta-test", 0).unwrap();
        let t = MetaTrial {
            target,
            files: 250,
            content: Block::new(FILE_BYTES, 1),
            rep: 1,
            notes: vec![],
        };
        let (_, dirs, files) = t.layout();
        assert_eq!((dirs.len(), files.len()), (3, 250));
        assert!(files[199].starts_with(&dirs[1]) && files[200].starts_with(&dirs[2]));
    }
}
