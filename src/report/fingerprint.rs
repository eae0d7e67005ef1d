//! Fingerprints in words: `envbench info`'s human-readable list, and the
//! rows `compare` shows side by side.

use super::words::idle_text;
use crate::compare::{Environment, IdleStates};
use crate::probe::cgroup::CgroupInfo;
use crate::probe::cgroup_io::IoLimit;
use crate::probe::cpu::CpuInfo;
use crate::probe::storage::DirInfo;
use crate::probe::virt::Virtualization;
use crate::probe::Fingerprint;
use crate::results::ResultFile;
use crate::units::{byte_rate_text, exact_size_text, format_value, gib_text};
use serde::Serialize;

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "unknown".to_string(), T::to_string)
}

/// Bytes in GiB, `unknown` when not known.
fn gib(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "unknown".into(), gib_text)
}

/// A fingerprint field across environments.
#[derive(Debug, Clone, Serialize)]
pub struct FingerprintRow {
    /// Field name.
    pub field: String,
    /// Value per environment (first run's), baseline first.
    pub values: Vec<String>,
    /// Whether any differs from the baseline's.
    pub differs: bool,
}

/// The fingerprint fields a comparison shows side by side, from the first
/// run of each environment, baseline first.
pub(crate) fn rows(envs: &[Environment]) -> Vec<FingerprintRow> {
    type Field = (&'static str, fn(&ResultFile) -> String);
    let fields: [Field; 14] = [
        ("virtualization", |r| r.fingerprint.virtualization.summary()),
        ("kernel", |r| {
            r.fingerprint.os.kernel_release.clone().unwrap_or_default()
        }),
        ("distro", |r| {
            r.fingerprint.os.distro.clone().unwrap_or_default()
        }),
        ("cpu model", |r| {
            r.fingerprint.cpu.model.clone().unwrap_or_default()
        }),
        ("logical CPUs", |r| {
            r.fingerprint.cpu.logical_cpus.to_string()
        }),
        ("usable CPUs", |r| {
            r.fingerprint
                .cpu
                .usable_cpus
                .map_or(String::new(), |c| c.to_string())
        }),
        ("CPU idle", |r| {
            idle_text(&IdleStates::of(&r.fingerprint.cpu))
        }),
        ("memory", |r| gib(r.fingerprint.memory.total_bytes)),
        ("cgroup limits", |r| {
            let c = &r.fingerprint.cgroup;
            format!(
                "cpu {} / mem {}",
                c.cpu_quota_cpus.map_or("none".into(), |q| q.to_string()),
                c.memory_limit_bytes
                    .map_or("none".into(), |m| format!("{} MiB", m >> 20))
            )
        }),
        ("clock source", |r| {
            r.fingerprint.clock.source.clone().unwrap_or_default()
        }),
        ("filesystems", |r| {
            r.fingerprint
                .dirs
                .iter()
                .map(|d| d.fs_type.clone().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(", ")
        }),
        ("loopback netfilter", |r| {
            netfilter_text(&r.fingerprint.netfilter)
        }),
        ("TCP congestion control", |r| {
            r.fingerprint
                .tcp
                .congestion_control
                .clone()
                .unwrap_or_default()
        }),
        ("suite", |r| r.config.suite.name().to_string()),
    ];
    let netfilter_somewhere = envs.iter().any(|e| {
        e.runs
            .first()
            .is_some_and(|r| r.fingerprint.netfilter.any())
    });
    fields
        .iter()
        .map(|(name, get)| {
            let values: Vec<String> = envs
                .iter()
                .map(|e| e.runs.first().map(get).unwrap_or_default())
                .collect();
            let differs = values.iter().any(|v| *v != values[0]);
            FingerprintRow {
                field: name.to_string(),
                values,
                differs,
            }
        })
        // netfilter says something only where some side has it; the
        // congestion control only where the sides differ (it is the same
        // on most machines, and a row that never differs is noise)
        .filter(|row| match row.field.as_str() {
            "loopback netfilter" => netfilter_somewhere,
            "TCP congestion control" => row.differs,
            _ => true,
        })
        .collect()
}

/// Key-value lines grouped by topic.
pub(crate) fn render(fp: &Fingerprint) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut row = |k: &str, v: String| rows.push((k.to_string(), v));
    virtualization_rows(&fp.virtualization, &mut row);
    os_rows(fp, &mut row);
    cpu_rows(&fp.cpu, &mut row);
    row(
        "memory",
        format!(
            "{} total, {} available; swap {} ({} free); transparent huge pages {}; NUMA nodes {}",
            gib(fp.memory.total_bytes),
            gib(fp.memory.available_bytes),
            gib(fp.memory.swap_total_bytes),
            gib(fp.memory.swap_free_bytes),
            opt(&fp.memory.thp),
            opt(&fp.memory.numa_nodes),
        ),
    );
    let k = &fp.clock;
    row(
        "clock",
        format!(
            "source {} (available: {}); resolution {} ns claimed, {} ns seen; read overhead {} ns",
            opt(&k.source),
            k.available_sources.join(" "),
            k.resolution_ns.map_or("unknown".into(), format_value),
            k.measured_resolution_ns
                .map_or("unknown".into(), format_value),
            k.read_overhead_ns.map_or("unknown".into(), format_value)
        ),
    );
    for d in &fp.dirs {
        row("dir", dir_text(d));
    }
    row(
        "load average",
        fp.load_average.map_or("unknown".into(), |l| {
            format!("{:.2} {:.2} {:.2}", l.one, l.five, l.fifteen)
        }),
    );
    row("netfilter", netfilter_text(&fp.netfilter));
    row(
        "tcp congestion",
        fp.tcp
            .congestion_control
            .clone()
            .unwrap_or_else(|| "unknown".into()),
    );
    let b = &fp.build;
    row(
        "envbench",
        format!(
            "{} ({}), {} opt-level {}, {} [{}]",
            b.version,
            opt(&b.git_commit),
            b.profile,
            b.opt_level,
            b.target,
            b.target_features.join(" ")
        ),
    );
    for n in &fp.notes {
        row("note", n.clone());
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{k:<width$}  {v}\n"))
        .collect()
}

/// What loopback traffic passes: "none" (a fresh network namespace), or
/// connection tracking, iptables tables and nf_tables, as the probe saw
/// them.
fn netfilter_text(n: &crate::probe::net::NetfilterInfo) -> String {
    if !n.any() {
        return "none".into();
    }
    let mut parts = Vec::new();
    if let Some(c) = n.conntrack_entries {
        parts.push(format!("conntrack ({c} connections)"));
    }
    if !n.iptables.is_empty() {
        let tables: Vec<String> = n
            .iptables
            .iter()
            .map(|t| match t.rules {
                Some(r) => format!("{} ({r} rules)", t.name),
                None => t.name.clone(),
            })
            .collect();
        parts.push(format!("iptables {}", tables.join(", ")));
    }
    if let Some(refs) = n.nf_tables_refs.filter(|&r| r > 0) {
        parts.push(format!("nf_tables in use ({refs} references)"));
    }
    parts.join("; ")
}

/// The virtualization summary, then each layer with its evidence and each note.
fn virtualization_rows(virt: &Virtualization, row: &mut impl FnMut(&str, String)) {
    let layers: Vec<String> = virt
        .layers
        .iter()
        .map(|l| format!("{} ({}: {})", l.name, l.kind, l.evidence.join("; ")))
        .collect();
    row("virtualization", virt.summary());
    for l in layers {
        row("  layer", l);
    }
    for n in &virt.notes {
        row("  note", n.clone());
    }
}

/// The kernel, distribution, architecture, host name and cgroup limits.
fn os_rows(fp: &Fingerprint, row: &mut impl FnMut(&str, String)) {
    row(
        "kernel",
        match &fp.os.kernel_release_source {
            Some(source) => format!("{} (from {source})", opt(&fp.os.kernel_release)),
            None => opt(&fp.os.kernel_release),
        },
    );
    row("distro", opt(&fp.os.distro));
    row("arch", fp.os.arch.clone());
    row("hostname", opt(&fp.os.hostname));
    row("cgroup", cgroup_text(&fp.cgroup));
    if !fp.cgroup.io_limits.is_empty() || fp.cgroup.io_weight.is_some() {
        row("cgroup io", cgroup_io_text(&fp.cgroup));
    }
    let limited: Vec<String> = fp
        .os
        .rlimits
        .iter()
        .filter(|(_, l)| l.soft.is_some() || l.hard.is_some())
        .map(|(name, l)| format!("{name} {}/{}", limit_word(l.soft), limit_word(l.hard)))
        .collect();
    if !fp.os.rlimits.is_empty() {
        row(
            "rlimits",
            format!("{} (soft/hard; the rest unlimited)", limited.join(", ")),
        );
    }
}

/// A limit's value, `unlimited` for none.
fn limit_word(v: Option<u64>) -> String {
    v.map_or_else(|| "unlimited".into(), |n| n.to_string())
}

/// The cgroup's version, path and CPU, memory and pids controls.
fn cgroup_text(c: &CgroupInfo) -> String {
    let none = || "none".to_string();
    let weight = match (c.cpu_weight, c.cpu_shares) {
        (Some(w), _) => format!("cpu.weight {w}"),
        (None, Some(s)) => format!("cpu.shares {s}"),
        (None, None) => "cpu weight unknown".into(),
    };
    format!(
        "{} {}; cpu quota {}; {weight}; cpuset {}; memory limit {}; memory high {}; swap {}; pids max {}",
        opt(&c.version),
        opt(&c.path),
        c.cpu_quota_cpus.map_or_else(none, |q| format!("{q} CPUs")),
        c.cpuset_cpus.clone().unwrap_or_else(|| "unknown".into()),
        c.memory_limit_bytes.map_or_else(none, exact_size_text),
        c.memory_high_bytes.map_or_else(none, exact_size_text),
        c.swap_max_bytes.map_or_else(none, exact_size_text),
        c.pids_max.map_or_else(none, |p| p.to_string()),
    )
}

/// The I/O limits per device and the I/O weight.
fn cgroup_io_text(c: &CgroupInfo) -> String {
    let mut parts: Vec<String> = c.io_limits.iter().map(io_limit_text).collect();
    if let Some(w) = c.io_weight {
        parts.push(format!("io weight {w}"));
    }
    if let Some(w) = c.blkio_weight {
        parts.push(format!("blkio.weight {w}"));
    }
    parts.join("; ")
}

/// One device's limits: `vda: reads 50 MiB/s and 400/s, writes 50 MiB/s`.
pub(crate) fn io_limit_text(l: &IoLimit) -> String {
    let way = |bps: Option<u64>, iops: Option<u64>| {
        let mut w: Vec<String> = bps.map(byte_rate_text).into_iter().collect();
        w.extend(iops.map(|n| format!("{n} operations/s")));
        w.join(" and ")
    };
    let mut parts = Vec::new();
    if l.limits_reads() {
        parts.push(format!("reads {}", way(l.read_bps, l.read_iops)));
    }
    if l.limits_writes() {
        parts.push(format!("writes {}", way(l.write_bps, l.write_iops)));
    }
    format!("{}: {}", l.device_name(), parts.join(", "))
}

/// The processor: model, topology, ISA flags, caches, frequency and idle states.
fn cpu_rows(c: &CpuInfo, row: &mut impl FnMut(&str, String)) {
    let model = match (&c.model, &c.model_hidden_by) {
        (None, Some(layer)) => format!("hidden by {layer}"),
        (model, _) => opt(model),
    };
    row("cpu", format!("{model} ({})", opt(&c.vendor)));
    row(
        "topology",
        format!(
            "{} socket(s), {} core(s), {} logical CPU(s), {} usable",
            opt(&c.sockets),
            opt(&c.cores),
            c.logical_cpus,
            opt(&c.usable_cpus)
        ),
    );
    row("isa flags", c.flags.join(" "));
    let caches: Vec<String> = c
        .caches
        .iter()
        .map(|k| format!("L{} {} {} KiB", k.level, k.kind, k.size_bytes / 1024))
        .collect();
    row("caches", caches.join(", "));
    row(
        "frequency",
        format!(
            "{} MHz now, max {} MHz, governor {}, policy max {} MHz, boost {}",
            c.mhz.map_or("unknown".into(), |m| format!("{m:.0}")),
            c.max_mhz.map_or("unknown".into(), |m| format!("{m:.0}")),
            opt(&c.governor),
            c.scaling_max_mhz
                .map_or("unknown".into(), |m| format!("{m:.0}")),
            c.boost.map_or("unknown", |b| if b { "on" } else { "off" }),
        ),
    );
    row(
        "cpu idle",
        format!(
            "driver {}, governor {}",
            opt(&c.idle_driver),
            opt(&c.idle_governor)
        ),
    );
}

/// One benchmark directory: its filesystem, mount, device, its disk's
/// queue and free space.
fn dir_text(d: &DirInfo) -> String {
    let queue = d.block.as_ref().map_or(String::new(), |b| {
        format!(
            ", disk {} (scheduler {}, read-ahead {} KiB, {} requests)",
            b.name,
            opt(&b.scheduler),
            opt(&b.read_ahead_kb),
            opt(&b.nr_requests)
        )
    });
    format!(
        "{}: {} on {} at {} ({}), device {} {}{queue}, {} free of {}",
        d.path.display(),
        opt(&d.fs_type),
        opt(&d.source),
        opt(&d.mount_point),
        opt(&d.mount_options),
        opt(&d.device),
        match d.rotational {
            Some(true) => "rotational",
            Some(false) => "non-rotational",
            None => "rotational unknown",
        },
        gib(d.free_bytes),
        gib(d.total_bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::notices::idle_drivers;

    #[test]
    fn fields_that_differ_from_the_baseline_are_marked() {
        let idle = |envs: &[Environment]| {
            rows(envs)
                .into_iter()
                .find(|r| r.field == "CPU idle")
                .unwrap()
        };
        assert!(!idle(&idle_drivers(false)).differs);
        let row = idle(&idle_drivers(true));
        assert!(row.differs, "{row:?}");
        assert_eq!(row.values, vec!["haltpoll / haltpoll", "intel_idle / menu"]);
    }

    #[test]
    fn the_congestion_control_is_shown_only_where_the_sides_differ() {
        let tcp = |envs: &[Environment]| {
            rows(envs)
                .into_iter()
                .find(|r| r.field == "TCP congestion control")
        };
        let mut envs = idle_drivers(false);
        assert!(tcp(&envs).is_none());
        for e in &mut envs {
            e.runs[0].fingerprint.tcp.congestion_control = Some("bbr".into());
        }
        assert!(tcp(&envs).is_none(), "the same on both sides");
        envs[1].runs[0].fingerprint.tcp.congestion_control = Some("cubic".into());
        let row = tcp(&envs).unwrap();
        assert!(row.differs);
        assert_eq!(row.values, vec!["bbr", "cubic"]);
        // known on one side only: shown, as unknown (empty) on the other
        envs[0].runs[0].fingerprint.tcp.congestion_control = None;
        assert_eq!(tcp(&envs).unwrap().values, vec!["", "cubic"]);
    }
}
