//! The rules for the resource controls a fingerprint records (an I/O
//! throttle, a memory limit, a CPU weight, a cpuset) and for the
//! competitors telemetry measures around every repetition (other runnable
//! tasks). Each fires only where the fingerprint or the telemetry shows
//! its control on OTHER's side and not, or less, on the base's; the clue
//! that says so is its first required sign, its evidence.

use super::{first, rule, usable, Facts, FINGERPRINTED_LEVEL};
use crate::compare::advice::{tasks_per_cpu, NOISY_TASKS_PER_CPU};
use crate::compare::diagnose::clues::{Clue, Finding, Group, Mechanism, Sign, Weight};
use crate::compare::diagnose::WORTH_EXPLAINING;
use crate::compare::{Environment, MetricComparison};
use crate::probe::cgroup_io::IoLimit;
use crate::probe::storage::DirInfo;
use crate::results::ResultFile;
use crate::units::Unit;

/// Durable I/O under a cap is slower by at least this (a disk faster
/// than its cap by less than this is not capped in effect).
const THROTTLED_BY: f64 = 1.5;
/// A measured rate "toward the cap": at most this factor above it (the
/// kernel lets a burst through at the start of each throttle slice).
const NEAR_CAP: f64 = 1.25;
/// Reads that fall out of a smaller page cache are slower by at least this.
const EVICTED_BY: f64 = 1.2;
/// Work on every CPU slows more than one thread's by at least this factor
/// when a competitor holds a CPU: the single thread finds an idle one.
const PARALLEL_FIRST_BY: f64 = 1.1;

/// The I/O limit on the block device behind `dir` in `r`: its disk's or
/// its own `major:minor` (a directory on a file system without a device,
/// tmpfs or FUSE, has none); where the cases do not say which device the
/// directory is on (files written before), the tightest on any device.
fn io_limit_of(r: &ResultFile, dir: &str) -> Option<IoLimit> {
    let limits = &r.fingerprint.cgroup.io_limits;
    let info: Option<DirInfo> = r
        .cases
        .iter()
        .filter(|c| c.ran_on().is_some_and(|d| d.name == dir))
        .find_map(|c| c.dir_info());
    match info {
        Some(i) => {
            let disk = i.block.as_ref().and_then(|b| b.device.clone());
            let own = i.device.clone();
            limits
                .iter()
                .find(|l| Some(&l.device) == disk.as_ref() || Some(&l.device) == own.as_ref())
                .cloned()
        }
        None => limits
            .iter()
            .min_by_key(|l| l.write_bps.or(l.read_bps).unwrap_or(u64::MAX))
            .cloned(),
    }
}

/// Whether `other` caps what `base` does not, or caps it lower.
fn tighter(other: &IoLimit, base: Option<&IoLimit>) -> bool {
    let Some(b) = base else {
        return other.limits_reads() || other.limits_writes();
    };
    let lower = |o: Option<u64>, b: Option<u64>| {
        matches!((o, b), (Some(x), Some(y)) if x < y) || (o.is_some() && b.is_none())
    };
    lower(other.read_bps, b.read_bps)
        || lower(other.write_bps, b.write_bps)
        || lower(other.read_iops, b.read_iops)
        || lower(other.write_iops, b.write_iops)
}

/// A rate metric's value in bytes a second; None for other units.
fn bytes_per_sec(m: &MetricComparison) -> Option<f64> {
    match m.unit {
        Unit::MegabytesPerSec => Some(m.other_value * 1e6),
        Unit::MebibytesPerSec => Some(m.other_value * 1048576.0),
        _ => None,
    }
}

/// Whether OTHER's side shows a control or a competitor that the base's
/// does not (or less of it): an I/O limit on some disk, a lower memory
/// bound or CPU weight, other runnable tasks. Its effects may stay under
/// the bar of a difference worth explaining at one run a side (a busy
/// loop's 1.4x on work on every CPU, unclear case by case), so it opens
/// the diagnosis for its rule, as a seccomp filter does.
pub(in crate::compare::diagnose) fn control_added(base: &Environment, other: &Environment) -> bool {
    let (Some(b), Some(o)) = (first(base), first(other)) else {
        return false;
    };
    let (bc, oc) = (&b.fingerprint.cgroup, &o.fingerprint.cgroup);
    let io = oc
        .io_limits
        .iter()
        .any(|l| tighter(l, bc.io_limits.iter().find(|x| x.device == l.device)));
    let lower = |x: Option<f64>, y: Option<f64>| x.is_some_and(|x| x < y.unwrap_or(f64::MAX));
    let memory = lower(
        oc.memory_bound_bytes().map(|v| v as f64),
        bc.memory_bound_bytes().map(|v| v as f64),
    );
    let weight = lower(
        oc.cpu_weight_share(),
        Some(bc.cpu_weight_share().unwrap_or(1.0)),
    );
    io || memory || weight || competitors_added(base, other).is_some()
}

/// The other runnable tasks per CPU (not envbench's) around the base's
/// repetitions and OTHER's, where OTHER's saw at least
/// [`NOISY_TASKS_PER_CPU`] and twice the base's: processes beside the run
/// on OTHER's side only.
pub(in crate::compare::diagnose) fn competitors_added(
    base: &Environment,
    other: &Environment,
) -> Option<[f64; 2]> {
    let (b, o) = (tasks_per_cpu(&base.runs), tasks_per_cpu(&other.runs));
    (o >= NOISY_TASKS_PER_CPU && o >= 2.0 * b).then_some([b, o])
}

impl Facts<'_> {
    /// An I/O throttle (cgroup v2 `io.max`, v1 `blkio.throttle`, a cloud
    /// volume's cap as a container sets it) on the disk behind `dir`:
    /// what must reach the disk (O_DIRECT, fdatasync, fsync) slows toward
    /// the cap, while buffered writes and warm reads, served by the page
    /// cache, and computation do not move (the kernel's cgroup-v2.rst, "IO
    /// Interface Files"; measured on this project's VM, issue 79: direct
    /// and synced I/O 17-41x slower under 50 MB/s and 400 IOPS).
    pub(super) fn io_throttle(&self, dir: &str) -> Option<Finding> {
        let other = io_limit_of(first(self.other)?, dir)?;
        let base = first(self.base).and_then(|r| io_limit_of(r, dir));
        let sign = Sign {
            holds: tighter(&other, base.as_ref()),
            clue: Clue::IoLimit {
                dir: dir.to_string(),
                base,
                other: other.clone(),
            },
            weight: Weight::Required,
        };
        let (durable, cold) = (
            Group::DurableWrites(dir.into()),
            Group::ColdRead(dir.into()),
        );
        let (required, expected) = if other.limits_writes() {
            let cold = other
                .limits_reads()
                .then(|| self.slower(cold, THROTTLED_BY, Weight::Expected));
            (
                self.slower(durable.clone(), THROTTLED_BY, Weight::Required),
                cold.flatten(),
            )
        } else {
            (self.slower(cold, THROTTLED_BY, Weight::Required), None)
        };
        rule(
            Mechanism::IoThrottle,
            vec![Some(sign), required],
            vec![
                expected,
                self.unchanged(Group::Buffered(dir.into()), Weight::Expected),
                self.unchanged(Group::Compute, Weight::Expected),
                self.near_cap(&durable, other.write_bps),
                self.slower(Group::Applications, WORTH_EXPLAINING, Weight::Supporting),
            ],
            false,
        )
    }

    /// The fastest rate OTHER's cases of `group` reached, against `cap`
    /// bytes a second: held at most [`NEAR_CAP`] times the cap.
    fn near_cap(&self, group: &Group, cap: Option<u64>) -> Option<Sign> {
        let cap = cap?;
        let rate = self
            .metrics
            .iter()
            .filter(|(g, _)| g.contains(group))
            .filter_map(|(_, m)| bytes_per_sec(m))
            .reduce(f64::max)?;
        Some(Sign {
            holds: rate <= cap as f64 * NEAR_CAP,
            clue: Clue::NearCap {
                rate_bytes_per_sec: rate,
                cap_bytes_per_sec: cap,
            },
            weight: Weight::Supporting,
        })
    }

    /// A memory limit (v2 `memory.max` or `memory.high`, v1
    /// `memory.limit_in_bytes`) charges the page cache to the group: a
    /// smaller cache holds less of a file, so warm reads of a file larger
    /// than what is left become reads from the disk and reads after an
    /// eviction lose their read-ahead to reclaim, while computation does
    /// not move (the kernel's cgroup-v2.rst, "Memory Ownership").
    pub(super) fn memory_limit(&self, dir: &str) -> Option<Finding> {
        let (b, o) = (first(self.base)?, first(self.other)?);
        let limit = o.fingerprint.cgroup.memory_bound_bytes()?;
        let base = b.fingerprint.cgroup.memory_bound_bytes();
        let room = |r: &ResultFile| r.fingerprint.memory.total_bytes.unwrap_or(u64::MAX);
        let sign = Sign {
            holds: limit < base.unwrap_or(u64::MAX).min(room(b)) && limit < room(o),
            clue: Clue::MemoryLimit { base, other: limit },
            weight: Weight::Required,
        };
        let warm = self.slower(Group::WarmRead(dir.into()), EVICTED_BY, Weight::Required);
        let cold = self.slower(Group::ColdRead(dir.into()), EVICTED_BY, Weight::Expected);
        // warm reads are the sign; where they held, cold reads follow,
        // expected; where not, cold reads stand in, required
        let (required, expected) = match (warm, cold) {
            (Some(w), c) if w.holds => (Some(w), c),
            (w, Some(c)) if c.holds => (
                Some(Sign {
                    weight: Weight::Required,
                    ..c
                }),
                w.map(Sign::expected),
            ),
            (w, c) => (w.or(c), None),
        };
        rule(
            Mechanism::MemoryLimit,
            vec![Some(sign), required],
            vec![
                expected,
                self.unchanged(Group::Compute, Weight::Expected),
                self.slower(Group::Applications, WORTH_EXPLAINING, Weight::Supporting),
            ],
            false,
        )
    }

    /// Other runnable tasks per CPU (not envbench's own) in OTHER's
    /// repetitions and in the base's.
    fn competitors(&self, weight: Weight) -> Sign {
        let (b, o) = (
            tasks_per_cpu(&self.base.runs),
            tasks_per_cpu(&self.other.runs),
        );
        Sign {
            holds: competitors_added(self.base, self.other).is_some(),
            clue: Clue::Competitors { base: b, other: o },
            weight,
        }
    }

    /// Other processes on this machine that want a CPU (a build, a
    /// browser, another container): work on every CPU waits for the
    /// CPU they hold, while one thread finds an idle one, so work on
    /// every CPU slows first; work handed between CPUs may go faster, a
    /// busy CPU never idling into a deep sleep. Telemetry reads the
    /// runnable tasks that are not envbench's around every repetition.
    /// Measured on this project's VM (issue 79): one busy loop beside a
    /// run, two-thread LU, primes and STREAM 27-47 % slower, the
    /// cross-CPU pipe 31 % faster, 0.56-0.58 other tasks a CPU against
    /// 0.14-0.22 idle.
    pub(super) fn competing_tasks(&self) -> Option<Finding> {
        rule(
            Mechanism::Competitors,
            vec![
                Some(self.competitors(Weight::Required)),
                // the tasks beside OTHER's run name this one group
                // beforehand, as a seccomp filter names the system calls
                self.slower_at(
                    Group::ComputeParallel,
                    WORTH_EXPLAINING,
                    Weight::Required,
                    FINGERPRINTED_LEVEL,
                ),
            ],
            vec![
                self.parallel_first(),
                self.faster(Group::CrossCpu, WORTH_EXPLAINING, Weight::Supporting),
            ],
            false,
        )
    }

    /// Work on every CPU slower than one thread's by [`PARALLEL_FIRST_BY`].
    fn parallel_first(&self) -> Option<Sign> {
        let one = self.effect(&Group::Compute)?;
        let every = self.effect(&Group::ComputeParallel)?;
        Some(Sign {
            holds: every.slowdown() >= one.slowdown() * PARALLEL_FIRST_BY,
            clue: Clue::ParallelFirst {
                one_thread: one.slowdown(),
                every_cpu: every.slowdown(),
            },
            weight: Weight::Expected,
        })
    }

    /// A lower CPU weight (v2 `cpu.weight`, v1 `cpu.shares`): the group's
    /// share of the CPUs against its siblings', which bites only when
    /// they contend: with other tasks runnable on OTHER's side, its work
    /// on every CPU gets less of them (the kernel's sched-design-CFS.rst,
    /// group scheduling). Contention on both sides alike is enough; what
    /// differs is the weight.
    pub(super) fn cpu_weight(&self) -> Option<Finding> {
        let (b, o) = (first(self.base)?, first(self.other)?);
        let other = o.fingerprint.cgroup.cpu_weight_share()?;
        let base = b.fingerprint.cgroup.cpu_weight_share().unwrap_or(1.0);
        let sign = Sign {
            holds: other < base,
            clue: Clue::CpuWeight { base, other },
            weight: Weight::Required,
        };
        let contended = tasks_per_cpu(&self.other.runs) >= NOISY_TASKS_PER_CPU;
        let busy = Sign {
            holds: contended,
            ..self.competitors(Weight::Required)
        };
        rule(
            Mechanism::CpuWeight,
            vec![
                Some(sign),
                Some(busy),
                self.slower(Group::ComputeParallel, WORTH_EXPLAINING, Weight::Required),
            ],
            vec![self.slower(Group::Compute, WORTH_EXPLAINING, Weight::Supporting)],
            false,
        )
    }

    /// The cpuset of each side, as a supporting sign of fewer CPUs: held
    /// where OTHER's allows fewer CPUs than the base's.
    pub(super) fn cpuset(&self) -> Option<Sign> {
        let count = |r: &ResultFile| r.fingerprint.cgroup.cpuset_count();
        let (b, o) = (first(self.base)?, first(self.other)?);
        let other = count(o)?;
        let base = count(b).unwrap_or_else(|| usable(b));
        Some(Sign {
            holds: other < base,
            clue: Clue::Cpuset { base, other },
            weight: Weight::Supporting,
        })
    }
}
