//! `envbench run`: name the run, check that the machine is quiet, then run
//! the planned battery ([`bench::schedule`]), saving the result file after
//! every case round; print the summary and record the run in the history.
//! Ctrl-C or SIGTERM stops the current case; the file is then marked
//! interrupted. A second Ctrl-C exits at once, after killing the processes
//! envbench started and removing its scratch directories (the file holds
//! every finished case). What to run was settled by `cli` before: the
//! settings arrive complete.

use super::progress::Reporter;
use crate::bench::schedule::{self, Schedule, Step, Watch};
use crate::bench::{runner, Bench, CaseSpec};
use crate::config::RunConfig;
use crate::error::{print_stdout, UsageError};
use crate::probe::Fingerprint;
use crate::results::{CaseResult, CaseStatus, ResultFile, RunStatus};
use crate::timestamp::{utc_iso, wall_now_secs};
use crate::{report, store, validity};
use anyhow::Context as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Everything `envbench run` needs, settled before anything is measured.
pub struct RunSettings {
    /// The configuration recorded in the result file, label and output
    /// path filled in.
    pub config: RunConfig,
    /// The run's id.
    pub run_id: String,
    /// When the run started, seconds since the Unix epoch.
    pub started: f64,
    /// The environment, probed once.
    pub fingerprint: Fingerprint,
    /// The cases to run, in plan order.
    pub cases: Vec<(&'static dyn Bench, CaseSpec)>,
    /// Notes for the result file from the families (the directories).
    pub notes: Vec<String>,
    /// Why the case budget differs from the suite's, if it does.
    pub budget_note: Option<String>,
    /// Seconds the whole battery may take; None keeps every budget.
    pub deadline: Option<f64>,
    /// `--plan`: print the plan and measure nothing.
    pub plan_only: bool,
    /// `--quiet`: no progress on stderr.
    pub quiet: bool,
    /// `--force`: the result file may replace one that exists; without
    /// it the file is created exclusively.
    pub force: bool,
    /// `--all-metrics`: print every metric at the end.
    pub all_metrics: bool,
    /// The history the run is recorded in: None with `--no-history`,
    /// else `--db` (None: the default place).
    pub history: Option<Option<crate::history::Db>>,
}

/// Runs the battery as `s` says: print the plan, or measure, save, print
/// and record.
///
/// # Errors
/// [`UsageError`] for an output path that cannot be used; I/O errors
/// saving results; a case that failed.
pub fn run(s: RunSettings) -> anyhow::Result<ExitCode> {
    if s.plan_only {
        let text = report::plan::render(
            &s.config,
            &s.cases,
            &s.config.dirs,
            s.budget_note.as_deref(),
        );
        print_stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(Some(db @ crate::history::Db::Server(_))) = &s.history {
        // a store that cannot take the run is said before measuring
        crate::history::History::open(db).map_err(|e| {
            UsageError(format!(
                "{e}; give --no-history to measure without it (the result file is kept either way)"
            ))
        })?;
    }
    let mut file = start(&s)?;
    let interrupted = Arc::new(AtomicBool::new(false));
    // on every way out of this function, let a second Ctrl-C's cleanup finish
    let _settle = crate::cleanup::Settle;
    match measure(&s, &mut file, &interrupted) {
        Ok(watch) => {
            let config = &s.config;
            let was_interrupted = interrupted.load(Ordering::SeqCst);
            file.status = if was_interrupted {
                RunStatus::Interrupted
            } else {
                RunStatus::Complete
            };
            file.ended_utc = Some(utc_iso(wall_now_secs()));
            crate::validity::assess(&mut file);
            store::save(&config.output, &file).context("saving results")?;
            let unrecorded = print_and_record(&s, &file, &watch.reporter)?;
            finish(config, &file, was_interrupted, unrecorded, &watch.reporter)
        }
        Err(e) => {
            // the file says what stopped it rather than staying `running`
            // (best effort: a full disk may refuse this write too)
            file.status = RunStatus::Failed;
            file.ended_utc = Some(utc_iso(wall_now_secs()));
            file.notes.push(format!("the run failed: {e:#}"));
            let _ = store::save(&s.config.output, &file);
            Err(e)
        }
    }
}

/// Watches for signals and measures every case into `file`.
///
/// # Errors
/// The signal thread cannot start (the process limit); a case's result
/// cannot be saved.
fn measure(
    s: &RunSettings,
    file: &mut ResultFile,
    interrupted: &Arc<AtomicBool>,
) -> anyhow::Result<RunWatch> {
    crate::cleanup::watch_signals(Arc::clone(interrupted)).map_err(|e| {
        anyhow::anyhow!(
            "cannot start envbench's signal-watching thread: {e}{}",
            crate::bench::worker::limit_hint(&e)
        )
    })?;
    let config = &s.config;
    let mut watch = RunWatch {
        reporter: Reporter::new(s.quiet, s.cases.len(), config.reps.per_round(0).budget()),
    };
    watch.reporter.message(&format!(
        "envbench {}: {} case(s) x {} round(s), suite {}, label {}, writing {}",
        env!("CARGO_PKG_VERSION"),
        s.cases.len(),
        config.reps.rounds.max(1),
        config.suite.name(),
        config.label,
        config.output.display()
    ));
    for a in &file.anomalies {
        watch.reporter.message(&format!("warning: {}", a.message));
    }
    let plan = Schedule {
        config,
        cases: &s.cases,
        deadline: s.deadline,
        output: &config.output,
        families: crate::bench::FAMILIES,
    };
    schedule::run(&plan, file, interrupted, &mut watch)?;
    Ok(watch)
}

/// Checks that the machine is quiet enough and writes the first version
/// of the result file (no case yet).
///
/// # Errors
/// [`UsageError`] for an output path that cannot be written;
/// [`validity::NotIdle`] under `--require-idle`.
fn start(s: &RunSettings) -> anyhow::Result<ResultFile> {
    let (anomalies, notes) = validity::idle::at_start(&s.config, &s.fingerprint, s.quiet)?;
    let mut file = ResultFile::new(
        s.run_id.clone(),
        &s.config,
        s.fingerprint.clone(),
        utc_iso(s.started),
    );
    file.anomalies = anomalies;
    file.notes = notes;
    file.notes.extend(s.notes.iter().cloned());
    file.notes.extend(s.budget_note.clone());
    let saved = if s.force {
        store::save(&s.config.output, &file)
    } else {
        store::save_new(&s.config.output, &file)
    };
    saved.map_err(|e| {
        if e.is_bad_path() {
            anyhow::Error::new(UsageError(format!("cannot write the result file: {e}")))
        } else {
            anyhow::Error::new(e).context("cannot write the result file")
        }
    })?;
    Ok(file)
}

/// The run's side of the schedule: progress on stderr.
struct RunWatch {
    reporter: Reporter,
}

impl Watch for RunWatch {
    fn rep(&mut self, step: &Step, progress: runner::Progress) {
        let left = self
            .reporter
            .left(step.case, progress.elapsed, step.rest, step.later);
        let at = (step.index, step.total);
        self.reporter
            .rep(at, step.shown, step.reps_max, progress, left);
    }

    fn case_done(&mut self, step: &Step, result: &CaseResult, elapsed: Duration) {
        if result.status == CaseStatus::Ok {
            self.reporter.learn(step.case, elapsed);
        } else {
            self.reporter.forget(step.case);
        }
        let left = self
            .reporter
            .left(step.case, elapsed, step.rest, step.later);
        self.reporter.case_done(
            (step.index, step.total),
            step.shown,
            result.status,
            &report::summary::one_line(result),
            elapsed,
            left,
        );
    }
}

/// Prints the summary and records the run in the history database.
/// Returns why the run is not in the history that `--db` (or
/// `ENVBENCH_DB`) named: a run asked to be recorded there and not recorded
/// fails ([`finish`]), so that a fleet or a script that removes the file
/// afterwards sees it. The default history that cannot take the run is a
/// warning only.
fn print_and_record(
    s: &RunSettings,
    file: &ResultFile,
    reporter: &Reporter,
) -> anyhow::Result<Option<String>> {
    let config = &s.config;
    let text = report::summary::render(file, s.all_metrics);
    print_stdout(&text)?;
    reporter.message(&format!("results: {}", config.output.display()));
    let Some(db) = &s.history else {
        return Ok(None);
    };
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

/// The exit code: 130 when interrupted; an error when a case failed or
/// the run is not in the history `--db` named (`unrecorded` says why).
fn finish(
    config: &RunConfig,
    file: &ResultFile,
    was_interrupted: bool,
    unrecorded: Option<String>,
    reporter: &Reporter,
) -> anyhow::Result<ExitCode> {
    if was_interrupted {
        if let Some(why) = &unrecorded {
            // said even under --quiet; the exit code stays the interruption's
            eprintln!("envbench: {}", crate::terminal::escape_output(why));
        }
        reporter.message(
            "interrupted: the result file keeps every finished case and is marked \"interrupted\"",
        );
        return Ok(ExitCode::from(130));
    }
    let failed = file
        .cases
        .iter()
        .filter(|c| c.status == CaseStatus::Failed)
        .count();
    let output = config.output.display();
    match (failed, unrecorded) {
        (0, None) => Ok(ExitCode::SUCCESS),
        (0, Some(why)) => anyhow::bail!("{why}"),
        (n, None) => anyhow::bail!("{n} case(s) failed; reasons are in {output}"),
        (n, Some(why)) => anyhow::bail!("{n} case(s) failed (reasons are in {output}), and {why}"),
    }
}
