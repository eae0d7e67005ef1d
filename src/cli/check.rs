//! Checks of `envbench run`'s input made before anything is measured:
//! patterns, labels and thread counts. Each refusal is a [`UsageError`]
//! (exit 2) that says what is wrong and what is allowed.

use super::values::DirArg;
use crate::bench;
use crate::config::NamedDir;
use crate::error::UsageError;
use crate::history::Db;
use crate::probe::Fingerprint;
use std::path::PathBuf;

/// Threads allowed per usable CPU: enough to study oversubscription,
/// few enough that a typo (`--threads 999999`) cannot exhaust the machine.
pub const THREADS_PER_CPU: usize = 64;

/// Longest label accepted, in characters.
pub const MAX_LABEL_CHARS: usize = 100;

/// The valid `--only` patterns, for messages.
pub fn valid_patterns() -> String {
    let families: Vec<&str> = bench::FAMILIES.iter().map(|f| f.name()).collect();
    let ids: Vec<String> = bench::ALL.iter().map(|b| b.id()).collect();
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
pub fn patterns(raw: &[String]) -> Result<Vec<bench::select::Selector>, UsageError> {
    raw.iter()
        .flat_map(|r| bench::select::split(r))
        .map(|p| bench::select::parse(&p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| UsageError(format!("{e} ({})", valid_patterns())))
}

/// The most threads one case may start here, and which limit sets it:
/// [`THREADS_PER_CPU`] per usable CPU, RLIMIT_NPROC, the cgroup pids
/// limit, available memory and [`HARD_CAP`] (see [`bench::os::headroom`]).
pub fn thread_cap(cpus: usize, mem_available_bytes: Option<u64>) -> (usize, String) {
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
pub fn thread_counts(threads: Option<&[usize]>, fp: &Fingerprint) -> Result<(), UsageError> {
    let Some(&most) = threads.and_then(|t| t.iter().max()) else {
        return Ok(());
    };
    let cpus = fp.cpu.usable_cpus.unwrap_or(fp.cpu.logical_cpus).max(1);
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

/// Refuses a `--label` that is not one printable line fit for a file
/// name and a history key: empty, control or bidirectional-override
/// characters, a path separator or `..` (compare would read such a label as
/// a path), or longer than [`MAX_LABEL_CHARS`].
///
/// # Errors
/// [`UsageError`] naming the offending character.
pub fn label(l: &str) -> Result<(), UsageError> {
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
pub fn existing_dirs(dirs: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
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

/// `run`'s target directories: each one given checked to exist and to
/// take files of ours, then named (a plain PATH is `dirN` for its position
/// N, from 1); none given, the current directory as `dir1`.
///
/// # Errors
/// [`UsageError`] naming a directory that is missing or not writable, or
/// a name given to two directories.
pub fn target_dirs(given: &[DirArg]) -> anyhow::Result<Vec<NamedDir>> {
    let paths = existing_dirs(given.iter().map(|d| d.path.clone()).collect())?;
    for d in &paths {
        writable_dir(d)?;
    }
    let names = given
        .iter()
        .map(|d| d.name.clone())
        .chain(std::iter::repeat(None));
    Ok(unique_names(NamedDir::name_all(names.zip(paths)))?)
}

/// `named`, refused when two directories have the same name.
///
/// # Errors
/// [`UsageError`] naming both directories.
fn unique_names(named: Vec<NamedDir>) -> Result<Vec<NamedDir>, UsageError> {
    for (i, d) in named.iter().enumerate() {
        if let Some(first) = named[..i].iter().find(|e| e.name == d.name) {
            return Err(UsageError(format!(
                "--dir: the name '{}' is given to both {} and {}; each directory needs its own \
                 name (--dir NAME=PATH; a plain PATH is named dirN by its position)",
                d.name,
                first.path.display(),
                d.path.display()
            )));
        }
    }
    Ok(named)
}

/// statfs magic numbers of filesystems that hold no files of ours.
const PSEUDO_FS: [(i64, &str); 4] = [
    (0x9FA0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6367_7270, "cgroup2"),
    (0x1CD1, "devpts"),
];

/// `--db` (or `ENVBENCH_DB`): a PostgreSQL URL names a shared store; a
/// path names an SQLite file, which is a regular file or does not exist
/// yet (SQLite would write its pages into a device node, `--db /dev/sdX`,
/// and wait for ever on a FIFO). Other URLs name stores envbench does not
/// have.
///
/// # Errors
/// [`UsageError`] naming the path and what it is.
pub fn db(given: Option<&PathBuf>) -> Result<Option<Db>, UsageError> {
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
pub fn writable_dir(dir: &std::path::Path) -> Result<(), UsageError> {
    match why_not_writable(dir) {
        None => Ok(()),
        Some(why) => Err(UsageError(format!(
            "--dir {}: not writable: {why}; give a directory on a disk or tmpfs",
            dir.display()
        ))),
    }
}

/// Why `dir` takes no new file of ours (None: it does), found by creating
/// one in it: a pseudo-filesystem, a read-only one, or permissions, with
/// the system's error. A root that may write anywhere is still told about
/// a pseudo-filesystem or a read-only mount.
///
/// The file is unnamed (`O_TMPFILE`), so a SIGKILL at this point leaves
/// nothing behind; where the filesystem cannot make one, a named directory
/// is created and removed instead.
pub fn why_not_writable(dir: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let unnamed = std::fs::OpenOptions::new()
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match unnamed.as_ref().map_err(std::io::Error::raw_os_error) {
        Ok(_) => return None,
        // no O_TMPFILE on this filesystem (or kernel): the named probe decides
        Err(Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => {}
        Err(_) => return Some(not_writable(dir, &unnamed.unwrap_err())),
    }
    // The PID alone repeats across PID namespaces (containers started at
    // once are each PID 1 or 2), so a random part keeps probes apart.
    let probe_dir = dir.join(format!(
        ".envbench-check-{}-{}",
        std::process::id(),
        crate::store::random_tag()
    ));
    match std::fs::create_dir(&probe_dir).and_then(|()| std::fs::remove_dir(&probe_dir)) {
        Ok(()) => None,
        Err(e) => Some(not_writable(dir, &e)),
    }
}

fn not_writable(dir: &std::path::Path, e: &std::io::Error) -> String {
    let why = match (statfs_magic(dir), e.raw_os_error()) {
        (Some(m), _) if PSEUDO_FS.iter().any(|(p, _)| *p == m) => {
            let name = PSEUDO_FS.iter().find(|(p, _)| *p == m).map_or("", |p| p.1);
            format!("it is on {name}, a kernel pseudo-filesystem that holds no files")
        }
        (_, Some(libc::EROFS)) => "its filesystem is mounted read-only".into(),
        (_, Some(libc::EACCES | libc::EPERM)) => "no permission to create files there".into(),
        _ => "cannot create a directory in it".into(),
    };
    format!("{why} ({e})")
}

fn statfs_magic(dir: &std::path::Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs writes only into `st`; `c` is NUL-terminated.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0).then_some(st.f_type as i64)
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
    fn dirs_get_positional_default_names_and_must_not_share_one() {
        let (a, b) = (PathBuf::from("/a"), PathBuf::from("/b"));
        let given = [(Some("ext4".into()), a.clone()), (None, b.clone())];
        let named = unique_names(NamedDir::name_all(given)).unwrap();
        assert_eq!(named[0].name, "ext4");
        assert_eq!(named[1].name, "dir2");
        let one = unique_names(NamedDir::by_position([a.clone()])).unwrap();
        assert_eq!(one[0].name, "dir1");
        let err = unique_names(NamedDir::name_all([(None, a), (Some("dir1".into()), b)]))
            .unwrap_err()
            .0;
        assert!(
            err.contains("'dir1'") && err.contains("/a") && err.contains("/b"),
            "{err}"
        );
    }

    #[test]
    fn the_thread_cap_is_bounded_by_cpus_and_the_hard_cap() {
        let (cap, why) = thread_cap(2, None);
        assert!(cap <= 2 * THREADS_PER_CPU, "{cap} {why}");
        let (cap, _) = thread_cap(1000, None);
        assert!(cap <= bench::os::HARD_CAP);
        let (cap, why) = thread_cap(1, Some(64 << 20));
        assert!(cap < 16, "64 MiB allows few threads: {cap} ({why})");
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
