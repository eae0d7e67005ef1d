//! The command line: clap's types ([`args`]) turned, once, into the plain
//! and complete settings of a command ([`Command`]): defaults filled in,
//! every argument checked, `--dir` names joined to their paths (what
//! depends on the machine, such as the run's cases, is the command's).
//! Nothing after [`parse`] sees a clap type (as ripgrep's
//! `HiArgs::from_low_args`). Every refusal is a [`UsageError`] (exit 2),
//! found before anything is measured.

pub mod args;
mod check;
mod compare;
mod import;
mod run;
mod values;

use crate::bench::{Family, FAMILIES};
use crate::cmd::history::HistorySettings;
use crate::cmd::info::InfoSettings;
use crate::cmd::list::ListSettings;
use crate::cmd::push::PushSettings;
use crate::cmd::show::ShowSettings;
use crate::cmd::Command;
use crate::config::FamilyOptions;
use args::{Cli, Cmd, StoreCmd};
use clap::{CommandFactory, FromArgMatches};
use std::path::PathBuf;

/// Parses the process's arguments into a command with its settings; clap
/// prints help, the version and its own errors and exits.
///
/// # Errors
/// [`UsageError`] for arguments clap accepts but envbench refuses.
pub fn parse() -> anyhow::Result<Command> {
    let matches = command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Cmd::Run(a), Some(("run", m))) = (&mut cli.cmd, matches.subcommand()) {
        a.family_options = family_options(FAMILIES, m).0;
    }
    settle(cli)
}

/// The whole command line: clap's derived one, with the options the
/// benchmark families declare added to `run`.
pub(crate) fn command() -> clap::Command {
    command_for(FAMILIES)
}

/// The command line with the options `families` declare added to `run`.
pub fn command_for(families: &[&dyn Family]) -> clap::Command {
    Cli::command().mut_subcommand("run", |run| {
        crate::bench::family_options(families)
            .into_iter()
            .fold(run, |cmd, o| {
                let parse = o.parse;
                cmd.arg(
                    clap::Arg::new(o.key)
                        .long(o.long)
                        .value_name(o.value_name)
                        .help(o.help)
                        .allow_negative_numbers(true)
                        .value_parser(move |s: &str| parse(s)),
                )
            })
    })
}

/// The options of `families` given in `run`'s matches, by key.
pub fn family_options(families: &[&dyn Family], m: &clap::ArgMatches) -> FamilyOptions {
    FamilyOptions(
        crate::bench::family_options(families)
            .into_iter()
            .filter_map(|o| {
                let v = m.get_one::<serde_json::Value>(o.key)?;
                Some((o.key.to_string(), v.clone()))
            })
            .collect(),
    )
}

/// `--from`'s values: auto, then every importer's name with its help.
pub(crate) fn importer_names() -> clap::builder::PossibleValuesParser {
    let auto = clap::builder::PossibleValue::new("auto")
        .help("Recognise each file's tool and say which on stderr.");
    clap::builder::PossibleValuesParser::new(
        std::iter::once(auto).chain(
            crate::import::IMPORTERS
                .iter()
                .map(|i| clap::builder::PossibleValue::new(i.name()).help(i.about())),
        ),
    )
}

/// `envbench fidelity`'s settings: the families and benches checked to
/// have reference tools, the output paths usable.
///
/// # Errors
/// [`UsageError`] for a family or bench without references, or an output
/// path that cannot be written.
fn fidelity(a: args::FidelityArgs) -> anyhow::Result<crate::cmd::fidelity::FidelitySettings> {
    use crate::cmd::fidelity::{check_bench, check_family};
    use crate::error::UsageError;
    let (mut sections, mut only) = (a.sections, a.only);
    let commands = fidelity_commands(&a.cmd, &mut sections, &mut only, a.dir.as_deref())?;
    for f in &sections {
        check_family(f).map_err(|e| UsageError(format!("--sections: {e}")))?;
    }
    for b in &only {
        check_bench(b).map_err(|e| UsageError(format!("--only: {e}")))?;
    }
    let out = |p: Option<PathBuf>, flag: &str| -> anyhow::Result<Option<PathBuf>> {
        p.map(|p| crate::store::output_path(&p, a.force, flag).map_err(|e| UsageError(e).into()))
            .transpose()
    };
    let io_asked = !commands.alone
        && (sections.is_empty() || sections.iter().any(|f| f == "io"))
        && (only.is_empty() || only.iter().any(|b| b.starts_with("io.")));
    if let (Some(d), false, true) = (&a.dir, io_asked, commands.specs.is_empty()) {
        return Err(UsageError(format!(
            "--dir {}: only the io family's cases and --cmd's commands work on a directory, \
             and neither is asked for (--sections io, or --cmd NAME='COMMAND')",
            d.display()
        ))
        .into());
    }
    let dir = match a.dir {
        Some(d) => check::existing_dirs(vec![d])?.pop(),
        None => None,
    };
    let json = out(a.json, "--json")?;
    let markdown = out(a.markdown, "--markdown")?;
    if let (Some(j), Some(m)) = (&json, &markdown) {
        if crate::store::resolved(j) == crate::store::resolved(m) {
            return Err(UsageError("--json and --markdown name the same file".into()).into());
        }
    }
    Ok(crate::cmd::fidelity::FidelitySettings {
        families: sections,
        only,
        rounds: a.rounds as usize,
        budget: std::time::Duration::from_secs(a.budget),
        json,
        markdown,
        scratch: std::env::temp_dir(),
        dir,
        commands,
    })
}

/// `fidelity`'s rows of a person's commands (`--cmd`): the commands, the
/// directory they and hyperfine run in (`--dir`, else the current one,
/// writable as `run` wants it), and whether they run alone (nothing else
/// asked, or `--only` asking for `cmd.run` alone); `cmd` is taken out of
/// `sections` and `cmd.run` out of `only`.
///
/// # Errors
/// [`UsageError`] for `cmd` or `cmd.run` asked for without `--cmd`, a
/// command refused as `run` refuses it, or a directory `run` would refuse.
fn fidelity_commands(
    a: &run::CmdArgs,
    sections: &mut Vec<String>,
    only: &mut Vec<String>,
    dir: Option<&std::path::Path>,
) -> anyhow::Result<crate::cmd::fidelity::Commands> {
    use crate::error::UsageError;
    use crate::results::ids;
    let specs = run::commands(a)?;
    let only_given = !only.is_empty();
    for (flag, list, name) in [
        ("--sections", &mut *sections, ids::CMD),
        ("--only", &mut *only, ids::CMD_RUN),
    ] {
        if list.iter().any(|x| x == name) && specs.is_empty() {
            return Err(UsageError(format!(
                "{flag} {name}: the cmd family's rows are your own commands, held to \
                 hyperfine: give --cmd NAME='COMMAND'"
            ))
            .into());
        }
        list.retain(|x| x != name);
    }
    if specs.is_empty() {
        return Ok(crate::cmd::fidelity::Commands::default());
    }
    let given: Vec<values::DirArg> = dir
        .map(|p| values::DirArg {
            name: None,
            path: p.to_path_buf(),
        })
        .into_iter()
        .collect();
    let dir = check::target_dirs(&given)?
        .pop()
        .map(|d| d.path)
        .ok_or_else(|| UsageError("--cmd: no directory to run the commands in".into()))?;
    Ok(crate::cmd::fidelity::Commands {
        run_args: run::forwarded(a, &specs),
        alone: only.is_empty() && (only_given || sections.is_empty()),
        specs,
        dir,
    })
}

/// The settings of the command `cli` names.
///
/// # Errors
/// [`UsageError`] for what the command refuses.
fn settle(cli: Cli) -> anyhow::Result<Command> {
    Ok(match cli.cmd {
        Cmd::Run(a) => Command::Run(Box::new(run::settings(a)?)),
        Cmd::Info(a) => Command::Info(InfoSettings {
            dirs: check::existing_dirs(a.dirs.into_iter().map(|d| d.path).collect())?,
            json: a.json,
            tuning: a.tuning,
        }),
        Cmd::List(a) => Command::List(ListSettings { json: a.json }),
        Cmd::Show(a) => Command::Show(ShowSettings {
            run: PathBuf::from(a.run),
            db: check::db(a.db.db.as_ref())?,
            all_metrics: a.all_metrics.all_metrics,
        }),
        Cmd::History(a) => Command::History(HistorySettings {
            db: check::db(a.db.db.as_ref())?,
            json: a.json,
        }),
        Cmd::Compare(a) => Command::Compare(Box::new(compare::settings(a)?)),
        Cmd::Import(a) => Command::Import(Box::new(import::settings(a)?)),
        Cmd::Fidelity(a) => Command::Fidelity(fidelity(a)?),
        Cmd::Score(a) => {
            use crate::cmd::score::Scoring;
            Command::Score(crate::cmd::score::ScoreSettings {
                scoring: match (a.expect, a.first, a.pair) {
                    _ if a.pairs => Scoring::Pairs,
                    (Some(k), _, _) if a.splits => Scoring::Splits(k),
                    (Some(k), _, _) => Scoring::Verdicts(k),
                    (None, _, Some(p)) => Scoring::Pair(p),
                    (None, m, None) => Scoring::First(m.unwrap_or_default()),
                },
                name: a.name,
                files: a.files,
            })
        }
        Cmd::Band(a) => Command::Band(crate::cmd::band::BandSettings {
            band: a.band,
            rounds: a.rounds,
        }),
        Cmd::Noisy(a) => Command::Noisy(crate::cmd::noisy::NoisySettings {
            cpu: a.cpu,
            seed: a.seed,
            on_share: a.on_share,
            ms: a.ms,
            command: a.command,
        }),
        Cmd::Spread(a) => Command::Spread(crate::cmd::spread::SpreadSettings {
            files: a.files,
            paired: a.paired,
            verbose: a.verbose,
        }),
        Cmd::Store(StoreCmd::Push(a)) => Command::Push(PushSettings {
            files: a.files,
            db: check::db(a.db.db.as_ref())?,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(cmds: &[&str]) -> run::CmdArgs {
        run::CmdArgs {
            cmds: cmds
                .iter()
                .map(|c| values::CmdArg {
                    name: None,
                    text: (*c).to_string(),
                })
                .collect(),
            ..run::CmdArgs::default()
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn fidelitys_commands_run_alone_unless_other_rows_are_asked_for_too() {
        let here = tempfile::tempdir().unwrap();
        type Case<'a> = (
            &'a [&'a str],
            &'a [&'a str],
            bool,
            &'a [&'a str],
            &'a [&'a str],
        );
        let cases: [Case; 5] = [
            // sections, only, alone, the sections and benches left
            (&[], &[], true, &[], &[]),
            (&["cmd"], &[], true, &[], &[]),
            (&["io"], &[], false, &["io"], &[]),
            (&["io"], &["cmd.run"], true, &["io"], &[]),
            (&[], &["cmd.run", "os.syscall"], false, &[], &["os.syscall"]),
        ];
        for (sections, only, alone, left_s, left_o) in cases {
            let (mut s, mut o) = (strings(sections), strings(only));
            let c = fidelity_commands(&with(&["true"]), &mut s, &mut o, Some(here.path())).unwrap();
            assert_eq!(c.alone, alone, "{sections:?} {only:?}");
            assert_eq!((s, o), (strings(left_s), strings(left_o)));
            assert_eq!(c.specs.len(), 1);
            assert_eq!(c.run_args, strings(&["--cmd", "cmd1=true"]));
        }
        // without --cmd: nothing, and the cmd family refused by name
        let (mut s, mut o) = (strings(&["os"]), Vec::new());
        let c = fidelity_commands(&with(&[]), &mut s, &mut o, None).unwrap();
        assert!(c.specs.is_empty() && !c.alone);
        let (mut s, mut o) = (Vec::new(), strings(&["cmd.run"]));
        let e = fidelity_commands(&with(&[]), &mut s, &mut o, None).unwrap_err();
        assert!(e.to_string().starts_with("--only cmd.run: "), "{e}");
    }
}
