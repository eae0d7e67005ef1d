//! `run`'s arguments settled: patterns, label and directories checked, the
//! suite's defaults under the user's overrides, the environment probed,
//! thread counts checked against it, the cases planned and the suite's
//! time shared among them; the run named (its label, id and result file,
//! checked unless only the plan is asked for).

use super::args::RunArgs;
use super::check;
use crate::bench::{self, schedule, Plan};
use crate::cmd::run::RunSettings;
use crate::config::{FamilyOptions, NamedDir, RepPolicy, RunConfig, Suite, DEFAULT_SEED};
use crate::error::UsageError;
use crate::store;
use crate::timestamp::{utc_compact, wall_now_secs};
use crate::units::file_safe;
use std::path::PathBuf;

/// The settings of `run` for `a`.
///
/// # Errors
/// [`UsageError`] for a bad pattern, label, directory or thread count, or
/// a pattern with parameters that takes no case.
pub(super) fn settings(a: RunArgs) -> anyhow::Result<RunSettings> {
    let selectors = check::patterns(&a.only)?;
    if let Some(l) = &a.label {
        check::label(l)?;
    }
    let dirs = check::target_dirs(&a.dirs)?;
    let mut config = config(&a, dirs);
    let fingerprint = crate::probe::probe_live(&NamedDir::paths(&config.dirs));
    check::thread_counts(config.threads.as_deref(), &fingerprint)?;
    let plan = Plan::from_fingerprint(
        config.suite,
        &fingerprint,
        config.threads.clone(),
        config.dirs.clone(),
    )
    .with_options(config.options.clone());
    let planned = bench::select(&selectors)
        .into_iter()
        .flat_map(|b| b.cases(&plan).into_iter().map(move |c| (b, c)))
        .collect();
    let cases = bench::select_cases(&selectors, planned).map_err(UsageError)?;
    let budget_note = schedule::fit_budget(&mut config.reps, config.suite, cases.len(), a.budget);
    let started = wall_now_secs();
    let host = file_safe(fingerprint.os.hostname.as_deref().unwrap_or("host"));
    if config.label.is_empty() {
        config.label = fingerprint.virtualization.summary().replace('/', "-");
    }
    // a random part, so that runs started in the same second on the same
    // host (two containers, each its own PID 1) never share an id or a name
    let tag = store::random_tag();
    if config.output.as_os_str().is_empty() {
        config.output = PathBuf::from(format!(
            "envbench-{}-{host}-{}-{tag}.json",
            file_safe(&config.label),
            utc_compact(started)
        ));
    }
    let db = check::db(a.db.as_ref())?;
    if !a.plan {
        // never over the history database, even with --force
        let file = match crate::history::db_path(db.as_ref()) {
            Ok(crate::history::Db::File(p)) => Some(p),
            _ => None,
        };
        if file.as_ref().is_some_and(|db| {
            store::same_file(db, &config.output)
                || std::path::absolute(db).ok() == std::path::absolute(&config.output).ok()
        }) {
            return Err(UsageError(format!(
                "-o {}: is the history database; choose another name",
                config.output.display()
            ))
            .into());
        }
        config.output = store::output_path(&config.output, a.force, "-o").map_err(UsageError)?;
    }
    // a budget the user gave, and the fake clock's exact counts, are kept
    let deadline = match (a.budget, config.fake_clock) {
        (None, false) => config.suite.target_secs(),
        _ => None,
    };
    Ok(RunSettings {
        notes: bench::notes(bench::FAMILIES, &plan),
        run_id: format!("{}-{host}-{tag}", utc_compact(started)),
        started,
        config,
        fingerprint,
        cases,
        budget_note,
        deadline,
        plan_only: a.plan,
        quiet: a.quiet,
        force: a.force,
        all_metrics: a.all_metrics,
        history: (!a.no_history).then_some(db),
    })
}

/// The configuration, with the suite's defaults under the user's
/// overrides. An absent label or output stays empty: `run` fills them in
/// from the fingerprint.
fn config(a: &RunArgs, dirs: Vec<NamedDir>) -> RunConfig {
    let suite = Suite::from(a.suite);
    let mut reps = RepPolicy::for_suite(suite);
    if let Some((min, max)) = a.reps {
        reps.reps_min = min;
        reps.reps_max = max;
    }
    if let Some(w) = a.warmup {
        reps.warmup = w;
    }
    if let Some(b) = a.budget {
        reps.budget_secs = b;
    }
    if let Some(c) = a.ci_target {
        reps.ci_target = c;
    }
    if let Some(r) = a.rounds {
        reps.rounds = r;
    }
    RunConfig {
        suite,
        reps,
        only: a
            .only
            .iter()
            .flat_map(|raw| bench::select::split(raw))
            .filter(|p| !p.is_empty())
            .collect(),
        dirs,
        label: a.label.clone().unwrap_or_default(),
        output: a.output.clone().unwrap_or_default(),
        seed: a.seed.unwrap_or(DEFAULT_SEED),
        threads: a.threads.clone(),
        fake_clock: a.fake_clock,
        options: FamilyOptions(a.family_options.clone()),
        wait_idle_secs: a.wait_idle,
        require_idle: a.require_idle,
        workers: a.workers == super::args::Switch::On,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn user_overrides_suite_defaults() {
        let cli = super::super::args::Cli::parse_from([
            "envbench", "run", "--suite", "standard", "--reps", "4..6", "--budget", "3",
        ]);
        let super::super::args::Cmd::Run(args) = cli.cmd else {
            panic!("not run")
        };
        let c = config(&args, NamedDir::by_position([PathBuf::from(".")]));
        assert_eq!(c.suite, Suite::Standard);
        assert_eq!(
            (c.reps.reps_min, c.reps.reps_max, c.reps.budget_secs),
            (4, 6, 3.0)
        );
        assert_eq!(c.reps.warmup, RepPolicy::for_suite(Suite::Standard).warmup);
    }

    #[test]
    fn family_options_reach_the_configuration() {
        let m = super::super::command().get_matches_from([
            "envbench",
            "run",
            "--stream-elems",
            "4096",
            "--file-size",
            "1M",
        ]);
        let (_, run) = m.subcommand().unwrap();
        let o = super::super::family_options(crate::bench::FAMILIES, run);
        assert_eq!(o.u64("stream_elems"), Some(4096));
        assert_eq!(o.u64("file_size"), Some(1 << 20));
        assert_eq!(o.u64("record"), None);
    }
}
