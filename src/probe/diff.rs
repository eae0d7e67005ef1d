//! What differs between fingerprints, field by field: each fingerprint is
//! walked as its JSON (every field of every probe, present and future,
//! without a list of them) into leaves by path, and the leaves compared.
//! A field that differs between the fingerprints of one side (a scratch
//! path, free space) says nothing about the environments and is left out,
//! as are the fields that are measurements of a moment or names rather
//! than settings. `compare`'s diagnosis names them where no rule fits.

use super::Fingerprint;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Fields that are measurements of a moment, names or notes, not settings
/// of the environment (`[]` stands for any element of a list).
const NOT_SETTINGS: &[&str] = &[
    "load_average",
    "memory.available_bytes",
    "memory.swap_free_bytes",
    "cpu.mhz",
    "clock.measured_resolution_ns",
    "clock.read_overhead_ns",
    "os.hostname",
    "os.kernel_version",
    "cgroup.path",
    "build",
    "notes",
    "virtualization.notes",
    "virtualization.layers[].evidence",
    "dirs[].path",
    "dirs[].canonical",
    "dirs[].free_bytes",
    // a device's numbers name it, and an anonymous one (a FUSE mount's
    // 0:52) differs between any two mounts: its type and queue say what
    // it is
    "dirs[].device",
    "dirs[].block.device",
];

/// Lists whose elements are matched by their place, not by a key they
/// hold: the `--dir`s, given in the same order on both sides, where a
/// directory's device (its only key) differs between a local disk and a
/// mount of it, and two directories may share one; the CPU's caches,
/// listed by level, whose kind L2 and L3 share ("Unified").
const BY_PLACE: &[&str] = &["dirs", "cpu.caches"];

/// One field whose value differs between the sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// Its path in the fingerprint: `cgroup.io_limits[vda].write_bps`,
    /// `cpu.governor`, `dirs[0].block.scheduler`; an element of a list
    /// by its device, name or kind where it has one, else (and always a
    /// `--dir`) by its index.
    pub field: String,
    /// The base's value; None where absent (no such limit, not read).
    pub base: Option<Value>,
    /// OTHER's value; None where absent.
    pub other: Option<Value>,
}

/// The leaves of `v` below `path`, into `out`: objects by field, lists of
/// objects by their key, lists of plain values whole (CPU flags).
fn flatten(path: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    let pattern = element_pattern(path);
    if NOT_SETTINGS.contains(&pattern.as_str()) {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Null => {}
        Value::Object(map) => map.iter().for_each(|(k, x)| flatten(&join(k), x, out)),
        Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => {
            let by_place = BY_PLACE.contains(&pattern.as_str());
            for (i, item) in items.iter().enumerate() {
                let key = ["name", "device", "kind"]
                    .iter()
                    .filter(|_| !by_place)
                    .find_map(|k| item.get(*k).and_then(Value::as_str))
                    .map_or_else(|| i.to_string(), str::to_string);
                flatten(&format!("{path}[{key}]"), item, out);
            }
        }
        Value::Array(items) if items.is_empty() => {}
        leaf => {
            out.insert(path.to_string(), leaf.clone());
        }
    }
}

/// `dirs[0].free_bytes` as `dirs[].free_bytes`.
fn element_pattern(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut inside = false;
    for c in path.chars() {
        match c {
            '[' => {
                inside = true;
                out.push('[');
            }
            ']' => {
                inside = false;
                out.push(']');
            }
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

/// Every leaf of a fingerprint by its path.
fn leaves(fp: &Fingerprint) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    if let Ok(v) = serde_json::to_value(fp) {
        flatten("", &v, &mut out);
    }
    out
}

/// The one value every fingerprint of a side has at `path` (None: absent
/// from each); Err where they disagree.
fn steady<'a>(sides: &'a [BTreeMap<String, Value>], path: &str) -> Result<Option<&'a Value>, ()> {
    let first = sides.first().and_then(|l| l.get(path));
    if sides.iter().all(|l| l.get(path) == first) {
        Ok(first)
    } else {
        Err(())
    }
}

/// The fields whose values differ between the `base` fingerprints and the
/// `other` ones, each steady within its side, in the order of their paths.
pub(crate) fn differing_fields(base: &[&Fingerprint], other: &[&Fingerprint]) -> Vec<Difference> {
    let (b, o): (Vec<_>, Vec<_>) = (
        base.iter().map(|f| leaves(f)).collect(),
        other.iter().map(|f| leaves(f)).collect(),
    );
    let mut paths: Vec<&String> = b.iter().chain(&o).flat_map(|l| l.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|p| {
            let (bv, ov) = (steady(&b, p).ok()?, steady(&o, p).ok()?);
            (bv != ov).then(|| Difference {
                field: p.clone(),
                base: bv.cloned(),
                other: ov.cloned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::probe_fixture;
    use std::path::Path;

    fn recorded(name: &str) -> Fingerprint {
        probe_fixture(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/probe")
                .join(name),
        )
    }

    #[test]
    fn names_a_changed_control_by_its_device_and_no_run_s_own_figures() {
        let base = recorded("controls-v1");
        let mut other = base.clone();
        other.cgroup.io_limits[0].write_bps = Some(10 << 20);
        other.cgroup.path = Some("/other-scope".into());
        other.memory.available_bytes = Some(1);
        let mut again = other.clone();
        again.load_average = None;
        let d = differing_fields(&[&base], &[&other, &again]);
        assert_eq!(
            d,
            vec![Difference {
                field: "cgroup.io_limits[vda].write_bps".into(),
                base: Some(Value::from(50u64 << 20)),
                other: Some(Value::from(10u64 << 20)),
            }]
        );
        assert!(differing_fields(&[&base], &[&base.clone()]).is_empty());
    }

    #[test]
    fn a_dir_is_named_by_its_place_whatever_its_device() {
        let mut base = recorded("controls-v1");
        base.dirs = vec![crate::probe::storage::DirInfo {
            path: "/srv/work".into(),
            fs_type: Some("ext4".into()),
            device: Some("254:0".into()),
            ..Default::default()
        }];
        let mut other = base.clone();
        other.dirs[0].device = Some("0:52".into());
        other.dirs[0].fs_type = Some("fuse.bindfs".into());
        let d = differing_fields(&[&base], &[&other]);
        let fields: Vec<&str> = d.iter().map(|x| x.field.as_str()).collect();
        assert_eq!(fields, ["dirs[0].fs_type"]);
        assert_eq!(d[0].other, Some(Value::from("fuse.bindfs")));
        // two directories on one device: each its own, none lost
        let mut two = base.clone();
        two.dirs.push(base.dirs[0].clone());
        let mut changed = two.clone();
        changed.dirs[1].fs_type = Some("tmpfs".into());
        let d = differing_fields(&[&two], &[&changed]);
        let fields: Vec<&str> = d.iter().map(|x| x.field.as_str()).collect();
        assert_eq!(fields, ["dirs[1].fs_type"]);
    }

    #[test]
    fn each_cache_level_is_its_own_though_two_share_a_kind() {
        let base = recorded("controls-v1-recorded");
        let unified: Vec<usize> = (base.cpu.caches.iter().enumerate())
            .filter(|(_, c)| c.kind == "Unified")
            .map(|(i, _)| i)
            .collect();
        assert!(unified.len() >= 2, "{:?}", base.cpu.caches);
        let mut other = base.clone();
        let l2 = unified[0];
        other.cpu.caches[l2].size_bytes *= 2;
        let d = differing_fields(&[&base], &[&other]);
        let fields: Vec<&str> = d.iter().map(|x| x.field.as_str()).collect();
        assert_eq!(fields, [format!("cpu.caches[{l2}].size_bytes")]);
    }

    #[test]
    fn a_field_that_differs_within_a_side_is_no_difference_between_them() {
        let base = recorded("controls-v2");
        let (mut one, mut two) = (base.clone(), base.clone());
        one.cpu.governor = Some("performance".into());
        two.cpu.governor = Some("schedutil".into());
        assert!(differing_fields(&[&base], &[&one, &two]).is_empty());
        // absent on one side: named with no value there
        let mut bare = base.clone();
        bare.os.rlimits.remove("nofile");
        let d = differing_fields(&[&bare], &[&base]);
        let fields: Vec<&str> = d.iter().map(|x| x.field.as_str()).collect();
        assert_eq!(fields, ["os.rlimits.nofile.hard", "os.rlimits.nofile.soft"]);
        assert_eq!(d[0].base, None);
    }
}
