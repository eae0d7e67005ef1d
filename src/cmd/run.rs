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

mod sides;

use super::progress::Reporter;
use crate::bench::{self, Bench, CaseSpec, Plan};
use crate::config::RunConfig;
use crate::engine::launch::Environment;
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
    pub environments: Vec<Environment>,
}

/// What this machine made of the settings, before anything is measured.
struct Prepared {
    /// When the run started, seconds since the Unix epoch.
    started: f64,
    /// The environments, each with its fingerprint, run id, label and
    /// result file: this host alone for a plain run.
    sides: Vec<sides::Prepared>,
    /// The id the files of an interleaved run share; None for a plain run.
    interleave_id: Option<String>,
    /// The cases to run, in plan order.
    cases: Vec<(&'static dyn Bench, CaseSpec)>,
    /// Notes for the result file from the families (the directories).
    notes: Vec<String>,
    /// Why the case budget differs from the suite's, if it does.
    budget_note: Option<String>,
    /// Seconds the whole battery may take; None keeps every budget.
    deadline: Option<f64>,
    /// The usable CPUs the cases were planned for.
    cpus: usize,
}

/// Threads allowed per usable CPU: enough to study oversubscription,
/// few enough that a typo (`--threads 999999`) cannot exhaust the machine.
const THREADS_PER_CPU: usize = 64;

/// Runs the battery as `s` says: prepare it on this machine, then print
/// the plan, or measure, save, print and record.
///
/// # Errors
/// [`UsageError`] for a thread count above this machine's cap, a pattern
/// that takes no case, or an output path that cannot be used; I/O errors
/// saving results; a case that failed.
pub fn run(mut s: RunSettings) -> anyhow::Result<ExitCode> {
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
    let prepared = prepare(&mut s, &interrupted);
    if interrupted.load(Ordering::SeqCst) {
        eprintln!("envbench: interrupted before measuring; no result file was written");
        return Ok(ExitCode::from(130));
    }
    let p = prepared?;
    if s.plan_only {
        let note = sides::plan_note(&p.sides, p.budget_note.as_deref());
        let text = report::plan::render(
            &p.sides[0].config,
            &p.cases,
            &s.config.dirs,
            note.as_deref(),
        );
        print_stdout(&text)?;
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
    let mut files = start(&s, &p)?;
    // a second Ctrl-C exits at once: the files it leaves say interrupted
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
    // on every way out of this function, let a second Ctrl-C's cleanup finish
    let _settle = crate::cleanup::Settle;
    let measured = measure(&s, &p, &mut files, &interrupted);
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
                unrecorded.extend(print_and_record(
                    &s,
                    file,
                    &side.config,
                    shown,
                    &watch.reporter,
                )?);
            }
            finish(&p, &files, was_interrupted, unrecorded, &watch.reporter)
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

/// Settles on this machine what `s` asked: fingerprints each environment
/// (through its prefix), checks the thread counts against the first,
/// plans the cases from it and shares the suite's time among them; names
/// the run and each environment's file, filling in the label and result
/// file `s` left empty (each file checked unless only the plan is asked
/// for).
///
/// # Errors
/// [`UsageError`] for an environment whose prefix cannot start envbench, a
/// thread count above this machine's cap, a pattern with parameters that
/// takes no case, or a result file that cannot be used.
fn prepare(s: &mut RunSettings, interrupted: &AtomicBool) -> anyhow::Result<Prepared> {
    let fingerprints = sides::fingerprints(&s.environments, &s.config.dirs, interrupted)?;
    let first = &fingerprints[0].fingerprint;
    let config = &mut s.config;
    thread_counts(config.threads.as_deref(), first)?;
    let plan = Plan::from_fingerprint(
        config.suite,
        &planned_for(first, s.environments.is_empty()),
        config.threads.clone(),
        config.dirs.clone(),
    )
    .with_options(config.options.clone());
    let planned = engine::select::benches(&s.selectors)
        .into_iter()
        .flat_map(|b| b.cases(&plan).into_iter().map(move |c| (b, c)))
        .collect();
    let cases = engine::select::cases(&s.selectors, planned).map_err(UsageError)?;
    let budget_note = schedule::fit_budget(&mut config.reps, config.suite, cases.len(), s.budget);
    let started = wall_now_secs();
    let named = sides::name(&s.environments, fingerprints, config, started);
    let mut prepared: Vec<sides::Prepared> = Vec::new();
    for mut side in named.sides {
        if !s.plan_only {
            side.config.output = result_file(&side.config.output, s.db.as_ref(), s.force)?;
        }
        // two spellings of one file (`{in}/../x.json`, a link to another's
        // file, a hard link) would leave one environment's results in it:
        // refused, with --force too
        let lands = store::resolved(&side.config.output);
        if let Some(earlier) = prepared.iter().find(|p| {
            store::resolved(&p.config.output) == lands
                || store::same_file(&p.config.output, &side.config.output)
        }) {
            return Err(UsageError(format!(
                "--in {} and --in {} would both write {}: each environment needs a file of its \
                 own (-o 'DIR/{IN_PLACEHOLDER}.json')",
                earlier.env.name,
                side.env.name,
                lands.display()
            ))
            .into());
        }
        prepared.push(side);
    }
    // a budget the user gave, and the fake clock's exact counts, are kept;
    // the suite's time is each environment's
    let deadline = match (s.budget, config.fake_clock) {
        (None, false) => config
            .suite
            .target_secs()
            .map(|t| t * prepared.len() as f64),
        _ => None,
    };
    Ok(Prepared {
        notes: bench::notes(bench::FAMILIES, &plan),
        started,
        sides: prepared,
        interleave_id: named.interleave_id,
        cases,
        budget_note,
        deadline,
        cpus: plan.cpus,
    })
}

/// The fingerprint the cases are planned from: the first environment's,
/// its usable CPUs no more than this host's (`host_itself`: it is this
/// host's own). An interleaved run's environments share this hardware, so
/// one that claims more CPUs than the host has (a fingerprint that says
/// 5000) cannot set thread counts the host would run: those go by the
/// host's, whose cap `--threads` is checked against too.
fn planned_for(first: &Fingerprint, host_itself: bool) -> Fingerprint {
    let mut fp = first.clone();
    if !host_itself {
        let host = crate::probe::usable_cpus().unwrap_or(1);
        if fp.cpu.usable() > host {
            fp.cpu.usable_cpus = Some(host);
            fp.cpu.logical_cpus = fp.cpu.logical_cpus.min(host.max(1));
        }
    }
    fp
}

/// The most threads one case may start here, and which limit sets it:
/// [`THREADS_PER_CPU`] per usable CPU, RLIMIT_NPROC, the cgroup pids
/// limit, available memory and [`bench::os::HARD_CAP`] (see
/// [`bench::os::headroom`]).
fn thread_cap(cpus: usize, mem_available_bytes: Option<u64>) -> (usize, String) {
    let room = bench::os::headroom(mem_available_bytes);
    let by_cpu = cpus.max(1).saturating_mul(THREADS_PER_CPU);
    if by_cpu < room.max {
        (
            by_cpu,
            format!("{THREADS_PER_CPU} per usable CPU, {cpus} usable CPU(s)"),
        )
    } else {
        (room.max, room.limited_by)
    }
}

/// Refuses `--threads` counts above [`thread_cap`] for this machine.
///
/// # Errors
/// [`UsageError`] naming the count, the cap and the limit that sets it.
fn thread_counts(threads: Option<&[usize]>, fp: &Fingerprint) -> Result<(), UsageError> {
    let Some(&most) = threads.and_then(|t| t.iter().max()) else {
        return Ok(());
    };
    let cpus = fp.cpu.usable();
    let mem = match (fp.memory.available_bytes, fp.cgroup.memory_limit_bytes) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    };
    let (cap, why) = thread_cap(cpus, mem);
    if most > cap {
        return Err(UsageError(format!(
            "--threads {most} is above the cap of {cap} threads on this machine (set by {why})"
        )));
    }
    Ok(())
}

/// `output` as the result file: never the history database `db` names
/// (even with `--force`), an existing file only with `force`.
///
/// # Errors
/// [`UsageError`] naming the path and why it cannot be used.
fn result_file(output: &Path, db: Option<&Db>, force: bool) -> Result<PathBuf, UsageError> {
    let history = match crate::history::db_path(db) {
        Ok(Db::File(p)) => Some(p),
        _ => None,
    };
    if history.as_ref().is_some_and(|h| {
        store::same_file(h, output)
            || std::path::absolute(h).ok() == std::path::absolute(output).ok()
    }) {
        return Err(UsageError(format!(
            "-o {}: is the history database; choose another name",
            output.display()
        )));
    }
    store::output_path(output, force, "-o").map_err(UsageError)
}

/// Watches for signals and measures every case into `files`, one per
/// environment.
///
/// # Errors
/// The signal thread cannot start (the process limit); a case's result
/// cannot be saved.
fn measure(
    s: &RunSettings,
    p: &Prepared,
    files: &mut [ResultFile],
    interrupted: &Arc<AtomicBool>,
) -> anyhow::Result<RunWatch> {
    let config = &s.config;
    let mut watch = RunWatch {
        reporter: Reporter::new(
            s.quiet,
            p.cases.len() * p.sides.len(),
            config.reps.per_round(0).budget(),
        ),
    };
    watch.reporter.message(&format!(
        "envbench {}: {} case(s) x {} round(s), suite {}, {}",
        env!("CARGO_PKG_VERSION"),
        p.cases.len(),
        config.reps.rounds.max(1),
        config.suite.name(),
        sides::headline(&p.sides)
    ));
    for a in &files[0].anomalies {
        watch.reporter.message(&format!("warning: {}", a.message));
    }
    let sides: Vec<Side> = p
        .sides
        .iter()
        .map(|side| Side {
            name: &side.env.name,
            launcher: &side.env.launcher,
            resident: side.resident.as_ref(),
            output: &side.config.output,
            run_id: &side.run_id,
            start_secs: side.start_secs,
        })
        .collect();
    let plan = Schedule {
        config,
        cases: &p.cases,
        deadline: p.deadline,
        families: bench::FAMILIES,
        sides: &sides,
        interleave_id: p.interleave_id.as_deref(),
        cpus: p.cpus,
    };
    schedule::run(&plan, files, interrupted, &mut watch)?;
    Ok(watch)
}

/// Checks that the machine is quiet enough and writes the first version
/// of each environment's result file (no case yet).
///
/// # Errors
/// [`UsageError`] for an output path that cannot be written;
/// [`validity::NotIdle`] under `--require-idle`.
fn start(s: &RunSettings, p: &Prepared) -> anyhow::Result<Vec<ResultFile>> {
    let first = &p.sides[0];
    let (anomalies, notes) = validity::idle::at_start(&first.config, &first.fingerprint, s.quiet)?;
    let mut files: Vec<ResultFile> = Vec::new();
    for (k, side) in p.sides.iter().enumerate() {
        let mut file = ResultFile::new(
            side.run_id.clone(),
            &side.config,
            side.fingerprint.clone(),
            utc_iso(p.started),
        );
        file.anomalies.clone_from(&anomalies);
        file.notes.clone_from(&notes);
        file.notes.extend(p.notes.iter().cloned());
        file.notes.extend(p.budget_note.clone());
        let output = &side.config.output;
        let saved = if s.force {
            store::save(output, &file)
        } else {
            store::save_new(output, &file)
        };
        if let Err(e) = saved {
            // a run that cannot start leaves none of its files behind: the
            // ones written before this one are its own, still empty
            for earlier in &p.sides[..k] {
                let _ = std::fs::remove_file(&earlier.config.output);
            }
            return Err(if e.is_bad_path() {
                anyhow::Error::new(UsageError(format!("cannot write the result file: {e}")))
            } else {
                anyhow::Error::new(e).context("cannot write the result file")
            });
        }
        files.push(file);
    }
    Ok(files)
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

/// Prints the summary of `file` (after its environment's name, `shown`,
/// when several were measured) and records the run in the history
/// database. Returns why the run is not in the history that `--db` (or
/// `ENVBENCH_DB`) named: a run asked to be recorded there and not recorded
/// fails ([`finish`]), so that a fleet or a script that removes the file
/// afterwards sees it. The default history that cannot take the run is a
/// warning only.
fn print_and_record(
    s: &RunSettings,
    file: &ResultFile,
    config: &RunConfig,
    shown: Option<&str>,
    reporter: &Reporter,
) -> anyhow::Result<Option<String>> {
    let mut text = report::summary::render(file, s.all_metrics);
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
fn finish(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_cap_is_bounded_by_cpus_and_the_hard_cap() {
        let (cap, why) = thread_cap(2, None);
        assert!(cap <= 2 * THREADS_PER_CPU, "{cap} {why}");
        let (cap, _) = thread_cap(1000, None);
        assert!(cap <= bench::os::HARD_CAP);
        let (cap, why) = thread_cap(1, Some(64 << 20));
        assert!(cap < 16, "64 MiB allows few threads: {cap} ({why})");
    }
}
