//! The memory family: STREAM bandwidth and dependent-load latency, plus the
//! derived machine balance and bandwidth efficiency.

pub mod latency;
pub mod stream;

use super::{Bench, Family, FamilyOption};
use crate::results::{CaseResult, Derived, ResultFile};
use crate::units::Unit;
use serde_json::Value;

/// The family's name, the first part of its ids.
pub const NAME: &str = crate::results::ids::MEM;

/// `--stream-elems`'s key in the plan's options.
pub const STREAM_ELEMS: &str = "stream_elems";
/// `--mem-bandwidth`'s key, as the result file's config has always named it.
const MEM_BANDWIDTH: &str = "mem_bandwidth_gbs";

/// The memory family: its benches, STREAM's array size and the theoretical
/// bandwidth as options, machine balance and efficiency as derived figures.
#[derive(Debug)]
pub struct Mem;

impl Family for Mem {
    fn name(&self) -> &'static str {
        NAME
    }

    fn benches(&self) -> &'static [&'static dyn Bench] {
        &[&stream::Stream, &latency::Latency]
    }

    fn options(&self) -> Vec<FamilyOption> {
        vec![
            FamilyOption {
                long: "mem-bandwidth",
                key: MEM_BANDWIDTH,
                value_name: "GB/S",
                help: "Theoretical memory bandwidth in GB/s (channels x MT/s x 8 bytes), for \
                       STREAM's efficiency; as root envbench reads it from dmidecode.",
                parse: parse_bandwidth,
            },
            FamilyOption {
                long: "stream-elems",
                key: STREAM_ELEMS,
                value_name: "N",
                help: "Elements per STREAM array (8 bytes each, three arrays). [default: \
                       16777216 in quick, 67108864 in standard and full: 4x a 32 MiB or a 128 MiB \
                       last-level cache] A case whose arrays are under 4x the cache gets a note \
                       saying which size meets STREAM's rule.",
                parse: parse_stream_elems,
            },
        ]
    }

    fn derive(&self, run: &ResultFile, so_far: &[Derived]) -> Vec<Derived> {
        let peak = so_far.iter().find(|d| d.name == "peak_gflops");
        let theoretical = match (
            run.config.options.f64(MEM_BANDWIDTH),
            run.fingerprint.memory.theoretical_bandwidth_gbs(),
        ) {
            (Some(g), _) => Some((g, "given with --mem-bandwidth".to_string())),
            (None, Some(g)) => Some((
                g,
                "dmidecode: modules x MT/s x 8 B, one channel per module assumed".to_string(),
            )),
            (None, None) => None,
        };
        derive_balance(&run.cases, peak, theoretical)
    }
}

fn parse_bandwidth(s: &str) -> Result<Value, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Value::from(v)),
        _ => Err(format!("'{s}' is not a positive bandwidth in GB/s")),
    }
}

fn parse_stream_elems(s: &str) -> Result<Value, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1000 => Ok(Value::from(n)),
        _ => Err(format!(
            "'{s}' is not a whole number of elements, at least 1000"
        )),
    }
}

/// The best median Triad rate among `cases`, MB/s, and its case: the
/// memory bandwidth other families hold their figures against.
pub(crate) fn best_triad<'a>(
    cases: impl IntoIterator<Item = &'a CaseResult>,
) -> Option<(f64, String)> {
    let stream = stream::Stream.id();
    cases
        .into_iter()
        .filter(|c| c.bench == stream)
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
pub(crate) fn derive_balance(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_must_be_a_positive_number_of_gbs() {
        assert!(parse_bandwidth("0").unwrap_err().contains("GB/s"));
        assert_eq!(parse_bandwidth("51.2"), Ok(Value::from(51.2)));
    }

    #[test]
    fn stream_elems_must_be_a_whole_number_of_at_least_1000() {
        assert_eq!(parse_stream_elems("16777216"), Ok(Value::from(1 << 24)));
        assert!(parse_stream_elems("999").is_err());
        assert!(parse_stream_elems("1e6").is_err());
    }
}
