//! `run`'s arguments settled: patterns, label, directories and history
//! database checked, the suite's defaults under the user's overrides. What
//! depends on the machine (the environment probed, thread counts checked
//! against it, the cases planned, the run named) is settled by
//! [`crate::cmd::run`].

use super::args::{AlternateArg, RunArgs, Switch};
use super::check;
use super::values::{split_words, DirArg};
use crate::bench::cmd::CommandSpec as CmdSpec;
use crate::cmd::run::{RunSettings, IN_PLACEHOLDER};
use crate::config::{Alternate, FamilyOptions, NamedDir, Precision, RepPolicy, RunConfig, Suite};
use crate::engine;
use crate::engine::launch::{Launcher, Place};
use crate::error::UsageError;
use crate::results::ids;

/// The settings of `run` for `a`.
///
/// # Errors
/// [`UsageError`] for a bad pattern, label, directory or history
/// database.
pub(super) fn settings(a: RunArgs) -> anyhow::Result<RunSettings> {
    let mut selectors = check::patterns(&a.only)?;
    let commands = commands(&a)?;
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
fn commands(a: &RunArgs) -> Result<Vec<CmdSpec>, UsageError> {
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
