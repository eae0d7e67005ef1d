//! The resource controls of this process's control groups, under cgroup
//! v1, v2 or a hybrid of both: CPU quota and weight, cpuset, memory
//! limits and swap, I/O limits and weight ([`super::cgroup_io`]), pids.
//!
//! A container's `--cpus 1.5` or `--memory 2g`, a cloud volume's
//! bandwidth cap or a systemd slice's `CPUWeight=` change what a benchmark
//! can use without changing `/proc/cpuinfo`; envbench records each so a
//! comparison can name the control rather than blame the environment.

use super::cgroup_io::{self, parse_limit, IoLimit};
use super::storage::MountEntry;
use super::{Notes, Roots};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The cgroup controls of this process; `None` means no control was found
/// (or none is set).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupInfo {
    /// `v1`, `v2` or `hybrid` (v1 controllers plus a v2 hierarchy).
    pub version: Option<String>,
    /// This process's cgroup path (of the v2 hierarchy, else the memory controller's).
    pub path: Option<String>,
    /// CPU quota in CPUs (quota / period), e.g. 1.5; the tightest along the path.
    pub cpu_quota_cpus: Option<f64>,
    /// Memory limit in bytes (v2 `memory.max`, v1 `memory.limit_in_bytes`);
    /// the tightest along the path.
    pub memory_limit_bytes: Option<u64>,
    /// Maximum number of tasks; the tightest along the path.
    pub pids_max: Option<u64>,
    /// v2 `cpu.weight` (1 to 10000, 100 by default), the lowest along the
    /// path: this group's share of the CPUs against its siblings', which
    /// only bites when they all want more CPU than there is. Absent under
    /// v1, where no group sets it, and from files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_weight: Option<u64>,
    /// v1 `cpu.shares` (2 to 262144, 1024 by default), the lowest along
    /// the path: v1's CPU weight. Absent under v2 and from older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_shares: Option<u64>,
    /// The CPUs the cpuset lets this group run on, in the kernel's list
    /// format (`0-1`, `0,2-3`): v2 `cpuset.cpus.effective`, v1
    /// `cpuset.effective_cpus` (else `cpuset.cpus`), of the innermost group
    /// that has one. Absent where no cpuset controller is reachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuset_cpus: Option<String>,
    /// v2 `memory.high`, bytes, the tightest along the path: above it the
    /// group's pages are reclaimed at once and its tasks throttled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_high_bytes: Option<u64>,
    /// Swap the group may use, bytes: v2 `memory.swap.max`; v1
    /// `memory.memsw.limit_in_bytes` less the memory limit. 0: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_max_bytes: Option<u64>,
    /// Per-device I/O limits, the tightest along the path (v2 `io.max`, v1
    /// `blkio.throttle.*_device`); empty where none is set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_limits: Vec<IoLimit>,
    /// I/O weight, the lowest along the path: v2 `io.weight`'s default
    /// (1 to 10000) or v1 `blkio.bfq.weight` (1 to 1000), both 100 by
    /// default; it bites only when groups contend for one disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_weight: Option<u64>,
    /// v1 `blkio.weight` of the CFQ scheduler (10 to 1000, 500 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blkio_weight: Option<u64>,
}

impl CgroupInfo {
    /// This group's CPU weight as a share of the default weight (1: the
    /// default; 0.5: half the CPU time of a default sibling under
    /// contention), from v2's `cpu.weight` or v1's `cpu.shares`.
    pub(crate) fn cpu_weight_share(&self) -> Option<f64> {
        self.cpu_weight
            .map(|w| w as f64 / 100.0)
            .or_else(|| self.cpu_shares.map(|s| s as f64 / 1024.0))
    }

    /// How many CPUs the cpuset allows, when it is known.
    pub(crate) fn cpuset_count(&self) -> Option<usize> {
        super::cpu::parse_cpu_list(self.cpuset_cpus.as_deref()?).map(|c| c.len())
    }

    /// The tightest memory bound: `memory.max` or `memory.high`.
    pub(crate) fn memory_bound_bytes(&self) -> Option<u64> {
        match (self.memory_limit_bytes, self.memory_high_bytes) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// One line of `/proc/self/cgroup`: `hierarchy-id:controllers:path`.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupLine {
    /// Hierarchy id; 0 is the v2 unified hierarchy.
    pub id: u32,
    /// Controllers bound to the hierarchy (empty for v2).
    pub controllers: Vec<String>,
    /// The process's path in it.
    pub path: String,
}

/// Parses `/proc/self/cgroup`.
pub(crate) fn parse_proc_cgroup(text: &str) -> Vec<CgroupLine> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ':');
            let id = it.next()?.parse().ok()?;
            let controllers = it.next()?;
            let path = it.next()?.to_string();
            Some(CgroupLine {
                id,
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                path,
            })
        })
        .collect()
}

/// `v1`, `v2` or `hybrid` from the parsed lines.
pub(crate) fn cgroup_version(lines: &[CgroupLine]) -> Option<&'static str> {
    let v2 = lines.iter().any(|l| l.id == 0 && l.controllers.is_empty());
    let v1 = lines.iter().any(|l| l.id != 0);
    match (v1, v2) {
        (true, true) => Some("hybrid"),
        (true, false) => Some("v1"),
        (false, true) => Some("v2"),
        (false, false) => None,
    }
}

/// Parses v2 `cpu.max` (`max 100000` or `150000 100000`) into CPUs.
pub(crate) fn parse_cpu_max(text: &str) -> Option<f64> {
    let mut it = text.split_whitespace();
    let quota = it.next()?;
    let period: f64 = it.next().and_then(|p| p.parse().ok()).unwrap_or(100_000.0);
    if quota == "max" {
        return None;
    }
    let q: f64 = quota.parse().ok()?;
    (q > 0.0 && period > 0.0).then(|| q / period)
}

/// The directories from `path` up to the mount root, innermost first.
fn ancestors(mount_point: &str, path: &str) -> Vec<String> {
    let mount = mount_point.trim_end_matches('/');
    let mut out = Vec::new();
    let mut p = path.trim_end_matches('/');
    loop {
        out.push(format!("{mount}{p}"));
        match p.rfind('/') {
            Some(i) => p = &p[..i],
            None => break,
        }
    }
    out
}

/// Where a controller's files are for this process: its group's directory
/// in the hierarchy that holds the controller, and that group's ancestors.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Place {
    /// The hierarchy's mount point, e.g. `/sys/fs/cgroup/blkio`.
    mount: String,
    /// The group mounted there, `/` but for a mount of a group below the
    /// root (a container's, without a cgroup namespace), whose directory
    /// holds the paths below its own.
    root: String,
    /// The process's path in the hierarchy, e.g. `/user.slice`.
    pub(crate) path: String,
    /// Whether it is a v1 hierarchy (v1 file names).
    pub(crate) v1: bool,
}

impl Place {
    /// `controller`'s place: its v1 hierarchy where one is mounted (hybrid
    /// hosts put the controllers there and leave the v2 hierarchy empty),
    /// else the v2 hierarchy.
    fn of(controller: &str, lines: &[CgroupLine], mounts: &[MountEntry]) -> Option<Place> {
        let v1 = mounts
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.super_options.split(',').any(|o| o == controller));
        let v1_line = lines
            .iter()
            .find(|l| l.controllers.iter().any(|c| c == controller));
        if let (Some(m), Some(l)) = (v1, v1_line) {
            return Some(Place {
                mount: m.mount_point.clone(),
                root: m.root.clone(),
                path: l.path.clone(),
                v1: true,
            });
        }
        let m = mounts.iter().find(|m| m.fs_type == "cgroup2")?;
        let l = lines.iter().find(|l| l.id == 0)?;
        Some(Place {
            mount: m.mount_point.clone(),
            root: m.root.clone(),
            path: l.path.clone(),
            v1: false,
        })
    }

    /// The group's directory and its ancestors', innermost first, up to
    /// the mount's own group.
    pub(crate) fn dirs(&self) -> Vec<String> {
        let below = self
            .path
            .strip_prefix(self.root.trim_end_matches('/'))
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
            .unwrap_or(&self.path);
        ancestors(&self.mount, below)
    }

    /// The tightest (smallest) value of `file` parsed by `parse` along the path.
    pub(crate) fn tightest<T: PartialOrd + Copy>(
        &self,
        roots: &Roots,
        file: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Option<T> {
        self.dirs()
            .iter()
            .filter_map(|dir| roots.read(&format!("{dir}/{file}")).and_then(|t| parse(&t)))
            .fold(None, |best, v| match best {
                Some(b) if b <= v => Some(b),
                _ => Some(v),
            })
    }

    /// The text of `file` in the innermost group that has it.
    fn innermost(&self, roots: &Roots, file: &str) -> Option<String> {
        self.dirs()
            .iter()
            .find_map(|dir| roots.read(&format!("{dir}/{file}")))
            .map(|t| t.trim().to_string())
    }
}

/// A number file (`cpu.weight`, `cpu.shares`).
fn parse_number(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// CPU quota and weight from `place`.
fn read_cpu(roots: &Roots, place: &Place, info: &mut CgroupInfo) {
    if place.v1 {
        // quota and period are read as a pair from each directory
        info.cpu_quota_cpus = place
            .dirs()
            .iter()
            .filter_map(|dir| {
                let quota: i64 = parse_signed(roots, &format!("{dir}/cpu.cfs_quota_us"))?;
                let period = parse_signed(roots, &format!("{dir}/cpu.cfs_period_us"))? as f64;
                (quota > 0 && period > 0.0).then(|| quota as f64 / period)
            })
            .reduce(f64::min);
        info.cpu_shares = place.tightest(roots, "cpu.shares", parse_number);
    } else {
        info.cpu_quota_cpus = place.tightest(roots, "cpu.max", parse_cpu_max);
        info.cpu_weight = place.tightest(roots, "cpu.weight", parse_number);
    }
}

fn parse_signed(roots: &Roots, path: &str) -> Option<i64> {
    roots.read(path)?.trim().parse().ok()
}

/// The CPUs the cpuset allows, in the kernel's list format.
fn read_cpuset(roots: &Roots, place: &Place) -> Option<String> {
    let files: &[&str] = if place.v1 {
        &["cpuset.effective_cpus", "cpuset.cpus"]
    } else {
        &["cpuset.cpus.effective"]
    };
    files
        .iter()
        .find_map(|f| place.innermost(roots, f))
        .filter(|l| super::cpu::parse_cpu_list(l).is_some_and(|c| !c.is_empty()))
}

/// Memory limit, high mark and swap from `place`.
fn read_memory(roots: &Roots, place: &Place, info: &mut CgroupInfo) {
    if place.v1 {
        info.memory_limit_bytes = place.tightest(roots, "memory.limit_in_bytes", parse_limit);
        let with_swap = place.tightest(roots, "memory.memsw.limit_in_bytes", parse_limit);
        info.swap_max_bytes = match (with_swap, info.memory_limit_bytes) {
            (Some(all), Some(memory)) => Some(all.saturating_sub(memory)),
            _ => None,
        };
    } else {
        info.memory_limit_bytes = place.tightest(roots, "memory.max", parse_limit);
        info.memory_high_bytes = place.tightest(roots, "memory.high", parse_limit);
        info.swap_max_bytes = place.tightest(roots, "memory.swap.max", parse_limit);
    }
}

/// The I/O limits and weights along `place` into `info`: per device the
/// tightest of each limit, the lowest weight.
fn read_io(roots: &Roots, place: &Place, info: &mut CgroupInfo) {
    let mut tightest: BTreeMap<String, IoLimit> = BTreeMap::new();
    for dir in place.dirs() {
        for limit in cgroup_io::limits_in(roots, &dir, place.v1) {
            match tightest.get_mut(&limit.device) {
                Some(t) => t.tighten(&limit),
                None => {
                    tightest.insert(limit.device.clone(), limit);
                }
            }
        }
    }
    info.io_limits = tightest
        .into_values()
        .filter(|l| l.limits_reads() || l.limits_writes())
        .map(|mut l| {
            l.name = l.device.split_once(':').and_then(|(a, b)| {
                super::storage::block_name(roots, a.parse().ok()?, b.parse().ok()?)
            });
            l
        })
        .collect();
    if place.v1 {
        info.io_weight = place.tightest(roots, "blkio.bfq.weight", cgroup_io::parse_weight);
        info.blkio_weight = place.tightest(roots, "blkio.weight", cgroup_io::parse_weight);
    } else {
        info.io_weight = place.tightest(roots, "io.weight", cgroup_io::parse_weight);
    }
}

/// Reads the controls that apply to this process below `roots`.
pub(crate) fn probe_cgroup(roots: &Roots, mounts: &[MountEntry], notes: &mut Notes) -> CgroupInfo {
    let Some(text) = roots.read_noted("/proc/self/cgroup", notes) else {
        return CgroupInfo::default();
    };
    let lines = parse_proc_cgroup(&text);
    let place = |controller: &str| Place::of(controller, &lines, mounts);
    let mut info = CgroupInfo {
        version: cgroup_version(&lines).map(str::to_string),
        ..CgroupInfo::default()
    };
    if let Some(p) = place("cpu") {
        read_cpu(roots, &p, &mut info);
    }
    info.cpuset_cpus = place("cpuset").and_then(|p| read_cpuset(roots, &p));
    let memory = place("memory");
    if let Some(p) = &memory {
        read_memory(roots, p, &mut info);
    }
    info.pids_max = place("pids").and_then(|p| p.tightest(roots, "pids.max", parse_limit));
    if let Some(p) = place("blkio") {
        read_io(roots, &p, &mut info);
    }
    info.path = match &memory {
        Some(p) if p.v1 => Some(p.path.clone()),
        _ => lines.iter().find(|l| l.id == 0).map(|l| l.path.clone()),
    };
    if info.version.is_some() && memory.is_none() {
        notes.push("cgroup filesystem not mounted: limits unknown".into());
    }
    info
}

/// The file that counts the out-of-memory kills in this process's memory
/// cgroup, as an absolute path to read below `roots`: v1's
/// `memory.oom_control` (its `oom_kill` line, Linux 4.13 on) where the
/// memory controller is mounted as v1, else v2's `memory.events`; None
/// without either. Example: `/sys/fs/cgroup/memory/user.slice/memory.oom_control`
/// (v1, hybrid), `/sys/fs/cgroup/user.slice/session-2.scope/memory.events`
/// (v2).
pub(crate) fn oom_events_file(roots: &Roots, mounts: &[MountEntry]) -> Option<String> {
    let lines = parse_proc_cgroup(&roots.read("/proc/self/cgroup")?);
    let place = Place::of("memory", &lines, mounts)?;
    let file = if place.v1 {
        "memory.oom_control"
    } else {
        "memory.events"
    };
    Some(format!("{}/{file}", place.dirs().first()?))
}

/// (pids.max, pids.current) of this process's pids controller below
/// `roots`: of the group along its path (its own and those above it, each
/// counting every group below it) with the least room left; None where no
/// group along the path has a limit, or the controller is not mounted.
pub(crate) fn pids_in_use(roots: &Roots, mounts: &[MountEntry]) -> Option<(u64, u64)> {
    let lines = parse_proc_cgroup(&roots.read("/proc/self/cgroup")?);
    let place = Place::of("pids", &lines, mounts)?;
    place
        .dirs()
        .iter()
        .filter_map(|dir| {
            let max = parse_limit(&roots.read(&format!("{dir}/pids.max"))?)?;
            let current = roots.read(&format!("{dir}/pids.current"))?;
            Some((max, current.trim().parse::<u64>().ok()?))
        })
        .min_by_key(|(max, current)| max.saturating_sub(*current))
}

/// The `oom_kill N` count in the text of v2's `memory.events`, v1's
/// `memory.oom_control` or `/proc/vmstat` (the kernel's, Linux 4.13 on).
pub(crate) fn parse_oom_kills(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `text` to absolute path `abs` below the recorded `roots`.
    fn write_below(roots: &Roots, abs: &str, text: &str) {
        let p = roots.path(abs);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn finds_and_reads_the_out_of_memory_kill_counters() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::fixture(dir.path());
        let write = |abs: &str, text: &str| write_below(&roots, abs, text);
        // a hybrid host: the memory controller is v1's
        write("/proc/self/cgroup", "4:memory:/user/x\n0::/\n");
        let (mounts, _) = super::super::storage::parse_mountinfo(
            "32 31 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
             40 31 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
        );
        assert_eq!(
            oom_events_file(&roots, &mounts).as_deref(),
            Some("/sys/fs/cgroup/memory/user/x/memory.oom_control")
        );
        // v2 alone, a container's mount of its own cgroup
        write("/proc/self/cgroup", "0::/system.slice/c.scope\n");
        let (mounts, _) = super::super::storage::parse_mountinfo(
            "40 31 0:31 /system.slice/c.scope /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        );
        assert_eq!(
            oom_events_file(&roots, &mounts).as_deref(),
            Some("/sys/fs/cgroup/memory.events")
        );
        let v2 = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(parse_oom_kills(v2), Some(2));
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n";
        assert_eq!(parse_oom_kills(v1), Some(7));
        assert_eq!(parse_oom_kills("oom_kill_disable 0\nunder_oom 0\n"), None);
    }

    #[test]
    fn the_pids_in_use_are_read_where_a_limit_is() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::fixture(dir.path());
        let write = |abs: &str, text: &str| write_below(&roots, abs, text);
        // v2: the process's own group is unlimited, its parent's is not
        write("/proc/self/cgroup", "0::/user.slice/s.scope\n");
        write("/sys/fs/cgroup/user.slice/s.scope/pids.max", "max\n");
        write("/sys/fs/cgroup/user.slice/s.scope/pids.current", "12\n");
        write("/sys/fs/cgroup/user.slice/pids.max", "4000\n");
        write("/sys/fs/cgroup/user.slice/pids.current", "57\n");
        let (v2, _) = super::super::storage::parse_mountinfo(
            "40 31 0:31 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        );
        assert_eq!(pids_in_use(&roots, &v2), Some((4000, 57)));
        // a looser limit inside a fuller one: the fuller one's room counts
        write("/sys/fs/cgroup/user.slice/s.scope/pids.max", "5000\n");
        write("/sys/fs/cgroup/user.slice/pids.current", "3990\n");
        assert_eq!(pids_in_use(&roots, &v2), Some((4000, 3990)));
        // v1's pids hierarchy, mounted where it is
        write("/proc/self/cgroup", "5:pids:/x\n0::/\n");
        write("/sys/fs/cgroup/pids/x/pids.max", "300\n");
        write("/sys/fs/cgroup/pids/x/pids.current", "9\n");
        let (v1, _) = super::super::storage::parse_mountinfo(
            "33 31 0:33 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
        );
        assert_eq!(pids_in_use(&roots, &v1), Some((300, 9)));
        // no limit anywhere, or no controller mounted
        write("/sys/fs/cgroup/pids/x/pids.max", "max\n");
        assert_eq!(pids_in_use(&roots, &v1), None);
        assert_eq!(pids_in_use(&roots, &[]), None);
    }

    #[test]
    fn detects_versions() {
        assert_eq!(
            cgroup_version(&parse_proc_cgroup("0::/user.slice\n")),
            Some("v2")
        );
        assert_eq!(
            cgroup_version(&parse_proc_cgroup("4:memory:/x\n0::/\n")),
            Some("hybrid")
        );
        assert_eq!(
            cgroup_version(&parse_proc_cgroup("4:memory:/x\n3:cpu,cpuacct:/x\n")),
            Some("v1")
        );
    }

    #[test]
    fn parses_cpu_max() {
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("150000 100000\n"), Some(1.5));
    }

    #[test]
    fn v1_unlimited_memory_is_none() {
        assert_eq!(parse_limit("9223372036854771712\n"), None);
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit("2147483648\n"), Some(2147483648));
    }

    #[test]
    fn ancestors_walk_to_the_mount_root() {
        assert_eq!(
            ancestors("/sys/fs/cgroup", "/a/b"),
            vec!["/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup"]
        );
        assert_eq!(ancestors("/sys/fs/cgroup", "/"), vec!["/sys/fs/cgroup"]);
    }

    #[test]
    fn a_weight_is_a_share_of_the_default_under_either_version() {
        let v2 = CgroupInfo {
            cpu_weight: Some(50),
            ..CgroupInfo::default()
        };
        let v1 = CgroupInfo {
            cpu_shares: Some(2048),
            ..CgroupInfo::default()
        };
        assert_eq!(v2.cpu_weight_share(), Some(0.5));
        assert_eq!(v1.cpu_weight_share(), Some(2.0));
        assert_eq!(CgroupInfo::default().cpu_weight_share(), None);
    }

    #[test]
    fn the_memory_bound_is_the_lower_of_max_and_high() {
        let c = CgroupInfo {
            memory_limit_bytes: Some(8 << 30),
            memory_high_bytes: Some(6 << 30),
            ..CgroupInfo::default()
        };
        assert_eq!(c.memory_bound_bytes(), Some(6 << 30));
        let c = CgroupInfo {
            memory_high_bytes: Some(1 << 30),
            ..CgroupInfo::default()
        };
        assert_eq!(c.memory_bound_bytes(), Some(1 << 30));
    }
}
