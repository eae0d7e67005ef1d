//! The fingerprint of an import: what `--env` states (every key in
//! [`ENV_KEYS`]), then what the outputs reveal (a host name, a tool's timer).

use super::Input;
use crate::probe::{self, Fingerprint};
use std::path::PathBuf;

/// Every `--env` key, with what it fills.
pub const ENV_KEYS: &[(&str, &str)] = &[
    (
        "virtualization",
        "layers outermost first, '/'-separated: bare-metal, kvm, wsl2, wsl2/docker ...",
    ),
    ("kernel", "kernel release, e.g. 6.1.0-13-amd64"),
    ("distro", "e.g. Ubuntu 22.04"),
    ("arch", "e.g. x86_64"),
    ("hostname", "host name"),
    ("cpu_model", "e.g. AMD Ryzen 7 5700X 8-Core Processor"),
    ("cpu_vendor", "e.g. AuthenticAMD"),
    ("logical_cpus", "logical CPUs online"),
    ("usable_cpus", "CPUs the tool could use"),
    ("sockets", "CPU sockets"),
    ("cores", "physical cores"),
    ("governor", "CPU frequency governor"),
    ("idle_driver", "cpuidle driver, e.g. intel_idle, haltpoll"),
    ("idle_governor", "cpuidle governor, e.g. menu, teo"),
    ("mhz", "CPU clock, MHz"),
    ("memory", "total memory, bytes or with K/M/G/T (binary)"),
    ("swap", "total swap, same units"),
    ("cgroup_cpus", "cgroup CPU quota, CPUs"),
    ("cgroup_memory", "cgroup memory limit, same units as memory"),
    ("clock_source", "e.g. tsc, hyperv_clocksource_tsc_page"),
    (
        "fs_type",
        "filesystem of the tested directory, e.g. ext4, 9p",
    ),
    ("dir", "the tested directory"),
];

/// `4G`, `512M`, `16384` → bytes (binary multiples).
fn bytes(v: &str) -> Option<u64> {
    let v = v.trim().trim_end_matches("iB").trim_end_matches('B');
    let (num, mult) = match v.chars().last()? {
        'K' | 'k' => (&v[..v.len() - 1], 1u64 << 10),
        'M' => (&v[..v.len() - 1], 1 << 20),
        'G' => (&v[..v.len() - 1], 1 << 30),
        'T' => (&v[..v.len() - 1], 1 << 40),
        _ => (v, 1),
    };
    let x: f64 = num.trim().parse().ok()?;
    (x.is_finite() && x >= 0.0).then_some((x * mult as f64) as u64)
}

/// The fingerprint: what `--env` states, then what the outputs reveal;
/// everything else stays unknown (None, empty, or 0 logical CPUs).
pub(super) fn fingerprint(
    inputs: &[Input],
    env: &[(String, String)],
) -> Result<Fingerprint, String> {
    let mut fp = Fingerprint {
        os: probe::os::OsInfo::default(),
        virtualization: probe::virt::Virtualization::default(),
        cgroup: probe::cgroup::CgroupInfo::default(),
        cpu: probe::cpu::CpuInfo::default(),
        memory: probe::memory::MemoryInfo::default(),
        clock: probe::timer::ClockInfo::default(),
        dirs: Vec::new(),
        load_average: None,
        netfilter: probe::net::NetfilterInfo::default(),
        tcp: probe::net::TcpInfo::default(),
        build: probe::BuildInfo { profile: "import".into(), ..probe::BuildInfo::current() },
        notes: vec!["imported: only what --env states and the outputs reveal is known; every other field is unknown (logical_cpus 0 means unknown)".into()],
    };
    for (k, v) in env {
        set_env(&mut fp, k, v).map_err(|why| format!("--env {k}={v}: {why}"))?;
    }
    for i in inputs {
        let f = &i.parsed.facts;
        if let Some(h) = &f.hostname {
            match &fp.os.hostname {
                None => fp.os.hostname = Some(h.clone()),
                Some(s) if s != h => fp
                    .notes
                    .push(format!("{} names host {h}, not {s}", i.path.display())),
                _ => {}
            }
        }
        if let (None, Some(r)) = (fp.clock.resolution_ns, f.clock_resolution_ns) {
            fp.clock.resolution_ns = Some(r);
            fp.notes.push(format!(
                "clock resolution {r} ns as {} reports it",
                f.tool.as_deref().unwrap_or("the tool")
            ));
        }
    }
    Ok(fp)
}

fn set_env(fp: &mut Fingerprint, k: &str, v: &str) -> Result<(), String> {
    let count = || {
        v.parse::<usize>()
            .map_err(|_| "not a whole number".to_string())
    };
    let size = || bytes(v).ok_or_else(|| "not a size (e.g. 16G, 512M, 17179869184)".to_string());
    let text = || Some(v.to_string());
    if v.trim().is_empty() {
        return Err("empty value".into());
    }
    match k {
        "virtualization" => {
            fp.virtualization.layers = v
                .split('/')
                .map(|l| probe::virt::VirtLayer {
                    kind: probe::virt::LayerKind::Stated,
                    name: l.trim().into(),
                    evidence: vec!["--env virtualization".into()],
                })
                .collect();
        }
        "kernel" => fp.os.kernel_release = text(),
        "distro" => fp.os.distro = text(),
        "arch" => fp.os.arch = v.into(),
        "hostname" => fp.os.hostname = text(),
        "cpu_model" => fp.cpu.model = text(),
        "cpu_vendor" => fp.cpu.vendor = text(),
        "logical_cpus" => fp.cpu.logical_cpus = count()?,
        "usable_cpus" => fp.cpu.usable_cpus = Some(count()?),
        "sockets" => fp.cpu.sockets = Some(count()?),
        "cores" => fp.cpu.cores = Some(count()?),
        "governor" => fp.cpu.governor = text(),
        "idle_driver" => fp.cpu.idle_driver = text(),
        "idle_governor" => fp.cpu.idle_governor = text(),
        "mhz" => fp.cpu.mhz = Some(v.parse().map_err(|_| "not a number of MHz".to_string())?),
        "memory" => fp.memory.total_bytes = Some(size()?),
        "swap" => fp.memory.swap_total_bytes = Some(size()?),
        "cgroup_cpus" => {
            fp.cgroup.cpu_quota_cpus =
                Some(v.parse().map_err(|_| "not a number of CPUs".to_string())?)
        }
        "cgroup_memory" => fp.cgroup.memory_limit_bytes = Some(size()?),
        "clock_source" => fp.clock.source = text(),
        "fs_type" | "dir" => {
            if fp.dirs.is_empty() {
                fp.dirs.push(probe::storage::DirInfo::default());
            }
            if k == "dir" {
                fp.dirs[0].path = PathBuf::from(v);
            } else {
                fp.dirs[0].fs_type = text();
            }
        }
        _ => {
            let keys: Vec<&str> = ENV_KEYS.iter().map(|k| k.0).collect();
            return Err(format!("unknown key; known keys: {}", keys.join(", ")));
        }
    }
    Ok(())
}
