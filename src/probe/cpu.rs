//! CPU model, topology, ISA flags, caches, frequency policy (governor,
//! boost, highest frequency allowed), idle driver.

use super::{Notes, Roots};
use serde::{Deserialize, Serialize};

/// ISA flags worth reporting: they decide which kernels a BLAS or compiler
/// uses, so two environments that expose different flags on the same CPU
/// (a VM that masks AVX-512, say) can differ for that reason alone.
pub const FLAGS_OF_INTEREST: &[&str] = &[
    "sse2",
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "avx512f",
    "avx512dq",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "amx_tile",
    "aes",
    "sha_ni",
    "hypervisor",
    "constant_tsc",
    "nonstop_tsc",
    "asimd",
    "sve",
    "sve2",
];

/// The processor as this environment sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuInfo {
    /// `model name`, e.g. `AMD Ryzen 7 5700X 8-Core Processor`.
    pub model: Option<String>,
    /// The layer that hides the model when `model` is `None`, e.g. `gvisor`
    /// (its cpuinfo says `model name: unknown` over the host's real CPU).
    #[serde(default)]
    pub model_hidden_by: Option<String>,
    /// `vendor_id`, e.g. `GenuineIntel`, `AuthenticAMD`.
    pub vendor: Option<String>,
    /// Distinct `physical id`s.
    pub sockets: Option<usize>,
    /// Distinct (`physical id`, `core id`) pairs: physical cores.
    pub cores: Option<usize>,
    /// `processor` entries: logical CPUs the kernel has online.
    pub logical_cpus: usize,
    /// CPUs this process may run on (affinity mask), which a container or
    /// `taskset` can make smaller than `logical_cpus`.
    pub usable_cpus: Option<usize>,
    /// Those of [`FLAGS_OF_INTEREST`] that the CPU reports.
    pub flags: Vec<String>,
    /// Caches of CPU 0, from `/sys/devices/system/cpu/cpu0/cache`.
    pub caches: Vec<Cache>,
    /// `cpu MHz` of the first CPU at probe time (may be a fixed nominal value in a VM).
    pub mhz: Option<f64>,
    /// `cpuinfo_max_freq` in MHz, where cpufreq is exposed.
    pub max_mhz: Option<f64>,
    /// `scaling_governor`, e.g. `performance`, `powersave`, `schedutil`.
    pub governor: Option<String>,
    /// `scaling_max_freq` of CPU 0 in MHz: the highest frequency the
    /// policy allows, which `cpupower frequency-set -u` or a power profile
    /// may set below `max_mhz`; absent where cpufreq is not exposed (VMs,
    /// containers) and from older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling_max_mhz: Option<f64>,
    /// Whether boost (turbo) may raise the clock above its base: false
    /// where `intel_pstate/no_turbo` is 1 or `cpufreq/boost` is 0; absent
    /// where neither switch is exposed and from older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost: Option<bool>,
    /// cpuidle driver (`/sys/devices/system/cpu/cpuidle/current_driver`),
    /// e.g. `intel_idle` or `acpi_idle` natively, `haltpoll` in a KVM guest.
    /// With the governor below it sets what waking an idle CPU costs, which
    /// the cases that hand work between CPUs (`cpus=split`) measure.
    pub idle_driver: Option<String>,
    /// cpuidle governor, e.g. `menu`, `teo`, `haltpoll`.
    pub idle_governor: Option<String>,
    /// The CPU as the CPUID instruction describes it to envbench (the
    /// emulated one under an emulator, whose `/proc/cpuinfo` is the
    /// host's); what each worker checks it runs on. Absent from recorded
    /// trees and files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuid: Option<super::emulation::CpuId>,
}

impl CpuInfo {
    /// The CPUs this process may run on (its affinity mask), else every
    /// logical CPU; at least 1.
    pub(crate) fn usable(&self) -> usize {
        self.usable_cpus.unwrap_or(self.logical_cpus).max(1)
    }

    /// Size in bytes of the largest cache level (the last-level cache).
    #[cfg(test)]
    pub(crate) fn last_level_cache_bytes(&self) -> Option<u64> {
        llc_of(&self.caches)
    }
}

/// One cache of CPU 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    /// 1, 2, 3 ...
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// CPUs sharing it, e.g. `0-1`.
    pub shared_cpu_list: Option<String>,
}

/// What `/proc/cpuinfo` alone says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuinfoFacts {
    /// First `model name`.
    pub model: Option<String>,
    /// First `vendor_id`.
    pub vendor: Option<String>,
    /// Count of `processor` entries.
    pub logical: usize,
    /// Distinct physical ids, if the file lists them.
    pub sockets: Option<usize>,
    /// Distinct (physical id, core id) pairs, if listed.
    pub cores: Option<usize>,
    /// Every flag of the first CPU (`flags` on x86, `Features` on Arm).
    pub flags: Vec<String>,
    /// First `cpu MHz`.
    pub mhz: Option<f64>,
}

/// Parses `/proc/cpuinfo` (x86 and Arm layouts).
pub(crate) fn parse_cpuinfo(text: &str) -> CpuinfoFacts {
    let mut f = CpuinfoFacts::default();
    let mut sockets = std::collections::BTreeSet::new();
    let mut cores = std::collections::BTreeSet::new();
    let mut physical: Option<String> = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => f.logical += 1,
            "model name" if f.model.is_none() => f.model = Some(value.to_string()),
            "vendor_id" if f.vendor.is_none() => f.vendor = Some(value.to_string()),
            "cpu MHz" if f.mhz.is_none() => f.mhz = value.parse().ok(),
            "flags" | "Features" if f.flags.is_empty() => {
                f.flags = value.split_whitespace().map(str::to_string).collect()
            }
            "physical id" => {
                sockets.insert(value.to_string());
                physical = Some(value.to_string());
            }
            "core id" => {
                cores.insert((physical.clone().unwrap_or_default(), value.to_string()));
            }
            _ => {}
        }
    }
    f.sockets = (!sockets.is_empty()).then_some(sockets.len());
    f.cores = (!cores.is_empty()).then_some(cores.len());
    f
}

/// Parses a sysfs cache size such as `32K`, `36608K`, `1M`.
pub(crate) fn parse_cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 1024),
        'M' => (&t[..t.len() - 1], 1024 * 1024),
        'G' => (&t[..t.len() - 1], 1024 * 1024 * 1024),
        _ => (t, 1),
    };
    // a size that does not fit (`18014398509481984K`) is no size, not a
    // wrapped small one
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// What gVisor's `/proc/cpuinfo` gives as `model name` (and `stepping`):
/// not a model, so it is dropped and the hiding layer named instead.
pub const MODEL_PLACEHOLDER: &str = "unknown";

/// Reads the CPU facts below `roots`. `usable_cpus` comes from the live
/// affinity mask and is passed in (None for recorded fixtures).
pub(crate) fn probe_cpu(roots: &Roots, usable_cpus: Option<usize>, notes: &mut Notes) -> CpuInfo {
    let mut facts = roots
        .read_noted("/proc/cpuinfo", notes)
        .map(|t| parse_cpuinfo(&t))
        .unwrap_or_default();
    if facts.model.as_deref().map(str::trim) == Some(MODEL_PLACEHOLDER) {
        facts.model = None;
        notes.push(format!(
            "CPU model hidden: /proc/cpuinfo gives the placeholder model name \"{MODEL_PLACEHOLDER}\""
        ));
    } else if facts.model.is_none() {
        notes.push("CPU model not in /proc/cpuinfo (usual on Arm)".into());
    }
    let governor = read_governor(roots);
    if governor.is_none() {
        notes.push(
            "no cpufreq governor exposed (usual in VMs and containers): frequency scaling unknown"
                .into(),
        );
    }
    let cpuidle = "/sys/devices/system/cpu/cpuidle";
    let word = |p: &str| {
        roots
            .read(&format!("{cpuidle}/{p}"))
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && s != "none")
    };
    CpuInfo {
        model: facts.model,
        model_hidden_by: None,
        vendor: facts.vendor,
        sockets: facts.sockets,
        cores: facts.cores,
        logical_cpus: facts.logical,
        usable_cpus,
        flags: FLAGS_OF_INTEREST
            .iter()
            .filter(|f| facts.flags.iter().any(|g| g == *f))
            .map(|f| f.to_string())
            .collect(),
        caches: read_caches(roots),
        mhz: facts.mhz,
        max_mhz: read_mhz(roots, "cpuinfo_max_freq"),
        governor,
        scaling_max_mhz: read_mhz(roots, "scaling_max_freq"),
        boost: read_boost(roots).map(|b| b.on),
        idle_driver: word("current_driver"),
        // read-only where the kernel does not let the governor be switched
        idle_governor: word("current_governor_ro").or_else(|| word("current_governor")),
        cpuid: if roots.live {
            super::emulation::CpuId::here()
        } else {
            None
        },
    }
}

/// CPU 0's cpufreq directory.
const CPUFREQ: &str = "/sys/devices/system/cpu/cpu0/cpufreq";

/// CPU 0's `scaling_governor`, e.g. `performance`; None where cpufreq is
/// not exposed.
pub(crate) fn read_governor(roots: &Roots) -> Option<String> {
    roots
        .read(&format!("{CPUFREQ}/scaling_governor"))
        .map(|s| s.trim().to_string())
}

/// A frequency file of CPU 0's cpufreq (kHz) in MHz.
fn read_mhz(roots: &Roots, file: &str) -> Option<f64> {
    parse_khz_as_mhz(&roots.read(&format!("{CPUFREQ}/{file}"))?)
}

/// A cpufreq frequency file's text (kHz: `scaling_cur_freq`,
/// `cpuinfo_max_freq`) in MHz; None where it is no positive number.
pub(crate) fn parse_khz_as_mhz(text: &str) -> Option<f64> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|k| *k > 0.0)
        .map(|k| k / 1000.0)
}

/// Whether boost (turbo) is on, and which switch says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Boost {
    /// Boost may raise the clock above its base.
    pub(crate) on: bool,
    /// The switch is intel_pstate's `no_turbo` (else cpufreq's `boost`).
    pub(crate) intel_pstate: bool,
}

/// Boost as `intel_pstate/no_turbo` (1: off) and `cpufreq/boost` (0: off)
/// say; None where neither is exposed (most VMs).
pub(crate) fn read_boost(roots: &Roots) -> Option<Boost> {
    let word = |p: &str| roots.read(p).map(|s| s.trim().to_string());
    let no_turbo = word("/sys/devices/system/cpu/intel_pstate/no_turbo");
    let boost = word("/sys/devices/system/cpu/cpufreq/boost");
    if no_turbo.is_none() && boost.is_none() {
        return None;
    }
    Some(Boost {
        on: no_turbo.as_deref() != Some("1") && boost.as_deref() != Some("0"),
        intel_pstate: no_turbo.is_some(),
    })
}

/// Simultaneous multithreading as the kernel's switch says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Smt {
    /// `smt/control`: `on`, `off`, `forceoff`, `notsupported`,
    /// `notimplemented`.
    pub(crate) control: String,
    /// `smt/active` is 1: a core runs two threads.
    pub(crate) active: bool,
}

/// SMT's switch and state below `roots`; None where the kernel does not
/// expose its control.
pub(crate) fn read_smt(roots: &Roots) -> Option<Smt> {
    let word = |p: &str| roots.read(p).map(|s| s.trim().to_string());
    Some(Smt {
        control: word("/sys/devices/system/cpu/smt/control")?,
        active: word("/sys/devices/system/cpu/smt/active").as_deref() == Some("1"),
    })
}

/// The numbers of a list in the kernel's format (`0-2,5`: CPUs of a
/// cpuset or an affinity mask, NUMA nodes online), in order; None when
/// the text is not such a list. An empty text is an empty list.
pub(crate) fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let text = text.trim();
    if text.is_empty() {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    for part in text.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if b < a || b - a >= super::MAX_CPUS {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// The size in bytes of the largest cache level of `caches`.
fn llc_of(caches: &[Cache]) -> Option<u64> {
    caches.iter().max_by_key(|c| c.level).map(|c| c.size_bytes)
}

/// The last-level cache of this machine in bytes, read from sysfs as the
/// fingerprint reads it (for checks made while a case is prepared).
pub(crate) fn live_llc_bytes() -> Option<u64> {
    llc_of(&read_caches(&Roots::live()))
}

fn read_caches(roots: &Roots) -> Vec<Cache> {
    let base = "/sys/devices/system/cpu/cpu0/cache";
    let mut caches = Vec::new();
    for index in 0..16 {
        let dir = format!("{base}/index{index}");
        let Some(level) = roots.read(&format!("{dir}/level")) else {
            break;
        };
        let size = roots
            .read(&format!("{dir}/size"))
            .and_then(|s| parse_cache_size(&s));
        let (Ok(level), Some(size_bytes)) = (level.trim().parse(), size) else {
            continue;
        };
        caches.push(Cache {
            level,
            kind: roots
                .read(&format!("{dir}/type"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            size_bytes,
            shared_cpu_list: roots
                .read(&format!("{dir}/shared_cpu_list"))
                .map(|s| s.trim().to_string()),
        });
    }
    caches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpufreq_file_reads_in_mhz() {
        assert_eq!(parse_khz_as_mhz("3400000\n"), Some(3400.0));
        assert_eq!(parse_khz_as_mhz("0\n"), None);
        assert_eq!(parse_khz_as_mhz("n/a\n"), None);
    }

    #[test]
    fn counts_sockets_cores_and_threads() {
        let t = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 7 5700X 8-Core Processor\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu avx2 fma\n\n\
                 processor\t: 1\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 2\nphysical id\t: 0\ncore id\t\t: 1\n";
        let f = parse_cpuinfo(t);
        assert_eq!(f.logical, 3);
        assert_eq!(f.sockets, Some(1));
        assert_eq!(f.cores, Some(2));
        assert_eq!(
            f.model.as_deref(),
            Some("AMD Ryzen 7 5700X 8-Core Processor")
        );
        assert_eq!(f.flags, vec!["fpu", "avx2", "fma"]);
    }

    #[test]
    fn arm_cpuinfo_has_features_but_no_topology() {
        let t = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\n\nprocessor\t: 1\n";
        let f = parse_cpuinfo(t);
        assert_eq!(f.logical, 2);
        assert_eq!(f.cores, None);
        assert!(f.flags.contains(&"sve".to_string()));
    }

    #[test]
    fn reads_lists_as_the_kernel_writes_them() {
        assert_eq!(parse_cpu_list("0-2,5\n"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list("3"), Some(vec![3]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("2-1"), None);
        assert_eq!(parse_cpu_list("0-99999999"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn boost_is_off_where_either_switch_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let roots = Roots::fixture(tmp.path());
        assert_eq!(read_boost(&roots), None);
        let put = |p: &str, t: &str| {
            let f = roots.path(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        };
        put("/sys/devices/system/cpu/cpufreq/boost", "1\n");
        assert_eq!(
            read_boost(&roots),
            Some(Boost {
                on: true,
                intel_pstate: false
            })
        );
        put("/sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
        assert_eq!(read_boost(&roots).map(|b| b.on), Some(false));
    }

    #[test]
    fn parses_cache_sizes() {
        assert_eq!(parse_cache_size("32K\n"), Some(32 * 1024));
        assert_eq!(parse_cache_size("36608K"), Some(36608 * 1024));
        assert_eq!(parse_cache_size("18014398509481984K"), None);
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("x"), None);
    }
}
