//! The commands, one file each. `cli` settles a command's arguments into
//! its plain settings ([`Command`]); [`dispatch`] runs it. Nothing here
//! sees a command-line type.

pub mod band;
pub mod compare;
pub mod fidelity;
pub mod history;
pub mod import;
pub mod info;
pub mod list;
pub mod noisy;
mod progress;
pub mod push;
pub mod run;
pub mod score;
pub mod show;
pub mod spread;

use crate::error::UsageError;
use crate::history::{Db, Filter, History};
use crate::results::ResultFile;
use crate::store;
use std::path::PathBuf;
use std::process::ExitCode;

/// A command with its settings, ready to run.
pub enum Command {
    /// `envbench run`.
    Run(Box<run::RunSettings>),
    /// `envbench info`.
    Info(info::InfoSettings),
    /// `envbench list`.
    List(list::ListSettings),
    /// `envbench show`.
    Show(show::ShowSettings),
    /// `envbench history`.
    History(history::HistorySettings),
    /// `envbench compare`.
    Compare(Box<compare::CompareSettings>),
    /// `envbench import`.
    Import(Box<import::ImportSettings>),
    /// `envbench store push`.
    Push(push::PushSettings),
    /// `envbench fidelity`.
    Fidelity(fidelity::FidelitySettings),
    /// `envbench __score` (hidden: bench/'s controlled pairs scored).
    Score(score::ScoreSettings),
    /// `envbench __band` (hidden: benches/commands/'s rounds judged).
    Band(band::BandSettings),
    /// `envbench __spread` (hidden: bench/'s reading of A/A runs' spread).
    Spread(spread::SpreadSettings),
    /// `envbench __noisy` (hidden: a reproducible noisy host to test on).
    Noisy(noisy::NoisySettings),
}

/// Runs `command`.
///
/// # Errors
/// [`UsageError`] for bad input, anything else for failures; `main` prints
/// it and maps it to an exit code ([`exit_code`]).
pub fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(s) => run::run(*s),
        Command::Info(s) => info::run(&s),
        Command::List(s) => list::run(&s),
        Command::Show(s) => show::run(&s),
        Command::History(s) => history::run(&s),
        Command::Compare(s) => compare::run(*s),
        Command::Import(s) => import::run(*s),
        Command::Push(s) => push::run(&s),
        Command::Fidelity(s) => fidelity::run(&s),
        Command::Score(s) => score::run(&s),
        Command::Spread(s) => spread::run(&s),
        Command::Band(s) => band::run(&s),
        Command::Noisy(s) => noisy::run(&s),
    }
}

/// The exit code of a command that failed with `err`, after printing it:
/// 2 for a usage error, 3 when the machine stayed busy under
/// `--require-idle`, 1 otherwise; 0 when stdout's reader went away.
pub fn exit_code(err: &anyhow::Error) -> ExitCode {
    if crate::error::is_broken_pipe(err) {
        return ExitCode::SUCCESS;
    }
    // a file name or stored text in the message must not reach the
    // terminal as an escape sequence
    eprintln!(
        "envbench: {}",
        crate::terminal::escape_output(&format!("{err:#}"))
    );
    if err.downcast_ref::<UsageError>().is_some() {
        ExitCode::from(2)
    } else if err.downcast_ref::<crate::validity::NotIdle>().is_some() {
        ExitCode::from(crate::validity::idle::NOT_IDLE_EXIT)
    } else {
        ExitCode::from(1)
    }
}

/// The runs an argument names: an existing file, else a history id, else
/// every run of that label in the history (opened only when needed), each
/// passing `filter`.
///
/// # Errors
/// Unreadable files, an unusable history, or an argument that names nothing
/// (or nothing that passes the filter).
pub(crate) fn resolve(
    args: &[PathBuf],
    db: Option<&Db>,
    filter: &Filter,
) -> anyhow::Result<Vec<ResultFile>> {
    let mut history: Option<History> = None;
    let mut out = Vec::new();
    for arg in args {
        let text = arg.to_string_lossy();
        // an existing file, or something shaped like a path: load it (the error names it)
        let runs = if arg.exists() || text.contains('/') || text.ends_with(".json") {
            vec![store::load(arg)?]
        } else {
            if history.is_none() {
                history = Some(History::open_read_only(&crate::history::db_path(db)?)?);
            }
            let h = history.as_ref().expect("invariant: opened just above");
            let runs: Vec<ResultFile> = match text.parse::<i64>() {
                Ok(id) => h.get(id)?.into_iter().collect(),
                Err(_) => h.by_label(&text, filter)?,
            };
            if runs.is_empty() && (filter.is_empty() || text.parse::<i64>().is_ok()) {
                return Err(UsageError(format!(
                    "'{text}' is not a file, nor a history id or label (see `envbench history`)"
                ))
                .into());
            }
            runs
        };
        let kept: Vec<ResultFile> = runs.into_iter().filter(|r| filter.matches(r)).collect();
        if kept.is_empty() {
            return Err(UsageError(format!("'{text}': no run passes --where")).into());
        }
        out.extend(kept);
    }
    Ok(out)
}
