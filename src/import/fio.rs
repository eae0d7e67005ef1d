//! fio `--output-format=json` (and `json+`, whose extra latency bins are
//! ignored) → `io.fio`, one case per job (or per group with
//! `group_reporting`, which fio prints as one job): per direction that
//! moved data, bandwidth (MiB/s), IOPS and completion latency mean and
//! percentiles (µs). The case key holds the job name and the options
//! that shape the I/O (rw, bs, iodepth, numjobs, ioengine, size, direct).

use super::{Facts, Measure, ParseError, Parsed, Record};
use crate::units::Unit;
use serde_json::Value;

/// Job options that enter the case key.
const KEY_OPTIONS: [&str; 7] = [
    "rw", "bs", "iodepth", "numjobs", "ioengine", "size", "direct",
];

/// Percentiles kept, as fio names them.
const PERCENTILES: [(&str, &str); 3] = [
    ("50.000000", "p50"),
    ("95.000000", "p95"),
    ("99.000000", "p99"),
];

/// `import --from fio`.
#[derive(Debug)]
pub struct Fio;

impl super::Importer for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }

    fn about(&self) -> &'static str {
        "fio --output-format=json or json+."
    }

    fn looks_like(&self, text: &str) -> bool {
        text.trim_start().starts_with('{') && text.contains("\"fio version\"")
    }

    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        parse(text)
    }
}

/// Parses one fio JSON output; text fio printed before the JSON (warnings)
/// is skipped.
///
/// # Errors
/// Not JSON, no `jobs` array, a job without its name or numbers.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let start = text
        .find('{')
        .ok_or_else(|| ParseError::at(0, "no JSON object: not fio --output-format=json output"))?;
    let skipped_lines = text[..start].matches('\n').count();
    let root: Value = serde_json::from_str(&text[start..]).map_err(|e| {
        ParseError::at(
            e.line() + skipped_lines,
            format!("not valid JSON ({e}): truncated or not fio's json output?"),
        )
    })?;
    let line_of = |needle: &str| {
        text.find(needle)
            .map_or(0, |p| text[..p].matches('\n').count() + 1)
    };
    let jobs = root
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| ParseError::at(0, "no \"jobs\" array: not fio's json output"))?;
    let mut facts = Facts {
        tool: root
            .get("fio version")
            .and_then(Value::as_str)
            .map(str::to_string),
        started_unix: root.get("timestamp").and_then(Value::as_f64),
        ..Facts::default()
    };
    if facts.tool.is_none() {
        return Err(ParseError::at(
            0,
            "no \"fio version\" field: not fio's json output",
        ));
    }
    facts.hostname = root
        .get("hostname")
        .and_then(Value::as_str)
        .map(str::to_string);
    let global = root.get("global options");
    let mut records: Vec<Record> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let name = job
            .get("jobname")
            .and_then(Value::as_str)
            .ok_or_else(|| ParseError::at(0, format!("jobs[{i}] has no \"jobname\"")))?;
        let mut rec = Record::new("io.fio", line_of(&format!("\"jobname\" : \"{name}\"")));
        rec.param("job", name);
        let same = records
            .iter()
            .filter(|r| r.params.get("job").and_then(Value::as_str) == Some(name))
            .count();
        if same > 0 {
            // numjobs without group_reporting: parallel clones, not repetitions
            rec.param("clone", same as u64);
        }
        for k in KEY_OPTIONS {
            let v = job
                .get("job options")
                .and_then(|o| o.get(k))
                .or_else(|| global.and_then(|g| g.get(k)));
            if let Some(v) = v.and_then(Value::as_str) {
                rec.param(k, v);
            }
        }
        let random = rec
            .params
            .get("rw")
            .and_then(Value::as_str)
            .is_some_and(|rw| rw.starts_with("rand"));
        for dir in ["read", "write", "trim"] {
            direction(job, dir, random, &mut rec)
                .map_err(|m| ParseError::at(rec.line, format!("job '{name}' {dir}: {m}")))?;
        }
        if rec.metrics.is_empty() {
            rec.flag(
                "missing_section",
                format!("job '{name}' moved no data in any direction"),
            );
        }
        if let Some(err) = job.get("error").and_then(Value::as_i64).filter(|e| *e != 0) {
            rec.flag("tool_error", format!("fio reports error {err} (an errno) for job '{name}': its figures are not a completed measurement"));
        }
        records.push(rec);
    }
    if records.is_empty() {
        return Err(ParseError::at(0, "the \"jobs\" array is empty"));
    }
    Ok(Parsed {
        records,
        facts,
        notes: Vec::new(),
    })
}

/// The figures of one direction, if it moved data.
fn direction(job: &Value, dir: &str, random: bool, rec: &mut Record) -> Result<(), String> {
    let Some(d) = job.get(dir) else { return Ok(()) };
    let num = |v: Option<&Value>, what: &str| {
        v.and_then(Value::as_f64)
            .ok_or_else(|| format!("no number \"{what}\""))
    };
    if num(d.get("io_bytes"), "io_bytes")? <= 0.0 {
        return Ok(());
    }
    let bw = num(d.get("bw_bytes"), "bw_bytes")
        .or_else(|_| num(d.get("bw"), "bw").map(|kib| kib * 1024.0))?;
    let iops = num(d.get("iops"), "iops")?;
    let (bw_m, iops_m) = (
        Measure::higher(&format!("{dir}_bw"), Unit::MebibytesPerSec, bw / 1048576.0),
        Measure::higher(&format!("{dir}_iops"), Unit::OpsPerSec, iops),
    );
    // random I/O is judged by IOPS, sequential by bandwidth
    if random {
        rec.metrics.extend([iops_m, bw_m]);
    } else {
        rec.metrics.extend([bw_m, iops_m]);
    }
    let clat = d.get("clat_ns").or_else(|| d.get("clat"));
    let scale = if d.get("clat_ns").is_some() {
        1e-3
    } else {
        1.0
    };
    if let Some(c) = clat {
        rec.metrics.push(Measure::lower(
            &format!("{dir}_clat_mean"),
            Unit::Microseconds,
            num(c.get("mean"), "clat mean")? * scale,
        ));
        for (key, p) in PERCENTILES {
            if let Some(v) = c
                .get("percentile")
                .and_then(|p| p.get(key))
                .and_then(Value::as_f64)
            {
                rec.metrics.push(Measure::lower(
                    &format!("{dir}_clat_{p}"),
                    Unit::Microseconds,
                    v * scale,
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_randrw_job() {
        let p = parse(include_str!("../../tests/fixtures/import/fio-randrw.json")).unwrap();
        let r = &p.records[0];
        assert_eq!(r.params["job"], "randrw");
        assert_eq!(r.params["bs"], "4k");
        assert_eq!(r.metrics[0].name, "read_iops");
        assert_eq!(r.value("read_iops").unwrap(), 16000.0);
        assert_eq!(r.value("read_bw").unwrap(), 65536000.0 / 1048576.0);
        assert_eq!(r.value("read_clat_p95").unwrap(), 71.168);
        assert!((r.value("read_clat_mean").unwrap() - 56.793586694).abs() < 1e-9);
        assert!(r.metrics.iter().any(|m| m.name == "write_clat_p99"));
        assert_eq!(p.facts.tool.as_deref(), Some("fio-3.33"));
        assert_eq!(p.facts.started_unix, Some(1795442865.0));
    }

    #[test]
    fn reads_json_plus_with_two_jobs() {
        let p = parse(include_str!(
            "../../tests/fixtures/import/fio-seq-jsonplus.json"
        ))
        .unwrap();
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.records[0].params["job"], "seqwrite");
        assert_eq!(p.records[0].metrics[0].name, "write_bw");
        assert_eq!(p.records[1].metrics[0].name, "read_bw");
        assert!(p.records[1]
            .metrics
            .iter()
            .all(|m| !m.name.starts_with("write")));
    }

    #[test]
    fn truncated_json_names_its_line() {
        let full = include_str!("../../tests/fixtures/import/fio-randrw.json");
        let cut: String = full.lines().take(40).collect::<Vec<_>>().join("\n");
        let e = parse(&cut).unwrap_err();
        assert!(e.msg.contains("not valid JSON"), "{e:?}");
        assert!(e.line >= 40, "{e:?}");
        assert!(parse("{\"a\": 1}").unwrap_err().msg.contains("jobs"));
    }
}
