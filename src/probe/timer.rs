//! Clock source, timer resolution and the cost of reading the clock.
//!
//! Seed 000's IOzone rates of 1.05×10¹² kB/s came from intervals below the
//! timer's resolution; knowing the resolution and overhead lets the runner
//! flag such intervals instead of publishing them.

use super::{Notes, Roots};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Pairs of back-to-back clock reads used to measure overhead and resolution.
const TIMER_PROBE_READS: usize = 20_000;

/// Facts about the clock every interval is measured with (CLOCK_MONOTONIC).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockInfo {
    /// Kernel clock source, e.g. `tsc`, `hyperv_clocksource_tsc_page`, `kvm-clock`, `arch_sys_counter`.
    pub source: Option<String>,
    /// Clock sources the kernel could use.
    pub available_sources: Vec<String>,
    /// `clock_getres(CLOCK_MONOTONIC)`, nanoseconds (what the kernel claims).
    pub resolution_ns: Option<f64>,
    /// Smallest non-zero step seen between two back-to-back reads, nanoseconds.
    pub measured_resolution_ns: Option<f64>,
    /// Median cost of one clock read, nanoseconds (a VM without a usable TSC
    /// makes this hundreds of ns, a trap for short intervals).
    pub read_overhead_ns: Option<f64>,
}

/// Reads the clock-source names below `roots`; the live part (resolution,
/// overhead) is added by [`measure_timer`].
pub(crate) fn probe_clock_source(roots: &Roots, notes: &mut Notes) -> ClockInfo {
    let base = "/sys/devices/system/clocksource/clocksource0";
    let source = roots
        .read(&format!("{base}/current_clocksource"))
        .map(|s| s.trim().to_string());
    if source.is_none() {
        notes.push(format!(
            "cannot read {base}/current_clocksource (WSL 1 has none)"
        ));
    }
    ClockInfo {
        source,
        available_sources: roots
            .read(&format!("{base}/available_clocksource"))
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        ..ClockInfo::default()
    }
}

/// Measures the live timer: claimed resolution, smallest observed step and
/// median read overhead. Takes a few milliseconds.
pub(crate) fn measure_timer(info: &mut ClockInfo) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    if unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) } == 0 {
        info.resolution_ns = Some(ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64);
    }
    let deltas = read_gaps_ns(TIMER_PROBE_READS);
    info.read_overhead_ns = Some(deltas[deltas.len() / 2]);
    info.measured_resolution_ns = deltas.iter().copied().find(|&d| d > 0.0);
}

/// The gaps between `reads` back-to-back reads of the monotonic clock,
/// nanoseconds, sorted: the median is what one read costs, the smallest
/// non-zero one the resolution seen.
pub(crate) fn read_gaps_ns(reads: usize) -> Vec<f64> {
    let mut deltas = Vec::with_capacity(reads.max(1));
    let mut prev = Instant::now();
    for _ in 0..reads.max(1) {
        let now = Instant::now();
        deltas.push(now.duration_since(prev).as_nanos() as f64);
        prev = now;
    }
    deltas.sort_by(f64::total_cmp);
    deltas
}
