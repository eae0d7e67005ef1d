//! A control group's I/O controls: per-device bandwidth and IOPS limits
//! (v2 `io.max`, v1 `blkio.throttle.*_device`) and its I/O weight (v2
//! `io.weight`, v1 `blkio.bfq.weight` or `blkio.weight`).
//!
//! A cloud volume's provisioned IOPS and bandwidth, `docker run
//! --device-write-bps` and systemd's `IOWriteBandwidthMax=` are such
//! limits: direct and synced I/O slows toward the cap while buffered I/O,
//! which lands in the page cache, does not (the kernel's
//! Documentation/admin-guide/cgroup-v2.rst, "IO Interface Files").

use super::Roots;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// v1 "unlimited" memory is a page-aligned `i64::MAX`; anything from 2⁶² up
/// is treated as no limit.
const V1_UNLIMITED_FLOOR: u64 = 1 << 62;

/// Parses a limit file (`max`, a number, or v1's near-`i64::MAX`).
pub(crate) fn parse_limit(text: &str) -> Option<u64> {
    let t = text.trim();
    if t == "max" || t == "-1" {
        return None;
    }
    t.parse::<u64>().ok().filter(|&v| v < V1_UNLIMITED_FLOOR)
}

/// The I/O limits on one block device; `None` where that direction and
/// measure is unlimited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoLimit {
    /// The device, `major:minor`, e.g. `254:0`.
    pub device: String,
    /// Its kernel name from `/sys/dev/block`, e.g. `vda`, `nvme0n1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Reads, bytes a second (`rbps`, `read_bps_device`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bps: Option<u64>,
    /// Writes, bytes a second (`wbps`, `write_bps_device`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bps: Option<u64>,
    /// Read operations a second (`riops`, `read_iops_device`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iops: Option<u64>,
    /// Write operations a second (`wiops`, `write_iops_device`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops: Option<u64>,
}

impl IoLimit {
    /// The device by name where known, else by number.
    pub(crate) fn device_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.device)
    }

    /// Whether reads are limited (bandwidth or operations).
    pub(crate) fn limits_reads(&self) -> bool {
        self.read_bps.is_some() || self.read_iops.is_some()
    }

    /// Whether writes are limited (bandwidth or operations).
    pub(crate) fn limits_writes(&self) -> bool {
        self.write_bps.is_some() || self.write_iops.is_some()
    }

    /// The tighter of each field of `self` and `other`.
    pub(crate) fn tighten(&mut self, other: &IoLimit) {
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        self.read_bps = min(self.read_bps, other.read_bps);
        self.write_bps = min(self.write_bps, other.write_bps);
        self.read_iops = min(self.read_iops, other.read_iops);
        self.write_iops = min(self.write_iops, other.write_iops);
    }
}

/// Parses v2 `io.max`: one line per limited device,
/// `254:0 rbps=52428800 wbps=max riops=max wiops=400`.
pub(crate) fn parse_io_max(text: &str) -> Vec<IoLimit> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let device = words.next().filter(|d| is_device(d))?;
            let mut limit = IoLimit {
                device: device.to_string(),
                ..IoLimit::default()
            };
            for (key, value) in words.filter_map(|w| w.split_once('=')) {
                let v = parse_limit(value);
                match key {
                    "rbps" => limit.read_bps = v,
                    "wbps" => limit.write_bps = v,
                    "riops" => limit.read_iops = v,
                    "wiops" => limit.write_iops = v,
                    _ => {}
                }
            }
            Some(limit)
        })
        .collect()
}

/// Parses one v1 `blkio.throttle.*_device` file: `254:0 52428800` per
/// line; the devices and their values.
pub(crate) fn parse_throttle(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|line| {
            let (device, value) = line.trim().split_once(char::is_whitespace)?;
            is_device(device).then_some(())?;
            Some((device.to_string(), parse_limit(value)?))
        })
        .collect()
}

/// Parses a weight file: v2 `io.weight` and v1 `blkio.bfq.weight` give
/// `default 100` (then per-device overrides), v1 `blkio.weight` a number.
pub(crate) fn parse_weight(text: &str) -> Option<u64> {
    let first = text.lines().next()?.trim();
    first
        .strip_prefix("default ")
        .unwrap_or(first)
        .trim()
        .parse()
        .ok()
}

/// `major:minor`.
fn is_device(word: &str) -> bool {
    word.split_once(':').is_some_and(|(a, b)| {
        !a.is_empty() && !b.is_empty() && (a.chars().chain(b.chars())).all(|c| c.is_ascii_digit())
    })
}

/// The limits in one group's directory `dir`.
pub(crate) fn limits_in(roots: &Roots, dir: &str, v1: bool) -> Vec<IoLimit> {
    if !v1 {
        return roots
            .read(&format!("{dir}/io.max"))
            .map(|t| parse_io_max(&t))
            .unwrap_or_default();
    }
    let mut by_device: BTreeMap<String, IoLimit> = BTreeMap::new();
    for (file, set) in [
        (
            "read_bps_device",
            (|l, v| l.read_bps = Some(v)) as fn(&mut IoLimit, u64),
        ),
        ("write_bps_device", |l, v| l.write_bps = Some(v)),
        ("read_iops_device", |l, v| l.read_iops = Some(v)),
        ("write_iops_device", |l, v| l.write_iops = Some(v)),
    ] {
        let text = roots.read(&format!("{dir}/blkio.throttle.{file}"));
        for (device, value) in parse_throttle(text.as_deref().unwrap_or("")) {
            let limit = by_device.entry(device.clone()).or_insert_with(|| IoLimit {
                device,
                ..IoLimit::default()
            });
            set(limit, value);
        }
    }
    by_device.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_io_max_with_unlimited_fields() {
        let l = parse_io_max("254:0 rbps=52428800 wbps=max riops=max wiops=400\nbad line\n");
        assert_eq!(
            l,
            vec![IoLimit {
                device: "254:0".into(),
                read_bps: Some(52428800),
                write_iops: Some(400),
                ..IoLimit::default()
            }]
        );
        assert!(l[0].limits_reads() && l[0].limits_writes());
        assert!(parse_io_max("").is_empty());
    }

    #[test]
    fn parses_v1_throttle_lines() {
        assert_eq!(
            parse_throttle("254:0 52428800\n8:16 1048576\n"),
            vec![("254:0".into(), 52428800), ("8:16".into(), 1048576)]
        );
        assert!(parse_throttle("garbage\nx:y 5\n").is_empty());
    }

    #[test]
    fn parses_weights_of_either_form() {
        assert_eq!(parse_weight("default 100\n254:0 50\n"), Some(100));
        assert_eq!(parse_weight("500\n"), Some(500));
        assert_eq!(parse_weight(""), None);
    }

    #[test]
    fn the_tighter_limit_of_two_groups_wins_per_field() {
        let mut a = IoLimit {
            device: "8:0".into(),
            write_bps: Some(100),
            ..IoLimit::default()
        };
        a.tighten(&IoLimit {
            device: "8:0".into(),
            write_bps: Some(50),
            read_iops: Some(10),
            ..IoLimit::default()
        });
        assert_eq!(
            (a.write_bps, a.read_iops, a.read_bps),
            (Some(50), Some(10), None)
        );
    }
}
