//! Control-group limits that apply to this process: CPU quota, memory limit,
//! pids limit, under cgroup v1, v2 or a hybrid of both.
//!
//! A container's `--cpus 1.5` or `--memory 2g` changes what a benchmark can
//! use without changing `/proc/cpuinfo`; envbench reports the limit so a
//! comparison does not blame the environment for a quota.

use super::storage::MountEntry;
use super::{Notes, Roots};
use serde::{Deserialize, Serialize};

/// v1 "unlimited" memory is a page-aligned `i64::MAX`; anything from 2⁶² up
/// is treated as no limit.
const V1_UNLIMITED_FLOOR: u64 = 1 << 62;

/// The cgroup limits of this process; `None` means no limit was found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupInfo {
    /// `v1`, `v2` or `hybrid` (v1 controllers plus a v2 hierarchy).
    pub version: Option<String>,
    /// This process's cgroup path (of the v2 hierarchy, else the memory controller's).
    pub path: Option<String>,
    /// CPU quota in CPUs (quota / period), e.g. 1.5; the tightest along the path.
    pub cpu_quota_cpus: Option<f64>,
    /// Memory limit in bytes; the tightest along the path.
    pub memory_limit_bytes: Option<u64>,
    /// Maximum number of tasks; the tightest along the path.
    pub pids_max: Option<u64>,
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

/// Parses a limit file (`max`, a number, or v1's near-`i64::MAX`).
pub(crate) fn parse_limit(text: &str) -> Option<u64> {
    let t = text.trim();
    if t == "max" || t == "-1" {
        return None;
    }
    t.parse::<u64>().ok().filter(|&v| v < V1_UNLIMITED_FLOOR)
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

/// The tightest value of `file` parsed by `parse` along `path`.
fn tightest<T: PartialOrd + Copy>(
    roots: &Roots,
    mount_point: &str,
    path: &str,
    file: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    ancestors(mount_point, path)
        .iter()
        .filter_map(|dir| roots.read(&format!("{dir}/{file}")).and_then(|t| parse(&t)))
        .fold(None, |best, v| match best {
            Some(b) if b <= v => Some(b),
            _ => Some(v),
        })
}

/// Reads the limits that apply to this process below `roots`.
pub(crate) fn probe_cgroup(roots: &Roots, mounts: &[MountEntry], notes: &mut Notes) -> CgroupInfo {
    let Some(text) = roots.read_noted("/proc/self/cgroup", notes) else {
        return CgroupInfo::default();
    };
    let lines = parse_proc_cgroup(&text);
    let mut info = CgroupInfo {
        version: cgroup_version(&lines).map(str::to_string),
        ..CgroupInfo::default()
    };
    let v1_mount = |controller: &str| {
        mounts
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.super_options.split(',').any(|o| o == controller))
    };
    let v1_path = |controller: &str| {
        lines
            .iter()
            .find(|l| l.controllers.iter().any(|c| c == controller))
            .map(|l| l.path.clone())
    };
    let v2_line = lines.iter().find(|l| l.id == 0);
    let v2_mount = mounts.iter().find(|m| m.fs_type == "cgroup2");

    // Prefer v1 controllers where they are mounted (hybrid hosts put the
    // controllers there and leave the v2 hierarchy empty).
    if let (Some(m), Some(p)) = (v1_mount("cpu"), v1_path("cpu")) {
        // Quota and period are read as a pair from each directory.
        info.cpu_quota_cpus = ancestors(&m.mount_point, &p)
            .iter()
            .filter_map(|dir| {
                let quota: i64 = roots
                    .read(&format!("{dir}/cpu.cfs_quota_us"))?
                    .trim()
                    .parse()
                    .ok()?;
                let period: f64 = roots
                    .read(&format!("{dir}/cpu.cfs_period_us"))?
                    .trim()
                    .parse()
                    .ok()?;
                (quota > 0 && period > 0.0).then(|| quota as f64 / period)
            })
            .reduce(f64::min);
    } else if let (Some(m), Some(l)) = (v2_mount, v2_line) {
        info.cpu_quota_cpus = tightest(roots, &m.mount_point, &l.path, "cpu.max", parse_cpu_max);
    }
    if let (Some(m), Some(p)) = (v1_mount("memory"), v1_path("memory")) {
        info.memory_limit_bytes = tightest(
            roots,
            &m.mount_point,
            &p,
            "memory.limit_in_bytes",
            parse_limit,
        );
        info.path = Some(p);
    } else if let (Some(m), Some(l)) = (v2_mount, v2_line) {
        info.memory_limit_bytes =
            tightest(roots, &m.mount_point, &l.path, "memory.max", parse_limit);
    }
    if let (Some(m), Some(p)) = (v1_mount("pids"), v1_path("pids")) {
        info.pids_max = tightest(roots, &m.mount_point, &p, "pids.max", parse_limit);
    } else if let (Some(m), Some(l)) = (v2_mount, v2_line) {
        info.pids_max = tightest(roots, &m.mount_point, &l.path, "pids.max", parse_limit);
    }
    if let Some(l) = v2_line.filter(|_| info.path.is_none()) {
        info.path = Some(l.path.clone());
    }
    if info.version.is_some() && v1_mount("memory").is_none() && v2_mount.is_none() {
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
    let v1 = mounts
        .iter()
        .find(|m| m.fs_type == "cgroup" && m.super_options.split(',').any(|o| o == "memory"));
    let v1_line = lines
        .iter()
        .find(|l| l.controllers.iter().any(|c| c == "memory"));
    let (mount, line, file) = match (v1, v1_line) {
        (Some(m), Some(l)) => (m, l, "memory.oom_control"),
        _ => (
            mounts.iter().find(|m| m.fs_type == "cgroup2")?,
            lines.iter().find(|l| l.id == 0)?,
            "memory.events",
        ),
    };
    // a mount of a cgroup below the root (a container's, without a
    // cgroup namespace) holds the paths below its own
    let below = line
        .path
        .strip_prefix(mount.root.trim_end_matches('/'))
        .unwrap_or(&line.path);
    Some(format!(
        "{}{}/{file}",
        mount.mount_point.trim_end_matches('/'),
        below.trim_end_matches('/')
    ))
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

    #[test]
    fn finds_and_reads_the_out_of_memory_kill_counters() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::fixture(dir.path());
        let write = |abs: &str, text: &str| {
            let p = roots.path(abs);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
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
}
