//! The command line: clap's types ([`args`]) turned, once, into the plain
//! and complete settings of a command ([`Command`]): defaults filled in,
//! every argument checked, `--dir` names joined to their paths (what
//! depends on the machine, such as the run's cases, is the command's).
//! Nothing after [`parse`] sees a clap type (as ripgrep's
//! `HiArgs::from_low_args`). Every refusal is a [`UsageError`] (exit 2),
//! found before anything is measured.

pub mod args;
mod check;
mod run;
mod values;

use crate::bench::{Family, FAMILIES};
use crate::cmd::compare::{CompareSettings, Inputs};
use crate::cmd::history::HistorySettings;
use crate::cmd::import::ImportSettings;
use crate::cmd::info::InfoSettings;
use crate::cmd::list::ListSettings;
use crate::cmd::push::PushSettings;
use crate::cmd::show::ShowSettings;
use crate::cmd::Command;
use crate::compare::{Options, DEFAULT_THRESHOLD};
use crate::config::{FamilyOptions, DEFAULT_SEED};
use crate::error::UsageError;
use crate::report::export::Format;
use crate::{import, store};
use args::{Cli, Cmd, ColorArg, CompareArgs, ImportArgs, StoreCmd};
use clap::{CommandFactory, FromArgMatches};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

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
pub fn command() -> clap::Command {
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
            import::IMPORTERS
                .iter()
                .map(|i| clap::builder::PossibleValue::new(i.name()).help(i.about())),
        ),
    )
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
            db: check::db(a.db.as_ref())?,
            all_metrics: a.all_metrics,
        }),
        Cmd::History(a) => Command::History(HistorySettings {
            db: check::db(a.db.as_ref())?,
            json: a.json,
        }),
        Cmd::Compare(a) => Command::Compare(Box::new(compare(a)?)),
        Cmd::Import(a) => Command::Import(Box::new(import(a)?)),
        Cmd::Store(StoreCmd::Push(a)) => Command::Push(PushSettings {
            files: a.files,
            db: check::db(a.db.as_ref())?,
        }),
    })
}

/// `--where FIELD=VALUE`, each field at most once.
fn filter(given: &[String]) -> Result<crate::history::Filter, UsageError> {
    let mut f = crate::history::Filter::default();
    for w in given {
        let (field, value) = w.split_once('=').unwrap_or((w.as_str(), ""));
        let slot = match field.trim() {
            "host" => &mut f.host,
            "cpu" => &mut f.cpu,
            "kernel" => &mut f.kernel,
            "virt" => &mut f.virt,
            other => {
                return Err(UsageError(format!(
                    "--where {w}: no field '{other}' (host, cpu, kernel or virt, as FIELD=VALUE)"
                )))
            }
        };
        if value.is_empty() || slot.is_some() {
            return Err(UsageError(format!(
                "--where {w}: give each field once, with a value (FIELD=VALUE)"
            )));
        }
        *slot = Some(value.to_string());
    }
    Ok(f)
}

/// `compare`'s settings: the outputs checked first (none an input, no two
/// alike, `--force` for an existing one), then the runs' grouping.
fn compare(a: CompareArgs) -> Result<CompareSettings, UsageError> {
    let db = check::db(a.db.as_ref())?;
    let exports = exports(&a)?;
    let inputs = if !a.base.is_empty() || !a.other.is_empty() {
        if a.dirs {
            return Err(UsageError(
                "--dirs takes result files, not --base and --other".into(),
            ));
        }
        if a.base.is_empty() || a.other.is_empty() || !a.files.is_empty() {
            return Err(UsageError(
                "--base and --other go together, without other files".into(),
            ));
        }
        Inputs::BaseOther {
            base: a.base,
            other: a.other,
        }
    } else if a.files.is_empty() {
        return Err(UsageError(
            "give result files to compare (or --base FILE... --other FILE...)".into(),
        ));
    } else {
        Inputs::Runs(a.files)
    };
    let color = match a.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let stdout = if a.markdown {
        Format::Markdown
    } else {
        Format::Text
    };
    Ok(CompareSettings {
        inputs,
        db,
        filter: filter(&a.filters)?,
        per_host: a.per_host,
        baseline: a.baseline,
        by_dir: a.dirs,
        options: Options {
            threshold: a.threshold.unwrap_or(DEFAULT_THRESHOLD),
            seed: a.seed.unwrap_or(DEFAULT_SEED),
            exclude_suspect: a.exclude_suspect,
        },
        stdout,
        all_metrics: a.all_metrics,
        verbose: a.verbose,
        color,
        exports,
    })
}

/// `path` made absolute with its directory's links resolved, so two
/// spellings of one file compare equal, whether or not it exists yet (nor
/// the directories it would be in: the nearest one that exists is
/// resolved, and the rest joined to it).
fn identity(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = if dir == path || dir.as_os_str().is_empty() {
        std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
    } else {
        identity(dir)
    };
    path.file_name().map_or(dir.clone(), |n| dir.join(n))
}

/// The files `compare` is asked to write, each with its format: none may
/// be an input, two may not share a path, an existing one needs
/// `--force`, and a device, FIFO or directory is refused.
fn exports(a: &CompareArgs) -> Result<Vec<(Format, PathBuf)>, UsageError> {
    let input_files: Vec<&PathBuf> = (a.files.iter().chain(&a.base).chain(&a.other))
        .filter(|p| p.is_file())
        .collect();
    let inputs: Vec<PathBuf> = input_files.iter().map(|p| identity(p)).collect();
    let figures = a.figures.as_deref().map(figures_dir).transpose()?;
    let mut out: Vec<(Format, PathBuf)> = Vec::new();
    for (format, path) in [
        (Format::Csv, &a.csv),
        (Format::Html, &a.html),
        (Format::Json, &a.json),
    ] {
        let Some(path) = path else { continue };
        let flag = format
            .flag()
            .expect("invariant: a file's format has its flag");
        let id = identity(path);
        if inputs.contains(&id) || input_files.iter().any(|i| store::same_file(i, path)) {
            return Err(UsageError(format!(
                "{flag} {}: is one of the files being compared; choose another name",
                path.display()
            )));
        }
        if let Some(dir) = &figures {
            let dir_id = identity(dir);
            if id == dir_id {
                return Err(UsageError(format!(
                    "{flag} and --figures both write {}; give each its own path",
                    path.display()
                )));
            }
            if id.starts_with(&dir_id) {
                return Err(UsageError(format!(
                    "{flag} {}: is inside --figures {}, which holds only the figures; \
                     write it elsewhere",
                    path.display(),
                    dir.display()
                )));
            }
        }
        if let Some((other, _)) = out.iter().find(|(_, p)| identity(p) == id) {
            return Err(UsageError(format!(
                "{flag} and {} both write {}; give each its own file",
                other
                    .flag()
                    .expect("invariant: a file's format has its flag"),
                path.display()
            )));
        }
        out.push((
            format,
            store::output_path(path, a.force, flag).map_err(UsageError)?,
        ));
    }
    if let Some(dir) = figures {
        out.push((Format::Figures, dir));
    }
    Ok(out)
}

/// `--figures DIR`: a directory to create, or an empty one (nothing in it
/// is ever replaced), checked before anything is read. The figures are
/// written into a hidden directory beside DIR and renamed into place, so
/// DIR's own directory must take new entries; an existing DIR must be
/// writable too (it is replaced by the new one, its permission bits kept)
/// and on its directory's filesystem (a mount point cannot be renamed
/// over). A symbolic link is followed to its target, never replaced; one
/// to nothing, and anything but a directory, are refused. Returns the
/// directory to write (a link's target).
fn figures_dir(dir: &Path) -> Result<PathBuf, UsageError> {
    use std::os::unix::fs::MetadataExt as _;
    let refuse = |why: String| {
        UsageError(format!(
            "--figures {}: {why}; give a new or empty directory",
            dir.display()
        ))
    };
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            let target = std::fs::canonicalize(dir).map_err(|e| {
                refuse(format!(
                    "is a symbolic link whose target cannot be used ({e})"
                ))
            })?;
            return figures_dir(&target);
        }
        Ok(m) if m.is_dir() => {
            // `.` or `figs/..`: the directory by its own name, beside which the figures go
            let real = std::fs::canonicalize(dir).map_err(|e| refuse(e.to_string()))?;
            if real.parent().is_none() {
                return Err(refuse("is the root directory".into()));
            }
            if real != dir {
                return figures_dir(&real);
            }
            let mut entries = std::fs::read_dir(dir).map_err(|e| refuse(e.to_string()))?;
            if entries.next().is_some() {
                return Err(UsageError(format!(
                    "--figures {}: is not empty; give a new or empty directory",
                    dir.display()
                )));
            }
            if let Some(why) = check::why_not_writable(dir) {
                return Err(refuse(format!("not writable: {why}")));
            }
            if std::fs::metadata(parent).is_ok_and(|p| p.dev() != m.dev()) || mount_point(dir) {
                return Err(refuse(format!(
                    "is a mount point (or on another filesystem than {}): the figures are \
                     written beside it and renamed into place",
                    parent.display()
                )));
            }
        }
        Ok(m) => return Err(refuse(format!("is a {}", store::kind_name(&m.file_type())))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            return Err(refuse(format!(
                "a part of its path is not a directory ({e})"
            )))
        }
        Err(e) => return Err(refuse(e.to_string())),
    }
    if !parent.is_dir() {
        return Err(UsageError(format!(
            "--figures {}: {} is not a directory",
            dir.display(),
            parent.display()
        )));
    }
    if let Some(why) = check::why_not_writable(parent) {
        return Err(refuse(format!(
            "its directory {} is not writable: {why}",
            parent.display()
        )));
    }
    match dir.file_name() {
        // made absolute, so that the directory beside it is its parent's
        Some(name) => Ok(std::fs::canonicalize(parent)
            .map_err(|e| refuse(e.to_string()))?
            .join(name)),
        None => Err(refuse("names no directory".into())),
    }
}

/// Whether `/proc/self/mountinfo` lists the absolute `dir` as a mount
/// point (a bind mount of its own directory's filesystem has its device).
fn mount_point(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return false;
    };
    // the fifth field, with space, tab, line feed and backslash as \ooo
    let unescape = |f: &str| {
        let mut out = Vec::new();
        let b = f.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let code = b
                .get(i + 1..i + 4)
                .and_then(|o| u8::from_str_radix(std::str::from_utf8(o).ok()?, 8).ok());
            match (b[i], code) {
                (b'\\', Some(c)) => {
                    out.push(c);
                    i += 4;
                }
                (c, _) => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        out
    };
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .any(|m| unescape(m) == dir.as_os_str().as_bytes())
}

/// `import`'s settings: the output path and the label checked.
fn import(a: ImportArgs) -> Result<ImportSettings, UsageError> {
    // never over an input, even with --force (the tool's output would be lost)
    if let Some(f) = a
        .files
        .iter()
        .find(|f| identity(f) == identity(&a.output) || store::same_file(f, &a.output))
    {
        return Err(UsageError(format!(
            "-o {}: is the input {}; choose another name",
            a.output.display(),
            f.display()
        )));
    }
    let output = store::output_path(&a.output, a.force, "-o").map_err(UsageError)?;
    let label = match &a.label {
        Some(l) => l.clone(),
        None => import_label(&a),
    };
    check::label(&label)?;
    Ok(ImportSettings {
        importer: import::importer(&a.from),
        files: a.files,
        output,
        label,
        env: a.env,
        params: a.params,
        seed: a.seed.unwrap_or(DEFAULT_SEED),
    })
}

/// `--env virtualization=...`, else the output's file stem.
fn import_label(a: &ImportArgs) -> String {
    if let Some((_, v)) = a.env.iter().rev().find(|(k, _)| k == "virtualization") {
        return v.replace('/', "-");
    }
    a.output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".into())
}
