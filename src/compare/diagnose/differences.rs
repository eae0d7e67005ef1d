//! What differs between two sides' fingerprints when no rule fits
//! ([`crate::probe::diff`] walks them), the differences that bear on the
//! families that moved first.

use crate::probe::diff::{differing_fields, Difference};
use crate::probe::Fingerprint;
use crate::results::ids;

/// Differences named in a diagnosis; the rest are counted.
pub const MOST_DIFFERENCES: usize = 4;

/// Which families a field's section bears on, by the field's path prefix;
/// a field in none of them bears on every family alike.
const BEARS_ON: &[(&str, &[&str])] = &[
    ("cgroup.io_limits", &[ids::IO, ids::APP, ids::CMD]),
    ("cgroup.io_weight", &[ids::IO, ids::APP, ids::CMD]),
    ("cgroup.blkio_weight", &[ids::IO, ids::APP, ids::CMD]),
    ("dirs", &[ids::IO, ids::APP, ids::CMD]),
    ("cgroup.memory", &[ids::MEM, ids::IO, ids::APP, ids::CMD]),
    ("cgroup.swap", &[ids::MEM, ids::IO, ids::APP, ids::CMD]),
    ("memory", &[ids::MEM, ids::IO, ids::APP]),
    (
        "cgroup.cpu",
        &[ids::CPU, ids::MEM, ids::OS, ids::NET, ids::APP, ids::CMD],
    ),
    (
        "cpu",
        &[ids::CPU, ids::MEM, ids::OS, ids::NET, ids::APP, ids::CMD],
    ),
    ("cgroup.pids", &[ids::OS]),
    ("os.rlimits", &[ids::OS, ids::APP, ids::CMD]),
    ("os.confinement", &[ids::OS, ids::NET, ids::APP, ids::CMD]),
];

/// How much a field at `path` bears on the families that `moved`: 2 where
/// its section bears on one of them, 1 where it bears on every family, 0
/// where it bears on others only.
fn bearing(path: &str, moved: &[String]) -> u8 {
    match BEARS_ON.iter().find(|(prefix, _)| path.starts_with(prefix)) {
        Some((_, families)) if families.iter().any(|f| moved.iter().any(|m| m == f)) => 2,
        Some(_) => 0,
        None => 1,
    }
}

/// The fields whose values differ between the `base` fingerprints and the
/// `other` ones, each steady within its side, most bearing on the
/// families that `moved` first (then by path: the cgroup's controls before
/// the CPU's, the directories', memory's and the OS's), at most
/// [`MOST_DIFFERENCES`], and how many there are in all.
pub(crate) fn differences(
    base: &[&Fingerprint],
    other: &[&Fingerprint],
    moved: &[String],
) -> (Vec<Difference>, usize) {
    let mut found: Vec<(u8, Difference)> = differing_fields(base, other)
        .into_iter()
        .map(|d| (bearing(&d.field, moved), d))
        .collect();
    let total = found.len();
    // a stable sort keeps the paths' order between equals
    found.sort_by_key(|x| std::cmp::Reverse(x.0));
    let named = found
        .into_iter()
        .take(MOST_DIFFERENCES)
        .map(|(_, d)| d)
        .collect();
    (named, total)
}
