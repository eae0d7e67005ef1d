//! bench/pairs.sh's controlled pairs, each with what is known of it: the
//! effect its verdicts are scored against, the mechanism the diagnosis
//! should name first, and its side B.

use crate::compare::diagnose::Mechanism;

/// A controlled pair's known effect, which gives each case the verdict
/// it should get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// The same environment on both sides (`aa`): every case the same.
    Nothing,
    /// One CPU of two (`1cpu`, a quota or a cpuset of one): the parallel
    /// cases slower; the single-threaded compute, memory-latency and
    /// system-call cases the same.
    OneCpu,
    /// Every system call stopped in a tracer (`strace -f`): the os cases
    /// slower but the two without a known effect; user-space work the
    /// same.
    Traced,
    /// A layer that runs the same code on the same CPU (gVisor, a
    /// container; `compute`): the compute cases (cpu, mem) the same.
    Compute,
}

impl Known {
    /// The names `--expect` takes, with what each stands for.
    pub const NAMES: [(&'static str, Known); 4] = [
        ("aa", Known::Nothing),
        ("1cpu", Known::OneCpu),
        ("strace", Known::Traced),
        ("compute", Known::Compute),
    ];

    /// The known effect named `s`.
    ///
    /// # Errors
    /// A name not in [`Known::NAMES`].
    pub fn parse(s: &str) -> Result<Known, String> {
        Known::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<&str> = Known::NAMES.iter().map(|(n, _)| *n).collect();
                format!("{s:?} is none of {}", names.join(", "))
            })
    }

    /// The verdict the effect gives the case `key` of `family`: "slower",
    /// "same", or None where nothing is known (not scored).
    pub(super) fn expects(self, key: &str, family: &str) -> Option<&'static str> {
        let (bench, params) = split_key(key);
        let param = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let threads = param(crate::results::params::key::THREADS);
        let user = matches!(
            bench,
            "cpu.int" | "cpu.float" | "cpu.primes" | "mem.latency"
        );
        match self {
            Known::Nothing => Some("same"),
            Known::Compute => matches!(family, "cpu" | "mem").then_some("same"),
            Known::Traced => {
                // os.multiprog's processes compute on a handful of system
                // calls, and fork_cow with touched memory is dominated by
                // copying pages: no known effect of tracing on either
                if bench == "os.multiprog" || param("parent_memory") == Some("touched") {
                    None
                } else if bench.starts_with("os.") {
                    Some("slower")
                } else {
                    user.then_some("same")
                }
            }
            Known::OneCpu => {
                let split = matches!(bench, "cpu.lu" | "cpu.primes");
                if (split && threads == Some("2"))
                    || bench == "os.multiprog"
                    || (bench == "os.shell" && param("copies") == Some("8"))
                {
                    Some("slower")
                } else if (split && threads == Some("1"))
                    || matches!(
                        bench,
                        "cpu.int" | "cpu.float" | "mem.latency" | "os.syscall"
                    )
                {
                    Some("same")
                } else {
                    None
                }
            }
        }
    }
}

/// One of bench/pairs.sh's controlled pairs and what is known of it.
#[derive(Debug, PartialEq, Eq)]
pub struct Pair {
    /// Its name in bench/pairs.sh (`i` first: its sides interleaved).
    pub name: &'static str,
    /// The effect known to be there, which gives each case its verdict
    /// (None: the verdicts are not scored).
    pub known: Option<Known>,
    /// The mechanism the diagnosis should name first (None: nothing).
    pub first: Option<Mechanism>,
    /// Its side B, as bench/pairs.sh builds it (side A is this machine as
    /// it is, but in qemu, igvisoraa and ipodmanaa).
    pub side_b: &'static str,
}

impl Pair {
    /// The pair named `s`.
    ///
    /// # Errors
    /// A name not in [`PAIRS`].
    pub fn parse(s: &str) -> Result<&'static Pair, String> {
        PAIRS
            .iter()
            .find(|p| p.name == s)
            .ok_or_else(|| format!("{s:?} is no pair of bench/pairs.sh (envbench __score --pairs)"))
    }

    /// The mechanism to name first as compare's JSON names it (`none`:
    /// nothing).
    pub(super) fn first_name(&self) -> String {
        self.first.map_or("none".into(), |m| {
            serde_json::to_value(m)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .expect("invariant: a mechanism serialises as its name")
        })
    }
}

/// bench/pairs.sh's pairs in the order it runs them by default, each with
/// its known effect, the mechanism to name first and its side B; an
/// interleaved pair (`i`) is known as its separate one. A cgroup is a v1
/// group made for the pair, which only B's runs join.
pub const PAIRS: [Pair; 32] = {
    use Known::{Compute, Nothing, OneCpu, Traced};
    use Mechanism as M;
    const fn p(
        name: &'static str,
        known: Option<Known>,
        first: Option<Mechanism>,
        side_b: &'static str,
    ) -> Pair {
        Pair {
            name,
            known,
            first,
            side_b,
        }
    }
    // an interleaved pair's side B: its separate pair's, as the prefix of
    // `run --in A --in B=PREFIX`, one run measuring both round by round
    const IN_TURNS: &str = "its separate pair's B, in turns with A in one run";
    [
        p("aa", Some(Nothing), None, "plain again"),
        p(
            "namespaces",
            Some(Compute),
            None,
            "`unshare --pid --net --mount ...` (tests/layers/namespaces.sh)",
        ),
        p("bwrap", Some(Compute), None, "bubblewrap --unshare-all"),
        p(
            "container",
            Some(Compute),
            Some(M::SeccompFilter),
            "podman + runc, Debian minbase, default seccomp, scratch on a bind mount",
        ),
        p(
            "containeropen",
            Some(Compute),
            None,
            "the container with `--security-opt seccomp=unconfined`",
        ),
        p(
            "overlay",
            Some(Compute),
            Some(M::OverlayFilesystem),
            "the container, seccomp off, scratch on its overlay",
        ),
        // gVisor's mem.latency at 64 and 256 MiB is slower in fact
        // (docs/log/precision.md, 2026-12-06, midnight): its "false"
        // verdicts there are not
        p(
            "gvisor",
            Some(Compute),
            Some(M::SyscallInterception),
            "`runsc do` (ptrace platform)",
        ),
        p(
            "strace",
            Some(Traced),
            Some(M::SyscallInterception),
            "`strace -f`",
        ),
        p("1cpu", Some(OneCpu), Some(M::FewerCpus), "`taskset -c 0`"),
        p(
            "quota",
            Some(OneCpu),
            Some(M::CpuQuota),
            "a cgroup (v1 cpu, or v2) given one CPU's time a period",
        ),
        p(
            "bindfs",
            Some(Compute),
            Some(M::RemoteFilesystem),
            "a bindfs FUSE mount of A's directory",
        ),
        p(
            "qemu",
            None,
            Some(M::RemoteFilesystem),
            "a QEMU guest's 9p share, A its ext4 disk (compare --by-dir)",
        ),
        p(
            "qemuuser",
            None,
            Some(M::CpuEmulation),
            "`qemu-x86_64 envbench` (user-mode emulation)",
        ),
        p(
            "iaa",
            Some(Nothing),
            None,
            "plain again, in turns with A in one run",
        ),
        p("inamespaces", Some(Compute), None, IN_TURNS),
        p("ibwrap", Some(Compute), None, IN_TURNS),
        p(
            "igvisor",
            Some(Compute),
            Some(M::SyscallInterception),
            "gVisor, in turns (tests/layers/interleaved.sh)",
        ),
        p(
            "ipodman",
            Some(Compute),
            Some(M::SeccompFilter),
            "podman, in turns (tests/layers/interleaved-podman.sh)",
        ),
        p(
            "igvisoraa",
            Some(Nothing),
            None,
            "two gVisor sandboxes in one run: A/A inside the layer",
        ),
        p(
            "ipodmanaa",
            Some(Nothing),
            None,
            "two podman containers in one run: A/A inside the layer",
        ),
        p(
            "istrace",
            Some(Traced),
            Some(M::SyscallInterception),
            IN_TURNS,
        ),
        p("i1cpu", Some(OneCpu), Some(M::FewerCpus), IN_TURNS),
        p("iquota", Some(OneCpu), Some(M::CpuQuota), IN_TURNS),
        p(
            "throttle",
            None,
            Some(M::IoThrottle),
            "cgroup blkio.throttle, 50 MiB/s and 400 IOPS each way",
        ),
        p(
            "memlimit",
            None,
            Some(M::MemoryLimit),
            "cgroup memory.limit_in_bytes 64 MiB",
        ),
        p(
            "weight",
            None,
            Some(M::CpuWeight),
            "cgroup cpu.shares 102, a busy loop on CPU 1 beside both sides",
        ),
        p(
            "cpuset",
            Some(OneCpu),
            Some(M::FewerCpus),
            "cgroup cpuset.cpus 0",
        ),
        p(
            "busy",
            None,
            Some(M::Competitors),
            "one busy loop on CPU 1 during B's runs only",
        ),
        p("ithrottle", None, Some(M::IoThrottle), IN_TURNS),
        p("imemlimit", None, Some(M::MemoryLimit), IN_TURNS),
        p("iweight", None, Some(M::CpuWeight), IN_TURNS),
        p("icpuset", Some(OneCpu), Some(M::FewerCpus), IN_TURNS),
    ]
};

/// A case key's bench and its `name=value` parameters.
fn split_key(key: &str) -> (&str, Vec<(&str, &str)>) {
    let Some((bench, rest)) = key.split_once('[') else {
        return (key, Vec::new());
    };
    let params = rest
        .trim_end_matches(']')
        .split(',')
        .filter_map(|p| p.split_once('='))
        .collect();
    (bench, params)
}
