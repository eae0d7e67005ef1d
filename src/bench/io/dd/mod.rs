//! `io.dd`: the dd transfers the seeds timed (seed 004: `dd bs=64K
//! count=32K conv=fdatasync` then a read of the file, ext4 against the 9P
//! share of Windows files; seed 003: `dd bs=1M count=1024` buffered and
//! with `oflag=direct`, and reads with and without the page cache). One
//! case per transfer, MB/s (10⁶ B/s, as dd prints):
//!
//! - `write_fdatasync`: 64 KiB blocks, fdatasync before the clock stops;
//! - `write_buffered`: 1 MiB blocks, no sync (what reaches the page cache);
//! - `write_direct`: 1 MiB blocks with O_DIRECT; a filesystem that refuses
//!   O_DIRECT (tmpfs answers EINVAL) skips the case saying so — there is
//!   no quiet fallback to buffered writes;
//! - `read_warm`: 1 MiB blocks from a file just written and read;
//! - `read_cold`: the same after dropping the file from the page cache:
//!   `drop_caches` as root (seed 003's `echo 3`), otherwise
//!   `posix_fadvise(DONTNEED)` on the file; the case says which, whether
//!   the file was larger than free memory, and how much of it was still
//!   cached (mincore) when the read began.
//!
//! Every write goes to a new file (O_EXCL) removed after the repetition.

use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use super::{create_new, failed, mb_per_sec, read_blocks, write_blocks, Block, Target};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::params::{self, key, IoOp};
use crate::results::{Assumption, AssumptionKind};
use crate::units::{size_label, size_text};
use crate::units::{Direction, Unit};
use crate::view::{Grid, GridRows, View, ViewKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

mod cold;
pub use cold::ColdMethod;
use cold::{empty_cache, resident_fraction};

/// The transfers, with their block sizes.
const OPS: [(IoOp, u64); 5] = [
    (IoOp::WriteFdatasync, 64 << 10),
    (IoOp::WriteBuffered, 1 << 20),
    (IoOp::WriteDirect, 1 << 20),
    (IoOp::ReadWarm, 1 << 20),
    (IoOp::ReadCold, 1 << 20),
];

/// The file of a suite: the seeds' 1 GiB in full, less where one
/// repetition must stay short.
pub(crate) fn suite_file_size(suite: Suite) -> u64 {
    match suite {
        Suite::Quick => 16 << 20,
        Suite::Standard => 512 << 20,
        Suite::Full => 1 << 30,
    }
}

/// The `io.dd` bench.
#[derive(Debug)]
pub struct Dd;

impl Bench for Dd {
    fn references(&self) -> Vec<crate::bench::reference::Reference> {
        super::references::dd()
    }
    fn id(&self) -> &'static str {
        ids::IO_DD
    }
    fn topic(&self) -> &'static str {
        "dd transfers"
    }
    fn summary(&self) -> &'static str {
        "dd transfers: write 64 KiB blocks + fdatasync, buffered write, O_DIRECT write (skipped where \
         refused), warm and cold read; MB/s; a file of 16 MiB (quick), 512 MiB (standard), 1 GiB \
         (full) per repetition"
    }
    fn reproduces(&self) -> &'static str {
        "seed 004 (dd conv=fdatasync, ext4 vs 9P), seed 003 (dd buffered, oflag=direct, cold read)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let size = super::IoOptions::of(plan)
            .file_size
            .unwrap_or(suite_file_size(plan.suite));
        let mut cases = Vec::new();
        for dir in &plan.dirs {
            for (op, block) in OPS {
                cases.push(CaseSpec {
                    bench: self.id().into(),
                    params: BTreeMap::from([
                        (key::DIR.to_string(), Value::from(dir.name.clone())),
                        (key::OP.to_string(), Value::from(op.name())),
                        ("block".to_string(), Value::from(size_label(block))),
                        ("file_size".to_string(), Value::from(size_label(size))),
                    ]),
                    metrics: vec![MetricSpec {
                        name: "throughput",
                        unit: Unit::MegabytesPerSec,
                        direction: Direction::HigherIsBetter,
                    }],
                });
            }
        }
        cases
    }
    fn views(&self) -> Vec<View> {
        vec![View {
            title: "transfers by directory against the baseline",
            kind: ViewKind::Grid(Grid {
                rows: GridRows::Param {
                    name: key::OP,
                    metric: Some("throughput"),
                },
                columns: "dir",
            }),
        }]
    }

    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        case.size("file_size").unwrap_or(0)
    }

    fn one_cpu(&self, _case: &CaseSpec) -> bool {
        true
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let op = case
            .params
            .get(key::OP)
            .and_then(Value::as_str)
            .and_then(|o| OPS.iter().position(|(op, _)| op.name() == o))
            .ok_or_else(|| BenchError::Failed(format!("{}: bad op", case.key())))?;
        let block = case.size("block")?;
        let size = case.size("file_size")?;
        let target = Target::open(ctx, case, "dd", self.disk_bytes(case))?;
        let cold = if ctx.clock.is_fake() {
            // a fake-clock run is a test: never drop the whole machine's cache
            ColdMethod::Fadvise
        } else {
            ColdMethod::for_this_process()
        };
        // write_direct's buffer on a huge page where the kernel has them:
        // from base pages a 1 MiB write reached a virtio disk as one request
        // or two, drawn with each process's buffer (8-23 % apart), so its
        // figures were two populations
        let mut notes = Vec::new();
        let block = if OPS[op].0 == IoOp::WriteDirect {
            match Block::on_huge_pages(block as usize, ctx.seed) {
                Ok(b) => {
                    notes.push(huge_page_note(
                        b.page_details().and_then(|(_, given)| given),
                    ));
                    b
                }
                Err(why) => {
                    notes.push(format!(
                        "the buffer is of base pages ({why}): a write reaches the device in as \
                         many segments as its pages lie apart, drawn anew in each process"
                    ));
                    Block::new(block as usize, ctx.seed)
                }
            }
        } else {
            Block::new(block as usize, ctx.seed)
        };
        DdTrial::new(target, op, block, size, cold, ctx)
            .map(|mut t| {
                t.notes.extend(notes);
                t
            })
            .map(|t| Box::new(t) as Box<dyn Trial>)
    }
}

/// What write_direct's note says of a buffer that asked for a huge page,
/// by whether the kernel gave one (None: /proc/self/smaps cannot say).
fn huge_page_note(given: Option<bool>) -> String {
    match given {
        Some(true) => {
            "the buffer is on a huge page (madvise(MADV_HUGEPAGE)): each write is one \
                       run of memory, one segment for the device"
        }
        Some(false) => {
            "the buffer asked for a huge page and the kernel gave base pages (memory \
                        fragmented, or THP defrag off): a write reaches the device in as many \
                        segments as its pages lie apart"
        }
        None => {
            "the buffer asked for a huge page (madvise(MADV_HUGEPAGE)); whether the kernel \
                 gave one is unknown (no /proc/self/smaps)"
        }
    }
    .to_string()
}

struct DdTrial {
    target: Target,
    op: usize,
    block: Block,
    size: u64,
    cold: ColdMethod,
    /// The file the reads read (written in prepare).
    read_path: Option<PathBuf>,
    rep: u64,
    /// Largest fraction of the file still cached when a cold read began.
    most_resident: Option<f64>,
    /// How the cold reads actually emptied the cache (drop_caches can be
    /// refused, then fadvise is used and said).
    methods_used: Vec<ColdMethod>,
    /// The quickest fdatasync of a whole file, seconds.
    fastest_sync: Option<f64>,
    /// read_cold: the faster of two warm reads in prepare, MB/s, the
    /// rate a read served from memory reaches.
    warm_rate: Option<f64>,
    /// read_cold: every cold read's rate, MB/s.
    cold_rates: Vec<f64>,
    /// write_direct: the largest fraction of a file written with O_DIRECT
    /// found in the page cache after the write.
    most_cached_direct: Option<f64>,
    notes: Vec<String>,
}

/// A cold read at this share of the warm rate or more was served from
/// memory somewhere (this VM measured 6 %: 2.2 against 35 GB/s; gVisor
/// 52 %, a QEMU guest's 9p share about 100 %).
const COLD_WARM_MAX: f64 = 0.5;

/// A file with more than this share of its pages cached was not evicted,
/// or not bypassed.
const RESIDENT_MAX: f64 = 0.05;

impl DdTrial {
    fn new(
        target: Target,
        op: usize,
        block: Block,
        size: u64,
        cold: ColdMethod,
        ctx: &Context,
    ) -> Result<DdTrial, BenchError> {
        let mut t = DdTrial {
            notes: vec![target.note()],
            target,
            op,
            block,
            size,
            cold,
            read_path: None,
            rep: 0,
            most_resident: None,
            methods_used: Vec::new(),
            fastest_sync: None,
            warm_rate: None,
            cold_rates: Vec::new(),
            most_cached_direct: None,
        };
        match OPS[op].0 {
            IoOp::WriteFdatasync => t
                .notes
                .push("the clock stops after fdatasync, as dd conv=fdatasync".into()),
            IoOp::WriteBuffered => t.notes.push(
                "no sync: the rate is that of the page cache taking the data, as plain dd".into(),
            ),
            IoOp::WriteDirect => t.check_direct()?,
            _ => t.write_read_file()?,
        }
        if OPS[op].0 == IoOp::ReadCold {
            let exceeds = ctx.mem_available_bytes.map(|m| size > m);
            t.notes.push(match exceeds {
                Some(true) => format!("the file ({}) is larger than free memory", size_text(size)),
                Some(false) => format!(
                    "the file ({}) is smaller than free memory: only the drop keeps the read cold",
                    size_text(size)
                ),
                None => "free memory unknown".into(),
            });
        }
        Ok(t)
    }

    /// Skips the case where O_DIRECT is refused, at open or at the first write.
    fn check_direct(&mut self) -> Result<(), BenchError> {
        let path = self.target.file("direct-probe");
        let fs = self
            .target
            .info
            .fs_type
            .clone()
            .unwrap_or_else(|| "?".into());
        let name = self.target.dir.name.clone();
        let refused = |e: std::io::Error, at: &str| direct_refusal(e, at, &name, &fs, &path);
        let mut f = create_new(&path, libc::O_DIRECT).map_err(|e| refused(e, "open"))?;
        let one = (4096u64).min(self.size);
        write_blocks(&mut f, &mut self.block, one).map_err(|e| refused(e, "write"))?;
        drop(f);
        std::fs::remove_file(&path).map_err(|e| failed("removing", &path, e))?;
        self.notes.push(
            "O_DIRECT: the page cache is bypassed, no sync at the end, as dd oflag=direct".into(),
        );
        if matches!(fs.as_str(), "tmpfs" | "ramfs") {
            self.notes.push(format!(
                "{fs} accepts O_DIRECT (Linux 6.6 and later) but keeps its files in memory: \
                 nothing is bypassed, the rate is a memory copy"
            ));
        }
        Ok(())
    }

    /// The file the read cases read: written, fsynced, read once.
    fn write_read_file(&mut self) -> Result<(), BenchError> {
        let path = self.target.file("read");
        let mut f = create_new(&path, 0).map_err(|e| failed("creating", &path, e))?;
        write_blocks(&mut f, &mut self.block, self.size)
            .map_err(|e| failed("writing", &path, e))?;
        f.sync_all().map_err(|e| failed("fsync", &path, e))?;
        drop(f);
        let mut buf = Block::new(self.block.bytes().len(), 0);
        for _ in 0..2 {
            let mut r = File::open(&path).map_err(|e| failed("opening", &path, e))?;
            let t0 = std::time::Instant::now();
            let n = read_blocks(&mut r, &mut buf).map_err(|e| failed("reading", &path, e))?;
            let rate = mb_per_sec(n, t0.elapsed().as_secs_f64());
            self.warm_rate = Some(self.warm_rate.map_or(rate, |w: f64| w.max(rate)));
        }
        self.read_path = Some(path);
        Ok(())
    }

    fn write(&mut self, clock: &Clock) -> Result<f64, BenchError> {
        self.rep += 1;
        let path = self.target.file(&format!("dd-{}", self.rep));
        let flags = if OPS[self.op].0 == IoOp::WriteDirect {
            libc::O_DIRECT
        } else {
            0
        };
        let mut f = create_new(&path, flags).map_err(|e| failed("creating", &path, e))?;
        let t0 = clock.now();
        let n = write_blocks(&mut f, &mut self.block, self.size)
            .map_err(|e| failed("writing", &path, e))?;
        if OPS[self.op].0 == IoOp::WriteFdatasync {
            let before = clock.now();
            f.sync_data().map_err(|e| failed("fdatasync", &path, e))?;
            let took = clock.now().saturating_sub(before).as_secs_f64();
            self.fastest_sync = Some(self.fastest_sync.map_or(took, |s: f64| s.min(took)));
        }
        drop(f);
        let t1 = clock.now();
        if flags == libc::O_DIRECT {
            let cached = File::open(&path)
                .ok()
                .and_then(|f| resident_fraction(&f, self.size));
            if let Some(c) = cached {
                self.most_cached_direct = Some(self.most_cached_direct.unwrap_or(0.0).max(c));
            }
        }
        std::fs::remove_file(&path).map_err(|e| failed("removing", &path, e))?;
        Ok(mb_per_sec(n, t1.saturating_sub(t0).as_secs_f64()))
    }

    fn read(&mut self, clock: &Clock) -> Result<f64, BenchError> {
        let path = self
            .read_path
            .clone()
            .expect("invariant: read cases write their file");
        let mut f = File::open(&path).map_err(|e| failed("opening", &path, e))?;
        if OPS[self.op].0 == IoOp::ReadCold {
            let used = empty_cache(&f, self.cold)
                .map_err(|e| failed("dropping the cache of", &path, e))?;
            if !self.methods_used.contains(&used) {
                self.methods_used.push(used);
            }
            if let Some(r) = resident_fraction(&f, self.size) {
                self.most_resident = Some(self.most_resident.unwrap_or(0.0).max(r));
            }
        }
        let mut buf = Block::new(self.block.bytes().len(), 0);
        let t0 = clock.now();
        let n = read_blocks(&mut f, &mut buf).map_err(|e| failed("reading", &path, e))?;
        let t1 = clock.now();
        if n != self.size {
            return Err(BenchError::Failed(format!(
                "read {n} bytes of {}, a {}-byte file",
                path.display(),
                self.size
            )));
        }
        let rate = mb_per_sec(n, t1.saturating_sub(t0).as_secs_f64());
        if OPS[self.op].0 == IoOp::ReadCold {
            self.cold_rates.push(rate);
        }
        Ok(rate)
    }

    /// read_cold's assumption: the eviction left at most [`RESIDENT_MAX`]
    /// of the file cached here (mincore), and the reads ran under
    /// [`COLD_WARM_MAX`] of the warm rate, so no cache beyond this kernel
    /// (a sandbox's, the hypervisor host's) served them either.
    fn cold_assumption(&self) -> Option<Assumption> {
        if self.cold_rates.is_empty() {
            return None;
        }
        let mut sorted = self.cold_rates.clone();
        sorted.sort_by(f64::total_cmp);
        let cold = crate::stats::median_of_sorted(&sorted);
        let share = self.warm_rate.map(|w| cold / w);
        let resident = self.most_resident;
        let mut evidence = vec![match resident {
            Some(r) => format!(
                "up to {:.0} % of the file was cached when a cold read began (mincore)",
                r * 100.0
            ),
            None => "the file's cached pages could not be counted (mincore)".to_string(),
        }];
        if let (Some(share), Some(w)) = (share, self.warm_rate) {
            evidence.push(format!(
                "cold reads ran at {:.0} % of the warm rate ({cold:.0} against {w:.0} MB/s)",
                share * 100.0
            ));
        }
        let held =
            resident.is_none_or(|r| r <= RESIDENT_MAX) && share.is_none_or(|s| s < COLD_WARM_MAX);
        Some(Assumption {
            kind: AssumptionKind::ColdRead,
            held,
            evidence: evidence.join("; "),
            metrics: Vec::new(),
        })
    }

    /// write_direct's assumption: after each write at most
    /// [`RESIDENT_MAX`] of the file was in the page cache.
    fn direct_assumption(&self) -> Option<Assumption> {
        let cached = self.most_cached_direct?;
        Some(Assumption {
            kind: AssumptionKind::DirectIo,
            held: cached <= RESIDENT_MAX,
            evidence: format!(
                "up to {:.0} % of a file written with O_DIRECT was in the page cache after the \
                 write (mincore)",
                cached * 100.0
            ),
            metrics: Vec::new(),
        })
    }
}

impl Trial for DdTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let rate = if !matches!(OPS[self.op].0, IoOp::ReadWarm | IoOp::ReadCold) {
            self.write(clock)?
        } else {
            self.read(clock)?
        };
        Ok(vec![rate])
    }

    fn details(&mut self) -> Option<Value> {
        let mut d = self.target.details();
        if OPS[self.op].0 == IoOp::ReadCold {
            let used: Vec<String> = self.methods_used.iter().map(|m| format!("{m:?}")).collect();
            d["cold_methods"] = Value::from(used);
            d["most_resident_fraction"] = serde_json::json!(self.most_resident);
        }
        if OPS[self.op].0 == IoOp::WriteDirect {
            match self.block.page_details() {
                Some((pages, _)) => {
                    for (k, v) in pages.as_object().into_iter().flatten() {
                        d[k.as_str()] = v.clone();
                    }
                }
                None => d["pages"] = Value::from(params::SMALL),
            }
        }
        Some(d)
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        notes.extend(self.methods_used.iter().map(|m| m.describe().to_string()));
        if self.cold == ColdMethod::DropCaches && self.methods_used.contains(&ColdMethod::Fadvise) {
            notes.push(
                "writing /proc/sys/vm/drop_caches was refused: fadvise was used instead".into(),
            );
        }
        notes
    }

    fn assumptions(&self) -> Vec<Assumption> {
        match OPS[self.op].0 {
            IoOp::ReadCold => self.cold_assumption().into_iter().collect(),
            IoOp::WriteDirect => self.direct_assumption().into_iter().collect(),
            _ => Vec::new(),
        }
    }

    fn anomalies(&self) -> Vec<crate::results::Anomaly> {
        self.fastest_sync
            .and_then(|s| super::implausible_sync(&self.target.info, s))
            .map(|message| crate::results::Anomaly {
                kind: "implausible_sync".into(),
                message,
            })
            .into_iter()
            .collect()
    }
}

/// What an O_DIRECT error at `at` (open or write) means: EINVAL is the
/// filesystem refusing it (tmpfs before Linux 6.6, 9P, many FUSE
/// filesystems), which skips the case; anything else is a failure.
fn direct_refusal(
    e: std::io::Error,
    at: &str,
    dir: &str,
    fs: &str,
    path: &std::path::Path,
) -> BenchError {
    if e.raw_os_error() == Some(libc::EINVAL) {
        BenchError::Unsupported(format!(
            "the filesystem of {dir} ({fs}) refuses O_DIRECT (EINVAL at {at}); envbench does not \
             fall back to buffered writes"
        ))
    } else {
        failed(at, path, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{NamedDir, TestEnv};

    fn case(op: &str) -> CaseSpec {
        Dd.cases(&TestEnv::plan(Suite::Quick, 1))
            .into_iter()
            .find(|c| c.params["op"] == op)
            .unwrap()
    }

    #[test]
    fn every_transfer_moves_the_whole_file_and_leaves_nothing() {
        let env = TestEnv::real(0.01);
        for (op, _) in OPS {
            let op = op.name();
            let c = case(op);
            let target = Target::open(&env.ctx(), &c, "dd-test", 1 << 20).unwrap();
            let block = Block::new(64 << 10, 5);
            let index = OPS.iter().position(|o| o.0.name() == op).unwrap();
            let cold = ColdMethod::Fadvise;
            let t = DdTrial::new(target, index, block, 256 << 10, cold, &env.ctx());
            let mut t = match t {
                Err(BenchError::Unsupported(why)) => {
                    assert!(op == "write_direct" && why.contains("O_DIRECT"), "{why}");
                    continue;
                }
                other => other.unwrap(),
            };
            assert!(t.once(&env.clock).unwrap()[0] > 0.0, "{op}");
            // the cold read and the direct write check their assumption,
            // the other transfers assume nothing
            let kinds: Vec<AssumptionKind> = t.assumptions().iter().map(|a| a.kind).collect();
            let expected: &[AssumptionKind] = match op {
                "read_cold" => &[AssumptionKind::ColdRead],
                "write_direct" => &[AssumptionKind::DirectIo],
                _ => &[],
            };
            assert_eq!(kinds, expected, "{op}");
            let tmpfs = matches!(t.target.info.fs_type.as_deref(), Some("tmpfs" | "ramfs"));
            if op == "write_direct" && !tmpfs {
                // a disk filesystem honours O_DIRECT: nothing left cached
                assert!(t.assumptions()[0].held, "{:?}", t.assumptions());
            }
            if op == "read_cold" {
                assert!(
                    t.notes().iter().any(|n| n.contains("posix_fadvise")),
                    "{:?}",
                    t.notes()
                );
            }
            if let Some(p) = &t.read_path {
                assert!(super::super::holds_blocks(p, &t.block, 256 << 10).unwrap());
            }
            drop(t);
            assert_eq!(
                std::fs::read_dir(&env.dirs[0].path).unwrap().count(),
                0,
                "{op}"
            );
        }
    }

    #[test]
    fn a_cold_read_near_the_warm_rate_or_left_cached_is_not_cold() {
        let env = TestEnv::real(0.01);
        let c = case("read_cold");
        let target = Target::open(&env.ctx(), &c, "dd-test", 1 << 20).unwrap();
        let index = OPS.iter().position(|o| o.0 == IoOp::ReadCold).unwrap();
        let block = Block::new(64 << 10, 5);
        let mut t = DdTrial::new(
            target,
            index,
            block,
            256 << 10,
            ColdMethod::Fadvise,
            &env.ctx(),
        )
        .unwrap();
        assert!(t.warm_rate.is_some_and(|w| w > 0.0));
        let judge = |t: &mut DdTrial, warm: f64, cold: &[f64], resident: f64| {
            t.warm_rate = Some(warm);
            t.cold_rates = cold.to_vec();
            t.most_resident = Some(resident);
            t.cold_assumption().unwrap()
        };
        // native ext4 on this VM: 2.2 against 35 GB/s, nothing cached
        let a = judge(&mut t, 35000.0, &[2200.0, 2100.0, 2300.0], 0.0);
        assert!(a.held, "{a:?}");
        assert!(a.evidence.contains("6 % of the warm rate"), "{a:?}");
        // gVisor: everything still cached (mincore)
        assert!(!judge(&mut t, 14000.0, &[11000.0], 1.0).held);
        // a QEMU guest's 9p share: nothing cached in the guest, but the
        // host's cache served the read at the warm rate
        let a = judge(&mut t, 3000.0, &[2900.0, 3100.0, 3000.0], 0.0);
        assert!(
            !a.held && a.evidence.contains("100 % of the warm rate"),
            "{a:?}"
        );
        // no cold read yet: nothing to say
        t.cold_rates.clear();
        assert!(t.cold_assumption().is_none());
        drop(t);
        assert_eq!(std::fs::read_dir(&env.dirs[0].path).unwrap().count(), 0);
    }

    #[test]
    fn the_direct_write_says_which_pages_its_buffer_has() {
        let env = TestEnv::real(0.01);
        let mut t = match Dd.prepare(&case("write_direct"), &env.ctx()) {
            Err(BenchError::Unsupported(why)) => {
                assert!(why.contains("O_DIRECT"), "{why}");
                return;
            }
            other => other.unwrap(),
        };
        assert!(t.once(&env.clock).unwrap()[0] > 0.0);
        let d = t.details().unwrap();
        let notes = t.notes();
        match crate::measure::pages::huge_pages_unavailable() {
            None => {
                assert_eq!(d["page_request"], "madvise(MADV_HUGEPAGE)", "{d}");
                assert!(notes.iter().any(|n| n.contains("huge page")), "{notes:?}");
            }
            Some(_) => {
                assert_eq!(d["pages"], "small", "{d}");
                assert!(d.get("page_request").is_none(), "{d}");
                assert!(notes.iter().any(|n| n.contains("base pages")), "{notes:?}");
            }
        }
        // the other transfers ask for no page size
        let mut t = Dd.prepare(&case("write_fdatasync"), &env.ctx()).unwrap();
        assert!(t.details().unwrap().get("pages").is_none());
    }

    #[test]
    fn a_flush_too_fast_for_a_network_filesystem_is_an_anomaly() {
        let env = TestEnv::real(0.01);
        let c = case("write_fdatasync");
        let target = Target::open(&env.ctx(), &c, "dd-test", 1 << 20).unwrap();
        let block = Block::new(64 << 10, 5);
        let mut t =
            DdTrial::new(target, 0, block, 256 << 10, ColdMethod::Fadvise, &env.ctx()).unwrap();
        t.once(&env.clock).unwrap();
        // what the flush took here says nothing: pretend a 9P share answered in 2 us
        t.target.info.fs_type = Some("9p".into());
        t.fastest_sync = Some(2e-6);
        let kinds: Vec<String> = t.anomalies().into_iter().map(|a| a.kind).collect();
        assert_eq!(kinds, ["implausible_sync"]);
        t.fastest_sync = Some(2e-3);
        assert!(t.anomalies().is_empty());
    }

    #[test]
    fn einval_for_o_direct_skips_the_case_and_other_errors_fail_it() {
        let p = std::path::Path::new("/x/direct-probe");
        let einval = std::io::Error::from_raw_os_error(libc::EINVAL);
        match direct_refusal(einval, "open", "win", "9p", p) {
            BenchError::Unsupported(why) => assert!(
                why.contains("win (9p) refuses O_DIRECT (EINVAL at open)")
                    && why.contains("does not fall back"),
                "{why}"
            ),
            other => panic!("{other}"),
        }
        let eio = std::io::Error::from_raw_os_error(libc::EIO);
        assert!(matches!(
            direct_refusal(eio, "write", "win", "9p", p),
            BenchError::Failed(_)
        ));
    }

    #[test]
    fn o_direct_on_tmpfs_is_refused_or_said_to_be_a_memory_copy() {
        // tmpfs refused O_DIRECT with EINVAL until Linux 6.6 and takes it since
        let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
            eprintln!("no /dev/shm here: nothing to show");
            return;
        };
        let env = TestEnv::real(0.01);
        let dirs = vec![NamedDir {
            name: "dir1".into(),
            path: shm.path().to_path_buf(),
        }];
        let mut ctx = env.ctx();
        ctx.dirs = &dirs;
        match Dd.prepare(&case("write_direct"), &ctx) {
            Err(BenchError::Unsupported(why)) => {
                assert!(
                    why.contains("refuses O_DIRECT") && why.contains("tmpfs"),
                    "{why}"
                )
            }
            Err(e) => panic!("{e}"),
            Ok(mut t) => {
                assert!(t.once(&env.clock).unwrap()[0] > 0.0);
                assert!(
                    t.notes().iter().any(|n| n.contains("memory copy")),
                    "{:?}",
                    t.notes()
                );
            }
        }
        // either way its scratch directory is gone
        assert_eq!(std::fs::read_dir(shm.path()).unwrap().count(), 0);
    }

    #[test]
    fn fadvise_leaves_a_clean_file_uncached_except_on_tmpfs() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        let mut f = create_new(&path, 0).unwrap();
        write_blocks(&mut f, &mut Block::new(65536, 1), 1 << 20).unwrap();
        f.sync_all().unwrap();
        let f = File::open(&path).unwrap();
        assert_eq!(resident_fraction(&f, 1 << 20), Some(1.0), "just written");
        assert_eq!(
            empty_cache(&f, ColdMethod::Fadvise).unwrap(),
            ColdMethod::Fadvise
        );
        let fs = super::super::describe(&NamedDir {
            name: "t".into(),
            path: tmp.path().to_path_buf(),
        });
        let r = resident_fraction(&f, 1 << 20).unwrap();
        if fs.statfs_type.as_deref() == Some("tmpfs") {
            // tmpfs has no backing store: its pages stay, which the note reports
            assert_eq!(r, 1.0);
        } else {
            assert!(r < 0.5, "{r} of the file still cached on {:?}", fs.fs_type);
        }
    }
}
