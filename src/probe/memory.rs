//! Physical memory and swap from `/proc/meminfo` (and its dirty pages,
//! for telemetry); a process's mappings from `/proc/PID/smaps` and
//! `smaps_rollup`; the transparent huge page mode and the NUMA nodes from
//! sysfs. Each file's text is parsed here alone.

use super::Roots;
use serde::{Deserialize, Serialize};

/// Where the kernel says whether transparent huge pages are available.
pub(crate) const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// The NUMA nodes online, in the kernel's list format (`0`, `0-1`).
const NODES_ONLINE: &str = "/sys/devices/system/node/online";

/// Memory and swap in bytes, as the kernel of this environment sees them
/// (inside WSL 2 or a VM: the guest's share, not the host's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryInfo {
    /// `MemTotal`, bytes.
    pub total_bytes: Option<u64>,
    /// `MemAvailable` at probe time, bytes: what can be allocated without swapping.
    pub available_bytes: Option<u64>,
    /// `SwapTotal`, bytes.
    pub swap_total_bytes: Option<u64>,
    /// `SwapFree`, bytes.
    pub swap_free_bytes: Option<u64>,
    /// Populated memory modules, from `dmidecode -t memory` (root only).
    #[serde(default)]
    pub modules: Option<u32>,
    /// Configured speed of the modules, MT/s, from `dmidecode` (root only).
    #[serde(default)]
    pub speed_mts: Option<u32>,
    /// Transparent huge pages: `always`, `madvise` or `never` (the
    /// bracketed word of /sys/kernel/mm/transparent_hugepage/enabled);
    /// absent without THP (WSL 1, gVisor) and from older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thp: Option<String>,
    /// NUMA nodes online (/sys/devices/system/node/online): memory on
    /// another node is slower to reach; absent where sysfs does not say
    /// and from older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<usize>,
}

impl MemoryInfo {
    /// Theoretical bandwidth in GB/s (10⁹ B/s) from `dmidecode`'s modules
    /// and speed, assuming one 64-bit channel per module; None when unknown.
    pub(crate) fn theoretical_bandwidth_gbs(&self) -> Option<f64> {
        Some(f64::from(self.modules?) * f64::from(self.speed_mts?) * 8.0 / 1e3)
    }
}

/// Populated modules and their (lowest) configured speed in MT/s from
/// `dmidecode -t memory` output.
pub(crate) fn parse_dmidecode_memory(text: &str) -> Option<(u32, u32)> {
    let mut modules = 0;
    let mut speed: Option<u32> = None;
    for block in text.split("Memory Device").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                l.trim()
                    .strip_prefix(key)?
                    .strip_prefix(':')
                    .map(|v| v.trim().to_string())
            })
        };
        let Some(size) = field("Size") else { continue };
        if size.starts_with("No Module") || size == "Unknown" {
            continue;
        }
        modules += 1;
        let s = field("Configured Memory Speed")
            .or_else(|| field("Configured Clock Speed"))
            .or_else(|| field("Speed"));
        if let Some(mts) = s.and_then(|v| v.split_whitespace().next()?.parse::<u32>().ok()) {
            speed = Some(speed.map_or(mts, |old: u32| old.min(mts)));
        }
    }
    Some((modules, speed?)).filter(|(m, _)| *m > 0)
}

/// Bytes of a `KEY:   123 kB` line (the kB of `/proc` are KiB), or None
/// when the line is another key's.
pub(crate) fn kib_line_bytes(line: &str, key: &str) -> Option<u64> {
    let rest = line.strip_prefix(key)?.strip_prefix(':')?;
    let n: u64 = rest.split_whitespace().next()?.parse().ok()?;
    Some(n * 1024)
}

/// Parses `/proc/meminfo` (values in kB, i.e. KiB).
pub(crate) fn parse_meminfo(text: &str) -> MemoryInfo {
    let kib = |key: &str| text.lines().find_map(|l| kib_line_bytes(l, key));
    MemoryInfo {
        total_bytes: kib("MemTotal"),
        available_bytes: kib("MemAvailable"),
        swap_total_bytes: kib("SwapTotal"),
        swap_free_bytes: kib("SwapFree"),
        modules: None,
        speed_mts: None,
        thp: None,
        numa_nodes: None,
    }
}

/// `Dirty:` and `Writeback:` of `/proc/meminfo`, KiB.
pub(crate) fn parse_meminfo_dirty(text: &str) -> (Option<u64>, Option<u64>) {
    let kib = |key: &str| {
        text.lines()
            .find_map(|l| kib_line_bytes(l, key))
            .map(|b| b / 1024)
    };
    (kib("Dirty"), kib("Writeback"))
}

/// The value in bytes of `field` (a `kB` line such as `AnonHugePages:`)
/// of the mapping that starts at `start` in an smaps text.
pub(crate) fn parse_smaps_field(text: &str, start: usize, field: &str) -> Option<u64> {
    let mut inside = false;
    for line in text.lines() {
        // a mapping's header: `7f0000000000-7f0000400000 rw-p ...`
        let first = line.split_whitespace().next().unwrap_or("");
        let from = first.split_once('-').filter(|_| !first.ends_with(':'));
        if let Some(addr) = from.and_then(|(f, _)| usize::from_str_radix(f, 16).ok()) {
            inside = addr == start;
            continue;
        }
        if inside {
            if let Some(bytes) = kib_line_bytes(line, field) {
                return Some(bytes);
            }
        }
    }
    None
}

/// Proportional set size in bytes from a `/proc/PID/smaps_rollup` text:
/// the process's private pages plus its share of pages it shares (a page
/// shared by 4 processes counts a quarter). Page tables and kernel
/// structures are not in it.
pub(crate) fn parse_pss_bytes(smaps_rollup: &str) -> Option<u64> {
    smaps_rollup.lines().find_map(|l| kib_line_bytes(l, "Pss"))
}

/// The word in brackets of a sysfs choice file, the one in use: `madvise`
/// of `always [madvise] never`, `mq-deadline` of `none [mq-deadline] bfq`.
pub(crate) fn bracketed(text: &str) -> Option<&str> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    Some(&text[start..start + len])
}

/// The transparent huge page mode below `roots`, e.g. `madvise`.
pub(crate) fn read_thp(roots: &Roots) -> Option<String> {
    bracketed(&roots.read(THP_ENABLED)?).map(str::to_string)
}

/// `vm.swappiness` below `roots`, as the kernel writes it (`60`).
pub(crate) fn read_swappiness(roots: &Roots) -> Option<String> {
    roots
        .read("/proc/sys/vm/swappiness")
        .map(|s| s.trim().to_string())
}

/// The THP mode and the NUMA nodes below `roots`, into `memory`.
pub(crate) fn read_policy(roots: &Roots, memory: &mut MemoryInfo) {
    memory.thp = read_thp(roots);
    memory.numa_nodes = roots
        .read(NODES_ONLINE)
        .and_then(|t| super::cpu::parse_cpu_list(&t))
        .map(|nodes| nodes.len())
        .filter(|&n| n > 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meminfo_fields_in_bytes() {
        let t = "MemTotal:       24684096 kB\nMemFree:        23000000 kB\nMemAvailable:   24000000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n";
        let m = parse_meminfo(t);
        assert_eq!(m.total_bytes, Some(24684096 * 1024));
        assert_eq!(m.available_bytes, Some(24000000 * 1024));
        assert_eq!(m.swap_total_bytes, Some(0));
    }

    #[test]
    fn parses_meminfo_s_dirty_and_writeback_in_kib() {
        let mi = "MemTotal: 100 kB\nDirty:             1234 kB\nWriteback:           0 kB\n";
        assert_eq!(parse_meminfo_dirty(mi), (Some(1234), Some(0)));
        assert_eq!(parse_meminfo_dirty("MemTotal: 100 kB\n"), (None, None));
    }

    const SMAPS: &str = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0 
Size:               4096 kB
AnonHugePages:      2048 kB
7f0000400000-7f0000600000 rw-p 00000000 00:00 0 
Size:               2048 kB
AnonHugePages:         0 kB
";

    #[test]
    fn reads_anon_huge_pages_of_one_mapping() {
        let f = |start| parse_smaps_field(SMAPS, start, "AnonHugePages");
        assert_eq!(f(0x7f00_0000_0000), Some(2 << 20));
        assert_eq!(f(0x7f00_0040_0000), Some(0));
        assert_eq!(f(0x1000), None);
    }

    #[test]
    fn reads_pss_from_a_recorded_smaps_rollup() {
        let text = include_str!("../../tests/fixtures/proc/smaps_rollup");
        // recorded on this project's EPYC guest: `Pss: 282 kB`, before Pss_Anon etc.
        assert_eq!(parse_pss_bytes(text), Some(282 * 1024));
        assert_eq!(parse_pss_bytes("Rss: 10 kB\nPss_Anon: 5 kB\n"), None);
    }

    #[test]
    fn parses_dmidecode_modules_and_speed() {
        let t = "Handle 0x0040, DMI type 17, 92 bytes\nMemory Device\n\tSize: 16 GB\n\tSpeed: 3200 MT/s\n\tConfigured Memory Speed: 3200 MT/s\n\n\
                 Handle 0x0041, DMI type 17, 92 bytes\nMemory Device\n\tSize: No Module Installed\n\tSpeed: Unknown\n\n\
                 Handle 0x0042, DMI type 17, 92 bytes\nMemory Device\n\tSize: 16 GB\n\tConfigured Memory Speed: 2933 MT/s\n";
        assert_eq!(parse_dmidecode_memory(t), Some((2, 2933)));
        let m = MemoryInfo {
            modules: Some(2),
            speed_mts: Some(3200),
            ..MemoryInfo::default()
        };
        assert_eq!(m.theoretical_bandwidth_gbs(), Some(51.2));
        assert_eq!(
            parse_dmidecode_memory("# dmidecode 3.4\nNo SMBIOS nor DMI entry point found\n"),
            None
        );
    }

    #[test]
    fn reads_the_word_in_brackets() {
        assert_eq!(bracketed("always [madvise] never\n"), Some("madvise"));
        assert_eq!(bracketed("[never]"), Some("never"));
        assert_eq!(
            bracketed("none [mq-deadline] kyber bfq \n"),
            Some("mq-deadline")
        );
        assert_eq!(bracketed("always"), None);
    }

    #[test]
    fn missing_fields_are_none() {
        let m = parse_meminfo("MemTotal: 100 kB\n");
        assert_eq!(m.total_bytes, Some(102400));
        assert_eq!(m.available_bytes, None);
    }
}
