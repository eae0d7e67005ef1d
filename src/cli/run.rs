//! `run`'s arguments ([`RunArgs`]) and how they settle: patterns, label,
//! directories and history database checked, the suite's defaults under
//! the user's overrides. What depends on the machine (the environment
//! probed, thread counts checked against it, the cases planned, the run
//! named) is settled by [`crate::cmd::run`].

use super::args::{AllMetricsArg, DbArg, SuiteArg};
use super::check;
use super::values::{
    parse_cmd, parse_dir, parse_in, parse_in_binary, parse_percent, parse_positive_secs,
    parse_reps, parse_threads, parse_wait_secs, parse_warmup, CmdArg, InArg,
};
use super::values::{split_words, DirArg};
use crate::bench::cmd::CommandSpec as CmdSpec;
use crate::cmd::run::{RunSettings, IN_PLACEHOLDER};
use crate::config::{Alternate, FamilyOptions, NamedDir, Precision, RepPolicy, RunConfig, Suite};
use crate::engine;
use crate::engine::launch::{Launcher, Place};
use crate::error::UsageError;
use crate::results::ids;
use clap::{Args, ValueEnum};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The settings of `run` for `a`.
///
/// # Errors
/// [`UsageError`] for a bad pattern, label, directory or history
/// database.
pub(super) fn settings(a: RunArgs) -> anyhow::Result<RunSettings> {
    let mut selectors = check::patterns(&a.only)?;
    let commands = commands(&a.cmd)?;
    if let Some(l) = &a.label {
        check::label(l)?;
    }
    let dirs = check::target_dirs(&a.dirs)?;
    let db = check::db(a.db.db.as_ref())?;
    let environments = environments(&a)?;
    let mut config = config(&a, dirs)?;
    if !commands.is_empty() {
        // the commands run whatever --only says; alone without it
        selectors.extend(check::patterns(&[ids::CMD.to_string()])?);
        config.only.push(ids::CMD.to_string());
        config.options.0.insert(
            crate::bench::cmd::OPTION.to_string(),
            serde_json::to_value(&commands).unwrap_or_default(),
        );
    }
    Ok(RunSettings {
        environments,
        config,
        selectors,
        budget: a.budget,
        db,
        record: !a.no_history,
        plan_only: a.plan,
        quiet: a.quiet,
        force: a.force,
        all_metrics: a.all_metrics.all_metrics,
    })
}

/// `--cmd`'s commands, named (cmd1, cmd2 ... where no name is given),
/// split into words or set behind `--cmd-shell`, with the prepare, setup
/// and cleanup commands of `--cmd-*`.
///
/// # Errors
/// [`UsageError`] for a name given twice, or words a shell would be needed
/// for (and no `--cmd-shell`).
pub(super) fn commands(a: &CmdArgs) -> Result<Vec<CmdSpec>, UsageError> {
    let words = |text: &str, flag: &str| -> Result<Vec<String>, UsageError> {
        let argv = match &a.cmd_shell {
            Some(shell) => vec![shell.clone(), "-c".into(), text.to_string()],
            None => split_words(text).map_err(|e| {
                UsageError(format!(
                    "{flag} {} (for a pipe, a redirection or a variable, add --cmd-shell sh)",
                    e.replace("no shell runs the prefix", "no shell runs the command")
                ))
            })?,
        };
        if argv.is_empty() {
            return Err(UsageError(format!("{flag} '{text}' gives no command")));
        }
        Ok(argv)
    };
    let extra =
        |given: &Option<String>, flag: &str| given.as_deref().map(|t| words(t, flag)).transpose();
    let (prepare, setup, cleanup) = (
        extra(&a.cmd_prepare, "--cmd-prepare")?,
        extra(&a.cmd_setup, "--cmd-setup")?,
        extra(&a.cmd_cleanup, "--cmd-cleanup")?,
    );
    if a.cmds.is_empty() {
        for (flag, given) in [
            ("--cmd-shell", a.cmd_shell.is_some()),
            ("--cmd-prepare", prepare.is_some()),
            ("--cmd-setup", setup.is_some()),
            ("--cmd-cleanup", cleanup.is_some()),
            ("--cmd-ignore-failure", a.cmd_ignore_failure),
        ] {
            if given {
                return Err(UsageError(format!("{flag} goes with --cmd NAME='COMMAND'")));
            }
        }
    }
    let mut out: Vec<CmdSpec> = Vec::new();
    for (i, c) in a.cmds.iter().enumerate() {
        let name = c.name.clone().unwrap_or_else(|| format!("cmd{}", i + 1));
        if out.iter().any(|o| o.name == name) {
            return Err(UsageError(format!(
                "--cmd {name}=...: the name is given twice; each command needs its own"
            )));
        }
        out.push(CmdSpec {
            argv: words(&c.text, "--cmd")?,
            name,
            text: c.text.clone(),
            prepare: prepare.clone(),
            setup: setup.clone(),
            cleanup: cleanup.clone(),
            ignore_failure: a.cmd_ignore_failure,
        });
    }
    Ok(out)
}

/// The flags that give `envbench run` the commands `a` gave (each named,
/// as [`commands`] named it), for another command to pass on.
pub(super) fn forwarded(a: &CmdArgs, specs: &[CmdSpec]) -> Vec<String> {
    let mut out = Vec::new();
    for c in specs {
        out.push("--cmd".to_string());
        out.push(format!("{}={}", c.name, c.text));
    }
    for (flag, given) in [
        ("--cmd-shell", &a.cmd_shell),
        ("--cmd-prepare", &a.cmd_prepare),
        ("--cmd-setup", &a.cmd_setup),
        ("--cmd-cleanup", &a.cmd_cleanup),
    ] {
        if let Some(v) = given {
            out.push(flag.to_string());
            out.push(v.clone());
        }
    }
    if a.cmd_ignore_failure {
        out.push("--cmd-ignore-failure".to_string());
    }
    out
}

/// `--in`'s environments with their `--in-binary` paths, checked: none,
/// or two or more with names of their own (each a valid label), and no
/// flag beside them that they make meaningless.
///
/// # Errors
/// [`UsageError`] saying what is wrong and what to give instead.
fn environments(a: &RunArgs) -> Result<Vec<Place>, UsageError> {
    if a.ins.is_empty() {
        return without_in(a).map(|()| Vec::new());
    }
    if let [only] = a.ins.as_slice() {
        return Err(UsageError(format!(
            "--in {}: interleaving needs two or more environments (--in A --in B=PREFIX); \
             to measure one environment alone, run envbench in it",
            only.name
        )));
    }
    for (flag, given) in [
        ("--label", a.label.is_some()),
        ("--workers off", a.workers == Switch::Off),
    ] {
        if given {
            return Err(UsageError(format!(
                "{flag} does not go with --in: {}",
                if flag == "--label" {
                    "each environment's NAME is the label of its result file"
                } else {
                    "the environments are entered through worker processes, one per case round"
                }
            )));
        }
    }
    if let Some(o) = &a.output {
        if !o.to_string_lossy().contains(IN_PLACEHOLDER) {
            return Err(UsageError(format!(
                "-o {}: with --in, each environment writes a file of its own: give a pattern \
                 holding {IN_PLACEHOLDER}, which becomes each NAME (-o 'runs/{IN_PLACEHOLDER}.json')",
                o.display()
            )));
        }
    }
    places(a)
}

/// Refuses what needs `--in` where none is given.
fn without_in(a: &RunArgs) -> Result<(), UsageError> {
    if let Some(o) = a
        .output
        .as_ref()
        .filter(|o| o.to_string_lossy().contains(IN_PLACEHOLDER))
    {
        return Err(UsageError(format!(
            "-o {}: {IN_PLACEHOLDER} stands for each --in environment's name, and no --in \
             is given; name the file itself",
            o.display()
        )));
    }
    if let Some((name, _)) = a.in_binary.first() {
        return Err(UsageError(format!(
            "--in-binary {name}=...: goes with --in {name}=PREFIX (an environment to start \
             envbench in)"
        )));
    }
    if a.alternate.is_some() {
        return Err(UsageError(
            "--alternate says how environments measured interleaved take turns: it needs \
             two or more --in (--in A --in B=PREFIX)"
                .into(),
        ));
    }
    if a.precision.is_some() && a.dirs.len() < 2 {
        return Err(UsageError(
            "--precision narrows the comparison of environments measured interleaved or of \
             directories measured in turns: it needs two or more --in (--in A --in B=PREFIX) \
             or two or more --dir; one environment alone takes more --rounds or a larger \
             --budget"
                .into(),
        ));
    }
    Ok(())
}

/// Each `--in` environment with its `--in-binary`, refusing a name given
/// twice or not given.
fn places(a: &RunArgs) -> Result<Vec<Place>, UsageError> {
    let mut out: Vec<Place> = Vec::new();
    for i in &a.ins {
        if out.iter().any(|e| e.name == i.name) {
            return Err(UsageError(format!(
                "--in {}: given twice; each environment needs a name of its own",
                i.name
            )));
        }
        check::label(&i.name).map_err(|e| UsageError(e.0.replacen("--label", "--in", 1)))?;
        out.push(Place {
            name: i.name.clone(),
            launcher: Launcher {
                prefix: i.prefix.clone(),
                binary: None,
            },
        });
    }
    for (name, path) in &a.in_binary {
        let Some(env) = out.iter_mut().find(|e| &e.name == name) else {
            return Err(UsageError(format!(
                "--in-binary {name}=...: no --in {name} (the environments are {})",
                a.ins
                    .iter()
                    .map(|i| i.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        if env.launcher.binary.replace(path.clone()).is_some() {
            return Err(UsageError(format!("--in-binary {name}: given twice")));
        }
    }
    Ok(out)
}

/// The configuration: the directories named, the suite's defaults under
/// the user's overrides. An absent label or output stays empty: `run`
/// fills them in from the fingerprint.
///
/// # Errors
/// [`UsageError`] for a name given to two directories.
fn config(a: &RunArgs, dirs: Vec<DirArg>) -> Result<RunConfig, UsageError> {
    let dirs = NamedDir::name_all(dirs.into_iter().map(|d| (d.name, d.path))).map_err(|e| {
        UsageError(format!(
            "--dir: {e}; each directory needs its own name (--dir NAME=PATH; a plain PATH \
             is named dirN by its position)"
        ))
    })?;
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
    Ok(RunConfig {
        suite,
        reps,
        only: a
            .only
            .iter()
            .flat_map(|raw| engine::select::split(raw))
            .filter(|p| !p.is_empty())
            .collect(),
        dirs,
        label: a.label.clone().unwrap_or_default(),
        output: a.output.clone().unwrap_or_default(),
        seed: a.seed.unwrap_or_else(crate::config::fresh_seed),
        threads: a.threads.clone(),
        fake_clock: a.fake_clock,
        options: FamilyOptions(a.family_options.clone()),
        wait_idle_secs: a.wait_idle,
        require_idle: a.require_idle,
        workers: a.workers == Switch::On,
        precision: a.precision.map(|half_width| Precision {
            half_width,
            extra_secs: a.precision_time,
        }),
        // one environment alone takes no turns
        alternate: match a.alternate {
            _ if a.ins.len() < 2 => Alternate::Round,
            Some(AlternateArg::Rep) | None => Alternate::Rep,
            Some(AlternateArg::Round) => Alternate::Round,
        },
    })
}

/// `run --alternate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AlternateArg {
    /// One repetition each in turn.
    Rep,
    /// One whole round each in turn.
    Round,
}

/// On or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

/// `envbench run` options.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Battery size.
    #[arg(long, value_enum, default_value = "quick")]
    pub suite: SuiteArg,
    /// Run only these benchmarks: ids (os.syscall), families (os) or globs
    /// (cpu.*), comma-separated; parameters in brackets pick cases, written
    /// as in a case key (io.dd[op=write_direct], net.http[clients=1,page=1KiB]).
    /// `envbench list` shows the benchmarks, `run --plan` the cases.
    #[arg(long, value_name = "PATTERN,...")]
    pub only: Vec<String>,
    /// Directory for file benchmarks, with the name it has in case keys;
    /// repeat to compare filesystems in one run (`--dir ext4=. --dir
    /// shm=/dev/shm`). The name (letters, digits, `_`, `-`) is what
    /// matches across environments, never the path, so `--dir
    /// work=/home/me/w` in one and `--dir work=/mnt/c/w` in another compare
    /// as the same cases. A plain PATH is named dir1, dir2 ... by position
    /// (write ./a=b for a path holding `=`). envbench works in a fresh
    /// subdirectory and removes it. [default: the current directory, as dir1]
    #[arg(long = "dir", value_name = "[NAME=]PATH", value_parser = parse_dir)]
    pub dirs: Vec<DirArg>,
    /// A person's own commands ([`CmdArgs`]).
    #[command(flatten)]
    pub cmd: CmdArgs,
    /// Name of this environment, e.g. native, wsl2, vm. [default: the
    /// detected virtualisation, e.g. bare-metal, wsl2, kvm-docker]
    #[arg(long)]
    pub label: Option<String>,
    /// Measure several environments in one run, interleaved, a result
    /// file each (give two or more).
    ///
    /// NAME alone is this machine as it is; NAME=PREFIX starts each of the
    /// environment's worker processes as PREFIX, then envbench's path,
    /// then a hidden argument. For example:
    ///
    ///   --in host --in gvisor='runsc --network=none do -force-overlay=false --'
    ///   --in host --in vm='ssh -T guest' --in-binary vm=/usr/local/bin/envbench
    ///   --in two-cpus --in one-cpu='taskset -c 0'
    ///
    /// (gVisor's -force-overlay=false makes the sandbox write through to the
    /// host's files; by default it lays an overlay in memory over them, which
    /// the io and app cases would measure.)
    ///
    /// Each case round runs once in every environment, in an order drawn
    /// for each case (seeded, recorded) and turned round by round, so that
    /// each environment goes first as often as the others, the
    /// environments share the same minutes and the machine's drift falls
    /// on all of them.
    /// Each environment is fingerprinted through its prefix first; one
    /// whose prefix cannot start envbench stops the run before anything is
    /// measured (exit 2), showing the command tried. PREFIX is split into
    /// words as a shell would split them (quotes, backslashes), but no
    /// shell runs it: pipes, redirections, $VARIABLES and ~ are refused.
    /// NAME is letters, digits, '_' and '-'; it labels that environment's
    /// result file (so --label is not taken). Each environment gets its own
    /// file, run id and history entry; the files share an id
    /// (rounds.interleave), and compare pairs their rounds. -o takes
    /// a pattern holding {in}, replaced by each NAME (-o 'runs/{in}.json').
    /// --budget, the suite's time and --rounds apply to each environment:
    /// two environments take about twice one run's time.
    #[arg(long = "in", value_name = "NAME[=PREFIX]", value_parser = parse_in, verbatim_doc_comment)]
    pub ins: Vec<InArg>,
    /// envbench's path inside the --in environment NAME, where it differs
    /// from this binary's (a VM or a container with a file system of its
    /// own; ssh runs it through the guest's shell). A prefix that shares
    /// this machine's file system (runsc do, unshare, bwrap, taskset, env)
    /// needs none. [default: this binary's path]
    #[arg(long = "in-binary", value_name = "NAME=PATH", value_parser = parse_in_binary)]
    pub in_binary: Vec<(String, PathBuf)>,
    /// Result file. With --in, a pattern holding {in}, replaced by each
    /// environment's name. [default: envbench-LABEL-HOST-UTCTIME-RANDOM.json
    /// in the current directory, created exclusively; with --in,
    /// envbench-NAME-HOST-UTCTIME-RANDOM.json, RANDOM shared by the run]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the result file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Repetitions per case over all rounds: MIN..MAX, or N for exactly N.
    /// MIN is at least 2. Each round runs its share (at least one, so a
    /// case gets no more rounds than MAX). [default: 3..40 in quick, 5..60
    /// in standard, 10..50 in full]
    #[arg(long, value_name = "MIN..MAX", value_parser = parse_reps, allow_negative_numbers = true)]
    pub reps: Option<(u32, u32)>,
    /// Rounds: passes over the case list, each in a new seeded shuffle with
    /// every case prepared afresh (in a fresh worker process, new buffers),
    /// so that drift and allocation luck spread over many short rounds
    /// instead of hiding inside a few. A case whose round is cheap runs in
    /// every pass; a dear one gets the rounds its budget pays for (at least
    /// 3, at most its --reps maximum). Rounds share each case's repetitions
    /// and budget; they do not multiply the time. `compare` uses them as a
    /// level of its statistics. [default: 12 in quick, 16 in standard, 5 in
    /// full]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: Option<u32>,
    /// Warm-up repetitions per case and round, discarded (at most 100).
    #[arg(long, value_name = "N", value_parser = parse_warmup, allow_negative_numbers = true)]
    pub warmup: Option<u32>,
    /// Time budget per case in seconds (in each environment, with --in):
    /// no repetition beyond the minimum starts after it.
    #[arg(long, value_name = "SECONDS", value_parser = parse_positive_secs, allow_negative_numbers = true)]
    pub budget: Option<f64>,
    /// Stop repeating once the 95 % CI of the median is within ± this many
    /// percent of it.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent, allow_negative_numbers = true)]
    pub ci_target: Option<f64>,
    /// With --in: after the planned rounds, more interleaved rounds of
    /// each case whose headline comparison (every environment against the
    /// first) has a 95 % interval wider than ± PERCENT, until each reaches
    /// it or --precision-time is spent; the cheapest rounds first. Without
    /// --in, with two or more --dir: more rounds, in turns, of each case
    /// whose directories compare (as `compare --by-dir`, the first --dir
    /// against each other) wider than that. The run says which cases did
    /// not reach it, and why. On a noisy host one
    /// round pair of a case may differ by 10 %: ±3 % then needs about 45
    /// rounds, where quick plans 12.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent, allow_negative_numbers = true)]
    pub precision: Option<f64>,
    /// With --in: how the environments take turns within a case round.
    /// rep: their workers prepare the case together, then measure one
    /// repetition each in turn, so that the repetitions compared lie
    /// milliseconds apart and a host that changes within seconds moves
    /// both alike; a case too large for two workers' memory at once goes
    /// by round. round: each measures its whole round in turn.
    /// [default: rep]
    #[arg(long, value_enum, value_name = "rep|round")]
    pub alternate: Option<AlternateArg>,
    /// The seconds --precision's added rounds may take, in all
    /// environments together. [default: twice what the planned rounds
    /// took]
    #[arg(long, value_name = "SECONDS", value_parser = parse_positive_secs, allow_negative_numbers = true, requires = "precision")]
    pub precision_time: Option<f64>,
    /// Thread counts for multithreaded benchmarks, comma-separated.
    /// [default: 1, 2, 4 ... up to the usable CPUs]
    #[arg(long, value_delimiter = ',', value_name = "N,...", value_parser = parse_threads, allow_negative_numbers = true)]
    pub threads: Option<Vec<usize>>,
    /// Seed of the case and environment orders, the bootstrap and the
    /// benchmark inputs (stored in the result). [default: drawn anew for
    /// each run, so runs do not repeat one another's orders]
    #[arg(long, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Print the plan (every case, its rounds, repetitions and budget, and
    /// the suite's total) and exit without measuring or writing anything.
    #[arg(long)]
    pub plan: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Every metric ([`AllMetricsArg`]).
    #[command(flatten)]
    pub all_metrics: AllMetricsArg,
    /// The history database ([`DbArg`]).
    #[command(flatten)]
    pub db: DbArg,
    /// Do not record the run in the history database. A run that cannot
    /// be recorded in a database named with --db fails (exit 1) and keeps
    /// its result file.
    #[arg(long)]
    pub no_history: bool,
    /// Before measuring, wait up to SECONDS for other processes to use
    /// less than a quarter of a CPU (sampled each second from /proc/stat).
    /// Without it, a busy machine only gets a warning in the result file.
    #[arg(long, value_name = "SECONDS", value_parser = parse_wait_secs, allow_negative_numbers = true)]
    pub wait_idle: Option<f64>,
    /// Refuse to measure (exit code 3) when other processes still use more
    /// than a quarter of a CPU after the idle check (and --wait-idle).
    #[arg(long)]
    pub require_idle: bool,
    /// Measure each case round in a fresh process of envbench (a worker),
    /// so that one run samples what differs from process to process
    /// (where memory and code landed, the CPU it started on) instead of
    /// keeping one process's luck in every round.
    #[arg(long, value_enum, value_name = "on|off", default_value = "on")]
    pub workers: Switch,
    /// Testing only: a fake clock that advances 10 ms per read, so counts
    /// and budgets are exact and instant. Timings are synthetic, except
    /// those taken inside child processes (os.fork's helper, os.multiprog).
    #[arg(long, hide = true)]
    pub fake_clock: bool,
    /// The options the benchmark families declare (`--stream-elems`,
    /// `--file-size` ...), by key, as their parsers returned them; filled
    /// from the matches after parsing ([`super::parse`]).
    #[arg(skip)]
    pub family_options: BTreeMap<String, Value>,
}

/// `--cmd` and the flags that go with it: a person's own commands, as
/// `run` times them and `fidelity` holds them to hyperfine.
#[derive(Debug, Args, Default)]
pub struct CmdArgs {
    /// Time a command of yours, as hyperfine would (repeatable): `--cmd
    /// status='git status'`. It runs in --dir (its working directory,
    /// where it may write: envbench does not stop it), warmed up and
    /// repeated like any case; its key is
    /// cmd.run[command=HASH,dir=DIR,name=NAME]. Its words are split as a
    /// shell splits them, but no shell runs it unless --cmd-shell asks for
    /// one; its output is discarded and a non-zero exit fails the case,
    /// with the last lines of its stderr. A plain COMMAND is named cmd1,
    /// cmd2 ... by position. In `run`, in each --dir and every --in
    /// environment, interleaved; once per environment it runs again under
    /// a system-call counter (ptrace), and `compare` says which of its
    /// operations make it slower, priced by the micro cases the run adds
    /// on the same --dir; without --only, a run with --cmd runs only the
    /// commands and those cases. In `fidelity`, held to hyperfine -N.
    #[arg(long = "cmd", value_name = "[NAME=]COMMAND", value_parser = parse_cmd)]
    pub cmds: Vec<CmdArg>,
    /// Run each --cmd (and its prepare, setup and cleanup commands)
    /// through this shell, as `SHELL -c COMMAND`, where pipes, redirections
    /// and $VARIABLES work (hyperfine's default; envbench's is no shell, as
    /// hyperfine -N).
    #[arg(long = "cmd-shell", value_name = "SHELL")]
    pub cmd_shell: Option<String>,
    /// A command run before each repetition of every --cmd, untimed
    /// (hyperfine --prepare): `--cmd-prepare 'sync'`.
    #[arg(long = "cmd-prepare", value_name = "COMMAND")]
    pub cmd_prepare: Option<String>,
    /// A command run once before each case round of every --cmd, untimed
    /// (hyperfine --setup).
    #[arg(long = "cmd-setup", value_name = "COMMAND")]
    pub cmd_setup: Option<String>,
    /// A command run once after each case round of every --cmd (hyperfine
    /// --cleanup).
    #[arg(long = "cmd-cleanup", value_name = "COMMAND")]
    pub cmd_cleanup: Option<String>,
    /// Take a --cmd's non-zero exit as a result, not a failure (hyperfine
    /// -i); its exits are noted in the result file.
    #[arg(long = "cmd-ignore-failure")]
    pub cmd_ignore_failure: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::path::PathBuf;

    #[test]
    fn user_overrides_suite_defaults() {
        let cli = super::super::args::Cli::parse_from([
            "envbench", "run", "--suite", "standard", "--reps", "4..6", "--budget", "3",
        ]);
        let super::super::args::Cmd::Run(args) = cli.cmd else {
            panic!("not run")
        };
        let dot = DirArg {
            name: None,
            path: PathBuf::from("."),
        };
        let c = config(&args, vec![dot]).unwrap();
        assert_eq!(c.suite, Suite::Standard);
        assert_eq!(
            (c.reps.reps_min, c.reps.reps_max, c.reps.budget_secs),
            (4, 6, 3.0)
        );
        assert_eq!(c.reps.warmup, RepPolicy::for_suite(Suite::Standard).warmup);
    }

    #[test]
    fn only_interleaved_environments_take_turns_at_the_repetition() {
        let alternate = |words: &[&str]| {
            let cli = super::super::args::Cli::parse_from(words);
            let super::super::args::Cmd::Run(args) = cli.cmd else {
                panic!("not run")
            };
            let dot = DirArg {
                name: None,
                path: PathBuf::from("."),
            };
            config(&args, vec![dot]).unwrap().alternate
        };
        assert_eq!(alternate(&["envbench", "run"]), Alternate::Round);
        let two = ["envbench", "run", "--in", "a", "--in", "b"];
        assert_eq!(alternate(&two), Alternate::Rep);
        let by_round = [&two[..], &["--alternate", "round"]].concat();
        assert_eq!(alternate(&by_round), Alternate::Round);
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
