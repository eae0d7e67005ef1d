//! sysbench 1.0 output → one record per run.
//!
//! - `cpu` → `cpu.primes`, envbench's reimplementation of the same test
//!   (same trial division, same events/s, latency and fairness figures).
//! - `memory` → `mem.sysbench_memory`, `threads` → `os.sysbench_threads`,
//!   `mutex` → `os.sysbench_mutex`, `fileio` → `io.sysbench_fileio`: no
//!   envbench bench has their method, so their ids are their own.
//!
//! The test is known from its sections (CPU speed, a memory transfer line,
//! File operations); threads and mutex print the same sections, so a
//! mutex run is told by its one event per thread (sysbench's mutex test
//! runs exactly one event in each thread); the case notes say so.
//! Parameters come from the header (`Number of threads`, `Prime numbers
//! limit` ...) where it was kept; without it the thread count is
//! total events / events per thread and the rest stays unknown.

use super::{after, number, numbered, Measure, ParseError, Parsed, Record};
use crate::results::ids;
use crate::units::Unit;
use serde_json::Value;
use std::collections::BTreeMap;

/// Every `key: value` figure of the output, by section, with its line.
struct Figures {
    /// `(section, key)` → (value text, line).
    values: BTreeMap<(String, String), (String, usize)>,
    /// Lines of the header before `Threads started!` or the first section.
    header: Vec<(usize, String)>,
    /// Line of `Threads started!` or the first result section.
    first_section: Option<usize>,
}

/// Headings of result sections; what comes before them is the header.
const RESULT_SECTIONS: [&str; 5] = [
    "CPU speed:",
    "File operations:",
    "General statistics:",
    "Total operations:",
    "Throughput:",
];

fn collect(text: &str) -> Figures {
    let mut f = Figures {
        values: BTreeMap::new(),
        header: Vec::new(),
        first_section: None,
    };
    let mut section = String::new();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        let results = RESULT_SECTIONS.iter().any(|s| t.starts_with(s));
        if results || t == "Threads started!" {
            f.first_section.get_or_insert(n);
        }
        if !indented && t.ends_with(':') {
            section = t.trim_end_matches(':').to_string();
            continue;
        }
        if f.first_section.is_none() {
            f.header.push((n, t.to_string()));
        }
        if let Some((k, v)) = t.split_once(':') {
            f.values
                .entry((section.clone(), k.trim().to_string()))
                .or_insert((v.trim().to_string(), n));
        }
    }
    f
}

impl Figures {
    fn get(&self, section: &str, key: &str) -> Option<&(String, usize)> {
        self.values.get(&(section.to_string(), key.to_string()))
    }

    /// A required number, `unit` suffix stripped (`60.0030s`).
    fn num(&self, section: &str, key: &str) -> Result<Option<f64>, ParseError> {
        let Some((v, n)) = self.get(section, key) else {
            return Ok(None);
        };
        let t = v.trim_end_matches('s');
        number(t)
            .map(Some)
            .ok_or_else(|| ParseError::at(*n, format!("{section}: {key}: '{v}' is not a number")))
    }

    /// `avg/stddev` pairs.
    fn pair(&self, section: &str, key: &str) -> Result<Option<(f64, f64)>, ParseError> {
        let Some((v, n)) = self.get(section, key) else {
            return Ok(None);
        };
        let bad = || ParseError::at(*n, format!("{section}: {key}: '{v}' is not avg/stddev"));
        let (a, s) = v.split_once('/').ok_or_else(bad)?;
        Ok(Some((
            number(a).ok_or_else(bad)?,
            number(s).ok_or_else(bad)?,
        )))
    }

    fn header_value(&self, key: &str) -> Option<&str> {
        self.header.iter().find_map(|(_, l)| after(l, key))
    }
}

/// `import --from sysbench`.
#[derive(Debug)]
pub struct Sysbench;

impl super::Importer for Sysbench {
    fn name(&self) -> &'static str {
        "sysbench"
    }

    fn about(&self) -> &'static str {
        "sysbench 1.0 cpu (-> cpu.primes), memory, threads, mutex, fileio."
    }

    fn looks_like(&self, text: &str) -> bool {
        text.contains("Threads fairness:") || text.contains("General statistics:")
    }

    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        parse(text)
    }
}

/// Parses one sysbench 1.0 output.
///
/// # Errors
/// No `General statistics` section (not sysbench, or cut short), a figure
/// that is not a number.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let f = collect(text);
    let Some(total_time) = f.num("General statistics", "total time")? else {
        return Err(ParseError::at(0, "no 'General statistics: total time' figure: not a sysbench 1.0 output, or cut before its statistics"));
    };
    let Some(events) = f.num("General statistics", "total number of events")? else {
        return Err(ParseError::at(
            0,
            "no 'total number of events' figure in 'General statistics' (truncated?)",
        ));
    };
    let line = f.first_section.unwrap_or(1);
    let fairness = f.pair("Threads fairness", "events (avg/stddev)")?;
    let mut notes = Vec::new();
    let threads = thread_count(&f, events, fairness, &mut notes);
    let tool = f.header.iter().find_map(|(_, l)| {
        l.strip_prefix("sysbench ")
            .map(|v| format!("sysbench {}", v.split_whitespace().next().unwrap_or("")))
    });
    let mut rec = if f.get("CPU speed", "events per second").is_some() {
        cpu(&f, &mut notes)?
    } else if f.values.keys().any(|(s, _)| s == "File operations") {
        fileio(&f)?
    } else if let Some(r) = memory(text, &f)? {
        r
    } else {
        threads_or_mutex(fairness, line, total_time, events)
    };
    rec.line = line;
    rec.params.insert("threads".into(), threads);
    latency_and_fairness(&f, &mut rec, fairness)?;
    if rec.bench == ids::CPU_PRIMES {
        // keep envbench's cpu.primes metric order
        let order = [
            "events_per_sec",
            "latency_avg",
            "latency_min",
            "latency_max",
            "latency_p95",
            "events_per_thread_avg",
            "events_per_thread_stddev",
            "exec_time_per_thread_avg",
            "exec_time_per_thread_stddev",
        ];
        rec.metrics.sort_by_key(|m| {
            order
                .iter()
                .position(|o| *o == m.name)
                .unwrap_or(order.len())
        });
    }
    if !f.values.keys().any(|(s, _)| s == "Latency (ms)") {
        rec.flag(
            "missing_section",
            "no 'Latency (ms)' section: latency figures are absent".into(),
        );
    }
    rec.notes.extend(notes);
    if f.header.iter().all(|(_, l)| !l.starts_with("sysbench ")) {
        rec.notes.push("the header (sysbench version and options) was not kept: parameters it would give are unknown unless stated with --param".into());
    }
    Ok(Parsed {
        records: vec![rec],
        facts: super::Facts {
            tool,
            ..Default::default()
        },
        notes: Vec::new(),
    })
}

/// The thread count: from the header, else total events / events per
/// thread when that is whole (with a note saying so), else unknown.
fn thread_count(
    f: &Figures,
    events: f64,
    fairness: Option<(f64, f64)>,
    notes: &mut Vec<String>,
) -> Value {
    match f
        .header_value("Number of threads:")
        .and_then(|v| v.parse::<u64>().ok())
    {
        Some(t) => Value::from(t),
        None => match fairness {
            Some((avg, _))
                if avg > 0.0 && ((events / avg) - (events / avg).round()).abs() < 1e-6 =>
            {
                notes.push(format!(
                    "no header: {} threads = {events} events / {avg} events per thread",
                    (events / avg).round()
                ));
                Value::from((events / avg).round() as u64)
            }
            _ => Value::from("unknown"),
        },
    }
}

/// The threads or mutex test, which print the same sections: mutex when
/// every thread ran exactly one event (`fairness` 1/0), else threads.
fn threads_or_mutex(
    fairness: Option<(f64, f64)>,
    line: usize,
    total_time: f64,
    events: f64,
) -> Record {
    let mutex = fairness.is_some_and(|(avg, sd)| avg == 1.0 && sd == 0.0);
    let mut r = Record::new(
        if mutex {
            "os.sysbench_mutex"
        } else {
            "os.sysbench_threads"
        },
        line,
    );
    r.notes.push(format!(
        "the output does not name its test: read as {} because {}",
        if mutex { "mutex" } else { "threads" },
        if mutex {
            "every thread ran exactly one event, as sysbench's mutex test does"
        } else {
            "threads ran more than one event each"
        }
    ));
    if mutex {
        r.metrics
            .push(Measure::lower("total_time", Unit::Seconds, total_time));
    } else {
        r.metrics.push(Measure::higher(
            "events_per_sec",
            Unit::OpsPerSec,
            events / total_time,
        ));
        r.notes.push(
            "events_per_sec = total events / total time (sysbench threads prints no rate)".into(),
        );
    }
    r
}

fn cpu(f: &Figures, notes: &mut Vec<String>) -> Result<Record, ParseError> {
    let mut r = Record::new(ids::CPU_PRIMES, 0);
    let eps = f.num("CPU speed", "events per second")?.unwrap_or(f64::NAN);
    r.metrics
        .push(Measure::higher("events_per_sec", Unit::OpsPerSec, eps));
    match f
        .header_value("Prime numbers limit:")
        .and_then(|v| v.parse::<u64>().ok())
    {
        Some(p) => r.param("max_prime", p),
        None => r.param("max_prime", "unknown"),
    };
    // sysbench's --time is whole seconds; the run overshoots it by the last event
    let total = f.num("General statistics", "total time")?.unwrap_or(0.0);
    let secs = total.floor();
    if secs >= 1.0 && total - secs < 0.1 {
        r.param("time_secs", secs as u64);
        notes.push(format!("time_secs {secs} read from the total time {total} s (sysbench's --time is whole seconds and the last event overshoots it)"));
    } else {
        r.param("time_secs", "unknown");
    }
    Ok(r)
}

fn fileio(f: &Figures) -> Result<Record, ParseError> {
    let mut r = Record::new("io.sysbench_fileio", 0);
    r.notes
        .push("sysbench fileio has no envbench counterpart yet: its id is its own".into());
    let mode = f.header.iter().find_map(|(_, l)| {
        let l = l.strip_prefix("Doing ")?.strip_suffix(" test")?;
        Some(
            match l {
                "random r/w" => "rndrw",
                "random read" => "rndrd",
                "random write" => "rndwr",
                "sequential read" => "seqrd",
                "sequential write (creation)" => "seqwr",
                "sequential rewrite" => "seqrewr",
                other => other,
            }
            .to_string(),
        )
    });
    r.param(
        "mode",
        mode.clone().map_or(Value::from("unknown"), Value::from),
    );
    if let Some(v) = f
        .header
        .iter()
        .find_map(|(_, l)| l.strip_suffix(" total file size"))
    {
        r.param("file_total_size", v);
    }
    if let Some(v) = f.header_value("Block size") {
        r.param("block_size", v);
    }
    if let Some((n, _)) = f
        .header
        .iter()
        .find_map(|(_, l)| l.split_once(" files, "))
        .and_then(|(n, s)| n.parse::<u64>().ok().map(|n| (n, s)))
    {
        r.param("file_num", n);
    }
    let reads = matches!(mode.as_deref(), Some("rndrw" | "rndrd" | "seqrd"));
    let writes = matches!(
        mode.as_deref(),
        Some("rndrw" | "rndwr" | "seqwr" | "seqrewr")
    );
    let fig = |s: &str, k: &str| f.num(s, k).map(|v| v.unwrap_or(f64::NAN));
    let (rps, wps, fps) = (
        fig("File operations", "reads/s")?,
        fig("File operations", "writes/s")?,
        fig("File operations", "fsyncs/s")?,
    );
    let (rmib, wmib) = (
        fig("Throughput", "read, MiB/s")?,
        fig("Throughput", "written, MiB/s")?,
    );
    // a mode that is unknown is read from what moved
    let does_reads = if mode.is_some() { reads } else { rps > 0.0 };
    let does_writes = if mode.is_some() { writes } else { wps > 0.0 };
    if does_reads {
        r.metrics
            .push(Measure::higher("read_rate", Unit::MebibytesPerSec, rmib));
    }
    if does_writes {
        r.metrics
            .push(Measure::higher("write_rate", Unit::MebibytesPerSec, wmib));
    }
    if does_reads {
        r.metrics
            .push(Measure::higher("reads_per_sec", Unit::OpsPerSec, rps));
    }
    if does_writes {
        r.metrics
            .push(Measure::higher("writes_per_sec", Unit::OpsPerSec, wps));
    }
    if fps > 0.0 {
        r.metrics
            .push(Measure::higher("fsyncs_per_sec", Unit::OpsPerSec, fps));
    }
    Ok(r)
}

/// The memory test: `Total operations: N (R per second)` and
/// `X MiB transferred (Y MiB/sec)`.
fn memory(text: &str, f: &Figures) -> Result<Option<Record>, ParseError> {
    let Some((n, line)) = numbered(text).find(|(_, l)| l.contains("MiB transferred (")) else {
        return Ok(None);
    };
    let mut r = Record::new("mem.sysbench_memory", n);
    r.notes.push("sysbench memory moves blocks with memset/memcpy-like loops; envbench's mem.stream uses STREAM's kernels, so the ids differ".into());
    let rate = line
        .split_once('(')
        .and_then(|(_, v)| v.split_whitespace().next())
        .and_then(number)
        .ok_or_else(|| ParseError::at(n, format!("'{}' has no MiB/sec rate", line.trim())))?;
    r.metrics.push(Measure::higher(
        "transfer_rate",
        Unit::MebibytesPerSec,
        rate,
    ));
    if let Some((n, l)) =
        numbered(text).find(|(_, l)| l.trim_start().starts_with("Total operations:"))
    {
        let ops = l
            .split_once('(')
            .and_then(|(_, v)| v.split_whitespace().next())
            .and_then(number)
            .ok_or_else(|| ParseError::at(n, format!("'{}' has no per-second rate", l.trim())))?;
        r.metrics
            .push(Measure::higher("operations_per_sec", Unit::OpsPerSec, ops));
    }
    for (key, name) in [
        ("block size", "block_size"),
        ("total size", "total_size"),
        ("operation", "operation"),
        ("scope", "scope"),
    ] {
        if let Some((v, _)) = f.get("Running memory speed test with the following options", key) {
            r.param(name, v.as_str());
        }
    }
    Ok(Some(r))
}

fn latency_and_fairness(
    f: &Figures,
    r: &mut Record,
    fairness: Option<(f64, f64)>,
) -> Result<(), ParseError> {
    const LAT: &str = "Latency (ms)";
    for (key, name) in [
        ("avg", "latency_avg"),
        ("min", "latency_min"),
        ("max", "latency_max"),
    ] {
        if let Some(v) = f.num(LAT, key)? {
            r.metrics.push(Measure::lower(name, Unit::Milliseconds, v));
        }
    }
    for ((s, k), (v, n)) in f.values.range((LAT.to_string(), String::new())..) {
        if s != LAT {
            break;
        }
        if let Some(p) = k.strip_suffix("th percentile") {
            let v = number(v)
                .ok_or_else(|| ParseError::at(*n, format!("{LAT}: {k}: '{v}' is not a number")))?;
            r.metrics.push(Measure::lower(
                &format!("latency_p{p}"),
                Unit::Milliseconds,
                v,
            ));
        }
    }
    if let Some((avg, sd)) = fairness {
        r.metrics
            .push(Measure::higher("events_per_thread_avg", Unit::Count, avg));
        r.metrics
            .push(Measure::lower("events_per_thread_stddev", Unit::Count, sd));
    }
    if let Some((avg, sd)) = f.pair("Threads fairness", "execution time (avg/stddev)")? {
        r.metrics.push(Measure::higher(
            "exec_time_per_thread_avg",
            Unit::Seconds,
            avg,
        ));
        r.metrics.push(Measure::lower(
            "exec_time_per_thread_stddev",
            Unit::Seconds,
            sd,
        ));
    }
    if r.metrics.iter().any(|m| m.value.is_nan()) {
        return Err(ParseError::at(
            r.line,
            "a figure of the test's own section is missing (truncated?)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_debian_cpu_run_as_cpu_primes() {
        let p = parse(include_str!(
            "../../tests/fixtures/import/sysbench-cpu-debian.txt"
        ))
        .unwrap();
        let r = &p.records[0];
        assert_eq!(r.bench, "cpu.primes");
        assert_eq!(
            (
                r.params["max_prime"].clone(),
                r.params["threads"].clone(),
                r.params["time_secs"].clone()
            ),
            (10000.into(), 1.into(), 1.into())
        );
        let names: Vec<&str> = r.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "events_per_sec",
                "latency_avg",
                "latency_min",
                "latency_max",
                "latency_p95",
                "events_per_thread_avg",
                "events_per_thread_stddev",
                "exec_time_per_thread_avg",
                "exec_time_per_thread_stddev"
            ]
        );
        assert_eq!(r.value("events_per_sec").unwrap(), 3900.13);
        assert_eq!(r.value("latency_max").unwrap(), 17.36);
        assert_eq!(r.value("exec_time_per_thread_avg").unwrap(), 0.9967);
        assert_eq!(p.facts.tool.as_deref(), Some("sysbench 1.0.20"));
    }

    #[test]
    fn reads_seed_001s_headerless_cpu_output_with_threads_from_fairness() {
        let p = parse(include_str!(
            "../../tests/fixtures/import/sysbench-cpu-seed001-wsl2-1.txt"
        ))
        .unwrap();
        let r = &p.records[0];
        assert_eq!(r.params["threads"], 4);
        assert_eq!(r.params["max_prime"], "unknown");
        assert_eq!(r.params["time_secs"], 60);
        assert_eq!(r.value("events_per_sec").unwrap(), 1257.37);
        assert_eq!(r.value("latency_p95").unwrap(), 4.03);
        assert_eq!(r.value("events_per_thread_stddev").unwrap(), 8.09);
    }

    #[test]
    fn reads_fileio_memory_threads_and_mutex() {
        let p = parse(include_str!(
            "../../tests/fixtures/import/sysbench-fileio-debian.txt"
        ))
        .unwrap();
        let r = &p.records[0];
        assert_eq!(
            (r.bench.as_str(), r.params["mode"].as_str()),
            ("io.sysbench_fileio", Some("rndrw"))
        );
        assert_eq!(r.params["block_size"], "16KiB");
        assert_eq!(
            (
                r.value("read_rate").unwrap(),
                r.value("write_rate").unwrap(),
                r.value("fsyncs_per_sec").unwrap()
            ),
            (565.40, 376.94, 2416.26)
        );
        let p = parse(include_str!(
            "../../tests/fixtures/import/sysbench-fileio-seed001-native-1.txt"
        ))
        .unwrap();
        let r = &p.records[0];
        assert_eq!(
            (
                r.value("read_rate").unwrap(),
                r.value("writes_per_sec").unwrap(),
                r.value("latency_min").unwrap()
            ),
            (8.62, 367.76, 0.0)
        );
        let p = parse(include_str!(
            "../../tests/fixtures/import/sysbench-memory-debian.txt"
        ))
        .unwrap();
        let r = &p.records[0];
        assert_eq!(r.bench, "mem.sysbench_memory");
        assert_eq!(
            (
                r.value("transfer_rate").unwrap(),
                r.value("operations_per_sec").unwrap()
            ),
            (4443.39, 4550033.95)
        );
        assert_eq!(r.params["operation"], "write");
        let p = parse(include_str!(
            "../../tests/fixtures/import/sysbench-threads-debian.txt"
        ))
        .unwrap();
        assert_eq!(p.records[0].bench, "os.sysbench_threads");
        assert!((p.records[0].value("events_per_sec").unwrap() - 556.0 / 1.0041).abs() < 1e-9);
        let p = parse(include_str!(
            "../../tests/fixtures/import/sysbench-mutex-debian.txt"
        ))
        .unwrap();
        assert_eq!(p.records[0].bench, "os.sysbench_mutex");
        assert_eq!(p.records[0].value("total_time").unwrap(), 0.0002);
    }

    #[test]
    fn other_outputs_and_cut_ones_are_refused() {
        let e = parse(include_str!("../../tests/fixtures/import/stream-t1-a.txt")).unwrap_err();
        assert!(e.msg.contains("not a sysbench"), "{e:?}");
        let full = include_str!("../../tests/fixtures/import/sysbench-cpu-debian.txt");
        let cut: String = full.lines().take(18).collect::<Vec<_>>().join("\n");
        assert!(parse(&cut)
            .unwrap_err()
            .msg
            .contains("total number of events"));
        let bad = full.replace("3900.13", "39x0");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, 15, "{e:?}");
    }
}
