//! `run`'s end: each file's summary printed, the run recorded in the
//! history, the exit code.

use super::prepare::Prepared;
use super::*;

/// Prints the summary of `file` (after its environment's name, `shown`,
/// when several were measured) and records the run in the history
/// database. Returns why the run is not in the history that `--db` (or
/// `ENVBENCH_DB`) named: a run asked to be recorded there and not recorded
/// fails ([`finish`]), so that a fleet or a script that removes the file
/// afterwards sees it. The default history that cannot take the run is a
/// warning only.
pub(super) fn print_and_record(
    s: &RunSettings,
    file: &ResultFile,
    config: &RunConfig,
    shown: Option<&str>,
    reporter: &Reporter,
) -> anyhow::Result<Option<String>> {
    let mut text = report::run::summary::render(file, s.all_metrics);
    if let Some(name) = shown {
        text = format!("{name}:\n{text}");
    }
    print_stdout(&text)?;
    reporter.message(&format!("results: {}", config.output.display()));
    if !s.record {
        return Ok(None);
    }
    let db = &s.db;
    let written = std::fs::canonicalize(&config.output).unwrap_or_else(|_| config.output.clone());
    match (crate::history::record_run(db.as_ref(), file, &written), db) {
        (Ok((id, db)), _) => {
            reporter.message(&format!("history: run {id} in {db}"));
            Ok(None)
        }
        (Err(e), Some(named)) => Ok(Some(format!(
            "the run was not recorded in the history: {e}; the result file {} is complete and kept: `envbench store push --db {} {}` adds it later",
            written.display(),
            named.shown(),
            written.display()
        ))),
        (Err(e), None) => {
            reporter.warning(&format!(
                "not recorded in the history: {e}; the result file is complete (`envbench store push {}` adds it later)",
                config.output.display()
            ));
            Ok(None)
        }
    }
}

/// The exit code: 130 when interrupted; an error when a case failed in
/// any environment or a run is not in the history `--db` named
/// (`unrecorded` says why).
pub(super) fn finish(
    p: &Prepared,
    files: &[ResultFile],
    was_interrupted: bool,
    unrecorded: Vec<String>,
    reporter: &Reporter,
) -> anyhow::Result<ExitCode> {
    let why = (!unrecorded.is_empty()).then(|| unrecorded.join("; "));
    if was_interrupted {
        if let Some(why) = &why {
            // said even under --quiet; the exit code stays the interruption's
            eprintln!("envbench: {}", crate::terminal::escape_output(why));
        }
        reporter.message(
            "interrupted: the result file keeps every finished case and is marked \"interrupted\"",
        );
        return Ok(ExitCode::from(130));
    }
    let failed = files
        .iter()
        .flat_map(|f| &f.cases)
        .filter(|c| c.status == CaseStatus::Failed)
        .count();
    let outputs: Vec<String> = p
        .sides
        .iter()
        .zip(files)
        .filter(|(_, f)| f.cases.iter().any(|c| c.status == CaseStatus::Failed))
        .map(|(side, _)| side.config.output.display().to_string())
        .collect();
    let output = outputs.join(", ");
    match (failed, why) {
        (0, None) => Ok(ExitCode::SUCCESS),
        (0, Some(why)) => anyhow::bail!("{why}"),
        (n, None) => anyhow::bail!("{n} case(s) failed; reasons are in {output}"),
        (n, Some(why)) => anyhow::bail!("{n} case(s) failed (reasons are in {output}), and {why}"),
    }
}
