//! HPC Challenge's hpccoutf.txt → its summary section (`key=value`
//! between `Begin of Summary section.` and `End of Summary section.`):
//!
//! - `cpu.hpcc_hpl[n,nb,procs]`: GFLOPS (HPL_Tflops × 1000) and time, with
//!   HPL's scaled residual checked (< 16). The flop count is cpu.lu's, but
//!   HPL runs on P×Q MPI processes with its own blocking and BLAS, so the
//!   id is its own.
//! - `mem.hpcc_stream[mode=single|star,...]`: Triad, Copy, Scale, Add in
//!   MB/s (GB/s × 1000); HPCC sizes its arrays from the HPL matrix, so the
//!   id differs from mem.stream.
//! - `cpu.hpcc_dgemm`, `cpu.hpcc_fft` (GFLOPS), `mem.hpcc_random_access`
//!   (updates/s), `mem.hpcc_ptrans` (MB/s).
//!
//! Values of −1 mark tests HPCC did not run (latency and bandwidth tests
//! with one process) and are not imported.

use super::{Facts, Measure, ParseError, Parsed, Record};
use crate::units::Unit;
use std::collections::BTreeMap;

/// HPL's threshold on the scaled residual.
pub const HPL_RESIDUAL_LIMIT: f64 = 16.0;

/// `import --from hpcc`.
#[derive(Debug)]
pub struct Hpcc;

impl super::Importer for Hpcc {
    fn name(&self) -> &'static str {
        "hpcc"
    }

    fn about(&self) -> &'static str {
        "HPC Challenge hpccoutf.txt summary section."
    }

    fn looks_like(&self, text: &str) -> bool {
        text.contains("Begin of Summary section.") || text.contains("HPC Challenge Benchmark")
    }

    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        parse(text)
    }
}

/// Numbers by key with their line, texts by key, and whether the summary ended.
type Summary<'a> = (
    BTreeMap<&'a str, (f64, usize)>,
    BTreeMap<&'a str, &'a str>,
    bool,
);

/// The summary section's `key=value` lines: numbers with their line,
/// every value as text, and whether its end line was there.
///
/// # Errors
/// A line that is not `key=value`.
fn summary<'a>(lines: &[(usize, &'a str)]) -> Result<Summary<'a>, ParseError> {
    let mut kv: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    let mut texts: BTreeMap<&str, &str> = BTreeMap::new();
    for &(n, l) in lines {
        if l.trim() == "End of Summary section." {
            return Ok((kv, texts, true));
        }
        let Some((k, v)) = l.split_once('=') else {
            return Err(ParseError::at(
                n,
                format!("'{}' is not key=value", l.trim()),
            ));
        };
        texts.insert(k.trim(), v.trim());
        if let Some(x) = super::number(v) {
            kv.insert(k.trim(), (x, n));
        }
    }
    Ok((kv, texts, false))
}

/// HPCC's version and timer tick from the summary, the host name and
/// start time from the lines before it.
fn facts_of(head: &[(usize, &str)], kv: &BTreeMap<&str, (f64, usize)>) -> Facts {
    let get = |k: &str| kv.get(k).map(|v| v.0);
    let mut facts = Facts {
        tool: match (
            get("VersionMajor"),
            get("VersionMinor"),
            get("VersionMicro"),
        ) {
            (Some(a), Some(b), Some(c)) => Some(format!("hpcc {a}.{b}.{c}")),
            _ => Some("hpcc".into()),
        },
        clock_resolution_ns: get("MPI_Wtick").map(|t| t * 1e9),
        ..Facts::default()
    };
    for (_, l) in head {
        if let Some(h) = l.strip_prefix("Hostname: ") {
            facts.hostname = Some(h.trim().trim_matches('\'').to_string());
        } else if let Some(t) = l.strip_prefix("Current time (") {
            facts.started_unix = t.split(')').next().and_then(super::number);
        }
    }
    facts
}

/// HPL's record from the summary's keys: GFLOPS, time, and a failed
/// check where its scaled residual or Success says so.
///
/// # Errors
/// The summary lacks HPL_Tflops, HPL_N or HPL_NB.
fn hpl_record(
    kv: &BTreeMap<&str, (f64, usize)>,
    line: usize,
    procs: u64,
) -> Result<Record, ParseError> {
    let get = |k: &str| kv.get(k).map(|v| v.0);
    let (Some(tflops), Some(n), Some(nb)) = (get("HPL_Tflops"), get("HPL_N"), get("HPL_NB")) else {
        return Err(ParseError::at(
            line,
            "the summary has no HPL_Tflops, HPL_N and HPL_NB",
        ));
    };
    let mut hpl = Record::new("cpu.hpcc_hpl", kv["HPL_Tflops"].1);
    hpl.param("n", n as u64)
        .param("nb", nb as u64)
        .param("procs", procs);
    hpl.notes.push("HPL's flop count is cpu.lu's ((2/3)n^3 + 2n^2), but HPL distributes the matrix over MPI processes in NB blocks with its own BLAS: the methods differ, so the ids do".into());
    hpl.metrics
        .push(Measure::higher("gflops", Unit::Gflops, tflops * 1000.0));
    if let Some(t) = get("HPL_time") {
        hpl.metrics.push(Measure::lower("time", Unit::Seconds, t));
    }
    if let (Some(r), Some(eps), Some(a), Some(x), Some(b)) = (
        get("HPL_RnormI"),
        get("HPL_eps"),
        get("HPL_AnormI"),
        get("HPL_XnormI"),
        get("HPL_BnormI"),
    ) {
        let scaled = r / (eps * (a * x + b) * n);
        if scaled.is_nan() || scaled >= HPL_RESIDUAL_LIMIT {
            hpl.flag("failed_validation", format!("HPL's scaled residual {scaled:.3} is not below {HPL_RESIDUAL_LIMIT}: the solution is wrong, so its speed means nothing"));
        }
    }
    if get("Success") == Some(0.0) {
        hpl.flag(
            "failed_validation",
            "HPCC reports Success=0: one of its tests failed its check".into(),
        );
    }
    if !(n >= 1.0 && nb >= 1.0 && n.fract() == 0.0 && nb.fract() == 0.0) {
        hpl.flag(
            "impossible_value",
            format!("HPL_N = {n}, HPL_NB = {nb}: a matrix of no rows solves nothing (HPCC's input file names no problem size?)"),
        );
    }
    Ok(hpl)
}

/// Parses one hpccoutf.txt.
///
/// # Errors
/// No summary section, a value that is not a number, no HPL figures.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = super::numbered(text).collect();
    let begin = lines.iter().position(|(_, l)| l.trim() == "Begin of Summary section.").ok_or_else(|| {
        ParseError::at(0, "no 'Begin of Summary section.': not an hpccoutf.txt, or HPCC stopped before its summary")
    })?;
    let (kv, texts, ended) = summary(&lines[begin + 1..])?;
    let get = |k: &str| kv.get(k).map(|v| v.0);
    let facts = facts_of(&lines[..begin], &kv);
    let procs = get("CommWorldProcs").unwrap_or(1.0) as u64;
    let line = lines[begin].0;
    let mut records = Vec::new();
    records.push(hpl_record(&kv, line, procs)?);
    for mode in ["Single", "Star"] {
        let key = |k: &str| format!("{mode}STREAM_{k}");
        if let Some(triad) = get(&key("Triad")) {
            let mut r = Record::new("mem.hpcc_stream", kv[key("Triad").as_str()].1);
            r.param("mode", mode.to_lowercase()).param("procs", procs);
            if let Some(v) = get("STREAM_VectorSize") {
                r.param("array_elems", v as u64);
            }
            r.notes.push("HPCC sizes STREAM's arrays from the HPL matrix (often inside the caches), unlike mem.stream's 4x-the-cache rule: the ids differ".into());
            r.metrics.push(Measure::higher(
                "triad_rate",
                Unit::MegabytesPerSec,
                triad * 1000.0,
            ));
            for k in ["Copy", "Scale", "Add"] {
                if let Some(v) = get(&key(k)) {
                    r.metrics.push(Measure::higher(
                        &format!("{}_rate", k.to_lowercase()),
                        Unit::MegabytesPerSec,
                        v * 1000.0,
                    ));
                }
            }
            records.push(r);
        }
        for (bench, field, name, unit, scale) in [
            (
                "cpu.hpcc_dgemm",
                "DGEMM_Gflops",
                "gflops",
                Unit::Gflops,
                1.0,
            ),
            ("cpu.hpcc_fft", "FFT_Gflops", "gflops", Unit::Gflops, 1.0),
            (
                "mem.hpcc_random_access",
                "RandomAccess_GUPs",
                "updates_per_sec",
                Unit::OpsPerSec,
                1e9,
            ),
        ] {
            let f = format!("{mode}{field}");
            if let Some(v) = get(&f) {
                let mut r = Record::new(bench, kv[f.as_str()].1);
                r.param("mode", mode.to_lowercase()).param("procs", procs);
                r.metrics.push(Measure::higher(name, unit, v * scale));
                records.push(r);
            }
        }
    }
    if let Some(v) = get("PTRANS_GBs") {
        let mut r = Record::new("mem.hpcc_ptrans", kv["PTRANS_GBs"].1);
        r.param("procs", procs);
        if let Some(n) = get("PTRANS_n") {
            r.param("n", n as u64);
        }
        r.metrics
            .push(Measure::higher("rate", Unit::MegabytesPerSec, v * 1000.0));
        records.push(r);
    }
    if !ended {
        for r in &mut records {
            r.flag("missing_section", "no 'End of Summary section.': the file is cut short, and figures after the cut are absent".into());
        }
    }
    let mut notes = Vec::new();
    if let Some(lang) = texts.get("LANG") {
        notes.push(format!("hpcc compiled as {lang}"));
    }
    Ok(Parsed {
        records,
        facts,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_debian_hpcc_summary() {
        let p = parse(include_str!("../../tests/fixtures/import/hpccoutf.txt")).unwrap();
        let hpl = &p.records[0];
        assert_eq!(hpl.bench, "cpu.hpcc_hpl");
        assert_eq!(
            (
                hpl.params["n"].clone(),
                hpl.params["nb"].clone(),
                hpl.params["procs"].clone()
            ),
            (200.into(), 40.into(), 1.into())
        );
        assert!((hpl.metrics[0].value - 2.84008).abs() < 1e-9);
        assert_eq!(hpl.metrics[1].value, 0.00189901);
        assert!(hpl.flags.is_empty(), "{:?}", hpl.flags);
        let single = p
            .records
            .iter()
            .find(|r| r.bench == "mem.hpcc_stream" && r.params["mode"] == "single")
            .unwrap();
        assert!((single.metrics[0].value - 61442.4).abs() < 1e-6);
        assert_eq!(single.params["array_elems"], 13333);
        let ra = p
            .records
            .iter()
            .find(|r| r.bench == "mem.hpcc_random_access" && r.params["mode"] == "star")
            .unwrap();
        assert!((ra.metrics[0].value - 0.447687e9).abs() < 1.0);
        assert_eq!(p.facts.hostname.as_deref(), Some("vm"));
        assert_eq!(p.facts.clock_resolution_ns, Some(1.0));
        assert_eq!(p.facts.started_unix, Some(1795442891.0));
    }

    #[test]
    fn a_wrong_residual_and_a_cut_summary_are_flagged() {
        let text = include_str!("../../tests/fixtures/import/hpccoutf.txt")
            .replace("HPL_RnormI=3.62377e-13", "HPL_RnormI=3.62377e-8");
        let p = parse(&text).unwrap();
        assert_eq!(p.records[0].flags[0].kind, "failed_validation");
        let cut: String = include_str!("../../tests/fixtures/import/hpccoutf.txt")
            .lines()
            .take(480)
            .collect::<Vec<_>>()
            .join("\n");
        let p = parse(&cut).unwrap();
        assert!(p
            .records
            .iter()
            .all(|r| r.flags.iter().any(|f| f.kind == "missing_section")));
        let e = parse(include_str!("../../tests/fixtures/import/dd-c.txt")).unwrap_err();
        assert!(e.msg.contains("not an hpccoutf.txt"));
    }
}
