//! dd summary lines → `io.dd_copy`, one repetition per summary (a log of
//! ten runs is ten samples). dd prints what it moved, not how (bs, flags,
//! source and target are unknown to it), so the case key holds the bytes
//! and `--param` can add the rest (`--param op=write_fdatasync`). The
//! rate is recomputed from bytes and seconds (dd rounds it to three
//! digits); the printed one is checked against it.
//!
//! Read in every locale's words (`copied`, `kopiert`, `copiés` ...), with a
//! decimal point or comma, in GNU coreutils 8.24+ style
//! `N bytes (4.2 MB, 4.0 MiB) copied, 0.0039 s, 1.1 GB/s`, older GNU and
//! BusyBox `N bytes (4.2 MB) copied, 0.0039 s, 1.1 GB/s` (`seconds`), and
//! BSD/macOS `N bytes transferred in 0.0039 secs (1075456000 bytes/sec)`.
//! `status=progress` lines (carriage returns) are skipped.

use super::{number, Measure, ParseError, Parsed, Record};
use crate::units::Unit;

/// One summary: bytes, seconds, the printed rate in bytes/s, its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Bytes copied.
    pub bytes: u64,
    /// Seconds taken.
    pub secs: f64,
    /// The rate dd printed, bytes/s (None if it printed none, e.g. `Infinity B/s`).
    pub printed_bytes_per_sec: Option<f64>,
    /// 1-based line.
    pub line: usize,
}

/// A rate with an SI or binary unit: `1.1 GB/s`, `400MB/s`, `19.3 kB/s`,
/// `1075456000 bytes/sec`.
fn rate(s: &str) -> Option<f64> {
    let s = s.trim().trim_end_matches(')');
    let unit_at = s.find(|c: char| c.is_alphabetic())?;
    let v = number(&s[..unit_at])?;
    let unit = s[unit_at..].trim();
    let unit = unit.split('/').next()?;
    let mult = match unit {
        "B" | "bytes" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" | "K" => 1024.0,
        "MiB" | "M" => 1048576.0,
        "GiB" | "G" => 1073741824.0,
        "TiB" | "T" => 1099511627776.0,
        _ => return None,
    };
    Some(v * mult)
}

/// Reads one line as a dd summary.
fn summary(n: usize, line: &str) -> Option<Summary> {
    let line = line.rsplit('\r').next()?.trim();
    let first = line
        .split(|c: char| c.is_whitespace() || c == '\u{a0}')
        .next()?;
    let bytes: u64 = first.parse().ok()?;
    let rest = &line[first.len()..];
    // BSD: "bytes transferred in 0.003 secs (N bytes/sec)"
    if let Some(p) = rest.find(" transferred in ") {
        let after = &rest[p + " transferred in ".len()..];
        let secs = number(after.split_whitespace().next()?)?;
        let printed = after.split_once('(').and_then(|(_, r)| rate(r));
        return Some(Summary {
            bytes,
            secs,
            printed_bytes_per_sec: printed,
            line: n,
        });
    }
    // GNU and BusyBox: the last two comma-separated fields are time and rate;
    // with a decimal comma, split at ", " only.
    let fields: Vec<&str> = rest.rsplitn(3, ", ").collect();
    if fields.len() < 3 {
        return None;
    }
    let (rate_s, time_s) = (fields[0], fields[1]);
    let mut tw = time_s.split_whitespace();
    let secs = number(tw.next()?)?;
    if !matches!(tw.next()?, "s" | "seconds" | "secs" | "sec" | "с" | "秒") {
        return None;
    }
    Some(Summary {
        bytes,
        secs,
        printed_bytes_per_sec: rate(rate_s),
        line: n,
    })
}

/// Every summary line in `text`.
pub(crate) fn find_summaries(text: &str) -> impl Iterator<Item = Summary> + '_ {
    super::numbered(text).filter_map(|(n, l)| summary(n, l))
}

/// `import --from dd`.
#[derive(Debug)]
pub struct Dd;

impl super::Importer for Dd {
    fn name(&self) -> &'static str {
        "dd"
    }

    fn about(&self) -> &'static str {
        "dd summary lines (GNU in any locale, BusyBox, BSD); one per repetition."
    }

    fn looks_like(&self, text: &str) -> bool {
        find_summaries(text).next().is_some()
    }

    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        parse(text)
    }
}

/// Parses a file of dd outputs.
///
/// # Errors
/// No summary line.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut records = Vec::new();
    for s in find_summaries(text) {
        // stopped at the limit, before a log of millions fills the memory
        if records.len() == super::MAX_RECORDS {
            return Err(ParseError::at(
                s.line,
                super::too_many_records(" (dd summaries)"),
            ));
        }
        let mut rec = Record::new("io.dd_copy", s.line);
        rec.param("bytes", s.bytes);
        rec.notes.push("dd prints bytes, seconds and a rate, not its block size, flags or files: state what differs between cases with --param (e.g. op=write_fdatasync)".into());
        let mb_per_sec = s.bytes as f64 / s.secs / 1e6;
        rec.metrics
            .push(Measure::higher("rate", Unit::MegabytesPerSec, mb_per_sec));
        rec.metrics
            .push(Measure::lower("time", Unit::Seconds, s.secs));
        if s.secs <= 0.0 || !mb_per_sec.is_finite() {
            rec.flag(
                "impossible_value",
                format!(
                    "{} bytes in {} s: a time at or below zero cannot be measured",
                    s.bytes, s.secs
                ),
            );
        } else if let Some(p) = s.printed_bytes_per_sec {
            // dd rounds to 2-3 significant digits
            if (p / (mb_per_sec * 1e6) - 1.0).abs() > 0.06 {
                rec.flag("impossible_value", format!("dd printed {p:.4e} bytes/s but {} bytes / {} s = {:.4e}: the line is inconsistent (edited or mis-pasted?)", s.bytes, s.secs, mb_per_sec * 1e6));
            }
        }
        records.push(rec);
    }
    if records.is_empty() {
        let line = text
            .lines()
            .position(|l| l.contains("records in") || l.contains("+0 "))
            .map_or(0, |p| p + 2);
        return Err(ParseError::at(line, "no dd summary line ('N bytes (...) copied, T s, R MB/s'): not a dd output, or cut before its summary"));
    }
    Ok(Parsed {
        records,
        ..Parsed::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_locale_recorded_here() {
        for (text, secs) in [
            (
                include_str!("../../tests/fixtures/import/dd-c.txt"),
                0.00390094,
            ),
            (
                include_str!("../../tests/fixtures/import/dd-de.txt"),
                0.00807157,
            ),
            (
                include_str!("../../tests/fixtures/import/dd-fr.txt"),
                0.00977569,
            ),
            (
                include_str!("../../tests/fixtures/import/dd-fi.txt"),
                0.00807932,
            ),
            (
                include_str!("../../tests/fixtures/import/dd-pt.txt"),
                0.0121584,
            ),
            (
                include_str!("../../tests/fixtures/import/dd-ja.txt"),
                0.0122937,
            ),
            (
                include_str!("../../tests/fixtures/import/dd-progress.txt"),
                0.00844163,
            ),
        ] {
            let p = parse(text).unwrap();
            let r = &p.records[0];
            assert_eq!(r.params["bytes"], 4194304);
            assert_eq!(r.metrics[1].value, secs);
            assert_eq!(r.metrics[0].value, 4194304.0 / secs / 1e6);
            assert!(r.flags.is_empty(), "{text}: {:?}", r.flags);
        }
        let p = parse(include_str!("../../tests/fixtures/import/dd-one-byte.txt")).unwrap();
        assert_eq!(p.records[0].params["bytes"], 1);
    }

    #[test]
    fn reads_older_gnu_busybox_bsd_and_progress_styles() {
        let text = "104857600 bytes (105 MB) copied, 0.5 s, 210 MB/s\n\
                    104857600 bytes (100.0MB) copied, 0.500000 seconds, 200.0MB/s\n\
                    104857600 bytes transferred in 0.500000 secs (209715200 bytes/sec)\n\
                    52428800 bytes (52 MB, 50 MiB) copied, 0.25 s, 210 MB/s\r104857600 bytes (105 MB, 100 MiB) copied, 0.5 s, 210 MB/s\n";
        let p = parse(text).unwrap();
        assert_eq!(p.records.len(), 4);
        for r in &p.records {
            assert_eq!(r.metrics[0].value, 209.7152);
            assert!(r.flags.is_empty(), "{:?}", r.flags);
        }
    }

    #[test]
    fn inconsistent_and_missing_summaries() {
        let p = parse("4194304 bytes (4.2 MB, 4.0 MiB) copied, 0.004 s, 9.9 GB/s\n").unwrap();
        assert_eq!(p.records[0].flags[0].kind, "impossible_value");
        let e = parse("4+0 records in\n4+0 records out\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.msg.contains("no dd summary"));
    }
}
