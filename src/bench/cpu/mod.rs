//! The CPU family: LU/Linpack, sysbench-compatible primes, and
//! Dhrystone/Whetstone-style loops; plus the machine's peak FLOPS, which the
//! memory family needs for machine balance.

pub mod loops;
pub mod lu;
pub mod primes;

use super::{Bench, Family};
use crate::probe::Fingerprint;
use crate::results::{CaseResult, Derived, ResultFile};
use crate::units::Unit;

/// The family's name, the first part of its ids.
pub const NAME: &str = crate::results::ids::CPU;

/// The CPU family: its benches and the machine's peak FLOPS.
#[derive(Debug)]
pub struct Cpu;

impl Family for Cpu {
    fn name(&self) -> &'static str {
        NAME
    }

    fn benches(&self) -> &'static [&'static dyn Bench] {
        &[&lu::Lu, &primes::Primes, &loops::IntLoop, &loops::FloatLoop]
    }

    fn derive(&self, run: &ResultFile, _so_far: &[Derived]) -> Vec<Derived> {
        peak_gflops(&run.fingerprint, &run.cases)
            .into_iter()
            .collect()
    }
}

/// Double-precision FLOPs per cycle per core for the widest FMA the CPU
/// reports, assuming two FMA units per core (true of most desktop and server
/// cores since Haswell and Zen 2; some have one, which halves the real peak).
fn flops_per_cycle(flags: &[String]) -> Option<(f64, &'static str)> {
    let has = |f: &str| flags.iter().any(|g| g == f);
    Some(if has("avx512f") && has("fma") {
        (32.0, "AVX-512 FMA, 2 units")
    } else if has("avx2") && has("fma") {
        (16.0, "AVX2 FMA, 2 units")
    } else if has("avx") {
        (8.0, "AVX add + multiply")
    } else if has("asimd") {
        (8.0, "NEON FMA, 2 units")
    } else if has("sse2") {
        (4.0, "SSE2 add + multiply")
    } else {
        return None;
    })
}

/// Peak double-precision GFLOPS: from cores × frequency × FLOPs per cycle when
/// the fingerprint knows them, otherwise the best cpu.lu GFLOPS of the run.
/// The note says which.
pub(crate) fn peak_gflops(fp: &Fingerprint, cases: &[CaseResult]) -> Option<Derived> {
    let cpu = &fp.cpu;
    let cores = [
        cpu.cores,
        cpu.usable_cpus,
        Some(cpu.logical_cpus).filter(|&n| n > 0),
    ]
    .into_iter()
    .flatten()
    .min();
    let mhz = cpu.max_mhz.or(cpu.mhz);
    let quota = fp.cgroup.cpu_quota_cpus;
    if let (Some(cores), Some(mhz), Some((per_cycle, how))) =
        (cores, mhz, flops_per_cycle(&cpu.flags))
    {
        let cores = quota.map_or(cores as f64, |q| q.min(cores as f64));
        return Some(Derived {
            key: "cpu".into(),
            name: "peak_gflops".into(),
            unit: Unit::Gflops,
            value: cores * mhz / 1000.0 * per_cycle,
            note: format!("theoretical: {cores} core(s) x {mhz:.0} MHz x {per_cycle} FLOP/cycle ({how}) from the fingerprint"),
        });
    }
    let best = cases
        .iter()
        .filter(|c| c.bench == crate::results::ids::CPU_LU)
        .filter_map(|c| {
            c.metrics
                .iter()
                .find(|m| m.name == "gflops")?
                .summary
                .as_ref()
                .map(|s| (s.max, &c.key))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
    Some(Derived {
        key: "cpu".into(),
        name: "peak_gflops".into(),
        unit: Unit::Gflops,
        value: best.0,
        note: format!("measured: best cpu.lu GFLOPS ({}); the fingerprint lacks cores, frequency or ISA flags", best.1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::probe_fixture;
    use std::path::Path;

    #[test]
    fn peak_of_the_recorded_firecracker_guest() {
        let fp = probe_fixture(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/probe/firecracker"),
        );
        let d = peak_gflops(&fp, &[]).unwrap();
        // 2 cores x 2500 MHz x 32 FLOP/cycle (AVX-512 FMA)
        assert!((d.value - 160.0).abs() < 0.01, "{}", d.value);
        assert!(d.note.starts_with("theoretical"));
    }

    #[test]
    fn without_frequency_there_is_no_theoretical_peak_and_no_lu_case() {
        let mut fp = probe_fixture(Path::new("/nonexistent"));
        fp.cpu.flags = vec!["avx2".into(), "fma".into()];
        assert!(peak_gflops(&fp, &[]).is_none());
    }
}
