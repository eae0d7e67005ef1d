//! The clock every interval is measured with: the real monotonic clock, or a
//! fake one for tests that advances a fixed step per read, so repetition
//! counts, budgets and wall-clock-jump detection are exact and instant.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Fake wall clock's origin: 2023-11-14T22:13:20Z.
const FAKE_WALL_ORIGIN_SECS: f64 = 1_700_000_000.0;

/// Monotonic time for intervals, and wall time to check it against.
#[derive(Debug)]
pub enum Clock {
    /// `CLOCK_MONOTONIC` via `Instant`, and the system wall clock.
    Real {
        /// Instant that `now()` counts from.
        origin: Instant,
    },
    /// Advances `step` per `now()` call.
    Fake(FakeClock),
}

/// Deterministic clock for tests.
#[derive(Debug)]
pub struct FakeClock {
    reads: AtomicU64,
    step: Duration,
    /// After this many `now()` reads the wall clock jumps by `jump_secs`.
    jump_after_reads: u64,
    jump_secs: f64,
}

impl Clock {
    /// The real clocks.
    pub(crate) fn real() -> Clock {
        Clock::Real {
            origin: Instant::now(),
        }
    }

    /// A fake clock advancing `step` per read, with a steady wall clock.
    pub(crate) fn fake(step: Duration) -> Clock {
        Clock::fake_with_wall_jump(step, u64::MAX, 0.0)
    }

    /// A fake clock whose wall time jumps by `jump_secs` once `after_reads`
    /// monotonic reads have happened (seed 000's WSL 2 time-zone jump).
    pub(crate) fn fake_with_wall_jump(step: Duration, after_reads: u64, jump_secs: f64) -> Clock {
        Clock::Fake(FakeClock {
            reads: AtomicU64::new(0),
            step,
            jump_after_reads: after_reads,
            jump_secs,
        })
    }

    /// Whether this is the fake clock.
    pub(crate) fn is_fake(&self) -> bool {
        matches!(self, Clock::Fake(_))
    }

    /// Monotonic time since the clock was made.
    pub fn now(&self) -> Duration {
        match self {
            Clock::Real { origin } => origin.elapsed(),
            Clock::Fake(f) => {
                let n = f.reads.fetch_add(1, Ordering::SeqCst) + 1;
                f.step.saturating_mul(n.min(u64::from(u32::MAX)) as u32)
            }
        }
    }

    /// Moves a fake clock on to at least `t` (what another process's fake
    /// clock counted for work done meanwhile); the real clock moves by itself.
    pub(crate) fn catch_up(&self, t: Duration) {
        if let Clock::Fake(f) = self {
            let step = f.step.as_nanos().max(1);
            let reads = t.as_nanos().div_ceil(step).min(u128::from(u64::MAX)) as u64;
            f.reads.fetch_max(reads, Ordering::SeqCst);
        }
    }

    /// What one read of this clock costs now: the median gap between 64
    /// consecutive reads ([`crate::probe::timer::read_gaps_ns`]). Zero for
    /// the fake clock, whose reads cost nothing real. 30 ns natively on
    /// this project's VM; under gVisor's ptrace platform 12-48 us, and 30
    /// ns again for a while within the same process, so it is measured
    /// where it is needed, not once (at most 3 ms there, 2 us natively).
    pub(crate) fn read_overhead(&self) -> Duration {
        match self {
            Clock::Real { .. } => {
                let gaps = crate::probe::timer::read_gaps_ns(64);
                Duration::from_nanos(gaps[gaps.len() / 2] as u64)
            }
            Clock::Fake(_) => Duration::ZERO,
        }
    }

    /// Wall-clock seconds since the Unix epoch (does not advance a fake clock).
    pub(crate) fn wall_secs(&self) -> f64 {
        match self {
            Clock::Real { .. } => crate::timestamp::wall_now_secs(),
            Clock::Fake(f) => {
                let n = f.reads.load(Ordering::SeqCst);
                let jump = if n >= f.jump_after_reads {
                    f.jump_secs
                } else {
                    0.0
                };
                FAKE_WALL_ORIGIN_SECS + (f.step.as_secs_f64() * n as f64) + jump
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_advances_one_step_per_read() {
        let c = Clock::fake(Duration::from_millis(10));
        assert_eq!(c.now(), Duration::from_millis(10));
        assert_eq!(c.now(), Duration::from_millis(20));
    }

    #[test]
    fn fake_wall_clock_tracks_monotonic_until_the_jump() {
        let c = Clock::fake_with_wall_jump(Duration::from_secs(1), 2, -10800.0);
        let w0 = c.wall_secs();
        c.now();
        assert_eq!(c.wall_secs() - w0, 1.0);
        c.now();
        assert_eq!(c.wall_secs() - w0, 2.0 - 10800.0);
    }

    #[test]
    fn a_fake_clock_catches_up_with_work_done_elsewhere() {
        let c = Clock::fake(Duration::from_millis(10));
        c.catch_up(Duration::from_millis(95));
        assert_eq!(c.now(), Duration::from_millis(110));
        c.catch_up(Duration::from_millis(20));
        assert_eq!(c.now(), Duration::from_millis(120));
    }

    #[test]
    fn real_clock_is_monotonic() {
        let c = Clock::real();
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
    }
}
