//! Checks of the command line's values that need no probe of the machine:
//! patterns, labels, directories and the history database. Each refusal is
//! a [`UsageError`] (exit 2) that says what is wrong and what is allowed.

use super::values::DirArg;
use crate::error::UsageError;
use crate::history::Db;
use crate::{bench, engine};
use std::path::{Path, PathBuf};

/// Longest label accepted, in characters.
pub const MAX_LABEL_CHARS: usize = 100;

/// The valid `--only` patterns, for messages.
pub(crate) fn valid_patterns() -> String {
    let families: Vec<&str> = bench::FAMILIES.iter().map(|f| f.name()).collect();
    let ids: Vec<&str> = bench::ALL.iter().map(|b| b.id()).collect();
    format!(
        "valid: families {}, benchmarks {} (globs such as 'os.*' work too)",
        families.join(", "),
        ids.join(", ")
    )
}

/// Parses the `--only` values (each comma-separated) into selectors.
///
/// # Errors
/// [`UsageError`] for an empty or malformed pattern or one that matches
/// no benchmark, listing the valid ones.
pub(crate) fn patterns(raw: &[String]) -> Result<Vec<engine::select::Selector>, UsageError> {
    raw.iter()
        .flat_map(|r| engine::select::split(r))
        .map(|p| engine::select::parse(&p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| UsageError(format!("{e} ({})", valid_patterns())))
}

/// Refuses a `--label` that is not one printable line fit for a file
/// name and a history key: empty, control or bidirectional-override
/// characters, a path separator or `..` (compare would read such a label as
/// a path), or longer than [`MAX_LABEL_CHARS`].
///
/// # Errors
/// [`UsageError`] naming the offending character.
pub(crate) fn label(l: &str) -> Result<(), UsageError> {
    let bad = |why: String| {
        // a label of 10 kB is not echoed whole
        let shown: String = l.chars().take(40).collect();
        let more = if l.chars().count() > 40 { "..." } else { "" };
        Err(UsageError(format!(
            "--label {}{more}: {why}; use one printable line such as native, wsl2 or vm-kvm",
            crate::terminal::escape(&shown)
        )))
    };
    if l.trim().is_empty() {
        return bad("empty (leave --label out to use the detected virtualisation)".into());
    }
    if let Some(c) = l.chars().find(|&c| crate::terminal::is_unsafe(c)) {
        return bad(format!("holds the control character U+{:04X}", c as u32));
    }
    if l.contains('/') || l.contains('\\') || l.contains("..") {
        return bad("holds a path separator or '..'".into());
    }
    // compare reads a number as a history id and a name ending in .json
    // as a file: such a label could never be compared by name
    if l.parse::<i64>().is_ok() {
        return bad("a number, which compare would take for a history id".into());
    }
    if l.ends_with(".json") {
        return bad("ends in .json, which compare would take for a file".into());
    }
    if l.chars().count() > MAX_LABEL_CHARS {
        return bad(format!("longer than {MAX_LABEL_CHARS} characters"));
    }
    Ok(())
}

/// The given directories, checked to exist, or the current directory.
///
/// # Errors
/// [`UsageError`] naming a path that is not a directory.
pub(crate) fn existing_dirs(dirs: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
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

/// `run`'s target directories as given (a plain PATH has no name yet),
/// each checked to exist and to take files of ours; none given, the
/// current directory.
///
/// Each is asked within [`crate::deadline::ASK_WITHIN`]: a file system
/// that does not answer (a FUSE daemon stopped) is named, not waited for.
///
/// # Errors
/// [`UsageError`] naming a directory that is missing, not writable, or
/// gave no answer.
pub(crate) fn target_dirs(given: &[DirArg]) -> anyhow::Result<Vec<DirArg>> {
    let paths = match given.len() {
        0 => existing_dirs(Vec::new())?,
        _ => given.iter().map(|d| d.path.clone()).collect(),
    };
    for d in &paths {
        let p = d.clone();
        let within = crate::deadline::ASK_WITHIN;
        let checked = crate::deadline::on_dir(d, "a first look", within, move || {
            existing_dirs(vec![p.clone()])?;
            writable_dir(&p).map_err(anyhow::Error::new)
        });
        checked.map_err(|no| UsageError(format!("--dir {no}")))??;
    }
    let names = given
        .iter()
        .map(|d| d.name.clone())
        .chain(std::iter::repeat(None));
    Ok(names
        .zip(paths)
        .map(|(name, path)| DirArg { name, path })
        .collect())
}

/// `--db` (or `ENVBENCH_DB`): a PostgreSQL URL names a shared store; a
/// path names an SQLite file, which is a regular file or does not exist
/// yet (SQLite would write its pages into a device node, `--db /dev/sdX`,
/// and wait for ever on a FIFO). Other URLs name stores envbench does not
/// have.
///
/// # Errors
/// [`UsageError`] naming the path and what it is.
pub(crate) fn db(given: Option<&PathBuf>) -> Result<Option<Db>, UsageError> {
    let Some(path) = given else { return Ok(None) };
    let text = path.to_string_lossy();
    if text.is_empty() {
        return Ok(None);
    }
    if crate::history::is_server_url(&text) {
        return Ok(Some(Db::Server(text.into_owned())));
    }
    if text.contains("://") {
        return Err(UsageError(format!(
            "--db {text}: a URL envbench cannot use; give a PostgreSQL URL (postgres://user@host/database) or the path of an SQLite file"
        )));
    }
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(UsageError(format!(
            "--db {}: is a {}; the history database must be a regular file or not exist yet",
            path.display(),
            crate::store::kind_name(&m.file_type())
        ))),
        _ => Ok(Some(Db::File(path.clone()))),
    }
}

/// Checks a `--dir` target by creating a file of our own in it, and says
/// why that failed: a pseudo-filesystem, a read-only one, or permissions.
///
/// # Errors
/// [`UsageError`] naming the directory and the cause.
pub(crate) fn writable_dir(dir: &std::path::Path) -> Result<(), UsageError> {
    match crate::store::why_not_writable(dir) {
        None => Ok(()),
        Some(why) => Err(UsageError(format!(
            "--dir {}: not writable: {why}; give a directory on a disk or tmpfs",
            dir.display()
        ))),
    }
}

/// `path` made absolute with its directory's links resolved, so two
/// spellings of one file compare equal, whether or not it exists yet (nor
/// the directories it would be in: the nearest one that exists is
/// resolved, and the rest joined to it).
pub(crate) fn identity(path: &Path) -> PathBuf {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_patterns_are_refused_with_the_valid_ones() {
        for raw in [vec![String::new()], vec!["os".into(), " ".into()]] {
            let err = patterns(&raw).unwrap_err().0;
            assert!(
                err.contains("empty pattern") && err.contains("os.syscall"),
                "{err}"
            );
        }
        assert!(patterns(&["os".into()]).is_ok());
    }

    #[test]
    fn labels_are_one_printable_line_without_paths() {
        for l in ["native", "wsl2", "vm-kvm 2 cores", "Ärger"] {
            assert!(label(l).is_ok(), "{l}");
        }
        for (l, why) in [
            ("", "empty"),
            ("a\nb", "U+000A"),
            ("\u{1b}[2J", "U+001B"),
            ("abc\u{202e}def", "U+202E"),
            ("a/b/../c", "path separator"),
            ("a\\b", "path separator"),
            ("..", "path separator"),
        ] {
            let err = label(l).unwrap_err().0;
            assert!(err.contains(why), "{l:?}: {err}");
        }
    }

    #[test]
    fn proc_is_named_as_a_pseudo_filesystem() {
        let err = writable_dir(std::path::Path::new("/proc")).unwrap_err().0;
        assert!(err.contains("procfs"), "{err}");
    }
}
