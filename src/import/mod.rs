//! `envbench import`: other tools' outputs (STREAM, sysbench, IOzone, fio,
//! dd, hpcc, hyperfine) turned into result files that `compare` and the reports
//! handle like envbench's own runs.
//!
//! Each format has a parser, `parse(&str) -> Result<Parsed, ParseError>`,
//! that only reads: it returns [`Record`]s (one measurement of one case
//! each, with the values the tool printed, in envbench's units) and the
//! [`Facts`] the output reveals about its environment. [`build`] turns the
//! records of every file into one [`crate::results::ResultFile`]: records
//! with the same case key become repetitions of one case, each input file
//! is one round, and values that cannot be true are kept in the case's
//! anomalies and details but left out of its statistics.

pub mod assemble;
pub mod dd;
pub mod env;
pub mod fio;
pub mod hpcc;
pub mod hyperfine;
pub mod iozone;
pub mod stream;
pub mod sysbench;

use crate::units::{Direction, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest input read: tool outputs are kilobytes (a fio json+ log a few
/// MiB); this keeps `/dev/zero` or a disk image from filling memory.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Most measurements one import takes, over all its files: as many as one
/// metric of a result file may hold ([`crate::results::validate::MAX_SAMPLES`]),
/// so every case of the output stays readable, and its memory bounded.
pub const MAX_RECORDS: usize = crate::results::validate::MAX_SAMPLES;

/// Most cases one import makes: a standard envbench run has about 150,
/// and 20 000 cases of one sample make a result file of about 40 MB; a dd
/// log of 200 000 different byte counts made one of 418 MB (2 GB of
/// memory) that no reader takes.
pub const MAX_CASES: usize = 20_000;

/// The refusal of an output with more than [`MAX_RECORDS`] measurements.
pub(crate) fn too_many_records(counted: &str) -> String {
    format!(
        "more than {MAX_RECORDS} measurements{counted}: one import takes at most {MAX_RECORDS} (a metric holds at most that many samples); import parts of it, one per file, under one --label"
    )
}

/// A tool whose output envbench reads: one file per tool in this folder,
/// each with a unit type implementing this trait, listed once in
/// [`IMPORTERS`]. `import --from NAME` picks one by its name.
pub trait Importer: Sync {
    /// `stream`, `sysbench` ...: the name `--from` takes.
    fn name(&self) -> &'static str;
    /// One line for `--help`: what the tool's output is and what it becomes.
    fn about(&self) -> &'static str;
    /// Whether `text` looks like this tool's output: a marker line only
    /// that tool prints (`--from auto`).
    fn looks_like(&self, text: &str) -> bool;
    /// Parses one output of this tool.
    ///
    /// # Errors
    /// [`ParseError`] with the line and what was expected there.
    fn parse(&self, text: &str) -> Result<Parsed, ParseError>;
}

impl std::fmt::Debug for dyn Importer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Every tool, in the order `--from auto` tries them (the most specific
/// markers first: fio's JSON, hpcc's summary, then the text outputs; dd's
/// summary lines last, since other outputs may quote one).
pub const IMPORTERS: &[&dyn Importer] = &[
    &fio::Fio,
    &hyperfine::Hyperfine,
    &hpcc::Hpcc,
    &stream::Stream,
    &iozone::Iozone,
    &sysbench::Sysbench,
    &dd::Dd,
];

/// The tool named `name`.
pub(crate) fn importer(name: &str) -> Option<&'static dyn Importer> {
    IMPORTERS.iter().copied().find(|i| i.name() == name)
}

/// The `metric` of the first measurement of `bench` that has it, as the importer
/// named `importer` reads `text`: how `envbench fidelity` reads a
/// reference tool's figure ([`crate::bench::reference::Read::Imported`]).
///
/// # Errors
/// No such importer, the output does not parse, it has no such
/// measurement, or a flag sets the measurement aside (its message).
pub fn figure_in(
    importer_name: &str,
    text: &str,
    bench: &str,
    metric: &str,
) -> Result<f64, String> {
    let tool = importer(importer_name).ok_or_else(|| format!("no importer {importer_name:?}"))?;
    let parsed = tool.parse(text).map_err(|e| {
        format!(
            "its output does not read as {importer_name}'s (line {}: {})",
            e.line, e.msg
        )
    })?;
    // the first record of the bench with the metric (fio's read job
    // follows its write job in one output)
    let of_bench: Vec<_> = parsed.records.iter().filter(|r| r.bench == bench).collect();
    let record = of_bench
        .iter()
        .find(|r| r.metrics.iter().any(|m| m.name == metric))
        .or(of_bench.first())
        .ok_or_else(|| format!("its output has no {bench} measurement"))?;
    if let Some(flag) = record.flags.iter().find(|f| f.excludes()) {
        return Err(flag.message.clone());
    }
    record
        .metrics
        .iter()
        .find(|m| m.name == metric)
        .map(|m| m.value)
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("its {bench} measurement has no {metric}"))
}

/// The tool whose output `text` is, tried in [`IMPORTERS`] order.
pub fn detect(text: &str) -> Option<&'static dyn Importer> {
    IMPORTERS.iter().copied().find(|i| i.looks_like(text))
}

/// The tools' names: `stream, sysbench, iozone, fio, dd or hpcc`.
pub(crate) fn names_in_words() -> String {
    let names: Vec<&str> = IMPORTERS.iter().map(|i| i.name()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// A parser's refusal: the 1-based line and what is wrong there.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// 1-based line of the input (0: the input as a whole).
    pub line: usize,
    /// What was expected or found.
    pub msg: String,
}

impl ParseError {
    /// An error at `line`.
    pub(crate) fn at(line: usize, msg: impl Into<String>) -> ParseError {
        ParseError {
            line,
            msg: msg.into(),
        }
    }
}

/// One parsed input file.
#[derive(Debug, Clone)]
pub struct Input {
    /// As the user gave it.
    pub path: PathBuf,
    /// The tool it was read as.
    pub format: &'static dyn Importer,
    /// What the parser found.
    pub parsed: Parsed,
    /// Modification time, seconds since the Unix epoch.
    pub modified_unix: Option<f64>,
    /// FNV-1a of its bytes, for the run id.
    pub digest: u64,
}

/// Why an input file could not be imported.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {format} output: {msg}", file.display())]
pub struct ImportError {
    /// The input file.
    pub file: PathBuf,
    /// The format it was read as (or `auto`).
    pub format: &'static str,
    /// 1-based line (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

/// One value a tool printed, in envbench's unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// snake_case, no unit.
    pub name: String,
    /// Unit of `value`.
    pub unit: Unit,
    /// Whether higher is better.
    pub direction: Direction,
    /// The value.
    pub value: f64,
}

impl Measure {
    /// A higher-is-better value.
    pub(crate) fn higher(name: &str, unit: Unit, value: f64) -> Measure {
        Measure {
            name: name.into(),
            unit,
            direction: Direction::HigherIsBetter,
            value,
        }
    }

    /// A lower-is-better value.
    pub(crate) fn lower(name: &str, unit: Unit, value: f64) -> Measure {
        Measure {
            name: name.into(),
            unit,
            direction: Direction::LowerIsBetter,
            value,
        }
    }
}

/// Something odd a parser saw in one record.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// `impossible_value`, `implausible_rate`, `clock_jump`,
    /// `failed_validation`, `tool_error` (the record is left out of the
    /// statistics) or `missing_section` (it is kept).
    pub kind: &'static str,
    /// What was seen and what it means.
    pub message: String,
}

impl Flag {
    /// Whether the record's values cannot be trusted at all.
    pub(crate) fn excludes(&self) -> bool {
        self.kind != "missing_section"
    }
}

/// One measurement of one case, as one tool output printed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Bench id: envbench's own where the method is the same (`mem.stream`,
    /// `cpu.primes`), otherwise one naming the tool (`io.fio`).
    pub bench: String,
    /// Case parameters; `Value::String("unknown")` for one the output does
    /// not reveal (`--param` can state it).
    pub params: BTreeMap<String, Value>,
    /// Values, the headline first.
    pub metrics: Vec<Measure>,
    /// Problems seen in this record.
    pub flags: Vec<Flag>,
    /// Remarks (an inferred parameter, a method that differs from envbench's).
    pub notes: Vec<String>,
    /// 1-based line where the record starts.
    pub line: usize,
}

impl Record {
    /// A record of `bench` at `line` with no parameters or values yet.
    pub fn new(bench: &str, line: usize) -> Record {
        Record {
            bench: bench.into(),
            params: BTreeMap::new(),
            metrics: Vec::new(),
            flags: Vec::new(),
            notes: Vec::new(),
            line,
        }
    }

    /// Sets a parameter.
    pub(crate) fn param(&mut self, k: &str, v: impl Into<Value>) -> &mut Record {
        self.params.insert(k.into(), v.into());
        self
    }

    /// The value of metric `name`, if the output printed it.
    #[cfg(test)]
    pub(crate) fn value(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }

    /// Adds a flag.
    pub(crate) fn flag(&mut self, kind: &'static str, message: String) {
        self.flags.push(Flag { kind, message });
    }
}

/// What an output reveals about the environment it ran in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// Host name printed by the tool.
    pub hostname: Option<String>,
    /// Timer resolution the tool measured or reports, ns.
    pub clock_resolution_ns: Option<f64>,
    /// When the tool ran, seconds since the Unix epoch.
    pub started_unix: Option<f64>,
    /// Tool and version, e.g. `sysbench 1.0.20`.
    pub tool: Option<String>,
}

/// A parsed output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// Measurements, in the order printed.
    pub records: Vec<Record>,
    /// What the output reveals.
    pub facts: Facts,
    /// File-level remarks.
    pub notes: Vec<String>,
}

/// Lines with 1-based numbers.
pub(crate) fn numbered(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l))
}

/// A number printed by a tool: `1,234.5` is refused, `4,2` (a decimal
/// comma) read as 4.2, a non-breaking or thin space ignored.
pub(crate) fn number(s: &str) -> Option<f64> {
    let t: String = s
        .trim()
        .chars()
        .filter(|c| !matches!(c, '\u{a0}' | '\u{202f}'))
        .map(|c| if c == ',' { '.' } else { c })
        .collect();
    if t.is_empty() || t.matches('.').count() > 1 {
        return None;
    }
    if t.eq_ignore_ascii_case("nan") || t.to_ascii_lowercase().contains("inf") {
        return None;
    }
    t.parse::<f64>().ok()
}

/// The value after `key` on a `key ... value` line, e.g. `events per
/// second:  3900.13`.
pub(crate) fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.trim_start()
        .strip_prefix(key)
        .map(|rest| rest.trim().trim_start_matches(':').trim())
}

/// Reads an input file: a regular file of at most [`MAX_INPUT_BYTES`],
/// never a FIFO waited on; text, with invalid UTF-8 replaced (numbers are
/// ASCII) but NUL bytes refused as binary data.
///
/// # Errors
/// [`ImportError`] naming the file (and the line of a NUL byte).
pub(crate) fn read_input(path: &Path, format: &'static str) -> Result<String, ImportError> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let err = |line, msg: String| ImportError {
        file: path.to_path_buf(),
        format,
        line,
        msg,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| err(0, format!("cannot open: {e}")))?;
    let meta = f.metadata().map_err(|e| err(0, e.to_string()))?;
    if !meta.is_file() {
        return Err(err(
            0,
            format!(
                "is a {}, not a regular file; give a saved tool output",
                crate::store::kind_name(&meta.file_type())
            ),
        ));
    }
    let mut bytes = Vec::new();
    f.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(0, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(err(
            0,
            format!(
                "larger than {} MiB; not a tool output",
                MAX_INPUT_BYTES >> 20
            ),
        ));
    }
    // UTF-16 (PowerShell's default) and a UTF-8 byte-order mark are text
    let bytes = match crate::store::decode_text(&bytes) {
        Some(text) => text.into_bytes(),
        None => bytes,
    };
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(err(0, "the file is empty".into()));
    }
    if let Some(pos) = bytes.iter().position(|&b| b == 0) {
        let line = bytes[..pos].iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(err(
            line,
            "binary data (a NUL byte), not a text output".into(),
        ));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_take_decimal_commas_and_refuse_thousands_separators() {
        assert_eq!(number("4,2"), Some(4.2));
        assert_eq!(number("0.00390094"), Some(0.00390094));
        assert_eq!(number("5.1908e-05"), Some(5.1908e-05));
        assert_eq!(number("1.048.576"), None);
        assert_eq!(number("nan"), None);
        assert_eq!(number("4194304\u{a0}"), Some(4194304.0));
    }

    #[test]
    fn every_fixture_is_detected_as_its_format() {
        let cases = [
            (
                include_str!("../../tests/fixtures/import/stream-wsl2-appendix-a1.txt"),
                "stream",
            ),
            (
                include_str!("../../tests/fixtures/import/sysbench-cpu-debian.txt"),
                "sysbench",
            ),
            (
                include_str!("../../tests/fixtures/import/fio-randrw.json"),
                "fio",
            ),
            (include_str!("../../tests/fixtures/import/dd-de.txt"), "dd"),
            (
                include_str!("../../tests/fixtures/import/hpccoutf.txt"),
                "hpcc",
            ),
            (
                include_str!("../../tests/fixtures/import/iozone-auto.txt"),
                "iozone",
            ),
            (
                include_str!("../../tests/fixtures/import/iozone-throughput-wsl2-appendix-b1.txt"),
                "iozone",
            ),
        ];
        for (text, f) in cases {
            assert_eq!(detect(text).map(|i| i.name()), Some(f));
        }
        assert!(detect("hello world\n").is_none());
    }
}
