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

/// Whether `field` is a directory's file system (`dirs[0].fs_type`).
fn says_what_a_dir_is(field: &str) -> bool {
    field.starts_with("dirs[") && field.ends_with("].fs_type")
}

/// The fields whose values differ between the `base` fingerprints and the
/// `other` ones, each steady within its side, most bearing on the
/// families that `moved` first (then by path: the cgroup's controls before
/// the CPU's, the directories' (a directory's file system first), memory's
/// and the OS's), at most
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
    // a stable sort keeps the paths' order between equals, but for what
    // a directory is (its file system), named before how its disk queues
    found.sort_by_key(|x| (std::cmp::Reverse(x.0), !says_what_a_dir_is(&x.1.field)));
    let named = found
        .into_iter()
        .take(MOST_DIFFERENCES)
        .map(|(_, d)| d)
        .collect();
    (named, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::storage::{BlockQueue, DirInfo};

    #[test]
    fn a_directory_s_file_system_is_named_before_its_disk_s_queue() {
        let mut base = crate::probe::probe_fixture(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/probe/controls-v1"),
        );
        base.dirs = vec![DirInfo {
            fs_type: Some("ext4".into()),
            device: Some("254:0".into()),
            block: Some(BlockQueue {
                name: "vda".into(),
                device: Some("254:0".into()),
                scheduler: Some("mq-deadline".into()),
                read_ahead_kb: Some(8192),
                nr_requests: Some(256),
            }),
            ..Default::default()
        }];
        // a FUSE mount of it: another type, an anonymous device, no disk
        let mut other = base.clone();
        other.dirs[0].fs_type = Some("fuse.bindfs".into());
        other.dirs[0].device = Some("0:52".into());
        other.dirs[0].block = None;
        let (named, total) = differences(&[&base], &[&other], &["io".to_string()]);
        let fields: Vec<&str> = named.iter().map(|d| d.field.as_str()).collect();
        // the devices' numbers are no setting; the queue's four after the type
        assert_eq!(total, 5, "{fields:?}");
        assert_eq!(fields[0], "dirs[0].fs_type");
        assert_eq!(fields.len(), MOST_DIFFERENCES);
    }
}
