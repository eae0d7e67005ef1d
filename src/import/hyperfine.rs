//! hyperfine `--export-json` → `cmd.run`, the case of a person's command
//! (`envbench run --cmd`): each command one case, each of its timed runs
//! one repetition (ms), so that one file is one round of each command and
//! several files are several rounds or runs. The key holds the hash of the
//! command's text as envbench's own run of it does
//! ([`crate::results::params::command_hash`]), its name (the command
//! itself where it is a name, else cmd1, cmd2 ... in the order printed)
//! and its directory, which the output does not tell (`--param dir=NAME`
//! states it, `--param name=NAME` the name: an envbench run's case then
//! has the same key).

use super::{Facts, Measure, ParseError, Parsed, Record};
use crate::results::params::{command_hash, key};
use crate::units::Unit;
use serde_json::Value;

/// `import --from hyperfine`.
#[derive(Debug)]
pub struct Hyperfine;

impl super::Importer for Hyperfine {
    fn name(&self) -> &'static str {
        "hyperfine"
    }

    fn about(&self) -> &'static str {
        "hyperfine --export-json: each command a cmd.run case, each run a repetition."
    }

    fn looks_like(&self, text: &str) -> bool {
        text.trim_start().starts_with('{')
            && text.contains("\"results\"")
            && text.contains("\"times\"")
            && text.contains("\"command\"")
    }

    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        parse(text)
    }
}

/// Parses one hyperfine JSON export.
///
/// # Errors
/// Not JSON, no `results` array, a result without its command or times, a
/// time that is not a positive number of seconds.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        ParseError::at(
            e.line(),
            format!("not valid JSON ({e}): not hyperfine --export-json output?"),
        )
    })?;
    let results = root
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| ParseError::at(0, "no \"results\" array: not hyperfine's JSON export"))?;
    if results.is_empty() {
        return Err(ParseError::at(0, "the \"results\" array is empty"));
    }
    let mut records = Vec::new();
    let mut notes = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let command = r
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| ParseError::at(0, format!("results[{i}] has no \"command\"")))?;
        let line = line_of(text, command);
        let times = r
            .get("times")
            .and_then(Value::as_array)
            .ok_or_else(|| ParseError::at(line, format!("`{command}` has no \"times\"")))?;
        let name = if is_name(command) {
            command.to_string()
        } else {
            format!("cmd{}", i + 1)
        };
        let codes: Vec<i64> = r
            .get("exit_codes")
            .and_then(Value::as_array)
            .map(|c| c.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        let failed = codes.iter().filter(|c| **c != 0).count();
        if failed > 0 {
            notes.push(format!(
                "`{command}` exited non-zero in {failed} of its {} runs (hyperfine -i)",
                codes.len()
            ));
        }
        for (j, t) in times.iter().enumerate() {
            let secs = t
                .as_f64()
                .filter(|s| s.is_finite() && *s > 0.0)
                .ok_or_else(|| {
                    ParseError::at(
                        line,
                        format!("`{command}`: times[{j}] is not a positive number"),
                    )
                })?;
            let mut rec = Record::new(crate::results::ids::CMD_RUN, line);
            rec.param("name", name.as_str())
                .param("command", command_hash(command))
                .param(key::DIR, "unknown");
            rec.metrics
                .push(Measure::lower("ms", Unit::Milliseconds, secs * 1e3));
            records.push(rec);
        }
    }
    if records.is_empty() {
        return Err(ParseError::at(0, "no command has a time"));
    }
    Ok(Parsed {
        records,
        facts: Facts {
            tool: Some("hyperfine".into()),
            ..Facts::default()
        },
        notes,
    })
}

/// Whether `s` can be a name in a case key: letters, digits, `_` and `-`.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The 1-based line holding `"command": "TEXT"`, 0 where it is not found
/// as written (an escaped character).
fn line_of(text: &str, command: &str) -> usize {
    let quoted = serde_json::to_string(command).unwrap_or_default();
    text.find(&quoted)
        .map_or(0, |p| text[..p].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXPORT: &str = r#"{
  "results": [
    {
      "command": "git status",
      "mean": 0.0105,
      "stddev": 0.0007,
      "median": 0.0104,
      "user": 0.004,
      "system": 0.006,
      "min": 0.0098,
      "max": 0.0113,
      "times": [0.0098, 0.0104, 0.0113],
      "exit_codes": [0, 0, 0]
    },
    {
      "command": "grep-tree",
      "mean": 0.2,
      "stddev": 0.0,
      "median": 0.2,
      "user": 0.1,
      "system": 0.05,
      "min": 0.2,
      "max": 0.2,
      "times": [0.2, 0.2],
      "exit_codes": [0, 1]
    }
  ]
}"#;

    #[test]
    fn each_run_is_a_repetition_of_its_command_s_case() {
        use super::super::Importer;
        assert!(Hyperfine.looks_like(EXPORT));
        let p = parse(EXPORT).unwrap();
        assert_eq!(p.records.len(), 5);
        let first = &p.records[0];
        assert_eq!(first.bench, "cmd.run");
        assert_eq!(first.params["name"], "cmd1");
        assert_eq!(first.params["command"], command_hash("git status"));
        assert_eq!(first.params["dir"], "unknown");
        assert_eq!(first.line, 4);
        assert!((first.value("ms").unwrap() - 9.8).abs() < 1e-9);
        assert_eq!(p.records[3].params["name"], "grep-tree");
        assert_eq!(p.notes.len(), 1);
        assert!(p.notes[0].contains("1 of its 2 runs"), "{:?}", p.notes);
        assert_eq!(p.facts.tool.as_deref(), Some("hyperfine"));
    }

    #[test]
    fn a_damaged_export_is_refused_where_it_is_damaged() {
        assert!(parse("{\"results\": []}").is_err());
        assert!(parse("[1, 2]").is_err());
        let bad = EXPORT.replacen("0.0113]", "-1]", 1);
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.msg.contains("times[2]"), "{e:?}");
        let e = parse(&EXPORT.replacen("\"times\"", "\"timez\"", 1)).unwrap_err();
        assert!(e.msg.contains("has no \"times\""), "{e:?}");
    }
}
