//! IOzone output → `io.iozone` (automatic mode `-a`: one case per file
//! size and record size, one metric per operation column) and
//! `io.iozone_throughput` (throughput mode `-t`: one case per operation
//! and process count, Children and Parent rates and the per-process
//! spread). Rates are IOzone's kB/s (1024 bytes) converted to MiB/s.
//! envbench's own io family measures differently, so the ids are IOzone's.
//!
//! The `-a` table is read by column position: `-i` selections leave
//! columns blank, and a number belongs to the header word it ends under.

use super::{after, number, numbered, Facts, Measure, ParseError, Parsed, Record};
use crate::units::Unit;

/// Fastest rate believed, bytes/s: 10 TB/s is beyond any memory system a
/// file can be cached in, let alone a disk. Seed 000's WSL 2 rewriters
/// printed 1.048576×10¹² kB/s (1.07×10¹⁵ B/s): a file size over one timer
/// tick, an interval too short to measure.
pub const MAX_PLAUSIBLE_BYTES_PER_SEC: f64 = 10e12;

/// kB (IOzone's, 1024 bytes) per MiB.
const KB_PER_MIB: f64 = 1024.0;

/// `import --from iozone`.
#[derive(Debug)]
pub struct Iozone;

impl super::Importer for Iozone {
    fn name(&self) -> &'static str {
        "iozone"
    }

    fn about(&self) -> &'static str {
        "IOzone -a tables and -t \"Children see / Parent sees\" lines."
    }

    fn looks_like(&self, text: &str) -> bool {
        text.contains("Iozone: Performance Test")
            || text.contains("Children see throughput")
            || (text.contains("reclen") && text.contains("rewrite"))
    }

    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        parse(text)
    }
}

/// Parses one IOzone output (either mode, or both).
///
/// # Errors
/// Neither a table nor throughput lines; a row or line that does not parse.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut facts = Facts::default();
    let mut complete = false;
    let mut file_kb = None;
    let mut record_kb = None;
    for (_, line) in numbered(text) {
        let t = line.trim();
        if let Some(v) = after(t, "Version $Revision:") {
            facts.tool = Some(format!("IOzone {}", v.trim_end_matches('$').trim()));
        } else if let Some(v) = after(t, "Time Resolution =") {
            facts.clock_resolution_ns = v
                .split_whitespace()
                .next()
                .and_then(number)
                .map(|s| s * 1e9);
        } else if let Some(v) = after(t, "File size set to") {
            file_kb = v
                .split_whitespace()
                .next()
                .and_then(|w| w.parse::<u64>().ok());
        } else if let Some(v) = after(t, "Record Size") {
            record_kb = v
                .split_whitespace()
                .next()
                .and_then(|w| w.parse::<u64>().ok());
        } else if t == "iozone test complete." {
            complete = true;
        }
    }
    let mut records = auto_table(text)?;
    records.extend(throughput(text, file_kb, record_kb)?);
    if records.is_empty() {
        return Err(ParseError::at(0, "neither an automatic-mode table ('kB  reclen  write ...') nor 'Children see throughput' lines: not an IOzone output, or cut before its results"));
    }
    let header_seen = facts.tool.is_some();
    for r in &mut records {
        check_rates(r, facts.clock_resolution_ns);
        if header_seen && !complete {
            r.flag(
                "missing_section",
                "no 'iozone test complete.' line: the run may have been cut short".into(),
            );
        }
    }
    Ok(Parsed {
        records,
        facts,
        notes: Vec::new(),
    })
}

/// Column names of the two header lines: a word of the lower line takes
/// the upper word that ends at the same column as a prefix
/// (`random` + `read` → `random_read`).
fn columns(upper: &str, lower: &str) -> Vec<(usize, String)> {
    let ends = |l: &str| -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in l.char_indices().chain(std::iter::once((l.len(), ' '))) {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    out.push((i, l[s..i].to_string()));
                    start = None;
                }
                _ => {}
            }
        }
        out
    };
    let up = ends(upper);
    ends(lower)
        .into_iter()
        .map(|(end, w)| {
            let name = match up.iter().find(|(e, _)| e.abs_diff(end) <= 1) {
                Some((_, p)) => format!("{p}_{w}"),
                None => w,
            };
            (end, name)
        })
        .collect()
}

fn auto_table(text: &str) -> Result<Vec<Record>, ParseError> {
    let lines: Vec<(usize, &str)> = numbered(text).collect();
    let mut out = Vec::new();
    let Some(h) = lines.iter().position(|(_, l)| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.len() >= 3 && w[0] == "kB" && w[1] == "reclen"
    }) else {
        return Ok(out);
    };
    let upper = if h > 0 { lines[h - 1].1 } else { "" };
    let cols = columns(upper, lines[h].1);
    for &(n, line) in &lines[h + 1..] {
        if line.trim().is_empty() {
            if out.is_empty() {
                continue;
            }
            break;
        }
        let mut rec = Record::new("io.iozone", n);
        let mut vals: Vec<(String, f64)> = Vec::new();
        let mut start = None;
        for (i, c) in line
            .char_indices()
            .chain(std::iter::once((line.len(), ' ')))
        {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    start = None;
                    let word = &line[s..i];
                    let v = number(word).ok_or_else(|| {
                        ParseError::at(n, format!("'{word}' in the table is not a number"))
                    })?;
                    let col = cols.iter().find(|(e, _)| e.abs_diff(i) <= 1).ok_or_else(|| {
                        ParseError::at(n, format!("'{word}' ends at column {} where the header has no column (a cut or shifted row?)", i + 1))
                    })?;
                    vals.push((col.1.replace('-', "_"), v));
                }
                _ => {}
            }
        }
        let get = |k: &str| vals.iter().find(|(c, _)| c == k).map(|v| v.1);
        let (Some(kb), Some(reclen)) = (get("kB"), get("reclen")) else {
            return Err(ParseError::at(
                n,
                "row without its file size and record size",
            ));
        };
        if vals.len() < 3 {
            return Err(ParseError::at(n, "row without any rate (truncated?)"));
        }
        rec.param("file_kb", kb as u64)
            .param("record_kb", reclen as u64);
        for (name, v) in vals.into_iter().filter(|(c, _)| c != "kB" && c != "reclen") {
            rec.metrics.push(Measure::higher(
                &name,
                Unit::MebibytesPerSec,
                v / KB_PER_MIB,
            ));
        }
        out.push(rec);
    }
    Ok(out)
}

/// `Children see throughput for  2 initial writers = 664727.58 kB/sec`
/// and the lines that follow it.
fn throughput(
    text: &str,
    file_kb: Option<u64>,
    record_kb: Option<u64>,
) -> Result<Vec<Record>, ParseError> {
    let mut out: Vec<Record> = Vec::new();
    let rate = |n: usize, l: &str| -> Result<f64, ParseError> {
        let (_, v) = l
            .split_once('=')
            .ok_or_else(|| ParseError::at(n, "no '=' before the rate"))?;
        let w = v.split_whitespace().next().unwrap_or("");
        number(w).ok_or_else(|| ParseError::at(n, format!("'{w}' is not a rate")))
    };
    for (n, line) in numbered(text) {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Children see throughput for") {
            let head = rest.split('=').next().unwrap_or("").trim();
            let (procs, op) = head
                .split_once(char::is_whitespace)
                .ok_or_else(|| ParseError::at(n, "no process count and operation"))?;
            let procs: u64 = procs
                .parse()
                .map_err(|_| ParseError::at(n, format!("'{procs}' is not a process count")))?;
            let mut rec = Record::new("io.iozone_throughput", n);
            rec.param("op", op.trim().replace([' ', '-'], "_"))
                .param("threads", procs);
            if let Some(kb) = file_kb {
                rec.param("file_kb", kb);
            }
            if let Some(kb) = record_kb {
                rec.param("record_kb", kb);
            }
            rec.metrics.push(Measure::higher(
                "children_rate",
                Unit::MebibytesPerSec,
                rate(n, t)? / KB_PER_MIB,
            ));
            out.push(rec);
            continue;
        }
        let Some(rec) = out.last_mut() else { continue };
        for (key, name) in [
            ("Parent sees throughput for", "parent_rate"),
            ("Min throughput per process", "slowest_process_rate"),
            ("Max throughput per process", "fastest_process_rate"),
            ("Avg throughput per process", "mean_process_rate"),
        ] {
            if t.starts_with(key) && !rec.metrics.iter().any(|m| m.name == name) {
                rec.metrics.push(Measure::higher(
                    name,
                    Unit::MebibytesPerSec,
                    rate(n, t)? / KB_PER_MIB,
                ));
            }
        }
    }
    Ok(out)
}

/// Flags rates no storage can reach.
fn check_rates(rec: &mut Record, resolution_ns: Option<f64>) {
    let bytes_per_kb = 1024.0;
    let mut flags = Vec::new();
    for m in &rec.metrics {
        let bps = m.value * 1024.0 * 1024.0;
        if m.value <= 0.0 {
            flags.push((
                "impossible_value",
                format!(
                    "{} = {} kB/s: a rate at or below zero",
                    m.name,
                    m.value * KB_PER_MIB
                ),
            ));
        } else if bps > MAX_PLAUSIBLE_BYTES_PER_SEC {
            let kb = m.value * KB_PER_MIB;
            let tick = resolution_ns.map_or(String::new(), |r| {
                format!(
                    " ({:.0} kB in one {} s timer tick)",
                    kb * r * 1e-9,
                    r * 1e-9
                )
            });
            flags.push(("implausible_rate", format!(
                "{} = {kb:.2} kB/s ({:.3e} bytes/s) is beyond any memory or disk (more than {:.0e} bytes/s): the interval was below the timer's resolution{tick}, so IOzone divided by one tick (seed 000's WSL 2 rewriters printed 1.048576e12 kB/s); this result cannot be used",
                m.name, kb * bytes_per_kb, MAX_PLAUSIBLE_BYTES_PER_SEC
            )));
        }
    }
    for (k, msg) in flags {
        rec.flag(k, msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_auto_table_by_column() {
        let p = parse(include_str!("../../tests/fixtures/import/iozone-auto.txt")).unwrap();
        assert_eq!(p.records.len(), 2);
        let r = &p.records[0];
        assert_eq!(
            (r.params["file_kb"].clone(), r.params["record_kb"].clone()),
            (4096.into(), 4.into())
        );
        assert_eq!(r.metrics.len(), 13);
        assert_eq!(r.metrics[0].name, "write");
        assert_eq!(r.value("random_read").unwrap(), 2067979.0 / 1024.0);
        assert_eq!(r.value("record_rewrite").unwrap(), 1163036.0 / 1024.0);
        assert_eq!(r.value("freread").unwrap(), 3203069.0 / 1024.0);
        let r = &p.records[1];
        assert_eq!(r.metrics.len(), 6, "blank columns stay absent");
        assert_eq!(r.value("random_write").unwrap(), 1923456.0 / 1024.0);
        assert!(r.flags.is_empty());
        assert_eq!(p.facts.clock_resolution_ns, Some(1000.0));
    }

    #[test]
    fn reads_throughput_mode_per_operation() {
        let p = parse(include_str!(
            "../../tests/fixtures/import/iozone-throughput.txt"
        ))
        .unwrap();
        assert_eq!(p.records.len(), 4);
        let r = &p.records[3];
        assert_eq!(r.params["op"], "re_readers");
        assert_eq!(r.params["threads"], 2);
        assert_eq!(r.params["file_kb"], 4096);
        assert_eq!(r.value("children_rate").unwrap(), 4350112.0 / 1024.0);
        assert_eq!(r.value("parent_rate").unwrap(), 4200331.12 / 1024.0);
        assert_eq!(r.value("slowest_process_rate").unwrap(), 2170055.0 / 1024.0);
    }

    #[test]
    fn seed_000_appendix_b_rates_are_implausible() {
        let p = parse(include_str!(
            "../../tests/fixtures/import/iozone-throughput-wsl2-appendix-b1.txt"
        ))
        .unwrap();
        let bad: Vec<_> = p.records.iter().filter(|r| !r.flags.is_empty()).collect();
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].params["op"], "rewriters");
        assert_eq!(bad[0].flags[0].kind, "implausible_rate");
        assert!(
            bad[0].flags[0].message.contains("1048576000000.00 kB/s"),
            "{}",
            bad[0].flags[0].message
        );
        assert_eq!(
            p.records[0].value("children_rate").unwrap(),
            4031263.0 / 1024.0
        );
    }

    #[test]
    fn shifted_rows_and_other_outputs_are_refused() {
        let text = include_str!("../../tests/fixtures/import/iozone-auto.txt")
            .replace("  745207", "745207  ");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, 19, "{e:?}");
        assert!(parse(include_str!("../../tests/fixtures/import/dd-c.txt"))
            .unwrap_err()
            .msg
            .contains("not an IOzone output"));
    }
}
