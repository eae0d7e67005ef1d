//! What benchmarks and the validity guardrails both stand on: the clock
//! every interval is timed with ([`clock`]) and memory whose page size is
//! asked for rather than left to luck ([`pages`]). Kept below both, so
//! that the canary (in `validity`) times and allocates exactly as the
//! benchmarks do without importing them.

pub mod clock;
pub mod pages;
