//! The `--dir`s a case round runs on, checked against the fingerprint:
//! a FUSE mount lazily unmounted under a run (`umount -l`) leaves the
//! directory's path on the file system below it, and the rounds after
//! would measure that one under the FUSE directory's name.
//!
//! Where it is checked: in the worker, before and after it measures
//! ([`on_fingerprinted`]), against the fingerprint of its own environment
//! ([`DirSeen`] in its job). The worker sees the directory as the round
//! does: an environment entered through a prefix (a container, a sandbox)
//! has mounts of its own, and its fingerprint was taken inside it. A round
//! that ran on another file system (device or type) fails, naming the
//! directory, what it was and what it is now; its samples are not kept.
//!
//! Before each round the run also asks the directory, as it sees it, one
//! question within a deadline ([`answers`]): a file system that no longer
//! answers (a FUSE daemon stopped) fails the round at once, and every later
//! one on that directory, instead of holding a worker to its deadline and
//! the run in its cleanup.

use super::runner::{self, CaseRun};
use crate::bench::{CaseSpec, NamedDir};
use crate::deadline::ASK_WITHIN;
use crate::probe::storage::DirInfo;
use crate::results::params::key;
use serde::{Deserialize, Serialize};

/// A `--dir` as its environment's fingerprint saw it: the file system a
/// round on it must find there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirSeen {
    /// The `--dir`'s name.
    pub name: String,
    /// `major:minor` of the file system's device, e.g. `254:0`, `0:55`.
    pub device: Option<String>,
    /// The file system's type from mountinfo, e.g. `ext4`, `fuse.bindfs`.
    pub fs_type: Option<String>,
    /// Its free space then (bytes), which the environments' rounds of a
    /// case share when they take turns; not sent to workers.
    #[serde(skip)]
    pub free_bytes: Option<u64>,
}

/// The fingerprint's `--dir`s (`fp`, in the order of `dirs`) under their
/// names.
pub(crate) fn as_fingerprinted(dirs: &[NamedDir], fp: &[DirInfo]) -> Vec<DirSeen> {
    dirs.iter()
        .zip(fp)
        .map(|(d, info)| DirSeen {
            name: d.name.clone(),
            device: info.device.clone(),
            fs_type: info.fs_type.clone(),
            free_bytes: info.free_bytes,
        })
        .collect()
}

/// The `--dir` case `case` runs on (None: it uses none).
pub(crate) fn used_by<'a>(case: &CaseSpec, dirs: &'a [NamedDir]) -> Option<&'a NamedDir> {
    let name = case.params.get(key::DIR)?.as_str()?;
    dirs.iter().find(|d| d.name == name)
}

/// Why the file system `now` at the `--dir` `dir` is not the one `was`
/// describes, if it is not: another device or another type. A fact
/// unknown on either side is not compared.
pub(crate) fn changed(dir: &NamedDir, was: &DirSeen, now: &DirInfo) -> Option<String> {
    let differs =
        |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if a != b);
    if !differs(&was.device, &now.device) && !differs(&was.fs_type, &now.fs_type) {
        return None;
    }
    let words = |fs: &Option<String>, dev: &Option<String>| {
        format!(
            "{} (device {})",
            fs.as_deref().unwrap_or("of unknown type"),
            dev.as_deref().unwrap_or("unknown")
        )
    };
    Some(format!(
        "the --dir {} ({}) is no longer on the file system its environment was fingerprinted \
         with: it was {}, it is now {} (unmounted under the run?); this round is not kept",
        dir.name,
        dir.path.display(),
        words(&was.fs_type, &was.device),
        words(&now.fs_type, &now.device)
    ))
}

/// Why `dir`, described now (within [`crate::deadline::ASK_WITHIN`]),
/// is not as `seen` (the fingerprint's `--dir`s) has it, if it is not; a
/// directory that cannot be resolved now is left to the case, which says
/// why.
fn moved(seen: &[DirSeen], dir: &NamedDir) -> Option<String> {
    let was = seen.iter().find(|s| s.name == dir.name)?.clone();
    let path = dir.path.clone();
    let now = crate::deadline::on_dir(&dir.path, "describing it", ASK_WITHIN, move || {
        let roots = crate::probe::Roots::live();
        crate::probe::storage::probe_dirs(&roots, &[path], &mut Vec::new()).pop()
    });
    match now {
        Ok(now) => now.and_then(|now| changed(dir, &was, &now)),
        Err(no) => Some(format!("the --dir {}: {no}", dir.name)),
    }
}

/// Measures (`measure`) a round of `case`, checking the `--dir` it runs
/// on against `seen` before and after: a round that began or ended on
/// another file system fails with the reason, its samples dropped.
pub(crate) fn on_fingerprinted(
    seen: &[DirSeen],
    dirs: &[NamedDir],
    case: &CaseSpec,
    measure: impl FnOnce() -> CaseRun,
) -> CaseRun {
    let Some(dir) = used_by(case, dirs) else {
        return measure();
    };
    let wall = crate::timestamp::wall_now_secs();
    if let Some(why) = moved(seen, dir) {
        return runner::failed_run(wall, why);
    }
    let run = measure();
    match moved(seen, dir) {
        None => run,
        Some(why) => {
            let mut failed = runner::failed_run(run.started_wall_secs, why);
            failed.elapsed = run.elapsed;
            failed.left = run.left;
            failed
        }
    }
}

/// Whether the `--dir` case `case` runs on answers the run process (one
/// `statfs`, within [`ASK_WITHIN`]); a directory that
/// went silent earlier in the run is not asked again.
///
/// # Errors
/// Why the round cannot run: the directory gave no answer, named.
pub(crate) fn answers(case: &CaseSpec, dirs: &[NamedDir]) -> Result<(), String> {
    let Some(dir) = used_by(case, dirs) else {
        return Ok(());
    };
    let path = dir.path.clone();
    // its answer, even an error (a path this process does not see, as
    // under a prefix), is an answer
    crate::deadline::on_dir(&dir.path, "statfs", ASK_WITHIN, move || {
        let _ = crate::probe::storage::statfs(&path);
    })
    .map_err(|no| format!("the --dir {}: {no}; its rounds are not run", dir.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> NamedDir {
        NamedDir {
            name: "fuse".into(),
            path: "/mnt/f".into(),
        }
    }

    fn info(fs: &str, dev: &str) -> DirInfo {
        DirInfo {
            fs_type: Some(fs.into()),
            device: Some(dev.into()),
            ..DirInfo::default()
        }
    }

    #[test]
    fn a_dir_on_another_file_system_names_what_it_was_and_is() {
        let seen = as_fingerprinted(&[dir()], &[info("fuse.bindfs", "0:55")]);
        assert_eq!(
            changed(&dir(), &seen[0], &info("fuse.bindfs", "0:55")),
            None
        );
        let why = changed(&dir(), &seen[0], &info("ext4", "254:0")).unwrap();
        assert!(
            why.contains("--dir fuse (/mnt/f)")
                && why.contains("it was fuse.bindfs (device 0:55), it is now ext4 (device 254:0)"),
            "{why}"
        );
        // the same type on another device is another file system too
        assert!(changed(&dir(), &seen[0], &info("fuse.bindfs", "0:56")).is_some());
        // what the fingerprint did not know is not compared
        let unknown = DirSeen {
            name: "fuse".into(),
            device: None,
            fs_type: Some("fuse.bindfs".into()),
            free_bytes: None,
        };
        assert_eq!(
            changed(&dir(), &unknown, &info("fuse.bindfs", "0:56")),
            None
        );
    }

    #[test]
    fn a_case_on_a_dir_is_checked_and_one_on_none_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = [NamedDir {
            name: "here".into(),
            path: tmp.path().to_path_buf(),
        }];
        let mut notes = Vec::new();
        let fp = crate::probe::storage::probe_dirs(
            &crate::probe::Roots::live(),
            &[tmp.path().to_path_buf()],
            &mut notes,
        );
        let mut seen = as_fingerprinted(&dirs, &fp);
        let on = |dir: &str| CaseSpec {
            bench: "io.x".into(),
            params: [(key::DIR.to_string(), serde_json::json!(dir))].into(),
            metrics: Vec::new(),
        };
        let ok = || runner::failed_run(0.0, "measured".into());
        let run = on_fingerprinted(&seen, &dirs, &on("here"), ok);
        assert_eq!(run.reason.as_deref(), Some("measured"));
        assert_eq!(answers(&on("here"), &dirs), Ok(()));
        // fingerprinted as another file system: not measured
        seen[0].device = Some("0:1".into());
        let run = on_fingerprinted(&seen, &dirs, &on("here"), ok);
        assert!(run.reason.unwrap().contains("--dir here"));
        // a case on no --dir is measured as it is
        let none = CaseSpec {
            bench: "cpu.x".into(),
            params: Default::default(),
            metrics: Vec::new(),
        };
        let run = on_fingerprinted(&seen, &dirs, &none, ok);
        assert_eq!(run.reason.as_deref(), Some("measured"));
    }
}
