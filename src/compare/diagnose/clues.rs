//! What a diagnosis is made of: mechanisms, the groups of cases they
//! move, the clues checked and how they weigh.

use crate::results::AssumptionKind;
use serde::Serialize;

/// A group of cases is unchanged when none of them is faster or slower
/// and their geometric mean lies within this factor of 1.
const UNCHANGED_WITHIN: f64 = 1.15;

/// A mechanism the rules can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// System calls intercepted or translated (ptrace, gVisor, WSL 1).
    SyscallInterception,
    /// A virtual machine: nested paging, exits on wake-ups and timers.
    VirtualMachine,
    /// A FUSE or network file system (9P, virtiofs, SMB, NFS) on a directory.
    RemoteFilesystem,
    /// The page cache or O_DIRECT behave differently.
    CacheSemantics,
    /// A CPU quota (cgroup `cpu.max`).
    CpuQuota,
    /// Fewer CPUs usable (an affinity mask, a cpuset).
    FewerCpus,
    /// Another CPU model or clock frequency.
    OtherCpu,
    /// Time stolen by other guests of the host.
    NoisyNeighbour,
    /// Every instruction translated: a user-mode emulator (qemu-user,
    /// Rosetta) or a whole-system one (QEMU's TCG).
    CpuEmulation,
    /// A seccomp filter run on every system call (a container runtime's
    /// default profile).
    SeccompFilter,
    /// An overlay file system on a directory: its files live in an
    /// image's layers and an upper directory.
    OverlayFilesystem,
    /// A cap on a disk's bandwidth or operations (cgroup `io.max`,
    /// `blkio.throttle`).
    IoThrottle,
    /// A memory limit that the page cache is charged to (cgroup
    /// `memory.max`, `memory.high`, `memory.limit_in_bytes`).
    MemoryLimit,
    /// A lower CPU weight (cgroup `cpu.weight`, `cpu.shares`) under contention.
    CpuWeight,
    /// Other processes on this machine competing for the CPUs.
    Competitors,
}

/// A group of cases that a mechanism moves or leaves alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "group", content = "dir")]
pub enum Group {
    /// `os.syscall`.
    SystemCalls,
    /// Creating processes and threads, starting programs, the shell.
    Processes,
    /// Loopback TCP and HTTP.
    Network,
    /// One thread of computation (integer, floating point, primes, LU).
    Compute,
    /// Computation on every CPU at once (threads = CPUs, simultaneous processes).
    ComputeParallel,
    /// STREAM bandwidth.
    MemoryBandwidth,
    /// Dependent loads on working sets that fit the caches (≤ 256 KiB).
    LatencyInCache,
    /// Dependent loads on working sets far beyond them (≥ 64 MiB).
    LatencyBeyondCache,
    /// Work handed between two CPUs (`cpus=split`): wake-ups across CPUs.
    CrossCpu,
    /// Every file case on a directory.
    Files(String),
    /// Small-file metadata on a directory (`io.meta`).
    Metadata(String),
    /// Reads after an eviction on a directory (`io.dd` read_cold).
    ColdRead(String),
    /// Writes that bypass or flush the cache on a directory (O_DIRECT,
    /// fdatasync; io.random's fsyncs, io.seq's write ended by fsync).
    DurableWrites(String),
    /// Transfers the page cache serves on a directory (buffered writes,
    /// warm reads).
    Buffered(String),
    /// Reads of a file in the page cache on a directory (`io.dd` read_warm).
    WarmRead(String),
    /// Application work on a directory (the app family: a status, an
    /// unpack, a search, imports, builds, a database).
    Apps(String),
    /// The application work on a directory that walks paths and creates
    /// nothing while timed (a status, an import storm, a search): what an
    /// overlay's own layer slows.
    PathWalks(String),
    /// Application work on every directory.
    Applications,
}

/// How a group of headline metrics moved, other against base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Effect {
    /// Headline metrics in the group.
    pub cases: usize,
    /// ... judged slower.
    pub slower: usize,
    /// ... judged faster.
    pub faster: usize,
    /// Geometric mean speed-up (> 1: OTHER faster), a random-effects mean
    /// of the cases (each weighed by its precision and the spread between
    /// the cases' true effects), so that a case measured in a few wild
    /// rounds does not outweigh steady ones that agree.
    pub speedup: f64,
    /// The interval of that mean at the rule's level (99.5 %; 95 % for the
    /// system calls a seccomp filter in the fingerprint names), its cases
    /// taken as independent; NaN when a case had no usable interval.
    pub speedup_ci: (f64, f64),
}

impl Effect {
    /// How many times slower (> 1) or faster (< 1) OTHER is.
    pub(crate) fn slowdown(&self) -> f64 {
        1.0 / self.speedup
    }

    /// Slower by `factor` or more on the mean, and judged slower: more of
    /// the group judged slower than faster (its other cases may be
    /// unclear: a file system's slowdowns vary from case to case), or none
    /// judged either way and the mean's interval wholly below 1 (cases of
    /// a few rounds each that the adjustment for many comparisons left
    /// unclear, together beyond doubt).
    pub(super) fn slower_by(&self, factor: f64) -> bool {
        let judged = self.slower > self.faster || (self.faster == 0 && self.speedup_ci.1 < 1.0);
        judged && self.slowdown() >= factor
    }

    /// Faster by `factor` or more on the mean, and judged faster (as
    /// [`Effect::slower_by`]).
    pub(super) fn faster_by(&self, factor: f64) -> bool {
        let judged = self.faster > self.slower || (self.slower == 0 && self.speedup_ci.0 > 1.0);
        judged && self.speedup >= factor
    }

    /// No verdict either way and the mean within [`UNCHANGED_WITHIN`].
    pub(super) fn unchanged(&self) -> bool {
        self.slower == 0 && self.faster == 0 && self.speedup.ln().abs() <= UNCHANGED_WITHIN.ln()
    }
}

/// One clue about a comparison, for or against a mechanism.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "clue")]
pub enum Clue {
    /// The group is slower by at least `factor` in OTHER.
    Slower {
        /// Which cases.
        group: Group,
        /// How they moved.
        effect: Effect,
        /// The factor the rule asks for.
        factor: f64,
    },
    /// The group is faster by at least `factor` in OTHER.
    Faster {
        /// Which cases.
        group: Group,
        /// How they moved.
        effect: Effect,
        /// The factor the rule asks for.
        factor: f64,
    },
    /// The group did not move.
    Unchanged {
        /// Which cases.
        group: Group,
        /// How they moved.
        effect: Effect,
    },
    /// Latency slows more on large working sets than on cached ones.
    LatencyGrows {
        /// Slowdown on working sets in cache.
        in_cache: f64,
        /// Slowdown on working sets beyond the caches.
        beyond_cache: f64,
    },
    /// OTHER's fingerprint names a layer the base's does not.
    Layer {
        /// A hypervisor, a sandbox, WSL.
        kind: crate::probe::virt::LayerKind,
        /// `kvm`, `gvisor`, `wsl1` ...
        name: String,
    },
    /// A directory's file system, base and other.
    Filesystem {
        /// The directory's name in OTHER (`dir1`).
        dir: String,
        /// Its file system in the base.
        base: String,
        /// ... and in OTHER.
        other: String,
    },
    /// A method's assumption failed on a side (a cold read that was not cold).
    Assumption {
        /// Which.
        kind: AssumptionKind,
        /// The side's label.
        side: String,
        /// The cases.
        cases: Vec<String>,
    },
    /// OTHER runs under a CPU quota (CPUs' worth), the base under none or a larger one.
    CpuQuota {
        /// The base's quota.
        base: Option<f64>,
        /// OTHER's.
        other: f64,
    },
    /// Fewer CPUs usable in OTHER.
    UsableCpus {
        /// The base's.
        base: usize,
        /// OTHER's.
        other: usize,
    },
    /// The CPU models differ.
    CpuModel {
        /// The base's.
        base: String,
        /// OTHER's.
        other: String,
    },
    /// The largest clock frequencies differ.
    MaxMhz {
        /// The base's.
        base: f64,
        /// OTHER's.
        other: f64,
    },
    /// The CPU frequency policy differs: the highest frequency cpufreq
    /// allows (`scaling_max_freq`), boost, or the governor, the first of
    /// them that differs.
    FrequencyPolicy {
        /// What differs, in words: "highest frequency allowed", "boost",
        /// "governor".
        setting: String,
        /// The base's, in words ("3500 MHz", "on", "performance").
        base: String,
        /// OTHER's.
        other: String,
    },
    /// OTHER's instructions are translated, the base's are not.
    Emulated {
        /// The emulator: `qemu-user`, `QEMU TCG`.
        name: String,
        /// The CPU CPUID describes in OTHER, when known.
        cpu: Option<String>,
    },
    /// Seccomp filters run on each system call, base and other.
    Seccomp {
        /// The base's.
        base: u32,
        /// OTHER's.
        other: u32,
    },
    /// The I/O limit on the disk behind a directory, base and other.
    IoLimit {
        /// The directory's name.
        dir: String,
        /// The base's limit on that disk, if any.
        base: Option<crate::probe::cgroup_io::IoLimit>,
        /// OTHER's.
        other: crate::probe::cgroup_io::IoLimit,
    },
    /// The fastest durable transfer OTHER measured, against its write cap.
    NearCap {
        /// Bytes a second.
        rate_bytes_per_sec: f64,
        /// The cap, bytes a second.
        cap_bytes_per_sec: u64,
    },
    /// The memory bound (the lower of the limit and the high mark), bytes.
    MemoryLimit {
        /// The base's, if any.
        base: Option<u64>,
        /// OTHER's.
        other: u64,
    },
    /// The CPU weight as a share of the default (1: default), base and other.
    CpuWeight {
        /// The base's (1 where its fingerprint records none).
        base: f64,
        /// OTHER's.
        other: f64,
    },
    /// Other runnable tasks a CPU, mean over the repetitions of a side.
    Competitors {
        /// The base's.
        base: f64,
        /// OTHER's.
        other: f64,
    },
    /// Work on every CPU slower than one thread's: the slowdowns.
    ParallelFirst {
        /// One thread's slowdown.
        one_thread: f64,
        /// Every CPU's.
        every_cpu: f64,
    },
    /// CPUs the cpuset allows, base and other.
    Cpuset {
        /// The base's (its usable CPUs where it records no cpuset).
        base: usize,
        /// OTHER's.
        other: usize,
    },
    /// Steal time: the share of a side's computation's CPU time stolen.
    Steal {
        /// The base's.
        base: f64,
        /// OTHER's.
        other: f64,
    },
}

/// How much a sign weighs in a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Weight {
    /// Must hold for the mechanism to be named.
    Required,
    /// Counts towards the fit, held or not.
    Expected,
    /// Counts only when it holds.
    Supporting,
}

/// A clue, whether it holds, and its weight in the rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sign {
    /// What was looked at.
    #[serde(flatten)]
    pub clue: Clue,
    /// Whether it holds.
    pub holds: bool,
    /// Its weight.
    pub weight: Weight,
}

impl Sign {
    /// The same sign, counted as expected rather than required.
    pub(super) fn expected(self) -> Sign {
        Sign {
            weight: Weight::Expected,
            ..self
        }
    }

    /// The group the sign's clue reads, if it reads one.
    #[cfg(test)]
    pub(super) fn clue_group(&self) -> Option<&Group> {
        match &self.clue {
            Clue::Slower { group, .. }
            | Clue::Faster { group, .. }
            | Clue::Unchanged { group, .. } => Some(group),
            _ => None,
        }
    }

    pub(super) fn is_effect(&self) -> bool {
        matches!(
            self.clue,
            Clue::Slower { .. } | Clue::Faster { .. } | Clue::LatencyGrows { .. }
        )
    }
}

/// A mechanism that fits, with the signs checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Which.
    pub mechanism: Mechanism,
    /// Signs that hold.
    pub held: usize,
    /// Signs counted (every required and expected one, and the supporting
    /// ones that hold).
    pub counted: usize,
    /// Every sign checked, held or not, required first.
    pub signs: Vec<Sign>,
}

impl Finding {
    /// Share of the counted signs that hold.
    pub(crate) fn fit(&self) -> f64 {
        self.held as f64 / self.counted.max(1) as f64
    }
}

/// The diagnosis of one environment against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    /// The environment compared with the baseline.
    pub environment: String,
    /// Mechanisms that fit, most likely first; empty: no rule fits.
    pub findings: Vec<Finding>,
    /// Where no rule fits: the families whose headline metrics moved
    /// (judged faster or slower, or beyond [`super::WORTH_EXPLAINING`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<String>,
    /// Where no rule fits: the fields in which the fingerprints differ,
    /// those bearing on the families that moved first, at most
    /// [`super::differences::MOST_DIFFERENCES`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<crate::probe::diff::Difference>,
    /// How many fields differ in all (`differences` names the first).
    #[serde(skip_serializing_if = "is_zero")]
    pub differing: usize,
    /// Where no rule fits: the other runnable tasks per CPU around the
    /// base's repetitions and OTHER's, where OTHER's saw processes beside
    /// the run that the base's did not (telemetry, not the fingerprint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub competitors: Option<[f64; 2]>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
