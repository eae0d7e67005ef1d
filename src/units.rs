//! Units and directions of metrics, and how values, sizes and durations read.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The unit of a metric; serialised as its symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Nanoseconds.
    #[serde(rename = "ns")]
    Nanoseconds,
    /// Microseconds.
    #[serde(rename = "us")]
    Microseconds,
    /// Milliseconds.
    #[serde(rename = "ms")]
    Milliseconds,
    /// Seconds.
    #[serde(rename = "s")]
    Seconds,
    /// Operations (calls, loops, events) per second.
    #[serde(rename = "ops/s")]
    OpsPerSec,
    /// 10⁶ bytes per second (STREAM's MB/s).
    #[serde(rename = "MB/s")]
    MegabytesPerSec,
    /// 2²⁰ bytes per second (sysbench's MiB/s).
    #[serde(rename = "MiB/s")]
    MebibytesPerSec,
    /// 10⁹ floating-point operations per second.
    #[serde(rename = "GFLOPS")]
    Gflops,
    /// Bytes.
    #[serde(rename = "bytes")]
    Bytes,
    /// A dimensionless ratio or fraction.
    #[serde(rename = "ratio")]
    Ratio,
    /// A count of events, processes, iterations.
    #[serde(rename = "count")]
    Count,
    /// Events per minute (UnixBench's shell scripts per minute).
    #[serde(rename = "per_min")]
    PerMinute,
}

impl Unit {
    /// Whether the unit is a rate, which a working measurement makes > 0.
    pub(crate) fn is_rate(self) -> bool {
        matches!(
            self,
            Unit::OpsPerSec
                | Unit::MegabytesPerSec
                | Unit::MebibytesPerSec
                | Unit::Gflops
                | Unit::PerMinute
        )
    }

    /// Whether the unit is a duration, which is never negative.
    pub(crate) fn is_time(self) -> bool {
        matches!(
            self,
            Unit::Nanoseconds | Unit::Microseconds | Unit::Milliseconds | Unit::Seconds
        )
    }

    /// The symbol used in tables and files.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "ns",
            Unit::Microseconds => "us",
            Unit::Milliseconds => "ms",
            Unit::Seconds => "s",
            Unit::OpsPerSec => "ops/s",
            Unit::MegabytesPerSec => "MB/s",
            Unit::MebibytesPerSec => "MiB/s",
            Unit::Gflops => "GFLOPS",
            Unit::Bytes => "bytes",
            Unit::Ratio => "ratio",
            Unit::Count => "count",
            Unit::PerMinute => "per_min",
        }
    }
}

/// Whether a larger value of a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Throughputs, rates.
    HigherIsBetter,
    /// Times, latencies, memory per process.
    LowerIsBetter,
}

/// Formats a value with 4 significant digits, switching to scientific
/// notation outside [1e-3, 1e9); a value no number holds (infinite, NaN)
/// as `-`, as a missing one, never `inf`.
pub(crate) fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e9).contains(&a) {
        return format!("{v:.3e}");
    }
    let digits = 3 - a.log10().floor() as i32;
    format!("{v:.prec$}", prec = digits.max(0) as usize)
}

/// What a repetition reports for one metric: its name, unit and
/// direction (declared by a bench, stored with every result).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSpec {
    /// snake_case name with no unit in it, e.g. `latency`, `calls_per_sec`.
    pub name: &'static str,
    /// Unit of every value.
    pub unit: Unit,
    /// Whether higher is better.
    pub direction: Direction,
}

/// Smallest size accepted for a file or a record: one page, the unit
/// O_DIRECT needs.
pub const MIN_SIZE_BYTES: u64 = 4096;

/// Parses `64M`, `1G`, `512K`, `4096` (suffixes K, M, G, T are powers of
/// 1024; `KiB`, `MB` and the like are read the same way): a whole number
/// of pages.
///
/// # Errors
/// A message saying what is wrong.
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    let shift = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("'{t}' is not a size: use e.g. 4096, 512K, 64M, 1G")),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{t}' is not a size: use e.g. 4096, 512K, 64M, 1G"))?;
    let bytes = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("'{t}' is too large"))?;
    if bytes < MIN_SIZE_BYTES || !bytes.is_multiple_of(MIN_SIZE_BYTES) {
        return Err(format!(
            "'{t}' is not a whole number of 4 KiB pages (O_DIRECT and the record sizes need them)"
        ));
    }
    Ok(bytes)
}

/// `16MiB`, `1GiB`, `64KiB`, `4096B`: the exact size in the largest unit
/// that divides it, for case keys.
pub(crate) fn size_label(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

/// `1.5 GiB`, `12.0 MiB`: a size for people.
pub(crate) fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        gib_text(bytes)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// `512 MiB`, `2 GiB`, `4 KiB`: a size in the largest binary unit that
/// divides it exactly (a limit as a person set it), else [`size_text`].
pub(crate) fn exact_size_text(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    if bytes < 1 << 10 {
        return format!("{bytes} B");
    }
    size_text(bytes)
}

/// `50 MiB/s`, `52.43 MB/s`: a byte rate as a limit was likely set (an
/// exact binary unit), else in MB/s (10⁶ bytes, the io family's unit).
pub(crate) fn byte_rate_text(bytes_per_sec: u64) -> String {
    if bytes_per_sec >= 1 << 10 && bytes_per_sec.is_multiple_of(1 << 10) {
        return format!("{}/s", exact_size_text(bytes_per_sec));
    }
    format!("{} MB/s", format_value(bytes_per_sec as f64 / 1e6))
}

/// `23.5 GiB`, `0.5 GiB`: bytes in GiB with one decimal, however few
/// (memory sizes, side by side).
pub(crate) fn gib_text(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// `1 m 05 s`, `12 s`.
pub(crate) fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{} m {:02} s", s / 60, s % 60)
    } else if d < Duration::from_millis(500) {
        "0 s".into()
    } else if s == 0 {
        "1 s".into()
    } else {
        format!("{s} s")
    }
}

/// `s` with every character but ASCII letters, digits, `-`, `_` and `.`
/// replaced by `_`: safe in a file name and a run id.
pub(crate) fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_as_they_were_set() {
        assert_eq!(exact_size_text(512 << 20), "512 MiB");
        assert_eq!(exact_size_text(3 << 30), "3 GiB");
        assert_eq!(exact_size_text(100), "100 B");
        assert_eq!(exact_size_text((1 << 20) + 1), "1.0 MiB");
        assert_eq!(byte_rate_text(52428800), "50 MiB/s");
        assert_eq!(byte_rate_text(50_000_000), "50.00 MB/s");
    }

    #[test]
    fn sizes_read_in_gib_from_one_gib_up() {
        assert_eq!(gib_text(25276502016), "23.5 GiB");
        assert_eq!(gib_text(0), "0.0 GiB");
        assert_eq!(size_text(3 << 29), "1.5 GiB");
        assert_eq!(size_text(12 << 20), "12.0 MiB");
    }

    #[test]
    fn formats_values_with_four_significant_digits() {
        assert_eq!(format_value(93.954), "93.95");
        assert_eq!(format_value(10643529.0), "10643529");
        assert_eq!(format_value(0.5), "0.5000");
        assert_eq!(format_value(1.5e12), "1.500e12");
    }

    #[test]
    fn units_serialise_as_symbols() {
        assert_eq!(
            serde_json::to_string(&Unit::MegabytesPerSec).unwrap(),
            "\"MB/s\""
        );
        assert_eq!(
            serde_json::to_string(&Direction::LowerIsBetter).unwrap(),
            "\"lower_is_better\""
        );
    }
}
