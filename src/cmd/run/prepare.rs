//! `run`'s settling on this machine: the environments fingerprinted, the
//! thread counts checked against the first, the cases planned for its CPUs
//! and the suite's time shared among them, the run and its files named.

use super::*;

/// What this machine made of the settings, before anything is measured.
pub(super) struct Prepared {
    /// When the run started, seconds since the Unix epoch.
    pub(super) started: f64,
    /// The environments, each with its fingerprint, run id, label and
    /// result file: this host alone for a plain run.
    pub(super) sides: Vec<sides::Prepared>,
    /// The id the files of an interleaved run share; None for a plain run.
    pub(super) interleave_id: Option<String>,
    /// The cases to run, in plan order.
    pub(super) cases: Vec<(&'static dyn Bench, CaseSpec)>,
    /// Notes for the result file from the families (the directories).
    pub(super) notes: Vec<String>,
    /// Why the case budget differs from the suite's, if it does.
    pub(super) budget_note: Option<String>,
    /// Which micro cases were added to price the operations of the app
    /// and command cases ([`engine::select::with_prices`]).
    pub(super) priced_note: Option<String>,
    /// Seconds the whole battery may take; None keeps every budget.
    pub(super) deadline: Option<f64>,
    /// Seconds the whole battery should end within, rounds given up if
    /// need be; None keeps every round the budgets pay for.
    pub(super) limit: Option<f64>,
    /// The usable CPUs the cases were planned for.
    pub(super) cpus: usize,
}

/// Threads allowed per usable CPU: enough to study oversubscription,
/// few enough that a typo (`--threads 999999`) cannot exhaust the machine.
const THREADS_PER_CPU: usize = 64;

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
pub(super) fn prepare(s: &mut RunSettings, interrupted: &AtomicBool) -> anyhow::Result<Prepared> {
    let fingerprints = sides::fingerprints(&s.environments, &s.config.dirs, interrupted)?;
    let first = &fingerprints[0].fingerprint;
    let plain = s.environments.is_empty() && !s.plan_only && s.config.workers;
    if let (true, Some(cpuid)) = (plain, &first.cpu.cpuid) {
        // a plain run's workers start from here: they must land where it is
        engine::worker::check_workers_land(cpuid).map_err(anyhow::Error::msg)?;
    }
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
    let (cases, priced_note) = engine::select::with_prices(cases, &plan);
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
    let [deadline, limit] = [
        crate::config::Suite::target_secs,
        crate::config::Suite::limit_secs,
    ]
    .map(|secs| match (s.budget, config.fake_clock) {
        (None, false) => secs(config.suite).map(|t| t * prepared.len() as f64),
        _ => None,
    });
    Ok(Prepared {
        notes: bench::notes(bench::FAMILIES, &plan),
        priced_note,
        started,
        sides: prepared,
        interleave_id: named.interleave_id,
        cases,
        budget_note,
        deadline,
        limit,
        cpus: plan.cpus,
    })
}

/// The fingerprint the cases are planned from: the first environment's,
/// its usable CPUs no more than this host's (`host_itself`: it is this
/// host's own). An interleaved run's environments share this hardware, so
/// one that claims more CPUs than the host has (a fingerprint that says
/// 5000) cannot set thread counts the host would run: those go by the
/// host's, whose cap `--threads` is checked against too.
pub(super) fn planned_for(first: &Fingerprint, host_itself: bool) -> Fingerprint {
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
pub(super) fn thread_cap(cpus: usize, mem_available_bytes: Option<u64>) -> (usize, String) {
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
pub(super) fn thread_counts(threads: Option<&[usize]>, fp: &Fingerprint) -> Result<(), UsageError> {
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
pub(super) fn result_file(
    output: &Path,
    db: Option<&Db>,
    force: bool,
) -> Result<PathBuf, UsageError> {
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
