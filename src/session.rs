//! `envbench run`: validate everything, fingerprint, then run the planned
//! cases one by one, saving the result file after each. Ctrl-C or SIGTERM
//! stops the current case; the file is then marked interrupted. A second
//! Ctrl-C exits at once, after killing the processes envbench started and
//! removing its scratch directories (the file holds every finished case).

use crate::bench::{self, clock::Clock, runner, Bench, CaseSpec, Context, Plan};
use crate::cli::RunArgs;
use crate::config::{RepPolicy, RunConfig, Suite};
use crate::probe::{self, Fingerprint};
use crate::progress::Reporter;
use crate::results::{
    self, Anomaly, CaseResult, CaseStatus, ResultFile, RunStatus, SCHEMA_VERSION,
};
use crate::units::{utc_compact, utc_iso, wall_now_secs};
use crate::{check, report, store, UsageError};
use anyhow::Context as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Fake-clock step for `--fake-clock` runs.
const FAKE_STEP: Duration = Duration::from_millis(10);

/// A load average above this fraction of the usable CPUs at the start is
/// reported: other work is competing with the benchmarks.
const HIGH_LOAD_PER_CPU: f64 = 0.5;

/// Runs the battery as `args` say, along the flow: validate, probe, plan,
/// run the cases round by round, derive, save, print.
///
/// # Errors
/// [`UsageError`] for bad input (before measuring); I/O errors saving results.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let (mut config, selectors, dirs) = validate(args)?;
    let benches = bench::select(&selectors);
    let fingerprint = probe::probe_live(&config.dirs);
    check::thread_counts(config.threads.as_deref(), &fingerprint)?;
    let planned = Planned {
        cases: plan_cases(&benches, &selectors, &config, &fingerprint, &dirs, args)?,
        dirs,
    };
    let cases = &planned.cases;
    let budget_note = fit_budget(&mut config.reps, config.suite, cases.len(), args.budget);
    if args.plan {
        crate::print_stdout(&plan_text(
            &config,
            cases,
            &planned.dirs,
            budget_note.as_deref(),
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let started = wall_now_secs();
    let host = fingerprint
        .os
        .hostname
        .clone()
        .unwrap_or_else(|| "host".into());
    name_run(&mut config, &fingerprint, started, &host, args.force)?;
    let idle = crate::validity::idle::before_run(&config, args.quiet)?;
    let mut file = new_result_file(&config, fingerprint, started, &host);
    file.anomalies.extend(idle);
    file.notes.push(bench::io::dirs_note(&planned.dirs));
    file.notes.extend(budget_note);
    store::save(&config.output, &file).map_err(|e| {
        if e.is_bad_path() {
            anyhow::Error::new(UsageError(format!("cannot write the result file: {e}")))
        } else {
            anyhow::Error::new(e).context("cannot write the result file")
        }
    })?;

    let interrupted = Arc::new(AtomicBool::new(false));
    watch_signals(Arc::clone(&interrupted))?;
    // on every way out of this function, let a second Ctrl-C's cleanup finish
    let _settle = crate::cleanup::Settle;
    let mut reporter = Reporter::new(
        args.quiet,
        cases.len() * config.reps.rounds.max(1) as usize,
        cases.len(),
        config.reps.per_round(0).budget(),
    );
    reporter.message(&format!(
        "envbench {}: {} case(s) x {} round(s), suite {}, label {}, writing {}",
        env!("CARGO_PKG_VERSION"),
        cases.len(),
        config.reps.rounds.max(1),
        config.suite.name(),
        config.label,
        config.output.display()
    ));
    for a in &file.anomalies {
        reporter.message(&format!("warning: {}", a.message));
    }
    // a budget the user gave, and the fake clock's exact counts, are kept
    let deadline = match (args.budget, config.fake_clock) {
        (None, false) => config.suite.target_secs(),
        _ => None,
    };
    run_rounds(
        &config,
        &benches,
        &planned,
        &mut file,
        &interrupted,
        &mut reporter,
        deadline,
    )?;
    let was_interrupted = interrupted.load(Ordering::SeqCst);
    file.status = if was_interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    file.ended_utc = Some(utc_iso(wall_now_secs()));
    crate::validity::assess(&mut file);
    store::save(&config.output, &file).context("saving results")?;
    print_and_record(args, &config, &file, &reporter)?;
    finish(&config, &file, was_interrupted, &reporter)
}

/// The cases of a run and the named directories they write in.
struct Planned {
    cases: Vec<(&'static dyn Bench, CaseSpec)>,
    dirs: Vec<bench::NamedDir>,
}

/// Checks the arguments and turns them into a configuration, the
/// `--only` selectors and the named target directories, before anything
/// is probed or measured.
fn validate(
    args: &RunArgs,
) -> anyhow::Result<(
    RunConfig,
    Vec<bench::select::Selector>,
    Vec<bench::NamedDir>,
)> {
    let mut config = args.to_config();
    let selectors = check::patterns(&args.only)?;
    if let Some(l) = &args.label {
        check::label(l)?;
    }
    config.dirs = crate::default_dirs(std::mem::take(&mut config.dirs))?;
    for d in &config.dirs {
        check::writable_dir(d)?;
    }
    let names: Vec<Option<String>> = args.dirs.iter().map(|d| d.name.clone()).collect();
    let dirs = check::dir_names(&names, &config.dirs)?;
    Ok((config, selectors, dirs))
}

/// The cases `--only` selects for this suite, in bench order.
///
/// # Errors
/// [`UsageError`] when a pattern with parameters takes no case.
fn plan_cases(
    benches: &[&'static dyn Bench],
    selectors: &[bench::select::Selector],
    config: &RunConfig,
    fingerprint: &Fingerprint,
    dirs: &[bench::NamedDir],
    args: &RunArgs,
) -> Result<Vec<(&'static dyn Bench, CaseSpec)>, UsageError> {
    let plan = Plan::from_fingerprint(
        config.suite,
        fingerprint,
        config.threads.clone(),
        dirs.to_vec(),
    )
    .with_stream_elems(args.stream_elems)
    .with_io(bench::io::IoOptions {
        file_size: args.file_size,
        record: args.record,
        total: args.io_total,
    })
    .with_net(args.net_target());
    let planned = benches
        .iter()
        .flat_map(|b| b.cases(&plan).into_iter().map(move |c| (*b, c)))
        .collect();
    bench::select_cases(selectors, planned).map_err(UsageError)
}

/// Shares the suite's time among its cases: when the suite has a target
/// ([`Suite::target_secs`]) and the cases' budgets would add up to more,
/// each case's budget shrinks to its share, down to a floor
/// ([`Suite::min_budget_secs`]) below which a case could not finish its
/// minimum repetitions. A budget given with `--budget` is kept as it is.
/// Returns a note for the result file when it changed the budget.
fn fit_budget(
    reps: &mut RepPolicy,
    suite: Suite,
    cases: usize,
    given: Option<f64>,
) -> Option<String> {
    let target = suite.target_secs()?;
    if given.is_some() || cases == 0 {
        return None;
    }
    let share = (target / cases as f64).max(suite.min_budget_secs());
    if share >= reps.budget_secs {
        return None;
    }
    let was = reps.budget_secs;
    reps.budget_secs = share;
    Some(format!(
        "budget per case {share:.2} s instead of {was:.2} s: the {} suite's {target:.0} s of case budgets shared among {cases} cases (--budget sets it)",
        suite.name()
    ))
}

/// `run --plan`: what would run, how often and for how long at most.
fn plan_text(
    config: &RunConfig,
    cases: &[(&dyn Bench, CaseSpec)],
    dirs: &[bench::NamedDir],
    note: Option<&str>,
) -> String {
    let rounds = config.reps.rounds.max(1);
    let r = &config.reps;
    let mut t = report::Table::new(&["case", ">rounds", ">reps", ">budget s"]);
    for (_, c) in cases {
        t.rows.push(vec![
            c.key(),
            rounds.to_string(),
            format!("{}..{}", r.reps_min, r.reps_max),
            format!("{:.2}", r.budget_secs),
        ]);
    }
    let mut out = report::render_text(&t);
    out += &format!(
        "\n{} case(s) x {rounds} round(s), suite {}: case budgets add up to {}; preparing cases (allocating, forking, calibrating) and minimum repetitions that outlast a budget come on top.\n",
        cases.len(),
        config.suite.name(),
        crate::progress::format_duration(Duration::from_secs_f64(
            r.budget_secs * cases.len() as f64
        )),
    );
    if let Some(n) = note {
        out += &format!("{n}\n");
    }
    // cases run one at a time and remove their files: each directory
    // needs room for its largest case
    for d in dirs {
        let most = cases
            .iter()
            .filter(|(_, c)| c.params.get("dir").and_then(|v| v.as_str()) == Some(&d.name))
            .map(|(b, c)| b.disk_bytes(c))
            .max()
            .unwrap_or(0);
        if most == 0 {
            continue;
        }
        let free = match bench::io::free_bytes(d) {
            Some(f) => format!("{} free", bench::io::size_text(f)),
            None => "free space unknown".into(),
        };
        out += &format!(
            "{} ({}): the largest case holds {} at once ({free}); a case without room for it and a margin is skipped\n",
            d.name,
            d.path.display(),
            bench::io::size_text(most),
        );
    }
    out
}

/// Fills in the label and the output path the user left out, and checks
/// the output path.
fn name_run(
    config: &mut RunConfig,
    fingerprint: &Fingerprint,
    started: f64,
    host: &str,
    force: bool,
) -> anyhow::Result<()> {
    if config.label.is_empty() {
        config.label = fingerprint.virtualization.summary().replace('/', "-");
    }
    if config.output.as_os_str().is_empty() {
        config.output = PathBuf::from(format!(
            "envbench-{}-{}-{}.json",
            file_safe(&config.label),
            file_safe(host),
            utc_compact(started)
        ));
    }
    config.output = store::output_path(&config.output, force, "-o").map_err(UsageError)?;
    Ok(())
}

/// The budget of the next case's round when the run has `deadline`
/// seconds in all, `elapsed` are gone and `items` case rounds remain
/// (this one included): its share of the time left, never more than the
/// planned `budget` and never less than `floor`. Cutting repetitions this
/// way keeps the suite's time when preparing cases costs more than planned
/// (STREAM's arrays on a slow machine), before any case is dropped.
fn catch_up_budget(budget: f64, deadline: f64, elapsed: f64, items: usize, floor: f64) -> f64 {
    let share = (deadline - elapsed).max(0.0) / items.max(1) as f64;
    share.clamp(floor.min(budget), budget)
}

/// Runs every case round by round, each round in a new shuffle, saving the
/// file after each case. Stops early on Ctrl-C. With a `deadline` (seconds
/// for the whole loop), a run that falls behind gives later case rounds
/// less budget ([`catch_up_budget`]).
fn run_rounds(
    config: &RunConfig,
    benches: &[&'static dyn Bench],
    planned: &Planned,
    file: &mut ResultFile,
    interrupted: &AtomicBool,
    reporter: &mut Reporter,
    deadline: Option<f64>,
) -> anyhow::Result<()> {
    let cases = &planned.cases;
    // case rounds whose budget was cut to catch up, and the smallest budget
    let mut cut = (0usize, f64::INFINITY);
    let clock = if config.fake_clock {
        Clock::fake(FAKE_STEP)
    } else {
        Clock::real()
    };
    let rounds = config.reps.rounds.max(1);
    let policies: Vec<RepPolicy> = (0..rounds).map(|r| config.reps.per_round(r)).collect();
    let fp = &file.fingerprint;
    let mem_available_bytes = match (fp.memory.available_bytes, fp.cgroup.memory_limit_bytes) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    };
    let ctx = Context {
        clock: &clock,
        reps: &policies[0],
        seed: config.seed,
        interrupted,
        mem_available_bytes,
        dirs: &planned.dirs,
        cpus: fp.cpu.usable_cpus.unwrap_or(fp.cpu.logical_cpus).max(1),
    };
    let run_start = clock.now();
    let mut results: Vec<Option<CaseResult>> = vec![None; cases.len()];
    file.rounds = Some(results::Rounds {
        planned: rounds,
        started: 0,
        seed: config.seed,
        orders: Vec::new(),
    });
    for round in 0..rounds {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        let order = round_order(cases.len(), config.seed, round);
        if let Some(r) = file.rounds.as_mut() {
            r.started += 1;
            r.orders
                .push(order.iter().map(|&i| cases[i].1.key()).collect());
        }
        for (pos, &i) in order.iter().enumerate() {
            if interrupted.load(Ordering::SeqCst) {
                break;
            }
            // a case that could not run (skipped, invalid, failed) is not retried
            if results[i]
                .as_ref()
                .is_some_and(|r| r.status != CaseStatus::Ok)
            {
                continue;
            }
            let (bench, case) = &cases[i];
            let index = round as usize * cases.len() + pos;
            let key = case.key();
            let shown = if rounds > 1 {
                format!("{key} round {}/{rounds}", round + 1)
            } else {
                key.clone()
            };
            let mut policy = round_policy(&policies[round as usize], results[i].as_ref());
            let rest = &order[pos + 1..];
            let rounds_after = rounds - round - 1;
            if let Some(d) = deadline {
                let live = |j: &usize| {
                    results[*j]
                        .as_ref()
                        .is_none_or(|r| r.status == CaseStatus::Ok)
                };
                let items = 1
                    + rest.iter().filter(|j| live(j)).count()
                    + rounds_after as usize * (0..cases.len()).filter(live).count();
                let elapsed = clock.now().saturating_sub(run_start).as_secs_f64();
                let floor = config.suite.min_budget_secs() / f64::from(rounds);
                policy.budget_secs = catch_up_budget(policy.budget_secs, d, elapsed, items, floor);
                // a cut of a few percent is the run's preparation time
                // being shared out; only a real cut is worth a note
                if policy.budget_secs < 0.9 * policies[round as usize].budget_secs {
                    cut.0 += 1;
                    cut.1 = cut.1.min(policy.budget_secs);
                }
            }
            let case_ctx = Context {
                reps: &policy,
                ..ctx
            };
            crate::validity::canary::between_cases(&clock, run_start, file);
            let run = {
                let reporter = &*reporter;
                runner::run_case(*bench, case, &case_ctx, &mut |p| {
                    let left = reporter.left(i, p.elapsed, rest, rounds_after);
                    reporter.rep(index, &shown, policy.reps_max, p, left);
                })
            };
            let elapsed = run.elapsed;
            merge_round(&mut results[i], case, run, round, run_start, config.seed);
            let result = results[i].as_ref().expect("merge_round fills the slot");
            if result.status == CaseStatus::Ok {
                reporter.learn(i, elapsed);
            } else {
                reporter.forget(i);
            }
            reporter.case_done(
                index,
                &shown,
                result.status,
                &report::summary::one_line(result),
                elapsed,
                reporter.left(i, elapsed, rest, rounds_after),
            );
            file.cases = results.iter().flatten().cloned().collect();
            file.derived = derive_all(benches, file);
            bench::io::check_plausibility(&mut file.cases);
            crate::validity::assess(file);
            store::save(&config.output, file).context("saving results")?;
        }
    }
    crate::validity::canary::measure(&clock, run_start, file);
    if cut.0 > 0 {
        file.notes.push(format!(
            "behind the suite's {:.0} s: {} case round(s) got less budget to catch up, down to {:.2} s (planned {:.2} s per round)",
            deadline.unwrap_or_default(),
            cut.0,
            cut.1,
            policies[0].budget_secs
        ));
    }
    Ok(())
}

/// Prints the summary and records the run in the history database.
fn print_and_record(
    args: &RunArgs,
    config: &RunConfig,
    file: &ResultFile,
    reporter: &Reporter,
) -> anyhow::Result<()> {
    crate::print_stdout(&report::summary::render(file, args.all_metrics))?;
    reporter.message(&format!("results: {}", config.output.display()));
    if !args.no_history {
        let written =
            std::fs::canonicalize(&config.output).unwrap_or_else(|_| config.output.clone());
        match crate::history::record_run(args.db.as_ref(), file, &written) {
            Ok((id, db)) => reporter.message(&format!("history: run {id} in {}", db.display())),
            Err(e) => reporter.message(&format!(
                "warning: not recorded in the history: {e}; the result file is complete"
            )),
        }
    }
    Ok(())
}

/// The exit code: 130 when interrupted, an error when a case failed.
fn finish(
    config: &RunConfig,
    file: &ResultFile,
    was_interrupted: bool,
    reporter: &Reporter,
) -> anyhow::Result<ExitCode> {
    if was_interrupted {
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
    if failed > 0 {
        anyhow::bail!(
            "{failed} case(s) failed; reasons are in {}",
            config.output.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Every derived figure over the cases run so far: each bench's own
/// (speed-up, scalability), the peak FLOPS, machine balance and efficiency.
fn derive_all(benches: &[&dyn Bench], file: &ResultFile) -> Vec<results::Derived> {
    let mut out: Vec<results::Derived> = benches
        .iter()
        .flat_map(|b| {
            let id = b.id();
            let mine: Vec<&CaseResult> = file.cases.iter().filter(|c| c.bench == id).collect();
            if mine.is_empty() {
                Vec::new()
            } else {
                b.derive(&mine)
            }
        })
        .collect();
    let peak = bench::cpu::peak_gflops(&file.fingerprint, &file.cases);
    let theoretical = match (
        file.config.mem_bandwidth_gbs,
        file.fingerprint.memory.theoretical_bandwidth_gbs(),
    ) {
        (Some(g), _) => Some((g, "given with --mem-bandwidth".to_string())),
        (None, Some(g)) => Some((
            g,
            "dmidecode: modules x MT/s x 8 B, one channel per module assumed".to_string(),
        )),
        (None, None) => None,
    };
    out.extend(bench::mem::derive_balance(
        &file.cases,
        peak.as_ref(),
        theoretical,
    ));
    out.extend(peak);
    out
}

fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The first SIGINT or SIGTERM sets `interrupted` (the current case winds
/// down and the file is marked interrupted); the second exits at once
/// through [`crate::cleanup::emergency_exit`]. A thread waits for them, so
/// the exit path may allocate and touch the filesystem.
fn watch_signals(interrupted: Arc<AtomicBool>) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("envbench-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if interrupted.swap(true, Ordering::SeqCst) {
                    crate::cleanup::emergency_exit();
                }
            }
        })?;
    Ok(())
}

fn new_result_file(
    config: &RunConfig,
    fingerprint: Fingerprint,
    started: f64,
    host: &str,
) -> ResultFile {
    let mut anomalies = Vec::new();
    let cpus = fingerprint
        .cpu
        .usable_cpus
        .unwrap_or(fingerprint.cpu.logical_cpus)
        .max(1) as f64;
    if let Some(load) = fingerprint
        .load_average
        .filter(|l| l.one > HIGH_LOAD_PER_CPU * cpus)
    {
        anomalies.push(Anomaly {
            kind: "high_load".into(),
            message: format!(
                "load average {:.2} at start on {cpus} usable CPU(s): other work competes with the benchmarks",
                load.one
            ),
        });
    }
    if config.fake_clock {
        anomalies.push(Anomaly {
            kind: "fake_clock".into(),
            message: "run with --fake-clock: every timing is synthetic, for testing only".into(),
        });
    }
    let mut notes = Vec::new();
    match fingerprint.cpu.governor.as_deref() {
        Some("performance") => {}
        Some(g) => notes.push(format!(
            "CPU governor is '{g}', not 'performance': frequency may vary during the run"
        )),
        None => {}
    }
    ResultFile {
        schema_version: SCHEMA_VERSION,
        envbench_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: format!(
            "{}-{}-{}",
            utc_compact(started),
            file_safe(host),
            std::process::id()
        ),
        label: config.label.clone(),
        status: RunStatus::Running,
        started_utc: utc_iso(started),
        ended_utc: None,
        config: config.clone(),
        fingerprint,
        cases: Vec::new(),
        rounds: None,
        derived: Vec::new(),
        anomalies,
        notes,
        canary: None,
        suspect: Vec::new(),
    }
}

/// The policy of a case in a round: after its first round, a case whose
/// repetitions each take more than half the round's budget skips its
/// warm-up (a repetition that long warms itself, and warming it again
/// would break the suite's budget: os.fork_cow after touching 256 MiB).
fn round_policy(policy: &RepPolicy, so_far: Option<&CaseResult>) -> RepPolicy {
    let long = so_far.and_then(|r| r.rounds.first()).is_some_and(|first| {
        let trials = f64::from((first.warmup_reps + first.reps).max(1));
        first.duration_secs / trials > policy.budget_secs / 2.0
    });
    RepPolicy {
        warmup: if long { 0 } else { policy.warmup },
        ..policy.clone()
    }
}

/// Case indices in the order of `round`: a seeded Fisher–Yates shuffle,
/// a new one each round, the same for the same seed.
fn round_order(n: usize, seed: u64, round: u32) -> Vec<usize> {
    let mut rng = crate::stats::rng::Rng::new(
        seed ^ 0x0D0E_5EED_0000_0000 ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// Adds one round of a case to its result: samples with their round and
/// time, the round's record, and the status. A case stays ok when a later
/// round is interrupted (its finished repetitions are kept); it takes the
/// status of a later round that fails or turns invalid, naming the round.
fn merge_round(
    slot: &mut Option<CaseResult>,
    case: &CaseSpec,
    run: runner::CaseRun,
    round: u32,
    run_start: Duration,
    seed: u64,
) {
    let record = results::CaseRound {
        round,
        started_utc: utc_iso(run.started_wall_secs),
        duration_secs: run.elapsed.as_secs_f64(),
        warmup_reps: run.warmup_done,
        reps: run.rep_ends.len() as u32,
        stop_reason: run.stop.name().to_string(),
        status: run.status,
    };
    let times: Vec<f64> = run
        .rep_ends
        .iter()
        .map(|t| t.saturating_sub(run_start).as_secs_f64())
        .collect();
    let Some(r) = slot.as_mut() else {
        let mut r = case_result(case, run, seed);
        r.sample_rounds = vec![round; times.len()];
        r.sample_times_secs = times;
        r.rounds = vec![record];
        *slot = Some(r);
        return;
    };
    let mut samples: Vec<Vec<f64>> = r.metrics.iter().map(|m| m.samples.clone()).collect();
    for (all, new) in samples.iter_mut().zip(&run.samples) {
        all.extend(new);
    }
    r.metrics = results::metric_results(&case.metrics, samples, seed);
    crate::validity::telemetry::extend(&mut r.telemetry, r.sample_rounds.len(), run.telemetry);
    r.sample_rounds
        .extend(std::iter::repeat_n(round, times.len()));
    r.sample_times_secs.extend(times);
    r.warmup_reps += run.warmup_done;
    r.duration_secs += run.elapsed.as_secs_f64();
    r.stop_reason = record.stop_reason.clone();
    for a in run.anomalies {
        if !r.anomalies.contains(&a) {
            r.anomalies.push(a);
        }
    }
    for n in run.notes {
        if !r.notes.contains(&n) {
            r.notes.push(n);
        }
    }
    if r.details.is_none() {
        r.details = run.details;
    }
    let reason = run.reason.unwrap_or_default();
    match run.status {
        CaseStatus::Ok => {}
        CaseStatus::Interrupted => r.notes.push(format!(
            "round {} interrupted; every finished repetition is kept",
            round + 1
        )),
        status => {
            r.status = status;
            r.reason = Some(format!("round {}: {reason}", round + 1));
        }
    }
    r.rounds.push(record);
}

fn case_result(case: &CaseSpec, run: runner::CaseRun, seed: u64) -> CaseResult {
    CaseResult {
        key: case.key(),
        bench: case.bench.clone(),
        params: case.params.clone(),
        status: run.status,
        reason: run.reason,
        warmup_reps: run.warmup_done,
        stop_reason: run.stop.name().to_string(),
        started_utc: utc_iso(run.started_wall_secs),
        duration_secs: run.elapsed.as_secs_f64(),
        rounds: Vec::new(),
        sample_rounds: Vec::new(),
        sample_times_secs: Vec::new(),
        metrics: results::metric_results(&case.metrics, run.samples, seed),
        anomalies: run.anomalies,
        notes: run.notes,
        details: run.details,
        telemetry: Some(run.telemetry),
        suspect: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_time_is_shared_among_many_cases() {
        let mut reps = RepPolicy::for_suite(Suite::Quick);
        // few cases: their budgets fit, nothing changes
        assert_eq!(fit_budget(&mut reps, Suite::Quick, 10, None), None);
        assert_eq!(reps.budget_secs, 2.0);
        // a 16-CPU machine's thread counts and every family: 60 cases
        let note = fit_budget(&mut reps, Suite::Quick, 60, None).unwrap();
        assert!((reps.budget_secs * 60.0 - 54.0).abs() < 1e-9, "{note}");
        // never below the floor at which rounds cannot finish a repetition
        let mut reps = RepPolicy::for_suite(Suite::Quick);
        fit_budget(&mut reps, Suite::Quick, 1000, None);
        assert_eq!(reps.budget_secs, Suite::Quick.min_budget_secs());
        // standard keeps its ten minutes the same way
        let mut reps = RepPolicy::for_suite(Suite::Standard);
        fit_budget(&mut reps, Suite::Standard, 96, None);
        assert!(reps.budget_secs * 96.0 <= 480.0 + 1e-9);
    }

    #[test]
    fn a_run_behind_its_deadline_cuts_budgets_not_cases() {
        // on time: 40 s left for 20 case rounds of 0.62 s: the plan holds
        assert_eq!(catch_up_budget(0.62, 54.0, 14.0, 20, 0.2), 0.62);
        // behind: 10 s left for 20 case rounds: half a second each
        assert!((catch_up_budget(0.62, 54.0, 44.0, 20, 0.2) - 0.5).abs() < 1e-12);
        // far behind or past the deadline: the floor, never zero
        assert_eq!(catch_up_budget(0.62, 54.0, 60.0, 20, 0.2), 0.2);
        // a planned budget under the floor is not raised
        assert_eq!(catch_up_budget(0.1, 54.0, 60.0, 20, 0.2), 0.1);
    }

    #[test]
    fn a_given_budget_and_the_full_suite_are_left_alone() {
        let mut reps = RepPolicy::for_suite(Suite::Quick);
        reps.budget_secs = 5.0;
        assert_eq!(fit_budget(&mut reps, Suite::Quick, 100, Some(5.0)), None);
        assert_eq!(reps.budget_secs, 5.0);
        let mut reps = RepPolicy::for_suite(Suite::Full);
        assert_eq!(fit_budget(&mut reps, Suite::Full, 500, None), None);
        assert_eq!(reps.budget_secs, 60.0);
    }

    #[test]
    fn the_estimate_of_time_left_learns_from_each_round() {
        let secs = Duration::from_secs;
        let mut r = Reporter::new(true, 6, 3, secs(2));
        // nothing run: each case's round is its budget plus a second
        assert_eq!(
            r.left(0, secs(0), &[1, 2], 1),
            Duration::from_millis(6 * 2200)
        );
        r.learn(0, secs(1));
        r.learn(1, secs(5));
        r.forget(2);
        // case 1 half done in the last round: 2.5 s of it left
        assert_eq!(
            r.left(1, Duration::from_millis(2500), &[], 0),
            Duration::from_millis(2500)
        );
        // one more whole round: 1 + 5 + 0
        assert_eq!(r.left(0, secs(1), &[1, 2], 1), secs(5) + secs(6));
    }
}
