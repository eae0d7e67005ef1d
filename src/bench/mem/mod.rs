//! The memory family: STREAM bandwidth and dependent-load latency, plus the
//! derived machine balance and bandwidth efficiency.

pub mod latency;
pub mod pages;
pub mod stream;

use crate::results::{CaseResult, Derived};
use crate::units::Unit;

/// The best median Triad rate of the run, MB/s, and its case.
fn best_triad(cases: &[CaseResult]) -> Option<(f64, String)> {
    cases
        .iter()
        .filter(|c| c.bench == "mem.stream")
        .filter_map(|c| {
            let s = c
                .metrics
                .iter()
                .find(|m| m.name == "triad_rate")?
                .summary
                .as_ref()?;
            Some((s.median, c.key.clone()))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// Machine balance (peak FLOP per byte of Triad bandwidth) and efficiency
/// (Triad rate / theoretical bandwidth), when their inputs are known.
/// `peak` is the run's `peak_gflops`; `theoretical_gbs` comes from the user
/// or the memory's speed.
pub fn derive_balance(
    cases: &[CaseResult],
    peak: Option<&Derived>,
    theoretical: Option<(f64, String)>,
) -> Vec<Derived> {
    let Some((triad_mbs, key)) = best_triad(cases) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(p) = peak {
        out.push(Derived {
            key: "mem".into(),
            name: "machine_balance".into(),
            unit: Unit::Ratio,
            value: p.value * 1e9 / (triad_mbs * 1e6),
            note: format!(
                "peak FLOP/s per byte/s of Triad: {:.1} GFLOPS ({}) / {:.0} MB/s ({key})",
                p.value, p.note, triad_mbs
            ),
        });
    }
    if let Some((gbs, source)) = theoretical {
        out.push(Derived {
            key: "mem".into(),
            name: "bandwidth_efficiency".into(),
            unit: Unit::Ratio,
            value: triad_mbs / 1e3 / gbs,
            note: format!(
                "Triad {:.0} MB/s ({key}) / theoretical {gbs:.1} GB/s ({source})",
                triad_mbs
            ),
        });
    }
    out
}
