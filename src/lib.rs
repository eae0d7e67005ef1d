//! envbench: how does this execution environment perform against that one,
//! on the same hardware?
//!
//! Data flow: [`cli`] → [`config`] → [`probe`] (fingerprint) →
//! [`bench::runner`] (raw samples) → [`stats`] (summaries) → [`results`]
//! (wire schema) → [`store`] (files). [`report`] only reads `results` types;
//! benches never print.
#![warn(missing_docs)]

pub mod bench;
pub mod check;
pub mod cleanup;
pub mod cli;
pub mod compare;
pub mod compare_cli;
pub mod config;
pub mod history;
pub mod import;
pub mod probe;
pub mod progress;
pub mod report;
pub mod results;
pub mod session;
pub mod stats;
pub mod store;
pub mod terminal;
pub mod units;
pub mod validate;
pub mod validity;
pub mod view;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// A mistake in the command line or its arguments (exit code 2), found
/// before anything is measured.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Runs one parsed command line.
///
/// # Errors
/// [`UsageError`] for bad input, anything else for failures; `main` prints it.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    match cli.cmd {
        cli::Cmd::Run(args) => session::run(&args),
        cli::Cmd::Info(args) if args.tuning => {
            let cpus = probe::usable_cpus().unwrap_or(1);
            let advice = validity::tuning::advise(&probe::Roots::live(), cpus);
            print_stdout(&validity::tuning::render(&advice))?;
            Ok(ExitCode::SUCCESS)
        }
        cli::Cmd::Info(args) => {
            let dirs = default_dirs(args.dirs.into_iter().map(|d| d.path).collect())?;
            let fp = probe::probe_live(&dirs);
            let text = if args.json {
                serde_json::to_string_pretty(&fp)? + "\n"
            } else {
                report::fingerprint::render(&fp)
            };
            print_stdout(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        cli::Cmd::Compare(args) => compare_cli::run(&args),
        cli::Cmd::Import(args) => import::command::run(&args),
        cli::Cmd::Show(args) => {
            for file in compare_cli::resolve(&[PathBuf::from(&args.run)], args.db.as_ref())? {
                print_stdout(&terminal::escape_output(&report::summary::render_file(
                    &file,
                    args.all_metrics,
                )))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        cli::Cmd::History(args) => {
            let db = history::db_path(args.db.as_ref())?;
            let entries = history::History::open_read_only(&db)?.list()?;
            let text = if args.json {
                serde_json::to_string_pretty(&entries)? + "\n"
            } else {
                terminal::escape_output(&report::render_text(&report::history_table(&entries)))
            };
            print_stdout(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        cli::Cmd::List(args) => {
            let fp = probe::probe_live(&[]);
            let plan = bench::Plan::from_fingerprint(
                config::Suite::Quick,
                &fp,
                None,
                bench::NamedDir::zip(&[], &[PathBuf::from(".")]),
            );
            let text = if args.json {
                serde_json::to_string_pretty(&report::catalog::catalog(&plan))? + "\n"
            } else {
                report::catalog::render(&plan)
            };
            print_stdout(&text)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The given directories, checked to exist, or the current directory.
///
/// # Errors
/// [`UsageError`] naming a path that is not a directory.
pub fn default_dirs(dirs: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
    if dirs.is_empty() {
        return Ok(vec![std::env::current_dir()?]);
    }
    for d in &dirs {
        if !d.is_dir() {
            return Err(
                UsageError(format!("--dir {}: not an existing directory", d.display())).into(),
            );
        }
    }
    Ok(dirs)
}

/// Writes to stdout; a closed pipe surfaces as an error [`is_broken_pipe`] recognises.
///
/// # Errors
/// The write error.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Whether an error is stdout's reader going away (`envbench list | head`).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
