//! `envbench run`: settle on this machine what the command line asked
//! (probe the environment, check the thread counts against it, plan the
//! cases, share the suite's time among them, name the run and its result
//! file), check that the machine is quiet, then run the planned battery
//! ([`engine::schedule`]), saving the result file after every case round;
//! print the summary and record the run in the history. Ctrl-C or SIGTERM
//! stops the current case; the file is then marked interrupted. A second
//! Ctrl-C exits at once, after killing the processes envbench started and
//! removing its scratch directories (the file holds every finished case).
//!
//! With `--in A --in B ...` the same battery runs in several environments
//! interleaved, case round by case round, one result file each
//! ([`sides`]: each environment fingerprinted through its prefix, named,
//! given its file); a plain run is the one environment this host is.

mod finish;
mod prepare;
mod rounds;
mod sides;

use super::progress::Reporter;
use crate::bench::{self, Bench, CaseSpec, Plan};
use crate::config::RunConfig;
use crate::engine::launch::Place;
use crate::engine::schedule::{self, Schedule, Side, Step, Watch};
use crate::engine::select::Selector;
use crate::engine::{self, runner};
use crate::error::{print_stdout, UsageError};
use crate::history::Db;
use crate::probe::Fingerprint;
use crate::results::{CaseResult, CaseStatus, ResultFile, RunStatus};
use crate::timestamp::{utc_iso, wall_now_secs};
use crate::{report, store, validity};
use anyhow::Context as _;
pub use sides::IN_PLACEHOLDER;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// `envbench run` as the command line asked it: every value parsed and
/// checked, the suite's defaults under the user's overrides. What depends
/// on the machine is settled by [`run`] before anything is measured.
pub struct RunSettings {
    /// The configuration recorded in the result file; a label or output
    /// path not given is empty, filled in once the machine is probed.
    pub config: RunConfig,
    /// `--only`, parsed: the benchmarks and cases to run (empty: all).
    pub selectors: Vec<Selector>,
    /// `--budget`, as given: kept as it is, never shared out.
    pub budget: Option<f64>,
    /// `--db` (or `ENVBENCH_DB`), checked; None: the default place.
    pub db: Option<Db>,
    /// Record the run in the history (false with `--no-history`).
    pub record: bool,
    /// `--plan`: print the plan and measure nothing.
    pub plan_only: bool,
    /// `--quiet`: no progress on stderr.
    pub quiet: bool,
    /// `--force`: the result file may replace one that exists; without
    /// it the file is created exclusively.
    pub force: bool,
    /// `--all-metrics`: print every metric at the end.
    pub all_metrics: bool,
    /// `--in`: the environments measured interleaved (two or more, each
    /// labelled by its name, `config.output` a pattern holding
    /// [`IN_PLACEHOLDER`] or empty); empty: a plain run on this host.
    pub environments: Vec<Place>,
}

/// Runs the battery as `s` says: prepare it on this machine, then print
/// the plan, or measure, save, print and record.
///
/// # Errors
/// [`UsageError`] for a thread count above this machine's cap, a pattern
/// that takes no case, or an output path that cannot be used; I/O errors
/// saving results; a case that failed.
pub(crate) fn run(mut s: RunSettings) -> anyhow::Result<ExitCode> {
    let interrupted = Arc::new(AtomicBool::new(false));
    // heard from the start: an environment's prefix that hangs while it is
    // fingerprinted is stopped by Ctrl-C too
    crate::cleanup::watch_signals(Arc::clone(&interrupted)).map_err(|e| {
        anyhow::anyhow!(
            "cannot start envbench's signal-watching thread: {e}{}",
            engine::launch::limit_hint(&e)
        )
    })?;
    if !s.environments.is_empty() {
        // a worker its prefix left behind stays ours to kill and reap
        crate::cleanup::adopt_orphans();
    }
    let prepared = prepare::prepare(&mut s, &interrupted);
    if interrupted.load(Ordering::SeqCst) {
        if let Ok(p) = &prepared {
            sides::stop_at_once(p.sides.iter().filter_map(|side| side.resident.as_ref()));
        }
        eprintln!("envbench: interrupted before measuring; no result file was written");
        return Ok(ExitCode::from(130));
    }
    let p = prepared?;
    if s.plan_only {
        print_stdout(&plan_text(&s, &p))?;
        return Ok(ExitCode::SUCCESS);
    }
    if let (true, Some(db @ Db::Server(_))) = (s.record, &s.db) {
        // a store that cannot take the run is said before measuring
        crate::history::History::open(db).map_err(|e| {
            UsageError(format!(
                "{e}; give --no-history to measure without it (the result file is kept either way)"
            ))
        })?;
    }
    let mut files = rounds::start(&s, &p)?;
    // a second Ctrl-C exits at once: the files it leaves say interrupted
    marked_on_emergency(&p);
    // on every way out of this function, let a second Ctrl-C's cleanup finish
    let _settle = crate::cleanup::Settle;
    let measured = rounds::measure(&s, &p, &mut files, &interrupted);
    // the environments' launchers end with the battery, each the way its
    // prefix ends (a container removed); soon when it was interrupted
    let within = if interrupted.load(Ordering::SeqCst) {
        Duration::from_secs(3)
    } else {
        Duration::from_secs(10)
    };
    for resident in p.sides.iter().filter_map(|side| side.resident.as_ref()) {
        resident.borrow_mut().finish(within);
    }
    match measured {
        Ok(watch) => {
            let was_interrupted = interrupted.load(Ordering::SeqCst);
            let mut unrecorded = Vec::new();
            for (side, file) in p.sides.iter().zip(&mut files) {
                file.status = if was_interrupted {
                    RunStatus::Interrupted
                } else {
                    RunStatus::Complete
                };
                file.ended_utc = Some(utc_iso(wall_now_secs()));
                crate::validity::assess(file);
                store::save(&side.config.output, file).context("saving results")?;
            }
            for (side, file) in p.sides.iter().zip(&files) {
                let shown = (p.sides.len() > 1).then_some(side.env.name.as_str());
                unrecorded.extend(finish::print_and_record(
                    &s,
                    file,
                    &side.config,
                    shown,
                    &watch.reporter,
                )?);
            }
            finish::finish(&p, &files, was_interrupted, unrecorded, &watch.reporter)
        }
        Err(e) => {
            // the files say what stopped them rather than staying `running`
            // (best effort: a full disk may refuse this write too)
            for (side, file) in p.sides.iter().zip(&mut files) {
                file.status = RunStatus::Failed;
                file.ended_utc = Some(utc_iso(wall_now_secs()));
                file.notes.push(format!("the run failed: {e:#}"));
                let _ = store::save(&side.config.output, file);
            }
            Err(e)
        }
    }
}

/// `run --plan`: the cases, their budgets and what each `--dir` must hold.
fn plan_text(s: &RunSettings, p: &prepare::Prepared) -> String {
    let budget: Vec<&str> = [&p.budget_note, &p.priced_note]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let budget = (!budget.is_empty()).then(|| budget.join("\n"));
    let note = sides::plan_note(&p.sides, budget.as_deref());
    report::run::plan::render(
        &p.sides[0].config,
        &p.cases,
        &crate::engine::select::dir_needs(&p.cases, &s.config.dirs, p.sides.len()),
        note.as_deref(),
        p.limit,
    )
}

/// After a second Ctrl-C, which exits at once, every result file says
/// interrupted.
fn marked_on_emergency(p: &prepare::Prepared) {
    let outputs: Vec<PathBuf> = p
        .sides
        .iter()
        .map(|side| side.config.output.clone())
        .collect();
    crate::cleanup::on_emergency(move || {
        for path in &outputs {
            store::mark_interrupted_holding_lock(
                path,
                "interrupted twice: the run stopped at once, during a case round",
            );
        }
    });
}
