//! `envbench fidelity`: is envbench faithful on this machine? Each case
//! with a reference tool installed here ([`crate::bench::Bench::references`])
//! is measured by envbench and by its reference in turns, round by round,
//! and the ratio envbench/reference is judged against the case's band by
//! its 95 % interval ([`crate::stats::band`]). Rounds are added, to the
//! rows still unclear only, until every row settles or the budget is
//! spent.

mod commands;
mod rows;

use crate::bench::reference::{Cpus, Workshop};
use crate::bench::{Bench, Family, FAMILIES};
use crate::stats::band::MOST_ROUNDS;
use crate::stats::band::{More, Verdict};
use anyhow::Context as _;
pub use commands::Commands;
pub(crate) use rows::words as verdict_words;
use rows::Row;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most rounds a later pass adds.
const MOST_A_PASS: usize = 20;

/// What `envbench fidelity` was asked.
#[derive(Debug, Clone)]
pub struct FidelitySettings {
    /// The families whose references run (all that declare some when empty).
    pub families: Vec<String>,
    /// Bench ids to keep (all when empty).
    pub only: Vec<String>,
    /// The first pass's rounds.
    pub rounds: usize,
    /// The time after which no further pass starts.
    pub budget: Duration,
    /// Where the JSON goes.
    pub json: Option<PathBuf>,
    /// Where the Markdown table goes.
    pub markdown: Option<PathBuf>,
    /// The base of the scratch directory.
    pub scratch: PathBuf,
    /// The directory the io family's cases and tools work in (`--dir`;
    /// none: under the scratch base).
    pub dir: Option<PathBuf>,
    /// A person's own commands, each held to hyperfine (`--cmd`).
    pub commands: Commands,
}

/// The families that declare references, by name.
pub fn families_with_references() -> Vec<&'static str> {
    FAMILIES
        .iter()
        .filter(|f| f.benches().iter().any(|b| !b.references().is_empty()))
        .map(|f| f.name())
        .collect()
}

/// Runs `envbench fidelity`.
///
/// # Errors
/// The scratch directory cannot be made, envbench cannot run, or an
/// output cannot be written.
pub fn run(s: &FidelitySettings) -> anyhow::Result<ExitCode> {
    let interrupted = Arc::new(AtomicBool::new(false));
    crate::cleanup::watch_signals(Arc::clone(&interrupted)).context("cannot watch for Ctrl-C")?;
    let started = Instant::now();
    let mut shop = Workshop::new(&s.scratch)?.with_dirs(vec![crate::config::NamedDir {
        name: IO_DIR.to_string(),
        path: io_dir(s),
    }]);
    let mut rows = if s.commands.alone {
        Vec::new()
    } else {
        rows_for(s, &mut shop)
    };
    rows.extend(commands::rows(&s.commands, &shop));
    if interrupted.load(Ordering::SeqCst) {
        eprintln!(
            "envbench: interrupted while the reference tools were made ready; nothing was measured"
        );
        return Ok(ExitCode::from(130));
    }
    if rows.iter().all(|r| r.tools.is_err()) {
        for r in &rows {
            eprintln!("{}", r.line());
        }
        anyhow::bail!("no reference tool runs here: nothing to compare envbench with");
    }
    let me = std::env::current_exe().context("cannot find envbench's own executable")?;
    let machine = machine_line(shop.first_cpu());
    eprintln!("{machine}");
    // compiling and a first run of each tool count against the budget:
    // 280 s of 300 under gVisor's ptrace platform
    eprintln!(
        "the reference tools were made ready (compiled, each run once) in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    passes(s, &shop, &me, &mut rows, &interrupted, started);
    drop(shop);
    let summary = rows::Summary::of(&rows, started.elapsed(), machine);
    for r in &rows {
        println!("{}", r.line());
    }
    println!("{}", summary.line());
    if let Some(path) = &s.json {
        crate::store::write_document(path, rows::json(&rows, &summary).as_bytes())?;
    }
    if let Some(path) = &s.markdown {
        crate::store::write_document(path, rows::markdown(&rows).as_bytes())?;
    }
    if interrupted.load(Ordering::SeqCst) {
        eprintln!("envbench: interrupted: the rows above hold the rounds measured");
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// The passes: the first `s.rounds` rounds of every row whose tool runs,
/// then, while the budget lasts, as many more as the fewest any unclear
/// row asks for (at most [`MOST_A_PASS`]) of the rows still unclear; the
/// rows are judged after each pass.
fn passes(
    s: &FidelitySettings,
    shop: &Workshop,
    me: &Path,
    rows: &mut [Row],
    interrupted: &AtomicBool,
    started: Instant,
) {
    let mut add = s.rounds;
    let mut turn = 0usize;
    let mut per_round: Option<Duration> = None;
    for pass in 1.. {
        let open: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].open(pass)).collect();
        if open.is_empty() {
            break;
        }
        let left = s.budget.saturating_sub(started.elapsed());
        if pass > 1 {
            let Some(cost) = per_round.filter(|c| !c.is_zero()) else {
                break;
            };
            add = add.min((left.as_secs_f64() / cost.as_secs_f64()) as usize);
            if add == 0 {
                break;
            }
        }
        eprintln!(
            "pass {pass}: {add} round{} of {} row{}{}; {:.0} of {:.0} s spent",
            plural(add),
            open.len(),
            plural(open.len()),
            per_round.map_or(String::new(), |c| format!(
                ", about {:.0} s",
                c.as_secs_f64() * add as f64
            )),
            started.elapsed().as_secs_f64(),
            s.budget.as_secs_f64()
        );
        let pass_started = Instant::now();
        let mut done = 0;
        for _ in 0..add {
            let measured = open.iter().any(|&i| rows[i].measurable());
            if !measured || interrupted.load(Ordering::SeqCst) {
                break;
            }
            round(me, shop, rows, &open, turn, &s.scratch, interrupted);
            turn += 1;
            done += 1;
            if done == 1 && add > 1 && !interrupted.load(Ordering::SeqCst) {
                let before = pass_started.duration_since(started);
                let took = pass_started.elapsed();
                eprintln!("{}", eta_line(pass, took, add, before, s.budget));
            }
        }
        if done > 0 {
            per_round = Some(pass_started.elapsed() / done as u32);
        }
        for &i in &open {
            rows[i].judge();
        }
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        // the next pass: the fewest rounds an unclear row asks for
        add = rows
            .iter()
            .filter_map(Row::wanted)
            .min()
            .unwrap_or(0)
            .clamp(1, MOST_A_PASS);
    }
}

/// What a pass's first round says: how long the pass will take and,
/// where the first pass (which runs its `--rounds` whatever the budget)
/// would end past the budget, the `--rounds` that would have fitted.
/// `before`: the seconds spent when the pass started.
fn eta_line(pass: usize, took: Duration, add: usize, before: Duration, budget: Duration) -> String {
    let (took, before, budget) = (
        took.as_secs_f64(),
        before.as_secs_f64(),
        budget.as_secs_f64(),
    );
    // no row takes more than MOST_ROUNDS, whatever --rounds asks
    let whole = took * add.min(MOST_ROUNDS) as f64;
    let mut line = format!("  a round took {took:.0} s: about {whole:.0} s for this pass");
    if pass == 1 && before + whole > budget && took > 0.0 {
        let fits = ((budget - before) / took).floor().max(0.0) as usize;
        line += &format!(
            ", ending at about {:.0} s, past the {budget:.0} s budget",
            before + whole
        );
        if fits >= 2 {
            line += &format!(" (--rounds {fits} would end within it)");
        }
    }
    line
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The rows of the families and benches asked for, each with its tools
/// made ready for its case as its family plans it here (or why they
/// cannot run here).
fn rows_for(s: &FidelitySettings, shop: &mut Workshop) -> Vec<Row> {
    let mut rows = Vec::new();
    for family in FAMILIES {
        if !s.families.is_empty() && !s.families.iter().any(|f| f == family.name()) {
            continue;
        }
        for bench in family.benches() {
            if !s.only.is_empty() && !s.only.iter().any(|o| o == bench.id()) {
                continue;
            }
            for reference in bench.references() {
                let row = match row_plan(s, *family, &reference, shop) {
                    Ok((plan, run)) => Row::new(*bench, reference, shop, &bench.cases(&plan), run),
                    Err(why) => {
                        let mut row = Row::new(*bench, reference, shop, &[], Vec::new());
                        row.tools = Err(why);
                        row
                    }
                };
                rows.push(row);
            }
        }
    }
    rows
}

/// How `envbench run` is told to measure a row's case, beside `--only`.
struct RunArgs {
    suite: crate::config::Suite,
    /// Its repetitions, `N..N`.
    reps: String,
    extra: Vec<String>,
}

impl RunArgs {
    fn args(&self) -> Vec<String> {
        ["--suite", self.suite.name(), "--reps", &self.reps]
            .map(String::from)
            .into_iter()
            .chain(self.extra.iter().cloned())
            .collect()
    }
}

/// How a row's case is planned and run: as its family's ([`family_plan`]),
/// with the suite and repetitions its side asks for, loading the server
/// it names (`--http-url`, the server started here).
///
/// # Errors
/// The server the case loads cannot run here.
fn row_plan(
    s: &FidelitySettings,
    family: &dyn Family,
    reference: &crate::bench::reference::Reference,
    shop: &mut Workshop,
) -> Result<(crate::bench::Plan, Vec<String>), String> {
    let (mut plan, mut how) = family_plan(s, family, shop.cpus());
    let side = reference.envbench;
    // where it runs first: a run placed on a CPU that is not here starts
    // no server
    shop.cpu(side.on)?;
    if let Some(suite) = side.suite {
        plan.suite = suite;
        how.suite = suite;
    }
    if let Some(n) = side.reps {
        how.reps = format!("{n}..{n}");
    }
    if let Some((server, path)) = side.loads {
        let url = shop.url(server, path)?;
        plan.options =
            std::mem::take(&mut plan.options).with(crate::bench::net::HTTP_URL, url.as_str());
        how.extra.extend(["--http-url".to_string(), url]);
    }
    Ok((plan, how.args()))
}

/// How `family`'s cases are planned and run: the quick suite, five
/// repetitions a case; the io family in the standard suite (its 1 s of
/// random I/O, the length of sysbench's shortest run) on its directory,
/// with files of [`FIDELITY_SIZE`], one round of a warm-up and three
/// repetitions, as its tools run.
fn family_plan(
    s: &FidelitySettings,
    family: &dyn Family,
    cpus: usize,
) -> (crate::bench::Plan, RunArgs) {
    use crate::bench::io::references::FIDELITY_SIZE;
    let mut plan = crate::bench::Plan {
        suite: crate::config::Suite::Quick,
        cpus,
        threads: None,
        dirs: Vec::new(),
        options: crate::config::FamilyOptions::default(),
    };
    if family.name() != "io" {
        let how = RunArgs {
            suite: plan.suite,
            reps: "5..5".into(),
            extra: Vec::new(),
        };
        return (plan, how);
    }
    let dir = io_dir(s);
    plan.suite = crate::config::Suite::Standard;
    plan.dirs = vec![crate::config::NamedDir {
        name: IO_DIR.to_string(),
        path: dir.clone(),
    }];
    plan.options = crate::bench::io::references::fidelity_options();
    let extra = [
        "--rounds",
        "1",
        "--file-size",
        FIDELITY_SIZE,
        "--io-total",
        FIDELITY_SIZE,
        "--dir",
    ]
    .map(String::from)
    .into_iter()
    .chain([format!("{IO_DIR}={}", dir.display())])
    .collect();
    let how = RunArgs {
        suite: plan.suite,
        reps: "3..3".into(),
        extra,
    };
    (plan, how)
}

/// The name of the io family's directory in its cases' keys.
const IO_DIR: &str = "io";

/// The io family's directory: `--dir`, or the scratch base.
fn io_dir(s: &FidelitySettings) -> PathBuf {
    s.dir.clone().unwrap_or_else(|| s.scratch.clone())
}

/// One round of the `open` rows that have fewer than [`MOST_ROUNDS`](crate::stats::band::MOST_ROUNDS)
/// rounds (a pass can reach it midway): for each placement of envbench (as
/// the scheduler places it, or on the first CPU), one envbench run of their
/// cases and each row's tools once; envbench first in even turns, the
/// tools first in odd ones. A placement interrupted is not recorded.
fn round(
    me: &Path,
    shop: &Workshop,
    rows: &mut [Row],
    open: &[usize],
    turn: usize,
    scratch: &Path,
    interrupted: &AtomicBool,
) {
    // rows whose envbench figure is a tool's: no run, the two tools in turns
    for &i in open {
        if rows[i].measured_by_a_tool() && rows[i].measurable() {
            if interrupted.load(Ordering::SeqCst) {
                return;
            }
            rows[i].measure_both(turn);
        }
    }
    let mut kinds: Vec<(Cpus, &[String])> = Vec::new();
    for &i in open.iter().filter(|&&i| !rows[i].measured_by_a_tool()) {
        let kind = (rows[i].reference.envbench.on, rows[i].run.as_slice());
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    let kinds: Vec<(Cpus, Vec<String>)> = kinds.into_iter().map(|(p, r)| (p, r.to_vec())).collect();
    for (on, run) in kinds {
        let group: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&i| {
                !rows[i].measured_by_a_tool()
                    && rows[i].reference.envbench.on == on
                    && rows[i].run == run
                    && rows[i].measurable()
            })
            .collect();
        if group.is_empty() || interrupted.load(Ordering::SeqCst) {
            continue;
        }
        // a row's placement was checked when its tools were made ready
        let cpu = shop.cpu(on).ok().flatten();
        let mut cases: Vec<String> = group.iter().map(|&i| rows[i].selector()).collect();
        cases.dedup();
        let mut envbench = None;
        let mut tools: Vec<(usize, Result<Vec<f64>, String>)> = Vec::new();
        for side in if turn.is_multiple_of(2) {
            [0, 1]
        } else {
            [1, 0]
        } {
            if side == 0 {
                envbench = Some(envbench_run(me, &cases, &run, cpu, scratch));
            } else {
                tools = group
                    .iter()
                    .map(|&i| (i, rows[i].measure_tools()))
                    .collect();
            }
        }
        if interrupted.load(Ordering::SeqCst) {
            return;
        }
        let file = envbench.expect("both sides ran");
        for (i, tool) in tools {
            rows[i].record(file.as_ref(), tool);
        }
    }
}

/// One `envbench run` of `cases` with `run`'s arguments ([`family_plan`]),
/// on `cpu` when given, read back from its result file. It runs in this
/// process's group, so a Ctrl-C reaches it and it winds down as a run
/// does; a run that exits 1 (a case failed) is read all the same, each
/// row judging its own case's status.
fn envbench_run(
    me: &Path,
    cases: &[String],
    run: &[String],
    cpu: Option<usize>,
    scratch: &Path,
) -> Result<crate::results::ResultFile, String> {
    let dir = crate::bench::ScratchDir::new(scratch, "fidelity-run").map_err(|e| e.to_string())?;
    let out = dir.path().join("envbench.json");
    let only = cases.join(",");
    let mut cmd = Command::new(me);
    cmd.args(["run", "--no-history", "--quiet"])
        .args(run)
        .args(["--only", &only, "-o"])
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    crate::cleanup::die_with_envbench(&mut cmd);
    if let Some(c) = cpu {
        crate::bench::affinity::start_on(&mut cmd, c)
            .map_err(|e| format!("cannot run on CPU {c}: {e}"))?;
    }
    let ended = cmd
        .output()
        .map_err(|e| format!("cannot start envbench run --only {only}: {e}"))?;
    let file = crate::store::load(&out);
    match (ended.status.code(), file) {
        (Some(0 | 1), Ok(f)) => Ok(f),
        (_, file) => {
            let said = String::from_utf8_lossy(&ended.stderr);
            let last = said
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            Err(format!(
                "envbench run --only {only} ended with {}{}{}",
                ended.status,
                if last.is_empty() {
                    String::new()
                } else {
                    format!(": {last}")
                },
                file.err().map_or(String::new(), |e| format!(" ({e})"))
            ))
        }
    }
}

impl Row {
    /// Whether this pass measures the row: every row whose tool runs in
    /// the first, then those unclear that more rounds would settle, up to
    /// [`MOST_ROUNDS`](crate::stats::band::MOST_ROUNDS) rounds (the seeded tests' error rates hold so far).
    fn open(&self, pass: usize) -> bool {
        if !self.measurable() {
            return false;
        }
        pass == 1 || self.wanted().is_some()
    }

    /// The rounds the row asks for, while unclear and settleable.
    fn wanted(&self) -> Option<usize> {
        if !self.live() {
            return None;
        }
        match self.judged.as_ref()?.verdict {
            Verdict::Unclear(m) if m != More::AtEdge => Some(m.wanted()),
            _ => None,
        }
    }
}

/// A family name `envbench fidelity --sections` takes, or why not.
///
/// # Errors
/// The name is no family's, or the family declares no reference.
pub fn check_family(name: &str) -> Result<(), String> {
    let with = families_with_references();
    if with.contains(&name) {
        return Ok(());
    }
    let known = FAMILIES.iter().any(|f: &&dyn Family| f.name() == name);
    Err(format!(
        "{} {name:?}; families with reference tools: {}",
        if known {
            "no reference tool is declared for the family"
        } else {
            "no family is named"
        },
        with.join(", ")
    ))
}

/// A bench id `envbench fidelity --only` takes, or why not.
///
/// # Errors
/// No bench has the id, or it declares no reference.
pub fn check_bench(id: &str) -> Result<(), String> {
    let benches: Vec<&dyn Bench> = FAMILIES
        .iter()
        .flat_map(|f| f.benches().iter().copied())
        .filter(|b| !b.references().is_empty())
        .collect();
    if benches.iter().any(|b| b.id() == id) {
        return Ok(());
    }
    Err(format!(
        "no bench {id:?} has a reference tool; those that do: {}",
        benches
            .iter()
            .map(|b| b.id())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The machine the rows were measured on: CPU model, usable CPUs, kernel.
fn machine_line(first_cpu: usize) -> String {
    let roots = crate::probe::Roots::live();
    let model = roots
        .read("/proc/cpuinfo")
        .and_then(|t| crate::probe::cpu::parse_cpuinfo(&t).model)
        .unwrap_or_else(|| "an unknown CPU".into());
    let cpus = crate::bench::affinity::allowed_cpus().map_or(0, |c| c.len());
    let kernel = crate::probe::os::probe_os(&roots, &mut crate::probe::Notes::new())
        .kernel_release
        .unwrap_or_default();
    format!(
        "fidelity on {model}, {cpus} usable CPU{} (the first: {first_cpu}), Linux {}; \
         ratio = envbench / reference with its 95 % interval over rounds taken in turns",
        if cpus == 1 { "" } else { "s" },
        kernel.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::eta_line;
    use std::time::Duration;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn a_first_pass_past_the_budget_says_the_rounds_that_fit() {
        // this Zen 3 VM's run: 99 s of making ready, rounds of 184 s, 5
        // rounds against 600 s
        assert_eq!(
            eta_line(1, secs(184), 5, secs(99), secs(600)),
            "  a round took 184 s: about 920 s for this pass, ending at about 1019 s, \
             past the 600 s budget (--rounds 2 would end within it)"
        );
        // within the budget: the time alone
        assert_eq!(
            eta_line(1, secs(90), 5, secs(99), secs(600)),
            "  a round took 90 s: about 450 s for this pass"
        );
        // too little left for an interval's two rounds: no --rounds named
        assert_eq!(
            eta_line(1, secs(400), 5, secs(99), secs(600)),
            "  a round took 400 s: about 2000 s for this pass, ending at about 2099 s, \
             past the 600 s budget"
        );
        // --rounds above the most a row takes: the pass ends at that many
        assert_eq!(
            eta_line(1, secs(1), 1000, secs(10), secs(600)),
            "  a round took 1 s: about 60 s for this pass"
        );
        // a later pass is already cut to the budget
        assert_eq!(
            eta_line(2, secs(184), 3, secs(700), secs(600)),
            "  a round took 184 s: about 552 s for this pass"
        );
    }
}
