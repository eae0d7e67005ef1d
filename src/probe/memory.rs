//! Physical memory and swap from `/proc/meminfo`.

use serde::{Deserialize, Serialize};

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
    }
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
    fn missing_fields_are_none() {
        let m = parse_meminfo("MemTotal: 100 kB\n");
        assert_eq!(m.total_bytes, Some(102400));
        assert_eq!(m.available_bytes, None);
    }
}
