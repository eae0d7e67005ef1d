//! STREAM (McCalpin's stream.c 5.x) output → `mem.stream`, the same
//! method as envbench's: best rate over 10 iterations (first discarded),
//! MB/s = 10⁶ B/s, and avg/min/max time per kernel.
//!
//! Reads `Array size = N`, `Number of Threads counted|requested = T`
//! (printed by OpenMP builds only; a full output without it ran one
//! thread), the clock granularity, the four kernel rows and the
//! validation line. A table without the header (as studies print it)
//! leaves the array size and threads unknown. Rows whose times are
//! negative or whose maximum is far above the minimum mark a clock jump
//! (seed 000's WSL 2 outputs: −10799.6 s, the 3-hour time-zone offset).

use super::{after, number, numbered, Facts, Measure, ParseError, Parsed, Record};
use crate::results::ids;
use crate::units::Unit;

/// A kernel's max time over this multiple of its min time is a clock
/// jump, not noise: a descheduled iteration costs a few times the
/// minimum, not a thousand.
pub const JUMP_FACTOR: f64 = 1000.0;

const KERNELS: [(&str, &str); 4] = [
    ("Copy:", "copy"),
    ("Scale:", "scale"),
    ("Add:", "add"),
    ("Triad:", "triad"),
];

/// `import --from stream`.
#[derive(Debug)]
pub struct Stream;

impl super::Importer for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }

    fn about(&self) -> &'static str {
        "stream.c 5.x output (-> mem.stream)."
    }

    fn looks_like(&self, text: &str) -> bool {
        text.contains("STREAM version") || text.contains("Best Rate MB/s")
    }

    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        parse(text)
    }
}

/// Parses one stream.c output.
///
/// # Errors
/// No kernel table, a truncated or malformed row.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut facts = Facts::default();
    let (mut elems, mut threads_req, mut threads_counted) = (None, None, None);
    let (mut header, mut table_line, mut validated) = (false, None, None);
    let mut rows: Vec<[f64; 4]> = Vec::new();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("STREAM version $Revision:") {
            facts.tool = Some(format!("STREAM {}", v.trim_end_matches('$').trim()));
            header = true;
        } else if let Some(v) = after(t, "Array size =") {
            let first = v.split([' ', ',']).next().unwrap_or("");
            elems = Some(first.parse::<u64>().map_err(|_| {
                ParseError::at(n, format!("array size '{first}' is not a whole number"))
            })?);
            header = true;
        } else if let Some(v) = after(t, "Number of Threads counted =") {
            threads_counted = v.parse::<u64>().ok();
        } else if let Some(v) =
            after(t, "Number of Threads requested =").or_else(|| after(t, "Number of Threads ="))
        {
            threads_req = v.parse::<u64>().ok();
        } else if let Some(v) = t.strip_prefix("Your clock granularity/precision appears to be ") {
            if let Some(us) = v.split_whitespace().next().and_then(number) {
                facts.clock_resolution_ns = Some(us * 1000.0);
            }
        } else if t.starts_with("Function") && t.contains("Rate") {
            table_line = Some(n);
        } else if let Some(label) = KERNELS.iter().find(|k| t.starts_with(k.0)) {
            rows.push(kernel_row(n, t, label.0, table_line.is_some(), rows.len())?);
        } else if t.starts_with("Solution Validates") {
            validated = Some(Ok(()));
        } else if t.starts_with("Failed Validation") || t.starts_with("ERROR:") {
            validated.get_or_insert(Err(format!("line {n}: {t}")));
        }
    }
    let Some(table) = table_line else {
        return Err(ParseError::at(0, "no 'Function    Best Rate MB/s  Avg time ...' table: not a STREAM output, or cut before its results"));
    };
    if rows.len() < 4 {
        return Err(ParseError::at(
            table + rows.len() + 1,
            format!(
                "the kernel table ends after {} of 4 rows (truncated?)",
                rows.len()
            ),
        ));
    }
    let mut rec = Record::new(ids::MEM_STREAM, table);
    let threads = threads_counted.or(threads_req);
    rec.param(
        "array_elems",
        elems.map_or("unknown".into(), serde_json::Value::from),
    );
    match (threads, header) {
        (Some(t), _) => {
            rec.param("threads", t);
        }
        (None, true) => {
            rec.param("threads", 1);
            rec.notes.push("stream.c prints thread counts only when built with OpenMP; none printed, so it ran one thread".into());
        }
        (None, false) => {
            rec.param("threads", "unknown");
            rec.flag("missing_section", "only the kernel table is present: the array size and thread count are unknown (state them with --param array_elems=N --param threads=T)".into());
        }
    }
    // envbench's mem.stream order: Triad first (its headline), then the rest.
    for i in [3, 0, 1, 2] {
        rec.metrics.push(Measure::higher(
            &format!("{}_rate", KERNELS[i].1),
            Unit::MegabytesPerSec,
            rows[i][0],
        ));
    }
    for (i, row) in rows.iter().enumerate() {
        for (j, stat) in ["avg", "min", "max"].iter().enumerate() {
            rec.metrics.push(Measure::lower(
                &format!("{}_time_{stat}", KERNELS[i].1),
                Unit::Seconds,
                row[j + 1],
            ));
        }
    }
    check_times(&mut rec, &rows);
    match validated {
        Some(Ok(())) => {}
        Some(Err(why)) => rec.flag("failed_validation", format!("STREAM's own check of the arrays failed ({why}): the kernels did not compute what they timed")),
        None if header => rec.flag("missing_section", "no 'Solution Validates' line: the output may be cut short, and the arrays' check is not known to have passed".into()),
        None => {}
    }
    Ok(Parsed {
        records: vec![rec],
        facts,
        notes: Vec::new(),
    })
}

/// One kernel row of the table, `LABEL rate avg min max`, checked to come
/// after the header and as the `index`-th in STREAM's order.
///
/// # Errors
/// A row out of place or order, a word that is not a number, or a row
/// without its four numbers.
fn kernel_row(
    n: usize,
    t: &str,
    label: &str,
    after_header: bool,
    index: usize,
) -> Result<[f64; 4], ParseError> {
    if !after_header {
        return Err(ParseError::at(
            n,
            format!(
                "kernel row '{}' before the 'Function ... Best Rate MB/s' header",
                label
            ),
        ));
    }
    if index != KERNELS.iter().position(|k| k.0 == label).unwrap_or(9) {
        return Err(ParseError::at(
            n,
            format!(
                "kernel '{}' out of STREAM's order Copy, Scale, Add, Triad",
                label
            ),
        ));
    }
    let vals: Vec<f64> = t[label.len()..]
        .split_whitespace()
        .map(|w| number(w).ok_or_else(|| ParseError::at(n, format!("'{w}' is not a number"))))
        .collect::<Result<_, _>>()?;
    if vals.len() != 4 {
        return Err(ParseError::at(
            n,
            format!(
                "{} row has {} numbers, expected rate, avg, min and max time (truncated?)",
                label,
                vals.len()
            ),
        ));
    }
    Ok([vals[0], vals[1], vals[2], vals[3]])
}

/// Flags negative times and a clock jump (max far above min).
fn check_times(rec: &mut Record, rows: &[[f64; 4]]) {
    for (i, r) in rows.iter().enumerate() {
        let name = KERNELS[i].1;
        if r[1..].iter().any(|t| *t <= 0.0) || r[0] <= 0.0 {
            rec.flag("clock_jump", format!(
                "{name}: rate {} MB/s, avg {} s, min {} s, max {} s: a time at or below zero means the clock STREAM reads (gettimeofday, the wall clock) was set back while it ran (seed 000 saw -10799.6 s in WSL 2: a 3-hour time-zone step); this output's times cannot be used",
                r[0], r[1], r[2], r[3]
            ));
        } else if r[3] > JUMP_FACTOR * r[2] {
            rec.flag("clock_jump", format!(
                "{name}: max time {} s is {:.0}x the min time {} s: the wall clock jumped forward during an iteration; this output's averages and maxima are wrong",
                r[3], r[3] / r[2], r[2]
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_real_single_thread_output() {
        let p = parse(include_str!("../../tests/fixtures/import/stream-t1-a.txt")).unwrap();
        let r = &p.records[0];
        assert_eq!(r.bench, "mem.stream");
        assert_eq!(r.params["array_elems"], 2_000_000);
        assert_eq!(r.params["threads"], 1);
        assert_eq!(r.metrics[0].name, "triad_rate");
        assert_eq!(r.metrics[0].value, 34934.3);
        assert_eq!(r.metrics[1].value, 29222.2);
        let min = r.metrics.iter().find(|m| m.name == "add_time_min").unwrap();
        assert_eq!(min.value, 0.001410);
        assert!(r.flags.is_empty(), "{:?}", r.flags);
        assert_eq!(p.facts.clock_resolution_ns, Some(1000.0));
        assert_eq!(p.facts.tool.as_deref(), Some("STREAM 5.10"));
    }

    #[test]
    fn reads_the_openmp_thread_count() {
        let p = parse(include_str!(
            "../../tests/fixtures/import/stream-omp-t2.txt"
        ))
        .unwrap();
        assert_eq!(p.records[0].params["threads"], 2);
        assert_eq!(p.records[0].metrics[0].value, 33706.1);
    }

    #[test]
    fn seed_000_appendix_a_is_a_clock_jump_and_keeps_its_values() {
        let p = parse(include_str!(
            "../../tests/fixtures/import/stream-wsl2-appendix-a1.txt"
        ))
        .unwrap();
        let r = &p.records[0];
        assert_eq!(r.params["threads"], "unknown");
        let add_avg = r.metrics.iter().find(|m| m.name == "add_time_avg").unwrap();
        assert_eq!(add_avg.value, -1199.874228);
        let jumps: Vec<_> = r.flags.iter().filter(|f| f.kind == "clock_jump").collect();
        assert_eq!(jumps.len(), 2, "{:?}", r.flags);
        assert!(jumps[0].message.contains("-10799.598152"));
        assert!(jumps[1].message.contains("triad"));
        assert!(r.flags.iter().any(|f| f.kind == "missing_section"));
    }

    #[test]
    fn truncated_and_foreign_outputs_are_refused_with_a_line() {
        let full = include_str!("../../tests/fixtures/import/stream-t1-a.txt");
        let cut: String = full.lines().take(25).collect::<Vec<_>>().join("\n");
        let e = parse(&cut).unwrap_err();
        assert!(e.msg.contains("ends after 2 of 4"), "{e:?}");
        assert_eq!(e.line, 26);
        let e = parse(include_str!(
            "../../tests/fixtures/import/sysbench-cpu-debian.txt"
        ))
        .unwrap_err();
        assert!(e.msg.contains("not a STREAM output"), "{e:?}");
        let e = parse(
            "Function    Best Rate MB/s  Avg time     Min time     Max time\nCopy:  1.0 x 2 3\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.msg.as_str()), (2, "'x' is not a number"));
    }
}
