//! The fingerprints' differences in words, where no rule fits: "I/O write
//! limit 50 MiB/s on vda (B only)", "CPU governor powersave in A,
//! performance in B". A field is named by its path in the fingerprint,
//! each part in a few words where one is known, and its value in the unit
//! its name carries (`_bytes`, `_bps`, `_mhz` ...), so a field added to
//! the fingerprint later is named too, in its own name's words.

use crate::compare::diagnose::Difference;
use crate::units::{byte_rate_text, exact_size_text, format_value};
use serde_json::Value;

/// A part of a field's path in words; "" leaves it out.
fn part_words(part: &str) -> Option<&'static str> {
    Some(match part {
        "cgroup" | "memory" | "os" | "block" | "io_limits" | "dirs" => "",
        "cpu" => "CPU",
        "cpu_quota_cpus" => "CPU quota",
        "cpu_weight" => "cpu.weight",
        "cpu_shares" => "cpu.shares",
        "cpuset_cpus" => "cpuset",
        "memory_limit_bytes" => "memory limit",
        "memory_high_bytes" => "memory.high",
        "swap_max_bytes" => "cgroup swap limit",
        "pids_max" => "pids limit",
        "read_bps" => "I/O read limit",
        "write_bps" => "I/O write limit",
        "read_iops" => "I/O read operations limit",
        "write_iops" => "I/O write operations limit",
        "io_weight" => "I/O weight",
        "blkio_weight" => "blkio.weight",
        "rlimits" => "rlimit",
        "governor" => "governor",
        "scaling_max_mhz" => "highest frequency allowed",
        "max_mhz" => "highest frequency",
        "thp" => "transparent huge pages",
        "numa_nodes" => "NUMA nodes",
        "swap_total_bytes" => "swap",
        "total_bytes" => "size",
        "scheduler" => "I/O scheduler",
        "read_ahead_kb" => "read-ahead",
        "nr_requests" => "queue depth",
        "usable_cpus" => "usable CPUs",
        "logical_cpus" => "logical CPUs",
        "fs_type" => "file system",
        "virtualization" | "layers" => "layer",
        _ => return None,
    })
}

/// `cgroup.io_limits[vda].write_bps` as "I/O write limit on vda",
/// `dirs[0].block.scheduler` as "I/O scheduler on --dir 1".
fn field_words(field: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut on: Option<String> = None;
    for part in field.split('.') {
        let (name, key) = match part.split_once('[') {
            Some((n, k)) => (n, Some(k.trim_end_matches(']'))),
            None => (part, None),
        };
        match (name, key) {
            ("dirs", Some(k)) => {
                on = Some(
                    k.parse::<usize>()
                        .map_or(k.to_string(), |i| format!("--dir {}", i + 1)),
                );
            }
            ("io_limits", Some(k)) => on = Some(k.to_string()),
            (n, k) => {
                let w = part_words(n).map_or_else(|| n.replace('_', " "), str::to_string);
                words.extend([w].into_iter().filter(|w| !w.is_empty()));
                words.extend(k.map(str::to_string));
            }
        }
    }
    // "CPU usable CPUs" says CPU once: "usable CPUs"
    let said_after = |i: usize| words.get(i + 1).is_some_and(|w| w.contains("CPU"));
    let words: Vec<&String> = (0..words.len())
        .filter(|&i| !(words[i] == "CPU" && said_after(i)))
        .map(|i| &words[i])
        .collect();
    let mut text = words
        .iter()
        .map(|w| w.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(o) = on {
        text = format!("{text} on {o}");
    }
    text
}

/// A value in the unit the field's name carries.
fn value_words(field: &str, v: &Value) -> String {
    let leaf = field.rsplit('.').next().unwrap_or(field);
    let number = v.as_f64();
    match (v, number) {
        (Value::Bool(b), _) => if *b { "on" } else { "off" }.into(),
        (Value::String(s), _) => s.clone(),
        (Value::Array(items), _) => items
            .iter()
            .map(|i| value_words("", i))
            .collect::<Vec<_>>()
            .join(" "),
        (_, Some(n)) if leaf.ends_with("_bytes") => exact_size_text(n as u64),
        (_, Some(n)) if leaf.ends_with("_bps") => byte_rate_text(n as u64),
        (_, Some(n)) if leaf.ends_with("_iops") => format!("{} operations/s", whole(n)),
        (_, Some(n)) if leaf.ends_with("_mhz") => format!("{n:.0} MHz"),
        (_, Some(n)) if leaf.ends_with("_kb") => format!("{} KiB", whole(n)),
        (_, Some(n)) if leaf.ends_with("_cpus") && n == 1.0 => "1 CPU".into(),
        (_, Some(n)) if leaf.ends_with("_cpus") => format!("{} CPUs", whole(n)),
        _ => v.to_string(),
    }
}

/// A count as a whole number where it is one, else as figures are shown.
fn whole(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{n:.0}")
    } else {
        format_value(n)
    }
}

/// The items of a list one side has and the other lacks: CPU flags.
fn list_change(b: &[Value], o: &[Value], base: &str, other: &str) -> String {
    let only = |x: &[Value], y: &[Value]| {
        x.iter()
            .filter(|v| !y.contains(v))
            .map(|v| value_words("", v))
            .collect::<Vec<_>>()
    };
    let mut parts = Vec::new();
    for (side, items) in [(other, only(o, b)), (base, only(b, o))] {
        if !items.is_empty() {
            parts.push(format!("{} in {side} only", items.join(" ")));
        }
    }
    parts.join(", ")
}

/// One difference: "I/O write limit 50 MiB/s on vda (B only)", "CPU
/// governor powersave in A, performance in B".
pub(crate) fn difference_words(d: &Difference, base: &str, other: &str) -> String {
    let label = field_words(&d.field);
    let (name, on) = match label.split_once(" on ") {
        Some((n, o)) => (n.to_string(), format!(" on {o}")),
        None => (label.clone(), String::new()),
    };
    let value = |v: &Value| value_words(&d.field, v);
    match (&d.base, &d.other) {
        (None, Some(o)) => format!("{name} {}{on} ({other} only)", value(o)),
        (Some(b), None) => format!("{name} {}{on} ({base} only)", value(b)),
        (Some(Value::Array(b)), Some(Value::Array(o))) => {
            format!("{name}{on}: {}", list_change(b, o, base, other))
        }
        (Some(b), Some(o)) => format!(
            "{name}{on}: {} in {base}, {} in {other}",
            value(b),
            value(o)
        ),
        (None, None) => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words(field: &str, base: Option<Value>, other: Option<Value>) -> String {
        let d = Difference {
            field: field.into(),
            base,
            other,
        };
        difference_words(&d, "A", "B")
    }

    #[test]
    fn a_limit_on_one_side_is_named_with_its_device_and_side() {
        assert_eq!(
            words(
                "cgroup.io_limits[vda].write_bps",
                None,
                Some(json!(52428800))
            ),
            "I/O write limit 50 MiB/s on vda (B only)"
        );
        assert_eq!(
            words("cgroup.memory_limit_bytes", Some(json!(536870912)), None),
            "memory limit 512 MiB (A only)"
        );
    }

    #[test]
    fn values_on_both_sides_are_named_with_their_units() {
        assert_eq!(
            words(
                "cpu.governor",
                Some(json!("performance")),
                Some(json!("powersave"))
            ),
            "CPU governor: performance in A, powersave in B"
        );
        assert_eq!(
            words(
                "dirs[0].block.read_ahead_kb",
                Some(json!(128)),
                Some(json!(8192))
            ),
            "read-ahead on --dir 1: 128 KiB in A, 8192 KiB in B"
        );
        assert_eq!(
            words(
                "os.rlimits.nofile.soft",
                Some(json!(1024)),
                Some(json!(4096))
            ),
            "rlimit nofile soft: 1024 in A, 4096 in B"
        );
        assert_eq!(
            words("cpu.boost", Some(json!(true)), Some(json!(false))),
            "CPU boost: on in A, off in B"
        );
        assert_eq!(
            words("cpu.usable_cpus", Some(json!(2)), Some(json!(1))),
            "usable CPUs: 2 CPUs in A, 1 CPU in B"
        );
    }

    #[test]
    fn a_field_without_words_is_named_by_its_own_name() {
        assert_eq!(
            words(
                "cpu.flags",
                Some(json!(["avx2", "sse2"])),
                Some(json!(["sse2", "fma"]))
            ),
            "CPU flags: fma in B only, avx2 in A only"
        );
        assert_eq!(
            words("clock.source", Some(json!("tsc")), Some(json!("kvm-clock"))),
            "clock source: tsc in A, kvm-clock in B"
        );
    }
}
