//! The environment fingerprint: what this machine, kernel, virtualisation
//! layer, cgroup, CPU, memory, clock and filesystems are.
//!
//! Every reader takes a [`Roots`], so the same code runs on the live system
//! and on recorded `/proc` and `/sys` trees under `tests/fixtures/probe/`.
//! A fingerprint is always produced: a missing fact is `None` plus a note,
//! never a crash and never a guess.

pub mod cgroup;
pub mod cgroup_io;
pub mod cpu;
pub mod cpu_times;
pub mod diff;
pub mod emulation;
pub mod memory;
pub mod net;
pub mod os;
pub(crate) mod process;
pub mod rlimit;
pub mod storage;
pub mod timer;
pub mod virt;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Notes about facts that could not be read.
pub type Notes = Vec<String>;

/// Where to read system files from: `/` for the live system, or a fixture
/// directory that mirrors `/proc`, `/sys` and `/etc`.
#[derive(Debug, Clone)]
pub struct Roots {
    /// Prefix put before every absolute path.
    pub root: PathBuf,
    /// Whether live-only sources (CPUID, statfs, environment variables,
    /// timer measurement) may be used.
    pub live: bool,
}

impl Roots {
    /// The running system.
    pub(crate) fn live() -> Roots {
        Roots {
            root: PathBuf::from("/"),
            live: true,
        }
    }

    /// A recorded tree; live-only sources are not consulted.
    pub fn fixture(dir: impl Into<PathBuf>) -> Roots {
        Roots {
            root: dir.into(),
            live: false,
        }
    }

    /// `abs` (an absolute path) below the root.
    pub(crate) fn path(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    /// The file's text, or None if it is absent, unreadable or not a
    /// regular file ([`read_regular`]).
    pub fn read(&self, abs: &str) -> Option<String> {
        read_regular(&self.path(abs)).ok()
    }

    /// Like [`Roots::read`], noting why a file could not be read.
    pub(crate) fn read_noted(&self, abs: &str, notes: &mut Notes) -> Option<String> {
        match read_regular(&self.path(abs)) {
            Ok(t) => Some(t),
            Err(e) => {
                notes.push(format!("cannot read {abs}: {e}"));
                None
            }
        }
    }

    /// Whether the path exists below the root.
    pub(crate) fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }

    /// A symbolic link's target, e.g. `pid:[4026531836]` for
    /// `/proc/self/ns/pid`. A fixture may store the target as the text of
    /// a small regular file instead (see tests/fixtures/probe/README.md).
    pub(crate) fn read_link(&self, abs: &str) -> Option<String> {
        let path = self.path(abs);
        match std::fs::read_link(&path) {
            Ok(target) => Some(target.to_string_lossy().into_owned()),
            Err(_) => read_regular(&path).ok().map(|t| t.trim().to_string()),
        }
    }

    /// What a system call answers: `live()` on the running system, else the
    /// fixture's recording of it, `CALLS_DIR/name` (e.g. `_calls/syslog`
    /// for syslog(2), `_calls/uname-r` for uname(2)'s release).
    pub(crate) fn call(&self, name: &str, live: impl FnOnce() -> Option<String>) -> Option<String> {
        if self.live {
            live()
        } else {
            self.read(&format!("{CALLS_DIR}/{name}"))
        }
    }
}

/// Most bytes of a file the probe reads: /proc/self/mountinfo with
/// thousands of mounts, or /proc/cpuinfo of hundreds of CPUs, is a few
/// megabytes; the rest is cut off.
pub const READ_CAP_BYTES: u64 = 16 << 20;

/// The text of `path` (invalid UTF-8 replaced), at most
/// [`READ_CAP_BYTES`] of it, when it is a regular file: a FIFO, socket or
/// device where a system file should be (`/run/.containerenv`,
/// `/etc/os-release`) would block the probe or never end, so it is opened
/// without blocking and refused.
///
/// # Errors
/// The file cannot be opened or read, or is not a regular file.
pub(crate) fn read_regular(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(std::io::Error::other(format!(
            "is a {}, not a regular file",
            kind_name(&kind)
        )));
    }
    let mut bytes = Vec::new();
    file.take(READ_CAP_BYTES).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a file type is, in words.
pub fn kind_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if t.is_file() {
        "regular file"
    } else if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symbolic link"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Where a fixture keeps what live probes get from system calls rather
/// than files (syslog(2), uname(2)); never read on the live system.
pub const CALLS_DIR: &str = "/_calls";

/// How envbench itself was built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// Crate version, e.g. `0.1.0`.
    pub version: String,
    /// Git commit of the source, if built from a checkout.
    pub git_commit: Option<String>,
    /// `release` or `debug`.
    pub profile: String,
    /// Optimisation level passed to rustc.
    pub opt_level: String,
    /// Target triple, e.g. `x86_64-unknown-linux-gnu`.
    pub target: String,
    /// CPU features the binary was compiled to use (beyond the target's baseline
    /// these decide SIMD code paths).
    pub target_features: Vec<String>,
}

impl BuildInfo {
    /// The running binary's build facts.
    pub(crate) fn current() -> BuildInfo {
        let mut features = Vec::new();
        macro_rules! feature {
            ($($f:literal),*) => { $( if cfg!(target_feature = $f) { features.push($f.to_string()); } )* };
        }
        feature!("sse2", "sse4.2", "avx", "avx2", "fma", "avx512f", "neon", "sve");
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: option_env!("ENVBENCH_GIT_COMMIT")
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .to_string(),
            opt_level: env!("ENVBENCH_OPT_LEVEL").to_string(),
            target: env!("ENVBENCH_TARGET").to_string(),
            target_features: features,
        }
    }
}

/// Everything envbench knows about the environment a run happened in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Kernel, distribution, architecture, host name.
    pub os: os::OsInfo,
    /// Virtualisation layers, outermost first.
    pub virtualization: virt::Virtualization,
    /// Limits of this process's cgroup.
    pub cgroup: cgroup::CgroupInfo,
    /// Processor.
    pub cpu: cpu::CpuInfo,
    /// Memory and swap.
    pub memory: memory::MemoryInfo,
    /// Clock source, resolution, read overhead.
    pub clock: timer::ClockInfo,
    /// One entry per target directory.
    pub dirs: Vec<storage::DirInfo>,
    /// Load averages when the probe ran.
    pub load_average: Option<os::LoadAverage>,
    /// What loopback traffic passes here: connection tracking, netfilter
    /// rules (absent from older files).
    #[serde(default)]
    pub netfilter: net::NetfilterInfo,
    /// How TCP sends here: its congestion control (absent from older
    /// files).
    #[serde(default)]
    pub tcp: net::TcpInfo,
    /// envbench's own build.
    pub build: BuildInfo,
    /// Facts that could not be read, and why.
    pub notes: Vec<String>,
}

/// The most CPUs a Linux kernel supports (`CONFIG_NR_CPUS` at its largest):
/// a count above it is not a machine's.
pub const MAX_CPUS: usize = 8192;

/// The largest cache a CPU has (1 TiB, far above any L3 or L4 made): a
/// bigger one is a wrapped or made-up number.
const MAX_CACHE_BYTES: u64 = 1 << 40;

impl Fingerprint {
    /// The first value no machine can have, naming its field, with why:
    /// a fingerprint from a file or from another environment is read by
    /// the plan, the report and the diagnosis, which would otherwise plan
    /// for -1 CPU or show a wrapped cache size.
    pub(crate) fn impossible(&self) -> Option<String> {
        let cpu = &self.cpu;
        let count = |field: &str, n: usize| {
            (n == 0 || n > MAX_CPUS).then(|| format!("{field} is {n}, not 1 to {MAX_CPUS}"))
        };
        let positive = |field: &str, v: f64, most: f64| {
            (!v.is_finite() || v <= 0.0 || v > most)
                .then(|| format!("{field} is {v}, not a number above 0 and at most {most}"))
        };
        // a VM's cpuinfo may say 0 MHz; below 0 is no reading
        let non_negative = |field: &str, v: f64| {
            (!v.is_finite() || v < 0.0)
                .then(|| format!("{field} is {v}, not a number of 0 or more"))
        };
        // an import that was not told the CPU count says 0: unknown
        (cpu.logical_cpus > MAX_CPUS)
            .then(|| {
                format!(
                    "cpu.logical_cpus is {}, more than {MAX_CPUS}",
                    cpu.logical_cpus
                )
            })
            .or_else(|| count("cpu.usable_cpus", cpu.usable_cpus?))
            .or_else(|| {
                let q = self.cgroup.cpu_quota_cpus?;
                positive("cgroup.cpu_quota_cpus", q, MAX_CPUS as f64)
            })
            .or_else(|| non_negative("cpu.mhz", cpu.mhz?))
            .or_else(|| non_negative("cpu.max_mhz", cpu.max_mhz?))
            .or_else(|| {
                cpu.caches.iter().enumerate().find_map(|(i, c)| {
                    (c.size_bytes == 0 || c.size_bytes > MAX_CACHE_BYTES).then(|| {
                        format!(
                            "cpu.caches[{i}].size_bytes is {}, not 1 to {MAX_CACHE_BYTES}",
                            c.size_bytes
                        )
                    })
                })
            })
            .or_else(|| non_negative("clock.resolution_ns", self.clock.resolution_ns?))
    }
}

/// Fills module count and speed from `dmidecode -t memory`, which needs
/// root and a DMI table (VMs and WSL often have none).
fn read_memory_modules(memory: &mut memory::MemoryInfo, notes: &mut Notes) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        notes.push("memory module speed unknown: dmidecode needs root".into());
        return;
    }
    let out = std::process::Command::new("dmidecode")
        .args(["-t", "memory"])
        .stderr(std::process::Stdio::null())
        .output();
    match out
        .ok()
        .and_then(|o| memory::parse_dmidecode_memory(&String::from_utf8_lossy(&o.stdout)))
    {
        Some((modules, mts)) => {
            memory.modules = Some(modules);
            memory.speed_mts = Some(mts);
        }
        None => notes
            .push("memory module speed unknown: dmidecode missing or no DMI memory table".into()),
    }
}

/// Number of CPUs in this process's affinity mask.
pub(crate) fn usable_cpus() -> Option<usize> {
    // SAFETY: `set` is a valid, zeroed cpu_set_t owned by this frame.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(libc::CPU_COUNT(&set) as usize).filter(|&n| n > 0)
    }
}

/// Builds the fingerprint from `roots` for the target `dirs`.
pub(crate) fn probe(roots: &Roots, dirs: &[PathBuf]) -> Fingerprint {
    let mut notes = Notes::new();
    let mounts = roots
        .read("/proc/self/mountinfo")
        .map(|t| storage::parse_mountinfo(&t).0)
        .unwrap_or_default();
    let mut clock = timer::probe_clock_source(roots, &mut notes);
    if roots.live {
        timer::measure_timer(&mut clock);
    }
    let mut memory = roots
        .read_noted("/proc/meminfo", &mut notes)
        .map(|t| memory::parse_meminfo(&t))
        .unwrap_or_default();
    memory::read_policy(roots, &mut memory);
    if roots.live {
        read_memory_modules(&mut memory, &mut notes);
    }
    let os = os::probe_os(roots, &mut notes);
    let virtualization = virt::detect(&virt::read_virt_inputs(roots));
    let cgroup = cgroup::probe_cgroup(roots, &mounts, &mut notes);
    let mut cpu = cpu::probe_cpu(
        roots,
        if roots.live { usable_cpus() } else { None },
        &mut notes,
    );
    if cpu.model.is_none() {
        // gVisor's cpuinfo names no model although the CPU is the host's.
        cpu.model_hidden_by = virtualization
            .layers
            .iter()
            .find(|l| l.kind == virt::LayerKind::Sandbox)
            .map(|l| l.name.clone());
    }
    Fingerprint {
        os,
        virtualization,
        cgroup,
        cpu,
        memory,
        clock,
        dirs: storage::probe_dirs(roots, dirs, &mut notes),
        load_average: roots
            .read("/proc/loadavg")
            .and_then(|t| os::parse_loadavg(&t))
            .map(|(averages, _)| averages),
        netfilter: net::probe_netfilter(roots, &mut notes),
        tcp: net::probe_tcp(roots),
        build: BuildInfo::current(),
        notes,
    }
}

/// The live fingerprint for `dirs`.
pub fn probe_live(dirs: &[PathBuf]) -> Fingerprint {
    probe(&Roots::live(), dirs)
}

/// Convenience for fixtures: probe the tree at `dir` with `/` as target.
pub fn probe_fixture(dir: &Path) -> Fingerprint {
    probe(&Roots::fixture(dir), &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO at `path`, which a plain read would wait on for a writer.
    fn fifo(path: &Path) {
        use std::os::unix::ffi::OsStrExt as _;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_fifo_where_a_system_file_should_be_is_refused_not_waited_on() {
        let tmp = tempfile::tempdir().unwrap();
        let roots = Roots::fixture(tmp.path());
        fifo(&roots.path("/etc/os-release"));
        fifo(&roots.path("/run/.containerenv"));
        std::fs::create_dir_all(roots.path("/proc")).unwrap();
        std::fs::write(roots.path("/proc/meminfo"), "MemTotal: 1024 kB\n").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let root = tmp.path().to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(probe(&Roots::fixture(root), &[]));
        });
        let fp = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the probe waited on a FIFO");
        assert_eq!(fp.memory.total_bytes, Some(1024 * 1024));
        let err = read_regular(&roots.path("/etc/os-release")).unwrap_err();
        assert!(err.to_string().contains("is a FIFO"), "{err}");
    }

    #[test]
    fn impossible_values_are_named_with_their_field() {
        let tmp = tempfile::tempdir().unwrap();
        let mut fp = probe(&Roots::fixture(tmp.path()), &[]);
        assert_eq!(fp.impossible(), None);
        fp.cgroup.cpu_quota_cpus = Some(-1.0);
        assert_eq!(
            fp.impossible().unwrap(),
            "cgroup.cpu_quota_cpus is -1, not a number above 0 and at most 8192"
        );
        fp.cgroup.cpu_quota_cpus = Some(0.5);
        fp.cpu.usable_cpus = Some(0);
        assert!(fp.impossible().unwrap().starts_with("cpu.usable_cpus is 0"));
        fp.cpu.usable_cpus = Some(2);
        fp.cpu.caches.push(cpu::Cache {
            level: 3,
            kind: "Unified".into(),
            size_bytes: 1 << 50,
            shared_cpu_list: None,
        });
        assert!(fp
            .impossible()
            .unwrap()
            .starts_with("cpu.caches[0].size_bytes"));
    }
}
