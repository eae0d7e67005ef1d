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
}

/// Parses `/proc/meminfo` (values in kB, i.e. KiB).
pub fn parse_meminfo(text: &str) -> MemoryInfo {
    let kib = |key: &str| -> Option<u64> {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(key)?.strip_prefix(':')?;
            let n: u64 = rest.split_whitespace().next()?.parse().ok()?;
            Some(n * 1024)
        })
    };
    MemoryInfo {
        total_bytes: kib("MemTotal"),
        available_bytes: kib("MemAvailable"),
        swap_total_bytes: kib("SwapTotal"),
        swap_free_bytes: kib("SwapFree"),
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
    fn missing_fields_are_none() {
        let m = parse_meminfo("MemTotal: 100 kB\n");
        assert_eq!(m.total_bytes, Some(102400));
        assert_eq!(m.available_bytes, None);
    }
}
